package router

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// A UNION of SELECTs that each read rows of the same sharded table,
// SELECT ... FROM t_order WHERE a UNION [ALL] SELECT ... FROM t_order
// WHERE b [ORDER BY ...] [LIMIT ...], is the union over the data nodes of
// the same UNION on each data node: a branch's rows on one data node are
// its rows there, and no branch joins another. So every route runs the
// whole statement on one data node (each branch reading that node's
// table), and the merge combines the routes' answers as for one SELECT:
// a k-way merge on the ORDER BY, duplicates dropped again for UNION
// DISTINCT, the LIMIT applied last (each route is sent LIMIT
// offset+count). MariaDB's own answer on each route gives the columns
// their UNION types and names. A data node is routed when any branch
// reads it.

// liftUnion recognises such a UNION in so (already walked) and marks its
// sharded references as top-level ones: every branch a plain SELECT (no
// grouping, aggregate, DISTINCT, window function, LIMIT or WITH of its
// own) that reads exactly one sharded table in its own block, the same
// table in every branch, and the same operator between all of them (all
// UNION ALL or all UNION DISTINCT); the ORDER BY names result columns by
// position or by the first branch's names.
func (a *analysis) liftUnion(so *ast.SetOprStmt) bool {
	if len(a.sharded) == 0 || so.With != nil || so.SelectList == nil || so.SelectList.With != nil || len(so.SelectList.Selects) < 2 {
		return false
	}
	var all *bool
	branches := map[*scope]bool{}
	var first *ast.SelectStmt
	for i, n := range so.SelectList.Selects {
		sel, op := unionBranchSelect(n)
		if sel == nil || !a.rowwise(sel, liftDerived) || hasWindows(sel) || sel.LockInfo != nil {
			return false
		}
		if i == 0 {
			first = sel
		} else {
			if op == nil {
				return false
			}
			var isAll bool
			switch *op {
			case ast.UnionAll:
				isAll = true
			case ast.Union:
			default:
				return false
			}
			if all != nil && *all != isAll {
				return false
			}
			all = &isAll
		}
		s := a.scopeOf[sel]
		if s == nil {
			return false
		}
		branches[s] = false
	}
	if so.OrderBy != nil {
		for _, by := range so.OrderBy.Items {
			if _, ok := unionOrderColumn(first, by.Expr); !ok {
				return false
			}
		}
	}
	for _, ref := range a.sharded {
		seen, ok := branches[ref.scope]
		if !ok || seen || ref.name != a.sharded[0].name {
			return false // nested deeper, two in a branch, or another table
		}
		branches[ref.scope] = true
	}
	for _, seen := range branches {
		if !seen {
			return false // a branch without the sharded table repeats on every route
		}
	}
	for _, ref := range a.sharded {
		ref.nested = false
	}
	a.unionLift = true
	return true
}

// derivedUnionAll returns the UNION ALL that sel reads as its one derived
// table, when it has no ORDER BY or LIMIT of its own (with them, or with
// UNION DISTINCT, its rows are not each data node's rows together).
func derivedUnionAll(sel *ast.SelectStmt) *ast.SetOprStmt {
	if sel.With != nil || sel.From == nil || sel.From.TableRefs == nil || sel.From.TableRefs.Right != nil {
		return nil
	}
	ts, ok := sel.From.TableRefs.Left.(*ast.TableSource)
	if !ok {
		return nil
	}
	so, ok := ts.Source.(*ast.SetOprStmt)
	if !ok || so.OrderBy != nil || so.Limit != nil || so.SelectList == nil || len(so.SelectList.Selects) < 2 {
		return nil
	}
	for _, n := range so.SelectList.Selects[1:] {
		if _, op := unionBranchSelect(n); op == nil || *op != ast.UnionAll {
			return nil
		}
	}
	return so
}

// unionBranchSelect returns the SELECT of a UNION branch and the
// operator before it: a SELECT, or one in parentheses, (SELECT ...) as
// Laravel writes every branch, which the parser reads as a list of one.
func unionBranchSelect(n ast.Node) (*ast.SelectStmt, *ast.SetOprType) {
	switch x := n.(type) {
	case *ast.SelectStmt:
		return x, x.AfterSetOperator
	case *ast.SetOprSelectList:
		if len(x.Selects) != 1 || x.With != nil || x.Limit != nil || x.OrderBy != nil {
			return nil, nil
		}
		sel, ok := x.Selects[0].(*ast.SelectStmt)
		if !ok {
			return nil, nil
		}
		return sel, x.AfterSetOperator
	}
	return nil, nil
}

// unionOrderColumn returns the 0-based result column an ORDER BY item of
// a UNION names: a position, or a name of the first branch's select list
// (an alias, or a column's name) when no wildcard comes before it.
func unionOrderColumn(first *ast.SelectStmt, e ast.ExprNode) (int, bool) {
	switch x := e.(type) {
	case *ast.PositionExpr:
		if x.P != nil || x.N < 1 {
			return 0, false
		}
		return x.N - 1, true
	case *ast.ColumnNameExpr:
		if x.Name.Table.L != "" {
			return 0, false
		}
		for i, f := range first.Fields.Fields {
			switch {
			case f.WildCard != nil:
				return 0, false
			case f.AsName.L != "":
				if f.AsName.L == x.Name.Name.L {
					return i, true
				}
			default:
				if c, ok := f.Expr.(*ast.ColumnNameExpr); ok && c.Name.Name.L == x.Name.Name.L {
					return i, true
				}
			}
		}
	}
	return 0, false
}

// prepareUnionMerge plans the merge of a lifted UNION (liftUnion) and
// rewrites its LIMIT for the routes.
func prepareUnionMerge(so *ast.SetOprStmt) (*selectMerge, error) {
	first, _ := unionBranchSelect(so.SelectList.Selects[0])
	m := &selectMerge{}
	if so.OrderBy != nil {
		for _, by := range so.OrderBy.Items {
			col, _ := unionOrderColumn(first, by.Expr)
			m.merge.Sort = append(m.merge.Sort, OrderKey{Column: ColumnRef(col), Desc: by.Desc})
		}
	}
	_, op := unionBranchSelect(so.SelectList.Selects[len(so.SelectList.Selects)-1])
	m.merge.Distinct = *op == ast.Union
	var err error
	if m.limit, err = limitOperandsOf(so.Limit); err != nil {
		return nil, err
	}
	if so.Limit != nil {
		// A route's first offset+count rows in the ORDER BY (any rows
		// without one; distinct ones for UNION DISTINCT) hold all the
		// merge needs.
		m.pushLimit = true
		so.Limit = &ast.Limit{Count: markerExpr(holeLimit, 0)}
	}
	if m.tmpl, err = buildTemplate(so); err != nil {
		return nil, err
	}
	return m, nil
}
