// Package algorithm holds the sharding algorithms: the ShardingSphere
// built-ins shardflake implements (INLINE, COMPLEX_INLINE, HINT_INLINE,
// MOD, HASH_MOD, BOUNDARY_RANGE, VOLUME_RANGE, INTERVAL, AUTO_INTERVAL),
// the Strategy that applies one to a table's sharding columns, the values
// and conditions they route (Value, ColumnCondition, Range), the inline
// expression language (a documented subset of ShardingSphere's Groovy,
// also used for actualDataNodes), and the sampling domains validation
// feeds them.
//
// Where it sits: config builds algorithms (New) and strategies from the
// rules file; router asks strategies for the targets of a statement's
// conditions. It imports nothing of ours and is pure: no sockets,
// goroutines, clocks or loggers. An algorithm's refusal to route is a
// *RouteError, which the router turns into its 1235 error; a bad prop is a
// *PropError, which config reports at the prop's line.
//
// Adding an algorithm: one file with its type, constructor and the
// Algorithm methods (Kind, Domain, values, rangeOf; complex and
// CheckColumns when it reads several columns), and one line in registry.go.
//
// Algorithms and strategies are immutable once built and safe for
// concurrent use.
package algorithm
