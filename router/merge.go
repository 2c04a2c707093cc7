package router

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/shardflake/shardflake/algorithm"
)

// Merge says how the results of a multi-route SELECT combine into the one
// result a single MySQL server would return.
//
// Every route returns the same columns in the same order: the columns the
// client asked for, then Hidden helper columns the router appended (ORDER
// BY and GROUP BY keys not in the select list, the SUM and COUNT behind an
// AVG, the arguments of COUNT(DISTINCT ...), aggregates used only in
// HAVING or ORDER BY). The router cannot know how many columns a wildcard
// stands for, so column positions are ColumnRefs that count from either
// end.
//
// The merge is a pipeline; each step runs only when its field is set:
//
//  1. Combine: with Sort, a streaming k-way merge of the routes' rows
//     (each route already returns its rows in that order, NULLs first
//     ascending as MySQL orders them, strings by the column's collation);
//     without Sort, the routes' rows one route after the other.
//  2. Group: aggregate (see Group), streaming when Group.Streamed.
//  3. Having: keep the rows for which the expression is true.
//  4. Compute: replace the value of each Computed column with its
//     expression over the merged row (HAVING never reads one: it has
//     their expressions itself).
//     Distinct: drop a row whose visible columns equal an earlier row's.
//  5. OrderBy: sort the rows in memory (stable); absent when step 1
//     already gives the final order.
//  6. Limit: skip Offset rows, then return at most Count rows (each route
//     was sent LIMIT Offset+Count when that is correct, so a route never
//     returns more than Offset+Count rows).
//  7. Strip the Hidden trailing columns.
//
// Result metadata (names, types, decimals, flags) is that of the first
// route's result for the visible columns (with Describe, the first route
// after the describing one, and the describing route's for Computed
// columns); the router keeps each visible column's expression as MySQL
// would name it (an unaliased expression gets its original text as alias,
// e.g. AS `count(*)`), so the names are what a single MySQL server would
// return.
type Merge struct {
	// Hidden is the number of trailing helper columns every route
	// returns; the client sees all the other columns.
	Hidden int `json:"hidden,omitempty"`
	// Sort is the order every route returns its rows in; merge them with
	// a k-way merge on these keys.
	Sort []OrderKey `json:"sort,omitempty"`
	// AnyOrder means the client asked for no order (DISTINCT without
	// ORDER BY, GROUP BY ... ORDER BY NULL): Sort only lets grouping and
	// DISTINCT stream, and the merge may read the routes one after the
	// other instead and hash, when it cannot compare a Sort key in
	// MariaDB's order (an ENUM orders by its members' positions).
	AnyOrder bool `json:"anyOrder,omitempty"`
	// Group aggregates the rows; nil when the query has neither GROUP BY
	// nor aggregate functions.
	Group *Group `json:"group,omitempty"`
	// Compute are the columns whose values are expressions over
	// aggregates (SUM(a)/COUNT(*), ROUND(AVG(x), 2)), evaluated after
	// grouping and HAVING.
	Compute []Computed `json:"compute,omitempty"`
	// Describe means Routes[0] describes the result and returns no rows:
	// it is the statement with LIMIT 0 and the Computed columns' own
	// expressions, which give those columns' definitions; the other
	// routes return NULL in the Computed columns.
	Describe bool `json:"describe,omitempty"`
	// Having is the HAVING condition, evaluated after grouping; routes are
	// sent no HAVING.
	Having *Expr `json:"having,omitempty"`
	// Distinct removes duplicate rows (comparing visible columns) after
	// grouping and HAVING.
	Distinct bool `json:"distinct,omitempty"`
	// OrderBy is the final order when it must be established in memory
	// (after grouping, or when the routes could not sort by it).
	OrderBy []OrderKey `json:"orderBy,omitempty"`
	// Limit is the client's LIMIT, bound.
	Limit *Limit `json:"limit,omitempty"`
	// Unlisted are the names only Hidden columns read, for the error a
	// client sees when one is unknown (UnlistedColumn). A pointer: each
	// execution of a merged SELECT copies the Merge, 128 bytes without the
	// field; the pointer makes it 136 (the 144-byte size class), a slice
	// header would make it 152 (160).
	Unlisted *[]UnlistedColumn `json:"unlisted,omitempty"`
	// SetOp is set for a UNION whose branches run apart
	// (setop_branches.go); the other fields then merge the branches'
	// results. Beside Unlisted: a pointer keeps the Merge in the 144-byte
	// size class, where a field of the Plan would take it to 160.
	SetOp *SetOpBranches `json:"setOp,omitempty"`
}

// ColumnRef addresses one column of the routes' results: a value >= 0
// counts from the first column (0 is the first), a negative value from the
// last (-1 is the last). Hidden columns are always addressed from the end;
// visible columns from the start, unless a wildcard precedes them in the
// select list (then the router repeats them as hidden columns).
type ColumnRef int

// Index returns the 0-based position of the column in a row of n columns.
func (c ColumnRef) Index(n int) int {
	if c < 0 {
		return n + int(c)
	}
	return int(c)
}

// String returns the position as explain prints it: "2" or "end-1".
func (c ColumnRef) String() string {
	if c < 0 {
		return "end" + strconv.Itoa(int(c))
	}
	return strconv.Itoa(int(c))
}

// OrderKey is one sort key: a result column and its direction. Ascending
// puts NULLs first, as MySQL does.
type OrderKey struct {
	Column ColumnRef `json:"column"`
	Desc   bool      `json:"desc,omitempty"`
}

// Group is GROUP BY and the aggregates.
//
// Rows with equal Keys (NULLs equal, strings compared by the column's
// collation) form one group and become one row: each Aggregate's column
// gets the merged value; every other column keeps its value from the
// group's first row (what MySQL returns for a column that is neither
// grouped nor aggregated). Without Keys all rows form one group, and the
// result is exactly one row even when no route returned a row (COUNT 0,
// the other aggregates and columns NULL), as MySQL answers an aggregate
// query over no rows.
type Group struct {
	Keys []ColumnRef `json:"keys,omitempty"`
	// Streamed means Sort makes rows of one group adjacent (the routes
	// are ordered by the group key), so groups can be emitted one at a
	// time; otherwise group in memory, then OrderBy sorts.
	Streamed bool `json:"streamed,omitempty"`
	// Rollup is GROUP BY ... WITH ROLLUP, which the routes are not sent:
	// the groups arrive in key order (Streamed), and after the last group
	// of each prefix of the Keys the merge adds its super-aggregate row,
	// the prefix's aggregates with the Keys past it NULL, longest prefix
	// first, the grand total last (none over no rows), as MariaDB orders
	// them. Every other column is an aggregate's.
	Rollup     bool        `json:"rollup,omitempty"`
	Aggregates []Aggregate `json:"aggregates,omitempty"`
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
	AggGroupConcat
	AggBitOr
	AggBitAnd
	AggBitXor
	AggVarPop
	AggVarSamp
	AggStddevPop
	AggStddevSamp
	AggJSONObjectAgg
	AggJSONArrayAgg
)

// AggLast is the last aggregate this version of the router writes; a
// merge that meets a larger one refuses it.
const AggLast = AggJSONArrayAgg

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
	case AggGroupConcat:
		return "GROUP_CONCAT"
	case AggBitOr:
		return "BIT_OR"
	case AggBitAnd:
		return "BIT_AND"
	case AggBitXor:
		return "BIT_XOR"
	case AggVarPop:
		return "VAR_POP"
	case AggVarSamp:
		return "VAR_SAMP"
	case AggStddevPop:
		return "STDDEV_POP"
	case AggStddevSamp:
		return "STDDEV_SAMP"
	case AggJSONObjectAgg:
		return "JSON_OBJECTAGG"
	case AggJSONArrayAgg:
		return "JSON_ARRAYAGG"
	}
	return "UNKNOWN"
}

// MarshalText writes the function by name, so plans print readably.
func (f AggregateFunc) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// Aggregate is one aggregate and where its partial values are.
//
//   - COUNT: Column holds each route's partial count; the merged value is
//     their sum (0 when there are none).
//   - SUM: the sum of the non-NULL partial sums, NULL when all are NULL.
//   - MIN, MAX: the least/greatest non-NULL partial value.
//   - BIT_OR, BIT_AND, BIT_XOR: the OR, AND, XOR of the partial values
//     (BIGINT UNSIGNED; a route with no row gives the identity, 0 or all
//     ones, so the merged value of no rows is too).
//   - AVG: Column holds the route's own AVG (its value is replaced; its
//     metadata is what the client sees); Sum and Count are hidden columns
//     with the partial SUM and COUNT of the same argument. The merged
//     value is total SUM / total COUNT with the AVG column's decimals
//     (NULL when the total COUNT is 0).
//   - VAR_POP, VAR_SAMP, STDDEV_POP, STDDEV_SAMP (and their other
//     names STD, STDDEV, VARIANCE): Column holds the route's own value (its
//     metadata is the client's, a DOUBLE); Count, Sum and VarPop are hidden
//     columns with the route's COUNT, SUM and VAR_POP of the argument. The
//     merge combines the routes' (count, mean, VAR_POP*count) with the
//     parallel-variance formula, which keeps the precision that
//     SUM(x*x) - SUM(x)^2/n would lose to cancellation; the result is NULL
//     for no rows, and for one row under VAR_SAMP and STDDEV_SAMP.
//   - JSON_OBJECTAGG: the routes' objects, their members joined with ", "
//     in one object, as MariaDB writes them (rows with a NULL key add no
//     member; NULL when no route has a member). MariaDB's member order is
//     the order it reads the rows in, unspecified.
//   - JSON_ARRAYAGG: the routes' arrays, their elements joined with
//     Concat.Separator (",") in one array, as MariaDB writes them (NULL
//     values are null elements; NULL when no route has a row). MariaDB's
//     element order is the order it reads the rows in, unspecified.
//     MariaDB cuts the elements at group_concat_max_len bytes (each route
//     returns it in Concat.MaxLen) with a warning counting the elements
//     it wrote in that order, which the merge cannot reproduce: an array
//     that would be cut, or a route's array that may have been, is
//     refused.
//   - Distinct (COUNT(DISTINCT ...), SUM(DISTINCT ...)): routes group by
//     the argument values too and return them in the hidden Args columns;
//     the merge collects, per group, the distinct argument values (tuples
//     for COUNT with several arguments) that contain no NULL, and counts
//     or sums them. Column holds a per-route value to be replaced.
type Aggregate struct {
	Func     AggregateFunc `json:"func"`
	Column   ColumnRef     `json:"column"`
	Distinct bool          `json:"distinct,omitempty"`
	Args     []ColumnRef   `json:"args,omitempty"`
	Sum      ColumnRef     `json:"sum,omitempty"`
	Count    ColumnRef     `json:"count,omitempty"`
	// VarPop is the route's VAR_POP of the argument, for the variance
	// family.
	VarPop ColumnRef `json:"varPop,omitempty"`
	// Concat describes a GROUP_CONCAT (see GroupConcat).
	Concat *GroupConcat `json:"concat,omitempty"`
}

// Computed is a result column whose merged value is Expr evaluated over
// the grouped row (after every Aggregate's column holds its merged value).
// The column's definition, as the describing route returns it, is what
// the client sees: the value is converted to that type (a DECIMAL printed
// with the column's decimals, as MariaDB prints it).
type Computed struct {
	Column ColumnRef `json:"column"`
	Expr   *Expr     `json:"expr"`
}

// Limit is a bound LIMIT clause. Count is at most math.MaxInt64 (a larger
// client value, like the customary 18446744073709551615, means "no
// limit" in practice and is clamped).
type Limit struct {
	Offset int64 `json:"offset"`
	Count  int64 `json:"count"`
	// Pushed: every route carries LIMIT Offset+Count (saturated at
	// MaxInt64) as its last clause, since its first rows in Sort order
	// are all the merge needs.
	Pushed bool `json:"pushed,omitempty"`
}

// ExprOp is the operator of an Expr node.
type ExprOp int

// Expression operators. Comparisons and logic follow SQL's three-valued
// logic (NULL compares as unknown, except ExprNullSafeEQ).
const (
	ExprColumn     ExprOp = iota + 1 // the value of result column Column
	ExprValue                        // the literal Value: nil, int64, uint64, float64 or string
	ExprDecimal                      // the exact decimal literal in Value, a string such as "1.50"
	ExprAnd                          // Args[0] AND Args[1]
	ExprOr                           // Args[0] OR Args[1]
	ExprXor                          // Args[0] XOR Args[1]
	ExprNot                          // NOT Args[0]
	ExprEQ                           // Args[0] = Args[1]
	ExprNE                           // Args[0] <> Args[1]
	ExprLT                           // Args[0] < Args[1]
	ExprLE                           // Args[0] <= Args[1]
	ExprGT                           // Args[0] > Args[1]
	ExprGE                           // Args[0] >= Args[1]
	ExprNullSafeEQ                   // Args[0] <=> Args[1]
	ExprIsNull                       // Args[0] IS NULL
	ExprIsTrue                       // Args[0] IS TRUE
	ExprIsFalse                      // Args[0] IS FALSE
	ExprIn                           // Args[0] IN (Args[1:])
	ExprPlus                         // Args[0] + Args[1]
	ExprMinus                        // Args[0] - Args[1]
	ExprMul                          // Args[0] * Args[1]
	ExprDiv                          // Args[0] / Args[1]
	ExprIntDiv                       // Args[0] DIV Args[1]
	ExprMod                          // Args[0] % Args[1]
	ExprNeg                          // -Args[0]
	ExprBetween                      // Args[0] BETWEEN Args[1] AND Args[2]
	ExprRound                        // ROUND(Args[0]) or ROUND(Args[0], Args[1]), Args[1] an integer literal
	ExprIfNull                       // IFNULL(Args[0], Args[1])
	ExprCoalesce                     // COALESCE(Args...)
	ExprAbs                          // ABS(Args[0])
	ExprAvg                          // AVG as Args[0] (its SUM) / Args[1] (its COUNT)
)

// ExprLast is the last operator this version of the router writes; a
// merge that meets a larger one refuses it.
const ExprLast = ExprAvg

// String returns the operator as SQL writes it (or column, value, decimal).
func (o ExprOp) String() string {
	switch o {
	case ExprColumn:
		return "column"
	case ExprValue:
		return "value"
	case ExprDecimal:
		return "decimal"
	case ExprAnd:
		return "AND"
	case ExprOr:
		return "OR"
	case ExprXor:
		return "XOR"
	case ExprNot:
		return "NOT"
	case ExprEQ:
		return "="
	case ExprNE:
		return "<>"
	case ExprLT:
		return "<"
	case ExprLE:
		return "<="
	case ExprGT:
		return ">"
	case ExprGE:
		return ">="
	case ExprNullSafeEQ:
		return "<=>"
	case ExprIsNull:
		return "IS NULL"
	case ExprIsTrue:
		return "IS TRUE"
	case ExprIsFalse:
		return "IS FALSE"
	case ExprIn:
		return "IN"
	case ExprPlus:
		return "+"
	case ExprMinus:
		return "-"
	case ExprMul:
		return "*"
	case ExprDiv:
		return "/"
	case ExprIntDiv:
		return "DIV"
	case ExprMod:
		return "%"
	case ExprNeg:
		return "NEG"
	case ExprBetween:
		return "BETWEEN"
	case ExprRound:
		return "ROUND"
	case ExprIfNull:
		return "IFNULL"
	case ExprCoalesce:
		return "COALESCE"
	case ExprAbs:
		return "ABS"
	case ExprAvg:
		return "AVG"
	}
	return "unknown"
}

// MarshalText writes the operator by name, so plans print readably.
func (o ExprOp) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// Expr is a small expression over one merged row: the HAVING condition or
// a Computed column. Leaves are result columns (ExprColumn, usually an
// aggregate's column after merging, a group key, or a hidden column the
// routes compute) and literals (ExprValue, ExprDecimal; parameters are
// already bound). Arithmetic and comparisons follow MySQL's rules for the
// operand types (a string compared with a number is compared as a number;
// / yields a decimal, unrounded until it is compared or returned). An AVG
// is ExprAvg over the merged SUM and COUNT columns, since MariaDB computes
// with the unrounded quotient (and, where a DOUBLE is wanted, with
// SUM and COUNT as DOUBLEs).
type Expr struct {
	Op     ExprOp          `json:"op"`
	Column ColumnRef       `json:"column,omitempty"`
	Value  algorithm.Value `json:"value,omitempty"`
	Args   []*Expr         `json:"args,omitempty"`
}

// MarshalJSON prints a column leaf with its column (even column 0) and
// other nodes without one.
func (e *Expr) MarshalJSON() ([]byte, error) {
	type plain struct {
		Op     ExprOp          `json:"op"`
		Column *ColumnRef      `json:"column,omitempty"`
		Value  algorithm.Value `json:"value,omitempty"`
		Args   []*Expr         `json:"args,omitempty"`
	}
	p := plain{Op: e.Op, Value: e.Value, Args: e.Args}
	if e.Op == ExprColumn {
		c := e.Column
		p.Column = &c
	}
	return json.Marshal(p)
}

// String writes the expression in SQL-like infix form with columns as
// col[2] or col[end-1], for explain output and logs.
func (e *Expr) String() string {
	var b strings.Builder
	e.write(&b)
	return b.String()
}

func (e *Expr) write(b *strings.Builder) {
	arg := func(i int) {
		if i < len(e.Args) && e.Args[i] != nil {
			e.Args[i].write(b)
		} else {
			b.WriteString("?")
		}
	}
	switch e.Op {
	case ExprColumn:
		b.WriteString("col[" + e.Column.String() + "]")
	case ExprValue:
		switch v := e.Value.(type) {
		case nil:
			b.WriteString("NULL")
		case string:
			b.WriteString(strconv.Quote(v))
		default:
			fmt.Fprint(b, v)
		}
	case ExprDecimal:
		fmt.Fprint(b, e.Value)
	case ExprNot, ExprNeg:
		if e.Op == ExprNot {
			b.WriteString("NOT ")
		} else {
			b.WriteString("-")
		}
		b.WriteString("(")
		arg(0)
		b.WriteString(")")
	case ExprIsNull, ExprIsTrue, ExprIsFalse:
		b.WriteString("(")
		arg(0)
		b.WriteString(" " + e.Op.String() + ")")
	case ExprBetween:
		b.WriteString("(")
		arg(0)
		b.WriteString(" BETWEEN ")
		arg(1)
		b.WriteString(" AND ")
		arg(2)
		b.WriteString(")")
	case ExprRound, ExprIfNull, ExprCoalesce, ExprAbs, ExprAvg:
		b.WriteString(e.Op.String() + "(")
		for i := range e.Args {
			if i > 0 {
				b.WriteString(", ")
			}
			arg(i)
		}
		b.WriteString(")")
	case ExprIn:
		b.WriteString("(")
		arg(0)
		b.WriteString(" IN (")
		for i := 1; i < len(e.Args); i++ {
			if i > 1 {
				b.WriteString(", ")
			}
			arg(i)
		}
		b.WriteString("))")
	default:
		b.WriteString("(")
		arg(0)
		b.WriteString(" " + e.Op.String() + " ")
		arg(1)
		b.WriteString(")")
	}
}
