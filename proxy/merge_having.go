package proxy

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/proxy/internal/sqlvalue"
	"github.com/shardflake/shardflake/router"
)

// havingFilter keeps the rows for which the HAVING condition is true (not
// false, not NULL).
type havingFilter struct {
	src  stage
	cond *cexpr
}

func (h *havingFilter) Next() (Row, error) {
	for {
		row, err := h.src.Next()
		if err != nil {
			return nil, err
		}
		v, err := h.cond.eval(row)
		if err != nil {
			return nil, err
		}
		if truth(v) == triTrue {
			return row, nil
		}
	}
}

// vkind is the kind of an evaluated value.
type vkind int

const (
	vNull     vkind = iota + 1
	vInt            // i
	vUint           // u
	vDecimal        // d
	vFloat          // f
	vString         // s, compared by coll (nil: the connection's default)
	vTemporal       // s: a DATE/DATETIME/TIMESTAMP/TIME value's text
)

// value is one evaluated SQL value.
type value struct {
	k    vkind
	i    int64
	u    uint64
	d    sqlvalue.Decimal
	f    float64
	s    []byte
	coll *sqlvalue.Collation
	time bool // vTemporal: a TIME (not a date)
}

var nullValue = value{k: vNull}

func intValue(b bool) value {
	if b {
		return value{k: vInt, i: 1}
	}
	return value{k: vInt}
}

// cexpr is a router.Expr with its columns resolved.
type cexpr struct {
	op   router.ExprOp
	col  int
	typ  sqlvalue.Type
	lit  value
	args []*cexpr
}

// arity is how many arguments each operator takes; -1 for "at least 2".
func arity(op router.ExprOp) int {
	switch op {
	case router.ExprColumn, router.ExprValue, router.ExprDecimal:
		return 0
	case router.ExprNot, router.ExprIsNull, router.ExprIsTrue, router.ExprIsFalse, router.ExprNeg:
		return 1
	case router.ExprIn:
		return -1
	}
	return 2
}

func (p *pipeline) compileExpr(e *router.Expr) (*cexpr, error) {
	if e == nil {
		return nil, &InternalError{Msg: "nil HAVING expression"}
	}
	c := &cexpr{op: e.Op}
	switch n := arity(e.Op); {
	case e.Op < router.ExprColumn || e.Op > router.ExprNeg:
		return nil, &NotSupportedError{What: fmt.Sprintf("the HAVING operator %s across data nodes", e.Op)}
	case n >= 0 && len(e.Args) != n, n < 0 && len(e.Args) < 2:
		return nil, &InternalError{Msg: fmt.Sprintf("HAVING %s with %d arguments", e.Op, len(e.Args))}
	}
	switch e.Op {
	case router.ExprColumn:
		col, err := p.column(e.Column)
		if err != nil {
			return nil, err
		}
		c.col, c.typ = col, p.types[col]
		if err := c.typ.EqualError(); err != nil {
			return nil, notMergeable("HAVING", p.fields[col], err)
		}
	case router.ExprValue:
		v, err := literal(e.Value)
		if err != nil {
			return nil, err
		}
		c.lit = v
	case router.ExprDecimal:
		s, ok := e.Value.(string)
		d, err := sqlvalue.ParseDecimal([]byte(s))
		if !ok || err != nil {
			return nil, &InternalError{Msg: fmt.Sprintf("HAVING decimal literal %v", e.Value)}
		}
		c.lit = value{k: vDecimal, d: d}
	}
	for _, a := range e.Args {
		ca, err := p.compileExpr(a)
		if err != nil {
			return nil, err
		}
		c.args = append(c.args, ca)
	}
	return c, nil
}

// literal converts a bound value of the plan.
func literal(v any) (value, error) {
	switch x := v.(type) {
	case nil:
		return nullValue, nil
	case int64:
		return value{k: vInt, i: x}, nil
	case int:
		return value{k: vInt, i: int64(x)}, nil
	case uint64:
		return value{k: vUint, u: x}, nil
	case float64:
		return value{k: vFloat, f: x}, nil
	case float32:
		return value{k: vFloat, f: float64(x)}, nil
	case bool:
		return intValue(x), nil
	case string:
		return value{k: vString, s: []byte(x)}, nil
	case []byte:
		return value{k: vString, s: x}, nil
	case time.Time:
		return value{k: vString, s: []byte(x.Format("2006-01-02 15:04:05.999999"))}, nil
	}
	return value{}, &InternalError{Msg: fmt.Sprintf("HAVING literal of type %T", v)}
}

// columnValue reads a row's value as its column's type.
func columnValue(v []byte, t *sqlvalue.Type) value {
	if v == nil {
		return nullValue
	}
	switch t.Class {
	case sqlvalue.ClassInt:
		if t.Unsigned {
			if u, err := strconv.ParseUint(string(v), 10, 64); err == nil {
				return value{k: vUint, u: u}
			}
		} else if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return value{k: vInt, i: i}
		}
	case sqlvalue.ClassDecimal:
		if d, err := sqlvalue.ParseDecimal(v); err == nil {
			return value{k: vDecimal, d: d}
		}
	case sqlvalue.ClassFloat:
		f, _ := sqlvalue.ParseDouble(v)
		return value{k: vFloat, f: f}
	case sqlvalue.ClassDate:
		return value{k: vTemporal, s: v}
	case sqlvalue.ClassTime:
		return value{k: vTemporal, s: v, time: true}
	case sqlvalue.ClassNull:
		return nullValue
	}
	return value{k: vString, s: v, coll: t.Collation}
}

func (c *cexpr) eval(row Row) (value, error) {
	switch c.op {
	case router.ExprColumn:
		return columnValue(row[c.col], &c.typ), nil
	case router.ExprValue, router.ExprDecimal:
		return c.lit, nil
	case router.ExprAnd, router.ExprOr, router.ExprXor:
		return c.logic(row)
	}
	args := make([]value, len(c.args))
	for i, a := range c.args {
		v, err := a.eval(row)
		if err != nil {
			return value{}, err
		}
		args[i] = v
	}
	switch c.op {
	case router.ExprNot:
		switch truth(args[0]) {
		case triUnknown:
			return nullValue, nil
		case triTrue:
			return intValue(false), nil
		}
		return intValue(true), nil
	case router.ExprIsNull:
		return intValue(args[0].k == vNull), nil
	case router.ExprIsTrue:
		return intValue(truth(args[0]) == triTrue), nil
	case router.ExprIsFalse:
		return intValue(truth(args[0]) == triFalse), nil
	case router.ExprNullSafeEQ:
		if args[0].k == vNull || args[1].k == vNull {
			return intValue(args[0].k == args[1].k), nil
		}
		return intValue(compareValues(args[0], args[1]) == 0), nil
	case router.ExprEQ, router.ExprNE, router.ExprLT, router.ExprLE, router.ExprGT, router.ExprGE:
		if args[0].k == vNull || args[1].k == vNull {
			return nullValue, nil
		}
		r := compareValues(args[0], args[1])
		switch c.op {
		case router.ExprEQ:
			return intValue(r == 0), nil
		case router.ExprNE:
			return intValue(r != 0), nil
		case router.ExprLT:
			return intValue(r < 0), nil
		case router.ExprLE:
			return intValue(r <= 0), nil
		case router.ExprGT:
			return intValue(r > 0), nil
		}
		return intValue(r >= 0), nil
	case router.ExprIn:
		if args[0].k == vNull {
			return nullValue, nil
		}
		sawNull := false
		for _, v := range args[1:] {
			if v.k == vNull {
				sawNull = true
				continue
			}
			if compareValues(args[0], v) == 0 {
				return intValue(true), nil
			}
		}
		if sawNull {
			return nullValue, nil
		}
		return intValue(false), nil
	case router.ExprNeg:
		return negate(args[0])
	}
	return arithmetic(c.op, args[0], args[1])
}

// logic evaluates AND, OR and XOR with SQL's three-valued logic; AND and
// OR skip the right side when the left decides.
func (c *cexpr) logic(row Row) (value, error) {
	l, err := c.args[0].eval(row)
	if err != nil {
		return value{}, err
	}
	lt := truth(l)
	switch {
	case c.op == router.ExprAnd && lt == triFalse:
		return intValue(false), nil
	case c.op == router.ExprOr && lt == triTrue:
		return intValue(true), nil
	}
	r, err := c.args[1].eval(row)
	if err != nil {
		return value{}, err
	}
	rt := truth(r)
	switch c.op {
	case router.ExprAnd:
		switch {
		case rt == triFalse:
			return intValue(false), nil
		case lt == triUnknown || rt == triUnknown:
			return nullValue, nil
		}
		return intValue(true), nil
	case router.ExprOr:
		switch {
		case rt == triTrue:
			return intValue(true), nil
		case lt == triUnknown || rt == triUnknown:
			return nullValue, nil
		}
		return intValue(false), nil
	}
	if lt == triUnknown || rt == triUnknown {
		return nullValue, nil
	}
	return intValue(lt != rt), nil
}

// tri is a truth value of SQL's three-valued logic.
type tri int

const (
	triFalse tri = iota + 1
	triTrue
	triUnknown
)

// truth is a value's truth as a condition: NULL is unknown, a number is
// true unless 0, a string is true unless it reads as the number 0.
func truth(v value) tri {
	switch v.k {
	case vNull:
		return triUnknown
	case vInt:
		return boolTri(v.i != 0)
	case vUint:
		return boolTri(v.u != 0)
	case vDecimal:
		return boolTri(v.d.Sign() != 0)
	case vFloat:
		return boolTri(v.f != 0)
	}
	f := toFloat(v)
	return boolTri(f != 0)
}

func boolTri(b bool) tri {
	if b {
		return triTrue
	}
	return triFalse
}

func isNumber(v value) bool {
	return v.k == vInt || v.k == vUint || v.k == vDecimal || v.k == vFloat
}

// toFloat converts any non-NULL value to DOUBLE as MariaDB does (strings
// by their numeric prefix, temporal values by their digits).
func toFloat(v value) float64 {
	switch v.k {
	case vInt:
		return float64(v.i)
	case vUint:
		return float64(v.u)
	case vDecimal:
		return v.d.Float64()
	case vFloat:
		return v.f
	case vTemporal:
		digits := make([]byte, 0, len(v.s))
		for _, c := range v.s {
			if (c >= '0' && c <= '9') || c == '.' || c == '-' && len(digits) == 0 {
				digits = append(digits, c)
			}
		}
		f, _ := sqlvalue.ParseDouble(digits)
		return f
	}
	f, _ := sqlvalue.ParseDouble(v.s)
	return f
}

// toDecimal converts an integer or decimal value.
func toDecimal(v value) sqlvalue.Decimal {
	switch v.k {
	case vInt:
		return sqlvalue.DecimalFromInt(v.i)
	case vUint:
		return sqlvalue.DecimalFromUint(v.u)
	}
	return v.d
}

// compareValues compares two non-NULL values with MariaDB's rules: two
// strings by collation, a temporal value with a string as temporal
// values, integers and decimals exactly, anything else as DOUBLE.
func compareValues(a, b value) int {
	switch {
	case a.k == vString && b.k == vString:
		coll := a.coll
		if coll == nil {
			coll = b.coll
		}
		if coll == nil {
			coll = sqlvalue.CollationByID(sqlvalue.Utf8mb4GeneralCI)
		}
		return coll.Compare(a.s, b.s)
	case a.k == vTemporal && (b.k == vString || b.k == vTemporal), b.k == vTemporal && a.k == vString:
		ta, oka := temporalKey(a)
		tb, okb := temporalKey(b)
		if oka && okb {
			return cmpInt64s(ta, tb)
		}
		return sqlvalue.CollationByID(sqlvalue.BinaryID).Compare(a.s, b.s)
	case a.k == vFloat || b.k == vFloat || !isNumber(a) || !isNumber(b):
		fa, fb := toFloat(a), toFloat(b)
		switch {
		case fa < fb:
			return -1
		case fa > fb:
			return 1
		}
		return 0
	}
	da, db := toDecimal(a), toDecimal(b)
	return da.Cmp(&db)
}

func cmpInt64s(a, b [7]int64) int {
	for i := range a {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// temporalKey parses 'YYYY-MM-DD[ hh:mm:ss[.ffffff]]' (or a TIME
// '[-]h:mm:ss[.ffffff]') into comparable parts.
func temporalKey(v value) ([7]int64, bool) {
	var k [7]int64
	s := v.s
	if v.time || (v.k == vString && !hasDateShape(s)) {
		neg := len(s) > 0 && s[0] == '-'
		t := timeParts(s)
		if neg {
			for i := range t {
				t[i] = -t[i]
			}
		}
		copy(k[3:], t[:])
		return k, v.k == vTemporal || isTimeShape(s)
	}
	n, i := 0, 0
	for n < 7 && i < len(s) {
		if s[i] < '0' || s[i] > '9' {
			i++
			continue
		}
		j := i
		var x int64
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			x = x*10 + int64(s[j]-'0')
			j++
		}
		if n == 6 { // fraction: scale to microseconds
			for d := j - i; d < 6; d++ {
				x *= 10
			}
			for d := j - i; d > 6; d-- {
				x /= 10
			}
		}
		k[n] = x
		n++
		i = j
	}
	return k, n >= 3
}

func hasDateShape(s []byte) bool {
	dashes := 0
	for _, c := range s {
		if c == '-' {
			dashes++
		}
		if c == ':' && dashes < 2 {
			return false
		}
	}
	return dashes >= 2
}

func isTimeShape(s []byte) bool {
	for _, c := range s {
		if c == ':' {
			return true
		}
	}
	return false
}

// timeParts reads [-]h:mm:ss[.ffffff] as hours, minutes, seconds, micros.
func timeParts(s []byte) [4]int64 {
	var t [4]int64
	p := 0
	digits := 0
	for _, c := range s {
		switch {
		case c == ':' && p < 2:
			p++
		case c == '.':
			p = 3
		case c >= '0' && c <= '9':
			if p == 3 {
				if digits >= 6 {
					continue
				}
				digits++
			}
			t[p] = t[p]*10 + int64(c-'0')
		}
	}
	for ; digits < 6; digits++ {
		t[3] *= 10
	}
	return t
}

func negate(v value) (value, error) {
	switch v.k {
	case vNull:
		return nullValue, nil
	case vInt:
		if v.i == math.MinInt64 {
			return value{}, outOfRange("BIGINT", "-")
		}
		return value{k: vInt, i: -v.i}, nil
	case vUint:
		d := sqlvalue.DecimalFromUint(v.u)
		return fitInteger(d.Neg(), false, "-")
	case vDecimal:
		return value{k: vDecimal, d: v.d.Neg()}, nil
	}
	return value{k: vFloat, f: -toFloat(v)}, nil
}

// arithmetic applies + - * / DIV % with MariaDB's result types: DOUBLE
// when a DOUBLE or a string is involved, DECIMAL when a DECIMAL is (and
// always for /), BIGINT otherwise, failing when a BIGINT result is out of
// range. Division by zero is NULL.
func arithmetic(op router.ExprOp, a, b value) (value, error) {
	if a.k == vNull || b.k == vNull {
		return nullValue, nil
	}
	if !isNumber(a) || !isNumber(b) || a.k == vFloat || b.k == vFloat {
		fa, fb := toFloat(a), toFloat(b)
		switch op {
		case router.ExprPlus:
			return value{k: vFloat, f: fa + fb}, nil
		case router.ExprMinus:
			return value{k: vFloat, f: fa - fb}, nil
		case router.ExprMul:
			return value{k: vFloat, f: fa * fb}, nil
		case router.ExprDiv:
			if fb == 0 {
				return nullValue, nil
			}
			return value{k: vFloat, f: fa / fb}, nil
		case router.ExprIntDiv:
			if fb == 0 {
				return nullValue, nil
			}
			return fitInteger(decimalOf(math.Trunc(fa/fb)), false, "DIV")
		case router.ExprMod:
			if fb == 0 {
				return nullValue, nil
			}
			return value{k: vFloat, f: math.Mod(fa, fb)}, nil
		}
		return value{}, &InternalError{Msg: fmt.Sprintf("arithmetic operator %s", op)}
	}
	da, db := toDecimal(a), toDecimal(b)
	integer := a.k != vDecimal && b.k != vDecimal
	unsigned := a.k == vUint || b.k == vUint
	var r sqlvalue.Decimal
	switch op {
	case router.ExprPlus:
		r = da.Add(&db)
	case router.ExprMinus:
		r = da.Sub(&db)
	case router.ExprMul:
		r = da.Mul(&db)
	case router.ExprDiv:
		q, ok := da.Quo(&db, sqlvalue.DivPrecisionIncrement)
		if !ok {
			return nullValue, nil
		}
		return value{k: vDecimal, d: q}, nil
	case router.ExprIntDiv:
		q, ok := da.IntDiv(&db)
		if !ok {
			return nullValue, nil
		}
		return fitInteger(q, unsigned, "DIV")
	case router.ExprMod:
		m, ok := da.Mod(&db)
		if !ok {
			return nullValue, nil
		}
		if integer {
			return fitInteger(m, unsigned && a.k == vUint, "%")
		}
		return value{k: vDecimal, d: m}, nil
	default:
		return value{}, &InternalError{Msg: fmt.Sprintf("arithmetic operator %s", op)}
	}
	if integer {
		return fitInteger(r, unsigned, op.String())
	}
	return value{k: vDecimal, d: r}, nil
}

func decimalOf(f float64) sqlvalue.Decimal {
	d, err := sqlvalue.ParseDecimal(strconv.AppendFloat(nil, f, 'f', -1, 64))
	if err != nil {
		return sqlvalue.Decimal{}
	}
	return d
}

// fitInteger returns an integer result as BIGINT (UNSIGNED when
// unsigned), or MariaDB's out-of-range error.
func fitInteger(d sqlvalue.Decimal, unsigned bool, op string) (value, error) {
	s := d.String()
	if unsigned {
		u, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return value{}, outOfRange("BIGINT UNSIGNED", op)
		}
		return value{k: vUint, u: u}, nil
	}
	i, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return value{}, outOfRange("BIGINT", op)
	}
	return value{k: vInt, i: i}, nil
}

// outOfRange is the error MariaDB itself returns for an integer result
// that does not fit (ER_DATA_OUT_OF_RANGE).
func outOfRange(typ, op string) error {
	return mysql.NewError(mysql.ER_DATA_OUT_OF_RANGE, fmt.Sprintf("%s value is out of range in HAVING (%s)", typ, op))
}
