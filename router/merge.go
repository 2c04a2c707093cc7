package router

// Merge says how the results of a multi-route SELECT combine into the one
// result a single MySQL server would return.
//
// Every route returns the same columns in the same order. The first Columns
// of them are what the client sees; any further columns are hidden helpers
// the router added (ORDER BY keys not in the select list, the COUNT half of
// an AVG, ...) and the merge strips them.
type Merge struct {
	Columns int `json:"columns"`
	// OrderBy is the total order the merged rows come out in; every route
	// already returns its rows in this order, so the merge is a k-way merge.
	OrderBy []OrderKey `json:"orderBy,omitempty"`
	// GroupBy holds the result columns of the GROUP BY key.
	GroupBy []int `json:"groupBy,omitempty"`
	// Aggregates combine the routes' partial aggregates, one per output
	// column that holds an aggregate.
	Aggregates []Aggregate `json:"aggregates,omitempty"`
	// Distinct removes duplicate visible rows after the merge.
	Distinct bool `json:"distinct,omitempty"`
	// Limit applies after ordering, grouping and HAVING; routes were sent
	// LIMIT offset+count.
	Limit *Limit `json:"limit,omitempty"`
}

// OrderKey is one ORDER BY key: a result column and its direction.
type OrderKey struct {
	Column int  `json:"column"`
	Desc   bool `json:"desc,omitempty"`
}

// AggregateFunc names how partial aggregates combine.
type AggregateFunc int

// Aggregate functions.
const (
	AggCount AggregateFunc = iota + 1
	AggSum
	AggMin
	AggMax
	AggAvg
)

// String returns the SQL name of the function.
func (f AggregateFunc) String() string {
	switch f {
	case AggCount:
		return "COUNT"
	case AggSum:
		return "SUM"
	case AggMin:
		return "MIN"
	case AggMax:
		return "MAX"
	case AggAvg:
		return "AVG"
	}
	return "UNKNOWN"
}

// Aggregate is one aggregate output column and where its partial values are.
type Aggregate struct {
	Func AggregateFunc `json:"func"`
	// Column is the result column holding the partial value (for AVG, the
	// partial SUM).
	Column int `json:"column"`
	// CountColumn is, for AVG, the hidden column holding the partial COUNT.
	CountColumn int `json:"countColumn,omitempty"`
	// Distinct marks COUNT(DISTINCT x) and SUM(DISTINCT x): routes return
	// the distinct values, not partial aggregates, and the merge combines
	// them across routes.
	Distinct bool `json:"distinct,omitempty"`
}

// Limit is a bound LIMIT clause.
type Limit struct {
	Offset int64 `json:"offset"`
	Count  int64 `json:"count"`
}
