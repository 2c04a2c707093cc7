package merge

import (
	"errors"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/proxy/rows"
	"github.com/shardflake/shardflake/router"
)

// TestExpressionFunctions evaluates the operators of computed columns and
// HAVING beyond comparisons: MariaDB's rounding of a DECIMAL before =,
// ROUND, ABS, IFNULL, COALESCE, AVG and the negative zero.
func TestExpressionFunctions(t *testing.T) {
	cols := []*mysql.Field{
		intCol("i"), fld("u", mysql.MYSQL_TYPE_LONGLONG, mysql.UNSIGNED_FLAG, 63, 0), decCol("d", 2), dblCol("f"), intCol("n"),
	}
	row := rows.Row{[]byte("5"), []byte("18446744073709551615"), []byte("2.50"), []byte("0.5"), nil}
	const i, u, d, f, n = 0, 1, 2, 3, 4
	third := op(router.ExprDiv, col(i), lit(int64(3))) // 1.666666666 inside, 1.6667 shown
	tests := []evalCase{
		// = rounds a DECIMAL to its decimals first; BETWEEN and IN do not.
		{"= rounds the quotient", op(router.ExprEQ, third, decLit("1.6667")), "1", 0},
		{"> rounds the quotient", op(router.ExprGT, third, decLit("1.66667")), "1", 0},
		{"<=> rounds the quotient", op(router.ExprNullSafeEQ, third, decLit("1.6667")), "1", 0},
		{"BETWEEN does not round", op(router.ExprBetween, third, decLit("1.6667"), lit(int64(2))), "0", 0},
		{"IN does not round", op(router.ExprIn, third, decLit("1.6667"), lit(int64(7))), "0", 0},
		{"arithmetic on the unrounded quotient", op(router.ExprMul, third, lit(int64(100000))), "166666.666600000", 0},
		{"compare with a string as DOUBLE", op(router.ExprEQ, third, lit("1.6667")), "0", 0},
		{"BETWEEN false with a NULL bound", op(router.ExprBetween, col(i), lit(nil), lit(int64(4))), "0", 0},
		{"BETWEEN unknown", op(router.ExprBetween, col(i), lit(nil), lit(int64(9))), "NULL", 0},
		{"ROUND decimal half up", op(router.ExprRound, decLit("2.675"), lit(int64(2))), "2.68", 0},
		{"ROUND decimal to tens", op(router.ExprRound, decLit("-125.5"), op(router.ExprNeg, lit(int64(1)))), "-130", 0},
		{"ROUND decimal to more places", op(router.ExprRound, col(d), lit(int64(4))), "2.50", 0},
		{"ROUND BIGINT to tens is DECIMAL", op(router.ExprRound, col(i), lit(int64(-1))), "10", 0},
		{"ROUND int to places", op(router.ExprRound, col(i), lit(int64(2))), "5", 0},
		{"ROUND unsigned to tens outgrows BIGINT", op(router.ExprRound, col(u), lit(int64(-1))), "18446744073709551620", 0},
		{"ROUND double half to even", op(router.ExprRound, lit(2.5)), "2", 0},
		{"ROUND double as MariaDB scales it", op(router.ExprRound, lit(2.675), lit(int64(2))), "2.68", 0},
		{"ROUND double below half", op(router.ExprRound, lit(1.005), lit(int64(2))), "1", 0},
		{"ROUND NULL places", op(router.ExprRound, col(i), lit(nil)), "NULL", 0},
		{"ABS decimal", op(router.ExprAbs, op(router.ExprNeg, col(d))), "2.50", 0},
		{"ABS of the least BIGINT", op(router.ExprAbs, lit(int64(-9223372036854775808))), "", mysql.ER_DATA_OUT_OF_RANGE},
		{"ABS of a string is DOUBLE", op(router.ExprAbs, lit("-1.5x")), "1.5", 0},
		{"IFNULL takes the second", op(router.ExprIfNull, col(n), col(d)), "2.50", 0},
		{"IFNULL converts to DECIMAL", op(router.ExprIfNull, col(i), col(d)), "5", 0},
		{"IFNULL converts to a string", op(router.ExprIfNull, col(d), lit("x")), "2.50", 0},
		{"IFNULL of NULL and a string", op(router.ExprIfNull, col(n), lit("x")), "x", 0},
		{"COALESCE first non-NULL", op(router.ExprCoalesce, col(n), lit(nil), col(f)), "0.5", 0},
		{"COALESCE all NULL", op(router.ExprCoalesce, col(n), lit(nil)), "NULL", 0},
		{"COALESCE of DECIMAL and DOUBLE converts the DECIMAL", op(router.ExprCoalesce, third, col(f)), "1.666666666", 0},
		{"COALESCE evaluates no further", op(router.ExprCoalesce, col(i), op(router.ExprPlus, lit(int64(9223372036854775807)), lit(int64(1)))), "5", 0},
		{"DECIMAL arithmetic skips the right side after NULL", op(router.ExprDiv, op(router.ExprPlus, col(n), col(d)), op(router.ExprNeg, col(u))), "NULL", 0},
		{"integer arithmetic reads both sides", op(router.ExprPlus, col(n), op(router.ExprNeg, col(u))), "", mysql.ER_DATA_OUT_OF_RANGE},
		{"AVG is SUM / COUNT", op(router.ExprAvg, col(d), lit(int64(3))), "0.833333333", 0},
		{"AVG as a DOUBLE divides DOUBLEs", op(router.ExprMinus, op(router.ExprAvg, col(d), lit(int64(3))), col(f)), "0.33333333333333337", 0},
		{"AVG of no rows", op(router.ExprAvg, col(n), lit(int64(0))), "NULL", 0},
		{"negative zero remainder", op(router.ExprMod, op(router.ExprNeg, col(d)), decLit("0.5")), "-0.00", 0},
		{"negative zero below zero", op(router.ExprLT, op(router.ExprMod, op(router.ExprNeg, col(d)), decLit("0.5")), lit(int64(0))), "1", 0},
		{"negative zero is false", op(router.ExprIsTrue, op(router.ExprMod, op(router.ExprNeg, col(d)), decLit("0.5"))), "0", 0},
		{"unsigned negated beyond BIGINT", op(router.ExprNeg, col(u)), "", mysql.ER_DATA_OUT_OF_RANGE},
		{"DIV of a DECIMAL beyond BIGINT", op(router.ExprIntDiv, decLit("99999999999999999999"), lit(int64(1))), "", mysql.ER_DATA_OUT_OF_RANGE},
		// DIV with an UNSIGNED operand: integers divide as integers, a
		// DECIMAL quotient keeps the sign of a zero without fraction.
		{"negative integer DIV unsigned is 0", op(router.ExprIntDiv, lit(int64(-1)), lit(uint64(5))), "0", 0},
		{"negative DECIMAL DIV unsigned below -1", op(router.ExprIntDiv, decLit("-7.0"), lit(uint64(5))), "", mysql.ER_DATA_OUT_OF_RANGE},
		{"negative DECIMAL with a fraction DIV unsigned to 0", op(router.ExprIntDiv, decLit("-1.0"), lit(uint64(5))), "0", 0},
		// The zero Dialect (MariaDB 10.11.19; 10.11.14 said 1690 for both:
		// TestDialectDifferences).
		{"negative DECIMAL without fraction DIV unsigned", op(router.ExprIntDiv, op(router.ExprRound, decLit("-1.0")), lit(uint64(5))), "0", 0},
		{"negative DOUBLE DIV unsigned", op(router.ExprIntDiv, lit(-1.0), lit(uint64(5))), "0", 0},
		{"DOUBLE DIV as DECIMALs", op(router.ExprIntDiv, lit(0.5), lit(0.1)), "5", 0},
		{"DOUBLE DIV beyond BIGINT", op(router.ExprIntDiv, lit(1e20), lit(int64(3))), "", mysql.ER_DATA_OUT_OF_RANGE},
	}
	checkEval(t, cols, row, tests)
}

// TestExpressionsRefusePlanDependentValues: arithmetic on dates, and an
// AVG read as a DOUBLE under GROUP BY (MariaDB divides DOUBLEs or converts
// the DECIMAL average as its plan goes), are 1235.
func TestExpressionsRefusePlanDependentValues(t *testing.T) {
	cols := []*mysql.Field{decCol("sum", 2), intCol("count"), dblCol("f"), fld("dt", mysql.MYSQL_TYPE_DATE, 0, 63, 0)}
	avg := op(router.ExprAvg, col(0), col(1))
	tests := []struct {
		name    string
		give    *router.Expr
		grouped bool
		wantErr bool
	}{
		{"AVG minus a DOUBLE over all rows", op(router.ExprMinus, avg, col(2)), false, false},
		{"AVG minus a DOUBLE under GROUP BY", op(router.ExprMinus, avg, col(2)), true, true},
		{"AVG compared with a string under GROUP BY", op(router.ExprEQ, avg, lit("1")), true, true},
		{"AVG in a DOUBLE COALESCE under GROUP BY", op(router.ExprCoalesce, avg, col(2)), true, true},
		{"AVG times a DECIMAL under GROUP BY", op(router.ExprMul, avg, decLit("1.5")), true, false},
		{"date plus a number", op(router.ExprPlus, col(3), lit(int64(1))), false, true},
		{"ROUND of a date", op(router.ExprRound, col(3)), false, true},
		{"IFNULL of a date and a number", op(router.ExprIfNull, col(3), lit(int64(0))), false, true},
		{"IFNULL of dates", op(router.ExprIfNull, col(3), col(3)), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &pipeline{fields: cols, n: len(cols), visible: len(cols), grouped: tt.grouped, mem: &Budget{left: 1 << 20, total: 1 << 20}}
			p.resolveTypes(nil)
			_, err := p.compileExpr(tt.give, "HAVING")
			var ns *NotSupportedError
			if got := errors.As(err, &ns); got != tt.wantErr || (err != nil && !tt.wantErr) {
				t.Errorf("error %v, want a NotSupportedError: %v", err, tt.wantErr)
			}
		})
	}
}
