// Package proxy is the MySQL server side of shardflake.
//
// It accepts client connections (go-mysql's server package is the only place
// that knows the wire protocol), keeps one Session per connection, asks the
// router for a plan, runs the plan's routes on pooled backend connections and
// merges their results. A Session is used by one goroutine at a time; the
// Server and the backend pools are safe for concurrent use.
package proxy
