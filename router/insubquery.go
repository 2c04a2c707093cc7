package router

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"
)

// Django on MariaDB writes filter(related__x=...).update() as
//
//	UPDATE t SET ... WHERE t.id IN (SELECT U0.id FROM t U0 INNER JOIN rel U1 ON ... WHERE U1.x = ...)
//
// and a delete filtered on an aggregate as DELETE ... WHERE id IN
// (SELECT ... GROUP BY ... HAVING ...); on MySQL it wraps the subquery in
// a derived table, IN (SELECT * FROM (SELECT ...) subquery). Such a
// subquery is uncorrelated: its value is one list for the whole
// statement, which MariaDB reads before it changes a row. When the
// statement cannot run on each data node as it is, the proxy evaluates
// the subquery first, as a SELECT of its own (a locking read, in the
// statement's transaction), and routes the statement with the list in
// its place: InSubqueries finds the subqueries, ReplaceInSubqueries puts
// their values in.

// Decimal is a DECIMAL value, in MariaDB's text, for ReplaceInSubqueries:
// it is written as a decimal literal, which compares exactly, where a
// string would compare as a floating-point number.
type Decimal string

// InSubqueries returns, for each `expr [NOT] IN (SELECT ...)` of an
// UPDATE's or DELETE's WHERE clause (outside other subqueries) whose
// subquery names no table or alias of the statement around it, that
// subquery as the text of a SELECT ... FOR UPDATE, in the order of the
// WHERE clause; the derived-table wrapping SELECT * FROM (SELECT ...) x
// is taken off. A subquery with LIMIT that is not so wrapped is left
// alone (MariaDB refuses it). InSubqueries marks the statement's
// subqueries FOR UPDATE: parse again to use the statement elsewhere.
func InSubqueries(stmt ast.StmtNode) ([]string, error) {
	var sqls []string
	var err error
	eachInSubquery(stmt, func(p *ast.PatternInExpr, sel *ast.SelectStmt) ast.ExprNode {
		if err != nil {
			return p
		}
		if sel.LockInfo == nil {
			sel.LockInfo = &ast.SelectLockInfo{LockType: ast.SelectLockForUpdate}
		}
		var sql string
		if sql, err = restoreSQL(sel); err == nil {
			sqls = append(sqls, sql)
		}
		return p
	})
	return sqls, err
}

// ReplaceInSubqueries replaces the predicates InSubqueries finds in
// stmt, in the same order, by the values of their subqueries, and
// returns the statement's text (to parse again and plan): expr IN
// (v1, v2, ...), the values nil, int64, uint64, string or Decimal. An
// empty list is FALSE for IN and TRUE for NOT IN, whatever expr is, as
// MariaDB evaluates an empty subquery. With values nil, every predicate
// becomes TRUE: the statement then reaches every data node the rest of
// its WHERE clause does, which includes those it reaches with any list.
func ReplaceInSubqueries(stmt ast.StmtNode, values [][]any) (string, error) {
	n := 0
	eachInSubquery(stmt, func(p *ast.PatternInExpr, _ *ast.SelectStmt) ast.ExprNode {
		i := n
		n++
		switch {
		case values == nil:
			return ast.NewValueExpr(int64(1), "", "")
		case i >= len(values):
			return p
		case len(values[i]) == 0:
			if p.Not {
				return ast.NewValueExpr(int64(1), "", "")
			}
			return ast.NewValueExpr(int64(0), "", "")
		}
		list := make([]ast.ExprNode, len(values[i]))
		for j, v := range values[i] {
			if d, ok := v.(Decimal); ok {
				dec := new(driver.MyDecimal)
				if dec.FromString([]byte(d)) == nil {
					v = dec
				} else {
					v = string(d)
				}
			}
			list[j] = ast.NewValueExpr(v, "", "")
		}
		p.Sel, p.List = nil, list
		return p
	})
	if values != nil && n != len(values) {
		return "", errNotSupported("the statement has %d IN subqueries to replace, not %d", n, len(values))
	}
	return restoreSQL(stmt)
}

// eachInSubquery calls fn for each predicate InSubqueries describes, with
// the SELECT that gives its values, and puts what fn returns in its place.
func eachInSubquery(stmt ast.StmtNode, fn func(*ast.PatternInExpr, *ast.SelectStmt) ast.ExprNode) {
	var where *ast.ExprNode
	switch s := stmt.(type) {
	case *ast.UpdateStmt:
		where = &s.Where
	case *ast.DeleteStmt:
		where = &s.Where
	}
	if where == nil || *where == nil {
		return
	}
	if n, ok := (*where).Accept(&inSubqueryWalker{fn: fn}); ok {
		*where = n.(ast.ExprNode)
	}
}

type inSubqueryWalker struct {
	fn func(*ast.PatternInExpr, *ast.SelectStmt) ast.ExprNode
}

func (w *inSubqueryWalker) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.PatternInExpr:
		if sel := uncorrelatedInSelect(x); sel != nil {
			return w.fn(x, sel), true
		}
	case *ast.SubqueryExpr:
		return n, true // an EXISTS, a scalar subquery, a row's subquery
	}
	return n, false
}

func (w *inSubqueryWalker) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// uncorrelatedInSelect returns the SELECT whose values the IN predicate p
// tests, or nil when p does not test one uncorrelated single value.
func uncorrelatedInSelect(p *ast.PatternInExpr) *ast.SelectStmt {
	if p.Sel == nil {
		return nil
	}
	if _, ok := p.Expr.(*ast.RowExpr); ok {
		return nil
	}
	sq, ok := p.Sel.(*ast.SubqueryExpr)
	if !ok {
		return nil
	}
	sel, ok := sq.Query.(*ast.SelectStmt)
	if !ok {
		return nil
	}
	if inner := derivedOnly(sel); inner != nil {
		sel = inner
	} else if sel.Limit != nil {
		return nil
	}
	if correlated(sel) {
		return nil
	}
	return sel
}

// derivedOnly returns the SELECT of sel's one derived table when sel is
// just SELECT * FROM (SELECT ...) alias.
func derivedOnly(sel *ast.SelectStmt) *ast.SelectStmt {
	if sel.From == nil || sel.From.TableRefs == nil || sel.From.TableRefs.Right != nil || sel.Where != nil ||
		sel.GroupBy != nil || sel.Having != nil || sel.OrderBy != nil || sel.Limit != nil || sel.Distinct ||
		sel.LockInfo != nil || len(sel.WindowSpecs) > 0 || sel.With != nil || sel.Fields == nil || len(sel.Fields.Fields) != 1 {
		return nil
	}
	if wc := sel.Fields.Fields[0].WildCard; wc == nil || wc.Table.L != "" {
		return nil
	}
	ts, ok := sel.From.TableRefs.Left.(*ast.TableSource)
	if !ok {
		return nil
	}
	inner, ok := ts.Source.(*ast.SelectStmt)
	if !ok {
		return nil
	}
	return inner
}

// correlated reports whether sel qualifies a column with a name that no
// table or alias inside it declares: a reference to the statement
// around it. (An unqualified column of the outer statement is found when
// the SELECT runs alone: MariaDB answers that it knows no such column.)
func correlated(sel *ast.SelectStmt) bool {
	c := &nameCollector{declared: map[string]bool{}}
	sel.Accept(c)
	for _, q := range c.qualifiers {
		if !c.declared[q] {
			return true
		}
	}
	return false
}

type nameCollector struct {
	declared   map[string]bool
	qualifiers []string
}

func (c *nameCollector) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.TableSource:
		if x.AsName.L != "" {
			c.declared[x.AsName.L] = true
		} else if t, ok := x.Source.(*ast.TableName); ok {
			c.declared[t.Name.L] = true
		}
	case *ast.ColumnName:
		if x.Table.L != "" {
			c.qualifiers = append(c.qualifiers, strings.ToLower(x.Table.O))
		}
	}
	return n, false
}

func (c *nameCollector) Leave(n ast.Node) (ast.Node, bool) { return n, true }
