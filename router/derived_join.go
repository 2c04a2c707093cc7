package router

import (
	"math"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// A derived table that reads one sharded table row by row (no grouping,
// aggregate, DISTINCT or LIMIT: rowwise), selecting plain columns, has on
// each data node exactly the rows of that data node's physical table that
// its WHERE clause keeps. Joined in the statement around it with a table
// of the same binding group, it pairs data node by data node as the
// table itself would: SELECT o.*, i.item_id FROM (SELECT order_id,
// user_id FROM t_order WHERE ...) AS o LEFT JOIN t_order_item AS i ON
// o.order_id = i.order_id. Such a derived table is lifted: its sharded
// reference routes the statement as a top-level one, and the outer
// block's columns of the derived table resolve, for pairing, to the
// table's columns they select (liftedDerived).
//
// This is the second step of a derived table with LIMIT the proxy
// evaluates first (Sequelize's findAll with an include and a limit,
// derived_limit.go): the rows it chose are written in as a key IN list under
// LIMIT 18446744073709551615, which keeps MariaDB materializing the
// derived table (and describing its columns as a materialized derived
// table's) and cuts no row.

// liftedDerived is a lifted derived table: the sharded reference it
// reads, and the table column each of its columns selects.
type liftedDerived struct {
	ref int
	// columns maps a derived column's lower-case name to the table's
	// column; wildcard maps every other name to itself.
	columns  map[string]string
	wildcard bool
}

// liftJoinedDerived lifts the derived tables of sel's FROM clause, a
// top-level block that joins them with other tables, that read one
// sharded table row by row.
func (a *analysis) liftJoinedDerived(sel *ast.SelectStmt) {
	if a.setOp || sel.Kind != ast.SelectStmtKindSelect || sel.From == nil || sel.From.TableRefs == nil || sel.From.TableRefs.Right == nil {
		return
	}
	outer := a.scopeOf[sel]
	if outer == nil {
		return
	}
	eachDerivedTable(sel, func(ts *ast.TableSource, inner *ast.SelectStmt) {
		if ts.AsName.L == "" {
			return
		}
		if d := a.liftable(inner); d != nil {
			a.refs[d.ref].nested = false
			if outer.lifted == nil {
				outer.lifted = map[string]*liftedDerived{}
			}
			outer.lifted[ts.AsName.L] = d
		}
	})
}

// eachDerivedTable calls fn for each derived table of sel's FROM clause
// that is a SELECT (not a set operation).
func eachDerivedTable(sel *ast.SelectStmt, fn func(ts *ast.TableSource, inner *ast.SelectStmt)) {
	EachTableSource(sel, func(ts *ast.TableSource) {
		if inner, ok := ts.Source.(*ast.SelectStmt); ok {
			fn(ts, inner)
		}
	})
}

// EachTableSource calls fn for each table source (a table or a derived
// table) of sel's FROM clause, through its joins, left to right.
func EachTableSource(sel *ast.SelectStmt, fn func(ts *ast.TableSource)) {
	if sel.From == nil || sel.From.TableRefs == nil {
		return
	}
	var walk func(n ast.ResultSetNode)
	walk = func(n ast.ResultSetNode) {
		switch x := n.(type) {
		case *ast.Join:
			walk(x.Left)
			if x.Right != nil {
				walk(x.Right)
			}
		case *ast.TableSource:
			fn(x)
		}
	}
	walk(sel.From.TableRefs)
}

// liftable returns inner, a derived table's SELECT, as a liftedDerived
// when it reads one sharded table alone, row by row, and selects only
// its columns; nil otherwise. A sharded table in a subquery of its WHERE
// clause stays nested: it pairs with the derived table's data node when
// correlated with its table as a subquery is with a top-level one
// (bindCorrelated), as Sequelize's required: true include writes it
// (WHERE (SELECT order_id FROM t_order_item WHERE t_order_item.order_id
// = t_order.order_id LIMIT 1) IS NOT NULL), and else routing refuses it.
func (a *analysis) liftable(inner *ast.SelectStmt) *liftedDerived {
	s := a.scopeOf[inner]
	if s == nil || !a.rowwise(inner, liftDerived) || hasWindows(inner) || inner.LockInfo != nil ||
		inner.From == nil || inner.From.TableRefs == nil || inner.From.TableRefs.Right != nil {
		return nil
	}
	ts, ok := inner.From.TableRefs.Left.(*ast.TableSource)
	if !ok {
		return nil
	}
	if _, ok := ts.Source.(*ast.TableName); !ok {
		return nil
	}
	d := &liftedDerived{ref: -1, columns: map[string]string{}}
	for _, ref := range a.sharded {
		switch {
		case ref.scope == s && d.ref < 0:
			d.ref = ref.idx
		case ref.scope == s:
			// A second sharded table.
			return nil
		}
	}
	if d.ref < 0 {
		return nil
	}
	for _, f := range inner.Fields.Fields {
		if f.WildCard != nil {
			d.wildcard = true
			continue
		}
		col, ok := f.Expr.(*ast.ColumnNameExpr)
		if !ok {
			return nil
		}
		name := col.Name.Name.L
		if f.AsName.L != "" {
			name = f.AsName.L
		}
		d.columns[name] = col.Name.Name.L
	}
	return d
}

// derivedColumn resolves a qualified column of a lifted derived table
// visible from block s to the sharded reference it reads and the
// table's column it selects.
func (a *analysis) derivedColumn(s *scope, cn *ast.ColumnName) (ref int, col string, ok bool) {
	if cn.Table.L == "" || cn.Schema.L != "" {
		return -1, "", false
	}
	for ; s != nil; s = s.parent {
		if !s.derived[cn.Table.L] {
			continue
		}
		d := s.lifted[cn.Table.L]
		if d == nil {
			return -1, "", false
		}
		if col, ok := d.columns[cn.Name.L]; ok {
			return d.ref, col, true
		}
		if d.wildcard {
			return d.ref, cn.Name.L, true
		}
		return -1, "", false
	}
	return -1, "", false
}

// unboundedLimit reports LIMIT 18446744073709551615 without OFFSET,
// which cuts no row.
func unboundedLimit(l *ast.Limit) bool {
	if l == nil || l.Offset != nil {
		return false
	}
	v, ok := l.Count.(ast.ValueExpr)
	if !ok {
		return false
	}
	n, ok := v.GetValue().(uint64)
	return ok && n == math.MaxUint64
}
