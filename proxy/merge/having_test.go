package merge

import (
	"strconv"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/proxy/internal/sqlvalue"
	"github.com/shardflake/shardflake/proxy/rows"
	"github.com/shardflake/shardflake/router"
)

func col(c int) *router.Expr { return &router.Expr{Op: router.ExprColumn, Column: router.ColumnRef(c)} }
func lit(v any) *router.Expr { return &router.Expr{Op: router.ExprValue, Value: v} }
func decLit(s string) *router.Expr {
	return &router.Expr{Op: router.ExprDecimal, Value: s}
}
func op(o router.ExprOp, args ...*router.Expr) *router.Expr {
	return &router.Expr{Op: o, Args: args}
}

// show prints an evaluated value as a test expects it.
func show(v value) string {
	switch v.k {
	case vNull:
		return "NULL"
	case vInt:
		return strconv.FormatInt(v.i, 10)
	case vUint:
		return strconv.FormatUint(v.u, 10)
	case vDecimal:
		return v.d.String()
	case vFloat:
		return string(sqlvalue.AppendDouble(nil, v.f, sqlvalue.NotFixedDecimals))
	}
	return string(v.s)
}

func TestHavingExpressions(t *testing.T) {
	cols := []*mysql.Field{
		intCol("i"), fld("u", mysql.MYSQL_TYPE_LONGLONG, mysql.UNSIGNED_FLAG, 63, 0), decCol("d", 2), dblCol("f"),
		strCol("s"), fld("dt", mysql.MYSQL_TYPE_DATE, 0, 63, 0), fld("ts", mysql.MYSQL_TYPE_DATETIME, 0, 63, 0),
		fld("tm", mysql.MYSQL_TYPE_TIME, 0, 63, 0), intCol("n"),
	}
	row := rows.Row{[]byte("5"), []byte("18446744073709551615"), []byte("2.50"), []byte("0.5"), []byte("abc"),
		[]byte("2024-01-05"), []byte("2024-01-05 10:00:00"), []byte("-01:00:00"), nil}
	const (
		i, u, d, f, s, dt, ts, tm, n = 0, 1, 2, 3, 4, 5, 6, 7, 8
	)
	tests := []evalCase{
		{"int compare", op(router.ExprGT, col(i), lit(int64(4))), "1", 0},
		{"NULL compares unknown", op(router.ExprEQ, col(n), lit(int64(1))), "NULL", 0},
		{"NULL-safe equal", op(router.ExprNullSafeEQ, col(n), lit(nil)), "1", 0},
		{"NOT unknown", op(router.ExprNot, op(router.ExprEQ, col(n), col(n))), "NULL", 0},
		{"unknown AND false", op(router.ExprAnd, op(router.ExprEQ, col(n), col(i)), lit(int64(0))), "0", 0},
		{"unknown AND true", op(router.ExprAnd, op(router.ExprEQ, col(n), col(i)), lit(int64(1))), "NULL", 0},
		{"unknown OR true", op(router.ExprOr, op(router.ExprEQ, col(n), col(i)), lit(int64(1))), "1", 0},
		{"XOR", op(router.ExprXor, lit(int64(1)), lit(int64(0))), "1", 0},
		{"IS NULL", op(router.ExprIsNull, col(n)), "1", 0},
		{"IS TRUE of NULL", op(router.ExprIsTrue, col(n)), "0", 0},
		{"IS FALSE", op(router.ExprIsFalse, op(router.ExprLT, col(i), lit(int64(0)))), "1", 0},
		{"unsigned beyond int64", op(router.ExprGT, col(u), lit(int64(9223372036854775807))), "1", 0},
		{"decimal exact", op(router.ExprEQ, col(d), decLit("2.5")), "1", 0},
		{"decimal vs double", op(router.ExprLT, col(d), lit(2.51)), "1", 0},
		{"string by collation", op(router.ExprEQ, col(s), lit("ABC  ")), "1", 0},
		{"string vs number as double", op(router.ExprEQ, lit("5abc"), col(i)), "1", 0},
		{"date vs string literal", op(router.ExprEQ, col(dt), lit("2024-01-05")), "1", 0},
		{"datetime vs date string", op(router.ExprGT, col(ts), lit("2024-01-05")), "1", 0},
		{"datetime vs datetime string", op(router.ExprLT, col(ts), lit("2024-01-05 9:30:00")), "0", 0},
		{"time vs string", op(router.ExprLT, col(tm), lit("00:00:00")), "1", 0},
		{"IN match", op(router.ExprIn, col(i), lit(int64(1)), lit(int64(5))), "1", 0},
		{"IN no match with NULL", op(router.ExprIn, col(i), lit(int64(1)), lit(nil)), "NULL", 0},
		{"IN no match", op(router.ExprIn, col(s), lit("x"), lit("y")), "0", 0},
		{"int plus int", op(router.ExprPlus, col(i), lit(int64(3))), "8", 0},
		{"int plus decimal", op(router.ExprPlus, col(i), col(d)), "7.50", 0},
		{"decimal times decimal", op(router.ExprMul, col(d), decLit("1.5")), "3.750", 0},
		{"int divide", op(router.ExprDiv, col(i), lit(int64(3))), "1.666666666", 0},
		{"divide by zero", op(router.ExprDiv, col(i), lit(int64(0))), "NULL", 0},
		{"DIV", op(router.ExprIntDiv, lit(int64(-7)), lit(int64(2))), "-3", 0},
		{"MOD keeps the dividend's sign", op(router.ExprMod, lit(int64(-7)), lit(int64(3))), "-1", 0},
		{"double arithmetic", op(router.ExprMul, col(f), lit(int64(3))), "1.5", 0},
		{"negate", op(router.ExprNeg, col(d)), "-2.50", 0},
		{"BIGINT overflow", op(router.ExprPlus, lit(int64(9223372036854775807)), lit(int64(1))), "", mysql.ER_DATA_OUT_OF_RANGE},
		{"unsigned below zero", op(router.ExprMinus, lit(uint64(0)), lit(int64(1))), "", mysql.ER_DATA_OUT_OF_RANGE},
	}
	checkEval(t, cols, row, tests)
}

func TestHavingRejectsMalformedExpressions(t *testing.T) {
	cols := []*mysql.Field{intCol("i")}
	p := &pipeline{fields: cols, n: 1, visible: 1, mem: &Budget{left: 1 << 20, total: 1 << 20}}
	p.resolveTypes(nil)
	tests := []struct {
		name string
		give *router.Expr
	}{
		{"missing argument", op(router.ExprEQ, col(0))},
		{"column past the row", col(3)},
		{"unknown operator", &router.Expr{Op: router.ExprOp(99)}},
		{"literal of an unknown type", lit(struct{}{})},
		{"ROUND with three arguments", op(router.ExprRound, col(0), lit(int64(1)), lit(int64(1)))},
		{"ROUND with places from a column", op(router.ExprRound, col(0), col(0))},
		{"ROUND with places not an integer", op(router.ExprRound, col(0), lit("x"))},
		{"COALESCE of nothing", op(router.ExprCoalesce)},
		{"BETWEEN with two arguments", op(router.ExprBetween, col(0), col(0))},
	}
	for _, tt := range tests {
		if _, err := p.compileExpr(tt.give, "HAVING"); err == nil {
			t.Errorf("%s: compiled", tt.name)
		}
	}
}

// evalCase is an expression over a row and its value as shown, or the
// MySQL error it must raise.
type evalCase struct {
	name    string
	give    *router.Expr
	want    string
	wantErr uint16
}

// checkEval compiles each case as a HAVING expression over cols and
// evaluates it on row.
func checkEval(t *testing.T, cols []*mysql.Field, row rows.Row, tests []evalCase) {
	t.Helper()
	p := &pipeline{fields: cols, n: len(cols), visible: len(cols), mem: &Budget{left: 1 << 20, total: 1 << 20}}
	p.resolveTypes(nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := p.compileExpr(tt.give, "HAVING")
			if err != nil {
				t.Fatal(err)
			}
			v, err := c.eval(row)
			if tt.wantErr != 0 {
				if got := mysqlCode(err); got != tt.wantErr {
					t.Fatalf("error %v (code %d), want code %d", err, got, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := show(v); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}
