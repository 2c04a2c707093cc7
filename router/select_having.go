package router

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
)

// pushHaving moves the conjuncts of HAVING that depend only on GROUP BY
// columns into WHERE, as MariaDB's condition_pushdown_from_having does:
// MariaDB then filters rows before grouping, so HAVING LENGTH(code) > 3
// keeps the rows of 'abc ' and drops those of 'abc' even where a PAD
// SPACE collation groups them together. The routes get them in WHERE too;
// the rest stays for the merge. MariaDB 10.11 pushes nothing from a
// statement with LIMIT: HAVING then sees each group's first row.
func (b *mergeBuilder) pushHaving(sel *ast.SelectStmt) {
	if sel.Having == nil || sel.GroupBy == nil || sel.Limit != nil {
		return
	}
	groupCols := b.groupColumns(sel.GroupBy)
	if len(groupCols) == 0 {
		return
	}
	var keep, push []ast.ExprNode
	for _, c := range conjuncts(sel.Having.Expr, nil) {
		if b.pushable(c, groupCols) {
			push = append(push, c)
		} else {
			keep = append(keep, c)
		}
	}
	for _, c := range push {
		if sel.Where == nil {
			sel.Where = &ast.ParenthesesExpr{Expr: c}
		} else {
			sel.Where = &ast.BinaryOperationExpr{Op: opcode.LogicAnd, L: parenthesized(sel.Where), R: &ast.ParenthesesExpr{Expr: c}}
		}
	}
	if len(keep) == 0 {
		sel.Having = nil
		return
	}
	h := keep[0]
	for _, c := range keep[1:] {
		h = &ast.BinaryOperationExpr{Op: opcode.LogicAnd, L: h, R: c}
	}
	sel.Having.Expr = h
}

func parenthesized(e ast.ExprNode) ast.ExprNode {
	if _, ok := e.(*ast.ParenthesesExpr); ok {
		return e
	}
	return &ast.ParenthesesExpr{Expr: e}
}

// conjuncts appends the operands of e's top-level ANDs to out.
func conjuncts(e ast.ExprNode, out []ast.ExprNode) []ast.ExprNode {
	switch x := e.(type) {
	case *ast.ParenthesesExpr:
		return conjuncts(x.Expr, out)
	case *ast.BinaryOperationExpr:
		if x.Op == opcode.LogicAnd {
			return conjuncts(x.R, conjuncts(x.L, out))
		}
	}
	return append(out, e)
}

// groupColumns returns the GROUP BY items that are columns: named, or
// named by a position or an alias of the select list.
func (b *mergeBuilder) groupColumns(g *ast.GroupByClause) []*ast.ColumnName {
	var out []*ast.ColumnName
	for _, it := range g.Items {
		e := it.Expr
		if p, ok := e.(*ast.PositionExpr); ok && p.N >= 1 && p.N <= b.visible {
			e = b.fields[p.N-1].Expr
		} else if cn, ok := e.(*ast.ColumnNameExpr); ok {
			if j := b.aliasOf(cn); j >= 0 {
				e = b.fields[j].Expr
			}
		}
		if cn, ok := e.(*ast.ColumnNameExpr); ok {
			if _, param := paramOf(cn); !param {
				out = append(out, cn.Name)
			}
		}
	}
	return out
}

// pushable reports a conjunct without aggregates, subqueries, parameters
// or functions whose value changes from row to row, whose every column is
// a GROUP BY column. A select-list alias of a GROUP BY column is replaced
// by the column, for WHERE.
func (b *mergeBuilder) pushable(c ast.ExprNode, groupCols []*ast.ColumnName) bool {
	if containsAggregate(c) {
		return false
	}
	var f pushFinder
	c.Accept(&f)
	if f.blocked || len(f.names) == 0 {
		return false
	}
	for _, n := range f.names {
		cn := n.Name
		if j := b.aliasOf(n); j >= 0 {
			fc, ok := b.fields[j].Expr.(*ast.ColumnNameExpr)
			if !ok {
				return false
			}
			cn = fc.Name
		}
		if !inColumns(cn, groupCols) {
			return false
		}
	}
	for _, n := range f.names {
		if j := b.aliasOf(n); j >= 0 {
			n.Name = b.fields[j].Expr.(*ast.ColumnNameExpr).Name
		}
	}
	return true
}

func inColumns(cn *ast.ColumnName, cols []*ast.ColumnName) bool {
	for _, g := range cols {
		if g.Name.L == cn.Name.L && (cn.Table.L == "" || g.Table.L == "" || cn.Table.L == g.Table.L) {
			return true
		}
	}
	return false
}

// volatile reports a function MariaDB does not push from HAVING: its
// value differs between calls or it acts on the session.
func volatile(name string) bool {
	switch name {
	case "rand", "uuid", "uuid_short", "sleep", "sysdate", "benchmark", "get_lock", "release_lock", "is_free_lock",
		"is_used_lock", "release_all_locks", "last_insert_id", "row_count", "found_rows", "connection_id",
		"nextval", "lastval", "setval", "master_pos_wait":
		return true
	}
	return false
}

// pushFinder collects a conjunct's column names and notes what keeps it
// in HAVING.
type pushFinder struct {
	names   []*ast.ColumnNameExpr
	blocked bool
}

func (f *pushFinder) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.SubqueryExpr, *ast.WindowFuncExpr, *ast.VariableExpr, *ast.DefaultExpr:
		f.blocked = true
	case *ast.FuncCallExpr:
		f.blocked = f.blocked || volatile(x.FnName.L)
	case *ast.ColumnNameExpr:
		if _, ok := paramOf(x); ok {
			f.blocked = true
		} else {
			f.names = append(f.names, x)
		}
	}
	return n, f.blocked
}

func (f *pushFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }
