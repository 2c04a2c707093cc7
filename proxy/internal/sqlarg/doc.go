// Package sqlarg writes values as SQL literals and fills the ? placeholders
// of a statement with them.
//
// The proxy sends a route's arguments to its data source inside the SQL
// text (one round trip, text protocol) and runs prepared statements that
// need no routing the same way, so every value must come out as a literal
// that means exactly that value to MySQL and MariaDB, with or without
// NO_BACKSLASH_ESCAPES. Functions here are pure and safe for concurrent use.
package sqlarg
