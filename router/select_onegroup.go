package router

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
)

// MariaDB drops the ORDER BY of a grouped SELECT whose every GROUP BY
// column the WHERE fixes to one value (`g = 7`, `g IN (7, 7)`, or a HAVING
// condition it moved to WHERE, pushHaving): the result is at most one
// group, so the ORDER BY's expressions are never evaluated (one that would
// be out of range raises nothing). A WHERE that leaves several values, or
// a single group found only at run time, is sorted, and the error raised.
// The merge does the same: oneGroupBindings finds, when the plan is made,
// the operands each GROUP BY column is bound to; selectMerge.bind drops
// the in-memory ORDER BY when every column's operands have one value at
// that execution.

// oneGroupBindings returns, per GROUP BY column, the operands a top-level
// conjunct of the WHERE compares it with (col = x, or col IN (x, y, ...)),
// or nil when some GROUP BY item is no column or has none. lists gives the
// items of an IN list the router replaced by a hole (markInLists), nil
// for other expressions.
func (b *mergeBuilder) oneGroupBindings(lists func(ast.ExprNode) []operand) [][]operand {
	sel := b.sel
	if sel.GroupBy == nil || sel.Where == nil {
		return nil
	}
	cols := b.groupColumns(sel.GroupBy)
	if len(cols) == 0 || len(cols) != len(sel.GroupBy.Items) {
		return nil
	}
	where := conjuncts(sel.Where, nil)
	out := make([][]operand, len(cols))
	for i, g := range cols {
		for _, c := range where {
			if out[i] = bindingOf(c, g, lists); out[i] != nil {
				break
			}
		}
		if out[i] == nil {
			return nil
		}
	}
	return out
}

// bindingOf returns the operands conjunct c compares column g with
// (g = x, x = g, g IN (x, ...)), or nil.
func bindingOf(c ast.ExprNode, g *ast.ColumnName, lists func(ast.ExprNode) []operand) []operand {
	is := func(e ast.ExprNode) bool {
		cn := columnOf(e)
		return cn != nil && inColumns(cn, []*ast.ColumnName{g})
	}
	switch x := c.(type) {
	case *ast.BinaryOperationExpr:
		if x.Op != opcode.EQ {
			return nil
		}
		for _, side := range [2][2]ast.ExprNode{{x.L, x.R}, {x.R, x.L}} {
			if o, ok := markedOperand(side[1]); ok && is(side[0]) {
				return []operand{o}
			}
		}
	case *ast.PatternInExpr:
		if x.Not || x.Sel != nil || len(x.List) == 0 || !is(x.Expr) {
			return nil
		}
		if len(x.List) == 1 && lists != nil {
			if ops := lists(x.List[0]); ops != nil {
				return ops
			}
		}
		ops := make([]operand, len(x.List))
		for i, e := range x.List {
			o, ok := markedOperand(e)
			if !ok {
				return nil
			}
			ops[i] = o
		}
		return ops
	}
	return nil
}

// markedOperand is operandOf for an expression of the rewritten
// statement, where a ? is a marker (holeParam) by the time the merge is
// planned.
func markedOperand(e ast.ExprNode) (operand, bool) {
	if p, ok := paramOf(e); ok {
		return operand{param: p}, true
	}
	return operandOf(e)
}

// oneGroup reports whether every binding has a single value, not NULL,
// at an execution with args.
func oneGroup(bindings [][]operand, args []any) bool {
	if bindings == nil {
		return false
	}
	for _, ops := range bindings {
		first := ops[0].value(args)
		for _, o := range ops[1:] {
			if !sameValue(first, o.value(args)) {
				return false
			}
		}
		if first == nil {
			return false
		}
	}
	return true
}
