// Package merge combines the row streams of a multi-route SELECT into the
// one result the client sees, as one MariaDB server would have answered it.
//
// It is the merge stage of the statement pipeline (parse → plan → execute
// → merge): the router's Plan says what the merge must do (router.Merge:
// k-way ordered merge, grouping and aggregates, HAVING, expressions over
// aggregates, DISTINCT, in-memory ORDER BY, LIMIT, hidden helper columns),
// the executor in package proxy opens one rows.Stream per route, and a
// Merger turns them into one stream.
//
//	merger.go      Merger and Checker, the seam the proxy calls; Concat
//	merge.go       ResultMerger: the pipeline of stages and its budget
//	sort.go        k-way merge of routes that are each in order
//	group.go       streamed and hashed GROUP BY, aggregates
//	groupconcat.go GROUP_CONCAT
//	having.go      HAVING and computed columns
//	expr.go        expression evaluation over merged values
//	arith.go       MariaDB's integer, DECIMAL and DOUBLE arithmetic
//	compare.go     column types and value comparison (internal/sqlvalue)
//	order.go       DISTINCT and in-memory ORDER BY
//	collation.go   CollationSource: the collations the data sources use
//	dialect.go     DialectSource: what differs between MariaDB versions
//	errors.go      the merge's errors
//
// The merge needs rows (package rows), the plan's merge spec (router) and
// two sources it is handed: a CollationSource for the collations string
// columns compare with and a DialectSource for the MariaDB version's
// arithmetic. Package proxy implements both by asking a data source
// (proxy/probe.go); the merge itself holds no connection and never reaches
// into the server, so it is tested on in-memory streams.
//
// Imports (of this module): proxy/rows, router, proxy/internal/sqlvalue.
// Besides those, go-mysql's Field and error types; never package proxy or
// the backend. Errors are the merge's
// own types (errors.go) or *mysql.MyError (a value out of range), given
// their MySQL numbers at the proxy's one error boundary.
//
// A ResultMerger is immutable and safe for concurrent use; the stream a
// Merge returns is used by one goroutine, like the streams it reads.
package merge
