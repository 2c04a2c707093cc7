package router

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
)

// Variance reports the variance family: VAR_POP, VAR_SAMP, STDDEV_POP
// and STDDEV_SAMP.
func (f AggregateFunc) Variance() bool {
	return f >= AggVarPop && f <= AggStddevSamp
}

// varianceName reports an aggregate function name of the variance
// family, as the parser writes it.
func varianceName(f string) bool {
	switch strings.ToLower(f) {
	case ast.AggFuncVarPop, ast.AggFuncVarSamp, ast.AggFuncStddevPop, ast.AggFuncStddevSamp:
		return true
	}
	return false
}

// variance plans VAR_POP, VAR_SAMP, STDDEV_POP or STDDEV_SAMP (STD,
// STDDEV and VARIANCE are parsed as their _POP forms) at field j (-1:
// hidden). Each route also returns COUNT, SUM and VAR_POP of the argument,
// which the merge combines (see Aggregate). Repeated uses of one argument
// share those columns.
func (b *mergeBuilder) variance(agg *ast.AggregateFuncExpr, j int, text string) (int, error) {
	var fn AggregateFunc
	switch strings.ToLower(agg.F) {
	case ast.AggFuncVarPop:
		fn = AggVarPop
	case ast.AggFuncVarSamp:
		fn = AggVarSamp
	case ast.AggFuncStddevPop:
		fn = AggStddevPop
	default:
		fn = AggStddevSamp
	}
	if agg.Distinct || agg.Order != nil || len(agg.Args) != 1 {
		// MariaDB's grammar takes one expression, without DISTINCT or
		// ORDER BY; the route gives the syntax error when one node runs it.
		return 0, errNotSupported("%s over several data nodes takes one argument, without DISTINCT or ORDER BY", fn)
	}
	if j < 0 {
		j = b.addHidden(agg)
	}
	s := aggSpec{fn: fn, field: j, text: text}
	argText, _ := exprText(agg.Args[0])
	for _, o := range b.aggs {
		if o.fn.Variance() {
			if ot, _ := exprText(o.varPopArg(b)); ot == argText {
				s.sum, s.count, s.varPop = o.sum, o.count, o.varPop
				b.aggs = append(b.aggs, s)
				return j, nil
			}
		}
	}
	s.count = mref{field: b.addHidden(&ast.AggregateFuncExpr{F: ast.AggFuncCount, Args: agg.Args}), abs: -1}
	s.sum = mref{field: b.addHidden(&ast.AggregateFuncExpr{F: ast.AggFuncSum, Args: agg.Args}), abs: -1}
	// VAR_POP prints with its argument's decimals + 4 (6 for a
	// DECIMAL(12,2)); + 0e0 makes it a DOUBLE of no fixed scale, printed
	// with every digit.
	varPop := &ast.BinaryOperationExpr{Op: opcode.Plus, L: &ast.AggregateFuncExpr{F: ast.AggFuncVarPop, Args: agg.Args}, R: ast.NewValueExpr(float64(0), "", "")}
	s.varPop = mref{field: b.addHidden(varPop), abs: -1}
	b.aggs = append(b.aggs, s)
	return j, nil
}

// varPopArg is the argument of a planned variance aggregate, read back
// from its hidden VAR_POP column.
func (s aggSpec) varPopArg(b *mergeBuilder) ast.ExprNode {
	return b.fields[s.varPop.field].Expr.(*ast.BinaryOperationExpr).L.(*ast.AggregateFuncExpr).Args[0]
}
