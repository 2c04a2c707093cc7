package router

import (
	"slices"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
)

// GroupConcat is how a GROUP_CONCAT across data nodes merges. Routes
// group by the argument too (as for COUNT(DISTINCT ...)), so each route
// row carries one argument value in the Aggregate's Args column and, for
// a GROUP_CONCAT without DISTINCT, how many of the group's rows have it in
// Count. The merge collects a group's values (DISTINCT: one per value
// equal under the argument's collation), sorts them by the argument
// (descending with Desc) as MariaDB's GROUP_CONCAT(DISTINCT x) and
// GROUP_CONCAT(x ORDER BY x) order them, joins them with Separator and
// cuts the result at the session's group_concat_max_len bytes, which
// each route returns in the MaxLen column. The Aggregate's Column keeps
// the route's own GROUP_CONCAT for its column definition.
//
// A JSON_ARRAYAGG uses Separator and MaxLen only (see Aggregate).
type GroupConcat struct {
	Separator string    `json:"separator"`
	Desc      bool      `json:"desc,omitempty"`
	MaxLen    ColumnRef `json:"maxLen"`
	// Order is GROUP_CONCAT(x ORDER BY y, ...) on other expressions than
	// x (without DISTINCT): routes group by them too, and the merge
	// orders a group's values by their columns, then by x.
	Order []OrderKey `json:"order,omitempty"`
}

// groupConcatSpec is a GROUP_CONCAT (or JSON_ARRAYAGG) being planned.
type groupConcatSpec struct {
	separator string
	desc      bool
	maxLen    mref
	order     []mref
	orderDesc []bool
}

// groupConcat plans GROUP_CONCAT([DISTINCT] expr [ORDER BY expr [ASC |
// DESC], ...] [SEPARATOR s]) at field j (-1: hidden). Several
// expressions are one, their CONCAT, without DISTINCT (which compares
// them one by one, each under its collation) and refused with it; so is
// DISTINCT with an ORDER BY on anything but the argument (MariaDB orders
// each distinct value by one of its rows' keys, which one the routes
// cannot tell).
func (b *mergeBuilder) groupConcat(agg *ast.AggregateFuncExpr, j int, text string) (int, error) {
	n := len(agg.Args) - 1 // the last is the separator
	arg := agg.Args[0]
	if n > 1 {
		if agg.Distinct {
			return 0, errNotSupported("GROUP_CONCAT(DISTINCT ...) of several expressions over several data nodes is not supported; concatenate them with CONCAT inside GROUP_CONCAT")
		}
		// A row's value is its expressions' text joined, and it is
		// skipped when one is NULL: CONCAT's value.
		arg = &ast.FuncCallExpr{FnName: ast.NewCIStr(ast.Concat), Args: agg.Args[:n]}
	}
	sep, ok := agg.Args[n].(*test_driver.ValueExpr)
	if !ok {
		return 0, errNotSupported("GROUP_CONCAT with this SEPARATOR over several data nodes is not supported")
	}
	cs := &groupConcatSpec{separator: sep.GetString()}
	var others []*ast.ByItem // ORDER BY items other than the argument alone
	if agg.Order != nil {
		argText, _ := exprText(arg)
		if orderText, _ := exprText(agg.Order.Items[0].Expr); len(agg.Order.Items) == 1 && orderText == argText {
			cs.desc = agg.Order.Items[0].Desc
		} else {
			others = agg.Order.Items
		}
	}
	for _, it := range others {
		if agg.Distinct {
			return 0, errNotSupported("GROUP_CONCAT(DISTINCT ... ORDER BY ...) over several data nodes is supported ordered by its argument only")
		}
		_, position := it.Expr.(*ast.PositionExpr)
		if _, folded := foldedInteger(it.Expr); position || folded || containsAggregate(it.Expr) {
			return 0, errNotSupported("GROUP_CONCAT ... ORDER BY over several data nodes is supported on expressions of the rows")
		}
	}
	if j < 0 {
		j = b.addHidden(agg)
	}
	for _, it := range others {
		cs.order = append(cs.order, mref{field: b.distinctArg(it.Expr), abs: -1})
		cs.orderDesc = append(cs.orderDesc, it.Desc)
	}
	s := aggSpec{fn: AggGroupConcat, field: j, text: text, distinct: agg.Distinct, concat: cs}
	s.args = []mref{{field: b.distinctArg(arg), abs: -1}}
	if !agg.Distinct {
		// Each row's own spelling: values equal under the argument's
		// collation ('new', 'NEW', 'New ') are still joined as written,
		// so a route groups by the bytes too, not only by the collation
		// (which would count every spelling as the one it kept).
		b.exactArgs[slices.Index(b.distinctFields, s.args[0].field)] = true
		s.count = mref{field: b.addHidden(&ast.AggregateFuncExpr{F: ast.AggFuncCount, Args: []ast.ExprNode{arg}}), abs: -1}
	}
	cs.maxLen = mref{field: b.addHidden(&ast.VariableExpr{Name: "group_concat_max_len", IsSystem: true}), abs: -1}
	b.aggs = append(b.aggs, s)
	return j, nil
}

// jsonArrayAgg plans JSON_ARRAYAGG(expr) at field j (-1: hidden): each
// route returns its own array, the merge joins their elements with ","
// (the separator MariaDB writes) and checks the length against the
// session's group_concat_max_len, which each route returns, as for
// GROUP_CONCAT.
func (b *mergeBuilder) jsonArrayAgg(agg *ast.AggregateFuncExpr, j int, text string) (int, error) {
	if agg.Distinct || agg.Order != nil || len(agg.Args) != 1 {
		return 0, errNotSupported("JSON_ARRAYAGG over several data nodes is supported without DISTINCT and ORDER BY")
	}
	if j < 0 {
		j = b.addHidden(agg)
	}
	cs := &groupConcatSpec{separator: ","}
	cs.maxLen = mref{field: b.addHidden(&ast.VariableExpr{Name: "group_concat_max_len", IsSystem: true}), abs: -1}
	b.aggs = append(b.aggs, aggSpec{fn: AggJSONArrayAgg, field: j, text: text, concat: cs})
	return j, nil
}

// finishGroupConcat fills a planned GROUP_CONCAT's (or JSON_ARRAYAGG's)
// column references.
func (b *mergeBuilder) finishGroupConcat(ag *Aggregate, s aggSpec, total int) {
	ag.Concat = &GroupConcat{Separator: s.concat.separator, Desc: s.concat.desc, MaxLen: b.colRef(s.concat.maxLen, total)}
	for i, r := range s.concat.order {
		ag.Concat.Order = append(ag.Concat.Order, OrderKey{Column: b.colRef(r, total), Desc: s.concat.orderDesc[i]})
	}
	if s.fn == AggGroupConcat && !s.distinct {
		ag.Count = b.colRef(s.count, total)
	}
}
