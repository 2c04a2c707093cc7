package merge

import "fmt"

// The merge's errors. The proxy's error boundary gives each its MySQL
// number and SQLSTATE: NotSupportedError 1235/42000, ScatterRowsError
// 1104/42000, MemoryError 1038/HY001; InternalError is a bug, 1105/HY000.

// NotSupportedError: a merge shardflake cannot compute correctly (an
// aggregate, operator or column type it does not know).
type NotSupportedError struct{ What string }

func (e *NotSupportedError) Error() string {
	return "shardflake does not support " + e.What + " yet"
}

// InternalError: the merge was handed something its contract rules out
// (streams with different column counts, a plan hiding more columns than
// there are).
type InternalError struct{ Msg string }

func (e *InternalError) Error() string { return "internal error: " + e.Msg }

// ScatterRowsError: a multi-route SELECT read more rows from its data
// nodes than server.maxScatterRows allows.
type ScatterRowsError struct{ Limit int64 }

func (e *ScatterRowsError) Error() string {
	return fmt.Sprintf("the data nodes returned more than %d rows for this statement (server.maxScatterRows); narrow it with conditions on the sharding columns or a smaller LIMIT/OFFSET, or raise maxScatterRows", e.Limit)
}

// MemoryError: merging needed to hold more rows than the statement's
// budget (server.mergeMemoryBytes) allows.
type MemoryError struct {
	Budget int64
	What   string // "GROUP BY", "DISTINCT", "ORDER BY", ...
}

func (e *MemoryError) Error() string {
	return fmt.Sprintf("merging the data nodes' rows for %s needs more than server.mergeMemoryBytes (%d bytes); narrow the statement with conditions on the sharding columns, add a LIMIT, or raise mergeMemoryBytes", e.What, e.Budget)
}
