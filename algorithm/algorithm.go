package algorithm

// Algorithm maps sharding values to targets (data source names for a
// database strategy, physical table names for a table strategy).
//
// The rules loader builds one per shardingAlgorithms entry with New; it is
// immutable and safe for concurrent use. Strategies call it through
// Strategy.Route and Strategy.RouteHint. The routing methods take the
// package's target set, so the implementations live in this package: one
// file per type and one line in the registry (registry.go).
type Algorithm interface {
	// Type is the ShardingSphere type name, e.g. INLINE or MOD.
	Type() string
	// Props returns the algorithm's props as the file wrote them.
	Props() map[string]string
	// Kind is the strategy kind the algorithm serves.
	Kind() StrategyKind
	// Domain is the values validation and simulation feed its sharding
	// columns, or why its columns cannot be sampled.
	Domain() (Domain, string)
	// routeValues selects the targets of exact values in c and returns it.
	routeValues(c routeCtx, values []Value) (routeCtx, error)
	// routeRange selects the targets a range of values can reach.
	routeRange(c routeCtx, r *Range) (routeCtx, error)
}

// complexAlgorithm is an algorithm that routes a complex strategy's
// several columns at once (COMPLEX_INLINE); a complex strategy whose
// algorithm is not one reaches every target.
type complexAlgorithm interface {
	// routeComplex routes conds; all reports that every target is
	// possible.
	routeComplex(c routeCtx, conds map[string]ColumnCondition) (_ routeCtx, all bool, err error)
}

// Auto is an algorithm that numbers its targets, usable in autoTables
// (MOD, HASH_MOD, the ranges, AUTO_INTERVAL).
type Auto interface {
	// AutoTablesAmount is how many targets the algorithm numbers.
	AutoTablesAmount() int
}

// ColumnChecker is an algorithm that reads named columns itself (an inline
// expression's ${column}); the loader checks they are the strategy's.
type ColumnChecker interface {
	// CheckColumns returns why the algorithm does not fit a strategy on
	// columns (lower-case), nil when it does.
	CheckColumns(columns []string) error
}

// Value is a SQL value as the router sees it: nil (NULL), int64, uint64,
// float64 or string; []byte is treated as string.
//
// Algorithms that compute with integers (MOD, the ranges, inline arithmetic)
// convert a value the way MySQL compares it with a BIGINT column: a string
// is read as a number from its leading numeric prefix ('42abc' is 42, 'abc'
// is 0, ' 7' is 7), and a fraction (4.5, '4.5', 1e1) is rounded half away
// from zero, as MySQL stores it in a BIGINT column. A uint64 above the
// int64 range is an error. NULL matches no row, so a NULL among exact values
// contributes no target. The date-time algorithms (INTERVAL,
// AUTO_INTERVAL) read strings in their pattern and also accept time.Time.
type Value = any

// Range is a range of one column's values; a nil bound is unbounded.
type Range struct {
	Low, High                   Value
	LowInclusive, HighInclusive bool
}

// ColumnCondition is what a statement says about one sharding column:
// exact values (=, IN) or a range (<, >, BETWEEN).
//
// Values != nil means exact values and Range is then ignored (an empty,
// non-nil Values reaches no target); otherwise a non-nil Range is a range;
// both nil means no condition.
type ColumnCondition struct {
	Column string // lower-case
	Values []Value
	Range  *Range
}

// Route returns the targets (data source names or physical table names, a
// subset of available, in available's order) that rows matching conds can
// live on. conds is keyed by lower-case column name.
//
//   - No condition on the strategy's columns, a nil strategy ("none") or a
//     hint strategy: all of available.
//   - A range the algorithm cannot prune: all of available, or an *Error
//     1235 when the algorithm forbids range routing (INLINE and
//     COMPLEX_INLINE without allow-range-query-with-inline-sharding).
//   - Exact values: the union of each value's target. An inline expression
//     that evaluates to a name not in available is an *Error (1235) naming
//     the value and the expression; auto algorithms (MOD, HASH_MOD,
//     BOUNDARY_RANGE, VOLUME_RANGE, AUTO_INTERVAL) address targets by
//     numeric suffix as ShardingSphere does and skip a suffix that is not
//     in available (its data node lives on another data source).
//   - The result may be empty (only NULLs, or an empty IN list).
//
// The result must not be modified: it may share available's backing array
// (a contiguous run of available is returned as a sub-slice, without
// allocating). Route is safe for concurrent use.
func (s *Strategy) Route(available []string, conds map[string]ColumnCondition) ([]string, error) {
	return s.RouteMode(available, conds, TargetRequired)
}

// TargetMode says what an exact value means whose inline expression names
// a target that does not exist (ds_-1 for user_id = -5).
type TargetMode int

const (
	// TargetRequired is an error, as for a row an INSERT must place.
	TargetRequired TargetMode = iota + 1
	// TargetOptional is no target; no row can hold the value, so a query
	// for it matches nothing (MySQL's empty answer).
	TargetOptional
)

// String names the mode for tests and debugging.
func (m TargetMode) String() string {
	switch m {
	case TargetRequired:
		return "required"
	case TargetOptional:
		return "optional"
	}
	return "unknown"
}

// RouteMode is Route with the meaning of a value without a target.
func (s *Strategy) RouteMode(available []string, conds map[string]ColumnCondition, missing TargetMode) ([]string, error) {
	if s == nil || s.Kind == StrategyHint || s.Algorithm == nil {
		return available, nil
	}
	var c routeCtx
	c.init(s, available)
	c.missing = missing
	switch s.Kind {
	case StrategyStandard:
		cond, ok := conds[s.Columns[0]]
		return c.standard(cond, ok)
	case StrategyComplex:
		all, err := c.complex(conds)
		if err != nil {
			return nil, err
		}
		if all {
			return available, nil
		}
	}
	return c.result(), nil
}

// RouteCondition is RouteMode with one condition: what RouteMode gives
// for a map that holds only cond (under cond.Column), without the map,
// which a statement with one condition on its sharding column (a point
// select) would fill, hash and clear for each strategy.
func (s *Strategy) RouteCondition(available []string, cond ColumnCondition, missing TargetMode) ([]string, error) {
	if s == nil || s.Kind == StrategyHint || s.Algorithm == nil {
		return available, nil
	}
	if s.Kind != StrategyStandard {
		return s.RouteMode(available, map[string]ColumnCondition{cond.Column: cond}, missing)
	}
	var c routeCtx
	c.init(s, available)
	c.missing = missing
	return c.standard(cond, s.Columns[0] == cond.Column)
}

// standard routes a standard strategy by the condition on its column (ok
// false: there is none).
func (c *routeCtx) standard(cond ColumnCondition, ok bool) ([]string, error) {
	switch {
	case !ok:
		return c.available, nil
	case cond.Values != nil:
		if err := c.values(cond.Values); err != nil {
			return nil, err
		}
	case cond.Range != nil:
		if err := c.rangeOf(cond.Range); err != nil {
			return nil, err
		}
	default:
		return c.available, nil
	}
	return c.result(), nil
}

// RouteHint routes by the values of a SHARDINGSPHERE_HINT comment
// (SHARDING_DATABASE_VALUE or SHARDING_TABLE_VALUE).
//
// A hint strategy evaluates its HINT_INLINE expression with each value as
// ${value}; a standard strategy treats the values as exact values of its
// sharding column; a nil strategy ("none") returns all of available; a
// complex strategy is an *Error 1235 (its values are per column). No values:
// all of available. The result follows Route's rules.
func (s *Strategy) RouteHint(available []string, values []Value) ([]string, error) {
	if s == nil || len(values) == 0 || s.Algorithm == nil {
		return available, nil
	}
	if s.Kind == StrategyComplex {
		return nil, errNotSupported("hint values cannot drive the complex sharding strategy on %s; use a hint or standard strategy", columnList(s.Columns))
	}
	var c routeCtx
	c.init(s, available)
	if err := c.values(values); err != nil {
		return nil, err
	}
	return c.result(), nil
}
