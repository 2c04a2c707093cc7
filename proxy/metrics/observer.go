package metrics

import (
	"time"

	"github.com/shardflake/shardflake/router"
)

// Observer is told what the proxy does, for metrics and the slow-statement
// log. Every method is called on the statement's goroutine, so it must be
// fast and safe for concurrent use; it must not keep the slices it is
// given. Pool gauges are not pushed: read them with proxy.Server.PoolStats.
type Observer interface {
	// ClientConnected and ClientDisconnected bracket a client connection
	// that passed the handshake.
	ClientConnected()
	ClientDisconnected()
	// Statement reports one statement that went through the router (a
	// plan), after its result was written.
	Statement(StatementEvent)
	// Route reports one route's run on its data source.
	Route(RouteEvent)
	// Error reports an error packet sent to a client, by MySQL error number.
	Error(code uint16)
	// Panic reports a panic recovered in a client connection.
	Panic()
}

// StatementEvent describes one routed statement.
type StatementEvent struct {
	ConnID   uint32
	Kind     router.StatementKind
	Type     router.RouteType
	Routes   []router.Route // the plan's routes (fan-out is len)
	Duration time.Duration
	// Code is the MySQL error number the client got; 0 for success.
	Code uint16
	// SQL is the statement text, for fingerprinting; it holds literal
	// values, which must not be logged as they are.
	SQL string
}

// RouteEvent describes one route's run on its data source: from sending
// the SQL to its first response (rows are streamed afterwards).
type RouteEvent struct {
	DataSource string
	Duration   time.Duration
	Err        error
	// Unreached: the route got no connection (the data source is down,
	// the pool exhausted), so Duration is no latency of the data source.
	Unreached bool
	// Cancelled: the route ended because its statement was (KILL, a
	// timeout, the client gone), no fault of the data source.
	Cancelled bool
}
