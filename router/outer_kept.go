package router

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// nullsMerge reports whether the merge of a statement's routes gives
// MariaDB's answer although each data node returns j's kept rows that
// find no match there: j's block is the statement's own, it groups or
// is DISTINCT, groups (if at all) by columns of j's kept side, and
// selects (and filters in HAVING) columns of the kept side and COUNT,
// SUM, MIN, MAX or AVG of one column of the nullable side, whose NULLs
// those ignore; its WHERE clause reads no column of the nullable side (a
// kept row without a match on one data node would pass a test of its
// NULLs there). Each kept row MariaDB returns comes from some route, a
// repeated one adds only NULLs to its group, and DISTINCT or the groups
// drop the repeats: Pony's select((c.name, count(c.orders)) for c in
// Customer), Django's Customer.objects.annotate(Count('orders')).
func (a *analysis) nullsMerge(j keptOuterJoin) bool {
	if j.scope == nil || j.scope.nested {
		return false
	}
	var sel *ast.SelectStmt
	for st, s := range a.scopeOf {
		if s == j.scope {
			sel = st
		}
	}
	if sel == nil || sel.Fields == nil {
		return false
	}
	c := &nullsChecker{a: a, j: j}
	if sel.Where != nil {
		c.nullableRead = true
		sel.Where.Accept(c)
		c.nullableRead = false
	}
	for _, f := range sel.Fields.Fields {
		if f.WildCard != nil {
			return false
		}
		f.Expr.Accept(c)
	}
	if sel.GroupBy != nil {
		for _, it := range sel.GroupBy.Items {
			cn, ok := it.Expr.(*ast.ColumnNameExpr)
			if !ok || !c.in(cn.Name, j.keptBlock) {
				return false
			}
		}
	}
	if sel.Having != nil {
		sel.Having.Accept(c)
	}
	return !c.bad && (sel.Distinct || sel.GroupBy != nil || c.aggregates > 0)
}

// nullsChecker walks the expressions of nullsMerge's block.
type nullsChecker struct {
	a          *analysis
	j          keptOuterJoin
	bad        bool
	aggregates int
	// nullableRead: the WHERE clause, where no column may be of the
	// nullable side (any other is fine).
	nullableRead bool
}

// in reports whether cn names a reference of refs, qualified.
func (c *nullsChecker) in(cn *ast.ColumnName, refs []int) bool {
	i := c.a.resolve(c.j.scope, cn)
	for _, r := range refs {
		if r == i {
			return true
		}
	}
	return false
}

func (c *nullsChecker) Enter(n ast.Node) (ast.Node, bool) {
	if c.bad {
		return n, true
	}
	switch x := n.(type) {
	case *ast.SubqueryExpr, *ast.WindowFuncExpr, *ast.ExistsSubqueryExpr:
		c.bad = true
		return n, true
	case *ast.AggregateFuncExpr:
		c.aggregates++
		if c.nullableRead || len(x.Args) != 1 {
			c.bad = true
			return n, true
		}
		switch strings.ToLower(x.F) {
		case ast.AggFuncCount, ast.AggFuncSum, ast.AggFuncMin, ast.AggFuncMax, ast.AggFuncAvg:
		default:
			c.bad = true
			return n, true
		}
		cn, ok := x.Args[0].(*ast.ColumnNameExpr)
		if !ok || !c.in(cn.Name, c.j.block) {
			c.bad = true
		}
		return n, true
	case *ast.ColumnNameExpr:
		if c.nullableRead {
			c.bad = x.Name.Table.L == "" || c.in(x.Name, c.j.block)
		} else {
			c.bad = !c.in(x.Name, c.j.keptBlock)
		}
		return n, true
	}
	return n, false
}

func (c *nullsChecker) Leave(n ast.Node) (ast.Node, bool) { return n, true }
