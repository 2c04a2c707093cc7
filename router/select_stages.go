package router

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/charset"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/types"
)

// The stages of prepareMerge, in the order it calls them: read the select
// list, plan its aggregates and the expressions over them, the GROUP BY
// keys, HAVING, ORDER BY and LIMIT, choose how the routes are sorted and
// grouped (planShape), rewrite the routes' statement, and finally, once
// every hidden column is known, turn field indexes into the Merge's
// ColumnRefs (the finish stages).

// readFields records each select-list field's restored text (empty for a
// wildcard) and where the wildcards lie.
func (b *mergeBuilder) readFields() error {
	for j, f := range b.fields {
		if f.WildCard != nil {
			if b.wildLo < 0 {
				b.wildLo = j
			}
			b.wildHi = j
			b.texts = append(b.texts, "")
			continue
		}
		t, err := exprText(f.Expr)
		if err != nil {
			return err
		}
		b.texts = append(b.texts, t)
	}
	return nil
}

// planAggregates plans every aggregate that is a whole field of the select
// list.
func (b *mergeBuilder) planAggregates() error {
	for j := 0; j < b.visible; j++ {
		f := b.fields[j]
		if f.Expr == nil {
			continue
		}
		if agg, ok := f.Expr.(*ast.AggregateFuncExpr); ok {
			if !b.addressable(j) {
				return errNotSupported("an aggregate between two wildcards of the select list cannot be merged across data nodes; list the columns")
			}
			if _, err := b.aggregate(agg, j); err != nil {
				return err
			}
			continue
		}
	}
	return nil
}

// planComputed plans the expressions over aggregates, once every aggregate
// of the select list has its entry (which their hidden aggregates then
// share).
func (b *mergeBuilder) planComputed() error {
	for j := 0; j < b.visible; j++ {
		f := b.fields[j]
		if f.Expr == nil || !containsAggregate(f.Expr) {
			continue
		}
		if _, ok := f.Expr.(*ast.AggregateFuncExpr); ok {
			continue
		}
		if !b.addressable(j) {
			return errNotSupported("an expression over aggregates between two wildcards of the select list cannot be merged across data nodes; list the columns")
		}
		x, params, err := b.expr(f.Expr, inSelect)
		if err != nil {
			return err
		}
		b.computed = append(b.computed, computedSpec{field: j, expr: x, params: params})
	}
	return nil
}

// planGroupKeys resolves GROUP BY's items to result columns.
func (b *mergeBuilder) planGroupKeys() error {
	if b.sel.GroupBy == nil {
		return nil
	}
	b.clause = ClauseGroupBy
	defer func() { b.clause = 0 }()
	for _, it := range b.sel.GroupBy.Items {
		ref, err := b.keyRef(it.Expr, false)
		if err != nil {
			return err
		}
		b.groupKeys = append(b.groupKeys, ref)
	}
	return nil
}

// planHaving pushes what it can of HAVING down to the routes (under GROUP
// BY) and plans the rest as the merge's filter.
func (b *mergeBuilder) planHaving() error {
	b.clause = ClauseHaving
	defer func() { b.clause = 0 }()
	if len(b.groupKeys) > 0 && !b.sel.GroupBy.Rollup {
		// Under ROLLUP, HAVING filters the super-aggregate rows too,
		// which a WHERE on the routes would change instead.
		b.pushHaving(b.sel)
	}
	if b.sel.Having == nil {
		return nil
	}
	h, params, err := b.expr(b.sel.Having.Expr, inHaving)
	if err != nil {
		return err
	}
	b.having, b.havingParams = h, params
	return nil
}

// planOrder resolves ORDER BY's non-constant items to result columns.
func (b *mergeBuilder) planOrder() error {
	if b.sel.OrderBy == nil {
		return nil
	}
	b.clause = ClauseOrderBy
	defer func() { b.clause = 0 }()
	for _, it := range b.sel.OrderBy.Items {
		if isConstant(it.Expr) {
			continue
		}
		ref, err := b.keyRef(it.Expr, true)
		if err != nil {
			return err
		}
		b.orderRefs = append(b.orderRefs, ref)
		b.orderDesc = append(b.orderDesc, it.Desc)
	}
	return nil
}

// limitOperandsOf reads LIMIT's count and offset; nil without LIMIT.
func limitOperandsOf(limit *ast.Limit) (*limitOperands, error) {
	if limit == nil {
		return nil, nil
	}
	lo := &limitOperands{offset: operand{param: -1, val: int64(0)}}
	var ok bool
	if lo.count, ok = limitOperand(limit.Count); !ok {
		return nil, errNotSupported("LIMIT must be an integer or a parameter")
	}
	if limit.Offset != nil {
		if lo.offset, ok = limitOperand(limit.Offset); !ok {
			return nil, errNotSupported("OFFSET must be an integer or a parameter")
		}
	}
	return lo, nil
}

// planShape chooses how the routes are ordered and whether the merge
// groups, streams or hashes, and whether LIMIT may be pushed to the
// routes; it rewrites sel's ORDER BY and GROUP BY to match.
func (b *mergeBuilder) planShape(m *selectMerge) error {
	sel := b.sel
	grouping := len(b.groupKeys) > 0 || len(b.aggs) > 0
	distinctAggs := len(b.distinct) > 0
	// ORDER BY NULL (or another constant): the client asks for no order,
	// not even GROUP BY's.
	orderedByNothing := sel.OrderBy != nil && len(b.orderRefs) == 0
	if len(b.groupKeys) > 0 && (sel.Distinct || !groupOrder(b.orderRefs, b.orderDesc, b.groupKeys)) && b.planDependent(b.having) {
		return errNotSupported("an expression that computes with an AVG (or names a computed column) under GROUP BY, with DISTINCT or an ORDER BY other than the group keys, cannot be merged across data nodes: MariaDB computes it from the exact or from the rounded average depending on its plan (indexes, DISTINCT aggregates); order by the group keys, or select the AVG itself")
	}
	switch {
	case !grouping:
		if sel.Distinct && len(b.orderRefs) == 0 && b.wildLo < 0 {
			// Sorted routes let the merge drop duplicates while streaming.
			sel.OrderBy = &ast.OrderByClause{}
			for j := 0; j < b.visible; j++ {
				sel.OrderBy.Items = append(sel.OrderBy.Items, &ast.ByItem{Expr: &ast.PositionExpr{N: j + 1}})
				b.orderRefs = append(b.orderRefs, mref{field: j, abs: -1})
				b.orderDesc = append(b.orderDesc, false)
			}
			m.merge.AnyOrder = true
		}
		// HAVING without grouping filters rows after the merge, and
		// DISTINCT over hidden columns keeps more rows per route than the
		// client sees: either way a route's first rows may not suffice.
		m.pushLimit = !(sel.Distinct && b.hidden > 0) && sel.Having == nil
	case len(b.groupKeys) == 0:
		sel.OrderBy = nil
		if distinctAggs {
			sel.GroupBy = &ast.GroupByClause{}
		}
	default:
		streamed := len(b.orderRefs) == 0 || sameKeys(b.orderRefs, b.groupKeys)
		if streamed && len(b.orderRefs) == 0 {
			sel.OrderBy = &ast.OrderByClause{}
			for i, it := range sel.GroupBy.Items {
				sel.OrderBy.Items = append(sel.OrderBy.Items, &ast.ByItem{Expr: it.Expr})
				b.orderRefs = append(b.orderRefs, b.groupKeys[i])
				b.orderDesc = append(b.orderDesc, false)
			}
		}
		if !streamed {
			sel.OrderBy = nil
		}
		m.merge.Group = &Group{Streamed: streamed}
		// With AnyOrder the merge may hash the groups, and then needs
		// every route's rows of every group, not its first ones.
		m.merge.AnyOrder = streamed && orderedByNothing
		m.pushLimit = streamed && sel.Having == nil && !sel.Distinct && !distinctAggs && !m.merge.AnyOrder
	}
	if grouping && m.merge.Group == nil {
		m.merge.Group = &Group{Streamed: true}
	}
	return nil
}

// rewriteRoutes finishes the statement the routes run: DISTINCT
// aggregates' arguments join GROUP BY, HAVING goes (the merge filters),
// LIMIT becomes the pushed-down hole or goes, and the hidden fields join
// the select list.
func (b *mergeBuilder) rewriteRoutes(m *selectMerge) {
	sel := b.sel
	for i, arg := range b.distinct {
		sel.GroupBy.Items = append(sel.GroupBy.Items, &ast.ByItem{Expr: arg})
		if b.exactArgs[i] {
			sel.GroupBy.Items = append(sel.GroupBy.Items, &ast.ByItem{Expr: castBinary(arg)})
		}
	}
	sel.Having = nil
	if sel.Limit != nil {
		if m.pushLimit {
			sel.Limit = &ast.Limit{Count: markerExpr(holeLimit, 0)}
		} else {
			sel.Limit = nil
		}
	}
	if len(b.fields) > b.visible {
		sel.Fields.Fields = b.fields
	}
}

// finishSort sets the merge's hidden-column count, DISTINCT, and its sort
// keys: Sort when the routes arrive in that order, OrderBy when the merge
// must sort the groups itself.
func (b *mergeBuilder) finishSort(m *selectMerge, total int) {
	var orderKeys []OrderKey
	for i, r := range b.orderRefs {
		orderKeys = append(orderKeys, OrderKey{Column: b.colRef(r, total), Desc: b.orderDesc[i]})
	}
	mg := &m.merge
	mg.Hidden = b.hidden
	mg.Distinct = b.sel.Distinct
	switch {
	case mg.Group == nil || mg.Group.Streamed && len(b.groupKeys) > 0:
		mg.Sort = orderKeys
	case len(b.groupKeys) > 0:
		mg.OrderBy = orderKeys
	}
}

// finishGroup fills the merge's group keys and aggregates.
func (b *mergeBuilder) finishGroup(m *selectMerge, total int) {
	g := m.merge.Group
	if g == nil {
		return
	}
	for _, k := range b.groupKeys {
		g.Keys = append(g.Keys, b.colRef(k, total))
	}
	for _, s := range b.aggs {
		ag := Aggregate{Func: s.fn, Column: b.colRef(mref{field: s.field, abs: -1}, total), Distinct: s.distinct}
		for _, x := range s.args {
			ag.Args = append(ag.Args, b.colRef(x, total))
		}
		if s.fn == AggAvg && !s.distinct {
			ag.Sum, ag.Count = b.colRef(s.sum, total), b.colRef(s.count, total)
		}
		if s.fn.Variance() {
			ag.Sum, ag.Count, ag.VarPop = b.colRef(s.sum, total), b.colRef(s.count, total), b.colRef(s.varPop, total)
		}
		if s.concat != nil {
			b.finishGroupConcat(&ag, s, total)
		}
		g.Aggregates = append(g.Aggregates, ag)
	}
}

// finishComputed fills the merge's computed columns, or keeps them for
// binding when any has parameters.
func (b *mergeBuilder) finishComputed(m *selectMerge, total int) {
	mg := &m.merge
	var computeParams bool
	for _, c := range b.computed {
		b.finishExpr(c.expr, total)
		mg.Compute = append(mg.Compute, Computed{Column: b.colRef(mref{field: c.field, abs: -1}, total), Expr: c.expr})
		computeParams = computeParams || c.params
	}
	if computeParams {
		m.compute, mg.Compute = mg.Compute, nil
	}
}

// finishHaving sets the merge's HAVING filter, or keeps it for binding
// when it has parameters.
func (b *mergeBuilder) finishHaving(m *selectMerge, total int) {
	if b.having == nil {
		return
	}
	b.finishExpr(b.having, total)
	if b.havingParams {
		m.having = b.having
	} else {
		m.merge.Having = b.having
	}
}

// castBinary is CAST(e AS BINARY): e's bytes, compared as bytes.
func castBinary(e ast.ExprNode) ast.ExprNode {
	tp := types.NewFieldType(mysql.TypeVarString)
	tp.SetCharset(charset.CharsetBin)
	tp.SetCollate(charset.CollationBin)
	tp.AddFlag(mysql.BinaryFlag)
	return &ast.FuncCastExpr{Expr: e, Tp: tp, FunctionType: ast.CastFunction}
}
