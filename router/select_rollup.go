package router

import (
	"slices"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
)

// checkRollup gives MariaDB's error for ORDER BY beside WITH ROLLUP
// (before planShape, which orders the routes by the group keys).
func checkRollup(sel *ast.SelectStmt) error {
	if sel.GroupBy != nil && sel.GroupBy.Rollup && sel.OrderBy != nil {
		return newError(CodeWrongUsage, "HY000", "Incorrect usage of CUBE/ROLLUP and ORDER BY")
	}
	return nil
}

// planRollup plans GROUP BY ... WITH ROLLUP (after planShape). The routes
// group without it: their super-aggregate rows could not be merged (a
// route's grand total is not the others'), so the merge computes them
// from the routes' rows, which arrive sorted by the group keys (see
// Group.Rollup). MariaDB refuses ORDER BY beside ROLLUP; a select-list or
// HAVING expression of the group keys is refused here, since in a super
// row MariaDB computes it over the NULL keys, which the merge cannot.
func (b *mergeBuilder) planRollup(m *selectMerge) error {
	sel := b.sel
	if sel.GroupBy == nil || !sel.GroupBy.Rollup {
		return nil
	}
	if b.wildLo >= 0 {
		return errNotSupported("GROUP BY ... WITH ROLLUP over several data nodes needs a select list of the group keys and aggregates, without *")
	}
	if sel.Distinct {
		// MariaDB keeps super-aggregate rows that repeat a group's
		// visible values.
		return errNotSupported("SELECT DISTINCT ... WITH ROLLUP over several data nodes is not supported")
	}
	if sel.Having != nil && b.nullTestOfKey(sel.Having.Expr) {
		// MariaDB folds x IS NULL to false for a NOT NULL column before
		// it adds the super rows, whose x is NULL; the router does not
		// know which columns are NOT NULL.
		return errNotSupported("HAVING ... IS [NOT] NULL (or ISNULL, <=>) on a group key with WITH ROLLUP over several data nodes is not supported")
	}
	g := m.merge.Group
	if g == nil || !g.Streamed {
		return errNotSupported("GROUP BY ... WITH ROLLUP over several data nodes needs routes sorted by the group keys")
	}
	for _, k := range b.groupKeys {
		if k.abs >= 0 {
			return errNotSupported("GROUP BY ... WITH ROLLUP over several data nodes does not take positions past a wildcard")
		}
	}
	for j := range b.fields {
		if !b.rollupField(j) {
			text, _ := restoreSQL(b.fields[j].Expr)
			return errNotSupported("GROUP BY ... WITH ROLLUP over several data nodes takes group keys and aggregates (or expressions over aggregates), not %s, which MariaDB computes anew over the NULL keys of a super-aggregate row", text)
		}
	}
	// The super rows follow their groups in the keys' order, ascending
	// or as GROUP BY says: the routes are sorted that way.
	for i, it := range sel.GroupBy.Items {
		b.orderDesc[i] = it.Desc
		sel.OrderBy.Items[i].Desc = it.Desc
	}
	sel.GroupBy.Rollup = false
	g.Rollup = true
	m.pushLimit = false
	return nil
}

// rollupField reports whether field j has a value the merge can give in a
// super-aggregate row: a group key (NULL there), an aggregate or one of
// its partial or argument columns (merged from the routes' rows), an
// expression over aggregates whose non-aggregate parts are such fields,
// or a session variable (GROUP_CONCAT's group_concat_max_len).
func (b *mergeBuilder) rollupField(j int) bool {
	for _, k := range b.groupKeys {
		if k.field == j {
			return true
		}
	}
	if slices.Contains(b.distinctFields, j) {
		return true
	}
	for _, c := range b.computed {
		// The merge computes it over the row's merged columns; its
		// leaves that are not aggregates are fields checked themselves.
		if c.field == j {
			return true
		}
	}
	switch e := b.fields[j].Expr.(type) {
	case *ast.AggregateFuncExpr, *ast.VariableExpr:
		return true
	case nil:
		return false
	default:
		if !containsAggregate(e) {
			return false
		}
		// Expressions over aggregates are computed by the merge (and a
		// variance's hidden VAR_POP(x) + 0e0 is a partial); their names
		// outside the aggregates must be keys.
		var names outsideAggregates
		e.Accept(&names)
		for _, n := range names.names {
			if !b.isGroupKey(n) {
				return false
			}
		}
		return true
	}
}

// nullTestOfKey reports an IS [NOT] NULL, ISNULL() or <=> of a group key
// in e.
func (b *mergeBuilder) nullTestOfKey(e ast.ExprNode) bool {
	var f nullTests
	e.Accept(&f)
	for _, x := range f.tests {
		if n, ok := x.(*ast.ColumnNameExpr); ok && (b.isGroupKey(n) || b.aliasOf(n) >= 0) {
			return true
		}
	}
	return false
}

// nullTests collects the operands of IS [NOT] NULL, ISNULL() and <=>
// outside subqueries.
type nullTests struct{ tests []ast.ExprNode }

func (f *nullTests) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.SubqueryExpr:
		return n, true
	case *ast.IsNullExpr:
		f.add(x.Expr)
	case *ast.BinaryOperationExpr:
		if x.Op == opcode.NullEQ {
			f.add(x.L)
			f.add(x.R)
		}
	case *ast.FuncCallExpr:
		if x.FnName.L == ast.IsNull && len(x.Args) == 1 {
			f.add(x.Args[0])
		}
	}
	return n, false
}

func (f *nullTests) add(e ast.ExprNode) {
	for {
		p, ok := e.(*ast.ParenthesesExpr)
		if !ok {
			break
		}
		e = p.Expr
	}
	f.tests = append(f.tests, e)
}

func (f *nullTests) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// outsideAggregates collects the column names of an expression outside
// aggregates and subqueries.
type outsideAggregates struct{ names []*ast.ColumnNameExpr }

func (f *outsideAggregates) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.SubqueryExpr, *ast.AggregateFuncExpr:
		return n, true
	case *ast.ColumnNameExpr:
		f.names = append(f.names, x)
	}
	return n, false
}

func (f *outsideAggregates) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// isGroupKey reports a name that is a GROUP BY key.
func (b *mergeBuilder) isGroupKey(n *ast.ColumnNameExpr) bool {
	t, _ := exprText(n)
	for _, it := range b.sel.GroupBy.Items {
		if kt, _ := exprText(it.Expr); kt == t {
			return true
		}
	}
	return false
}
