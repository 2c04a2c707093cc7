// Package mariadbtest starts real MariaDB servers for integration tests.
//
// Every integration test in shardflake that needs a MySQL backend uses it:
// each Server is a mariadbd process from Debian's mariadb-server package,
// with a fresh data directory made by mariadb-install-db in its own temp
// directory, listening on a free loopback port. Servers are tuned to start
// in well under a second and to use little memory (32 MiB buffer pool, no
// binary log, relaxed flushing), so a test package can afford several.
//
// When mariadbd is not installed, Start skips the test, except when the
// environment variable CI is "true": CI must never skip, so it fails.
//
// A package that shares servers between its tests starts them in TestMain
// with Launch and closes them when m.Run returns; a test that needs its own
// (for example to kill it) calls Start, which closes it in t.Cleanup.
// Server methods are safe for concurrent use.
package mariadbtest
