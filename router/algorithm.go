package router

// Algorithm maps sharding values to targets (data source names for a
// database strategy, physical table names for a table strategy).
//
// The rules loader builds one per shardingAlgorithms entry; it is immutable
// and safe for concurrent use.
type Algorithm interface {
	// Type is the ShardingSphere type name, e.g. INLINE or MOD.
	Type() string
}
