package router

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
)

// MariaDB drops the ORDER BY of a grouped SELECT whose every GROUP BY
// column the WHERE fixes to one value (`g = 7`, `g IN (7, 7)`): the result
// is at most one group, so the ORDER BY's expressions are never evaluated
// (one that would be out of range raises nothing). A WHERE that leaves
// several values, or a single group found only at run time, is sorted,
// and the error raised. The merge does the same: oneGroupBindings finds,
// when the plan is made, the operands each GROUP BY column is bound to;
// selectMerge.bind drops the in-memory ORDER BY when every column's
// operands have one value at that execution.

// oneGroupBindings returns, per GROUP BY item of sel, the operands a
// top-level conjunct of its WHERE compares that column with (col = x, or
// col IN (x, y, ...)), or nil when some item is not such a column.
// lists gives the items of an IN list the router replaced by a hole
// (markInLists), nil for other expressions.
func oneGroupBindings(sel *ast.SelectStmt, lists func(ast.ExprNode) []operand) [][]operand {
	if sel.GroupBy == nil || len(sel.GroupBy.Items) == 0 || sel.Where == nil && sel.Having == nil {
		return nil
	}
	var conjuncts []ast.ExprNode
	var split func(e ast.ExprNode)
	split = func(e ast.ExprNode) {
		switch x := e.(type) {
		case *ast.ParenthesesExpr:
			split(x.Expr)
		case *ast.BinaryOperationExpr:
			if x.Op == opcode.LogicAnd {
				split(x.L)
				split(x.R)
				return
			}
			conjuncts = append(conjuncts, e)
		default:
			conjuncts = append(conjuncts, e)
		}
	}
	split(sel.Where)
	if sel.Having != nil {
		// MariaDB moves a HAVING condition on a GROUP BY column to WHERE.
		split(sel.Having.Expr)
	}
	out := make([][]operand, len(sel.GroupBy.Items))
	for i, it := range sel.GroupBy.Items {
		col, ok := it.Expr.(*ast.ColumnNameExpr)
		if !ok {
			return nil
		}
		for _, c := range conjuncts {
			if ops := bindingOf(c, col.Name, lists); ops != nil {
				out[i] = ops
				break
			}
		}
		if out[i] == nil {
			return nil
		}
	}
	return out
}

// bindingOf returns the operands conjunct c compares column name with
// (name = x, x = name, name IN (x, ...)), or nil.
func bindingOf(c ast.ExprNode, name *ast.ColumnName, lists func(ast.ExprNode) []operand) []operand {
	same := func(e ast.ExprNode) bool {
		if p, ok := e.(*ast.ParenthesesExpr); ok {
			e = p.Expr
		}
		x, ok := e.(*ast.ColumnNameExpr)
		return ok && x.Name.Name.L == name.Name.L &&
			(x.Name.Table.L == "" || name.Table.L == "" || x.Name.Table.L == name.Table.L)
	}
	switch x := c.(type) {
	case *ast.BinaryOperationExpr:
		if x.Op != opcode.EQ {
			return nil
		}
		other := x.R
		if !same(x.L) {
			if !same(x.R) {
				return nil
			}
			other = x.L
		}
		if o, ok := boundOperand(other); ok {
			return []operand{o}
		}
	case *ast.PatternInExpr:
		if x.Not || x.Sel != nil || len(x.List) == 0 || !same(x.Expr) {
			return nil
		}
		if len(x.List) == 1 && lists != nil {
			if ops := lists(x.List[0]); ops != nil {
				return ops
			}
		}
		ops := make([]operand, len(x.List))
		for i, e := range x.List {
			o, ok := boundOperand(e)
			if !ok {
				return nil
			}
			ops[i] = o
		}
		return ops
	}
	return nil
}

// oneGroup reports whether every binding has a single value, not NULL,
// at an execution with args.
func oneGroup(bindings [][]operand, args []any) bool {
	if bindings == nil {
		return false
	}
	for _, ops := range bindings {
		first := ops[0].value(args)
		if first == nil {
			return false
		}
		for _, o := range ops[1:] {
			v := o.value(args)
			if v == nil || fmt.Sprintf("%T %v", v, v) != fmt.Sprintf("%T %v", first, first) {
				return false
			}
		}
	}
	return true
}

// boundOperand is operandOf for an expression of the rewritten statement,
// where a ? is a marker (holeParam) by the time the merge is planned.
func boundOperand(e ast.ExprNode) (operand, bool) {
	if c, ok := e.(*ast.ColumnNameExpr); ok && c.Name.Table.L == "" {
		prefix := markerPrefix + string(holeParam)
		if name := c.Name.Name.O; strings.HasPrefix(name, prefix) && strings.HasSuffix(name, "\x00") {
			if id, err := strconv.Atoi(name[len(prefix) : len(name)-1]); err == nil {
				return operand{param: id}, true
			}
		}
		return operand{}, false
	}
	return operandOf(e)
}
