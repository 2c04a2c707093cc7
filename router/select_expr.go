package router

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"
)

// expr converts a HAVING condition into an Expr over result columns. The
// column leaves carry field indexes in Column until finishExpr; params
// reports a ? among the leaves (a paramValue until bindExpr).
func (b *mergeBuilder) expr(e ast.ExprNode) (x *Expr, params bool, err error) {
	switch n := e.(type) {
	case *ast.ParenthesesExpr:
		return b.expr(n.Expr)
	case *ast.BinaryOperationExpr:
		op, ok := binaryOps(n.Op)
		if !ok {
			break
		}
		l, pl, err := b.expr(n.L)
		if err != nil {
			return nil, false, err
		}
		r, pr, err := b.expr(n.R)
		if err != nil {
			return nil, false, err
		}
		return &Expr{Op: op, Args: []*Expr{l, r}}, pl || pr, nil
	case *ast.UnaryOperationExpr:
		v, p, err := b.expr(n.V)
		if err != nil {
			return nil, false, err
		}
		switch n.Op {
		case opcode.Not, opcode.Not2:
			return &Expr{Op: ExprNot, Args: []*Expr{v}}, p, nil
		case opcode.Minus:
			return &Expr{Op: ExprNeg, Args: []*Expr{v}}, p, nil
		case opcode.Plus:
			return v, p, nil
		}
	case *ast.IsNullExpr:
		v, p, err := b.expr(n.Expr)
		if err != nil {
			return nil, false, err
		}
		return negated(&Expr{Op: ExprIsNull, Args: []*Expr{v}}, n.Not), p, nil
	case *ast.IsTruthExpr:
		v, p, err := b.expr(n.Expr)
		if err != nil {
			return nil, false, err
		}
		op := ExprIsTrue
		if n.True == 0 {
			op = ExprIsFalse
		}
		return negated(&Expr{Op: op, Args: []*Expr{v}}, n.Not), p, nil
	case *ast.PatternInExpr:
		if n.Sel != nil {
			break
		}
		args := make([]ast.ExprNode, 0, len(n.List)+1)
		args = append(append(args, n.Expr), n.List...)
		x := &Expr{Op: ExprIn}
		for _, a := range args {
			v, p, err := b.expr(a)
			if err != nil {
				return nil, false, err
			}
			x.Args = append(x.Args, v)
			params = params || p
		}
		return negated(x, n.Not), params, nil
	case *ast.BetweenExpr:
		v, p1, err := b.expr(n.Expr)
		if err != nil {
			return nil, false, err
		}
		lo, p2, err := b.expr(n.Left)
		if err != nil {
			return nil, false, err
		}
		hi, p3, err := b.expr(n.Right)
		if err != nil {
			return nil, false, err
		}
		x := &Expr{Op: ExprAnd, Args: []*Expr{{Op: ExprGE, Args: []*Expr{v, lo}}, {Op: ExprLE, Args: []*Expr{v, hi}}}}
		return negated(x, n.Not), p1 || p2 || p3, nil
	case *driver.ValueExpr:
		switch n.Kind() {
		case driver.KindMysqlDecimal:
			return &Expr{Op: ExprDecimal, Value: n.GetMysqlDecimal().String()}, false, nil
		case driver.KindNull, driver.KindInt64, driver.KindUint64, driver.KindFloat32, driver.KindFloat64, driver.KindString:
			v, _ := literalValue(n)
			return &Expr{Op: ExprValue, Value: v}, false, nil
		}
	case *ast.AggregateFuncExpr:
		j, err := b.aggregate(n, -1)
		if err != nil {
			return nil, false, err
		}
		return &Expr{Op: ExprColumn, Column: ColumnRef(j)}, false, nil
	case *ast.ColumnNameExpr:
		if p, ok := paramOf(n); ok {
			return &Expr{Op: ExprValue, Value: paramValue{param: p}}, true, nil
		}
		j := b.match(n, true)
		var r mref
		if j >= 0 {
			r = b.field(j)
		} else {
			r = mref{field: b.addHidden(n), abs: -1}
		}
		return &Expr{Op: ExprColumn, Column: ColumnRef(r.field)}, false, nil
	}
	text, _ := restoreSQL(e)
	return nil, false, errNotSupported("HAVING over several data nodes supports comparisons, arithmetic, AND/OR/NOT, IN, BETWEEN and IS NULL over columns and aggregates, not %s", strings.ReplaceAll(text, "\x00", ""))
}

func negated(x *Expr, not bool) *Expr {
	if not {
		return &Expr{Op: ExprNot, Args: []*Expr{x}}
	}
	return x
}

func binaryOps(op opcode.Op) (ExprOp, bool) {
	switch op {
	case opcode.LogicAnd:
		return ExprAnd, true
	case opcode.LogicOr:
		return ExprOr, true
	case opcode.LogicXor:
		return ExprXor, true
	case opcode.EQ:
		return ExprEQ, true
	case opcode.NE:
		return ExprNE, true
	case opcode.LT:
		return ExprLT, true
	case opcode.LE:
		return ExprLE, true
	case opcode.GT:
		return ExprGT, true
	case opcode.GE:
		return ExprGE, true
	case opcode.NullEQ:
		return ExprNullSafeEQ, true
	case opcode.Plus:
		return ExprPlus, true
	case opcode.Minus:
		return ExprMinus, true
	case opcode.Mul:
		return ExprMul, true
	case opcode.Div:
		return ExprDiv, true
	case opcode.IntDiv:
		return ExprIntDiv, true
	case opcode.Mod:
		return ExprMod, true
	}
	return 0, false
}

// finishExpr turns the field indexes of column leaves into ColumnRefs.
func (b *mergeBuilder) finishExpr(x *Expr, total int) {
	if x.Op == ExprColumn {
		x.Column = b.colRef(mref{field: int(x.Column), abs: -1}, total)
	}
	for _, a := range x.Args {
		b.finishExpr(a, total)
	}
}

// bindExpr copies x with its ? leaves bound to args.
func bindExpr(x *Expr, args []any) *Expr {
	c := *x
	if p, ok := x.Value.(paramValue); ok {
		c.Value = argValue(args[p.param])
	}
	if len(x.Args) > 0 {
		c.Args = make([]*Expr, len(x.Args))
		for i, a := range x.Args {
			c.Args[i] = bindExpr(a, args)
		}
	}
	return &c
}
