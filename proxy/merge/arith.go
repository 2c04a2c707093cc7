package merge

import (
	"fmt"
	"math"
	"strconv"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/proxy/internal/sqlvalue"
	"github.com/shardflake/shardflake/router"
)

// negate is unary minus: BIGINT for integers (failing beyond its range),
// DECIMAL for DECIMALs, DOUBLE otherwise.
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
func (c *cexpr) arithmetic(op router.ExprOp, a, b value) (value, error) {
	var d Dialect
	if c.dialect != nil {
		d = *c.dialect
	}
	return arithmetic(op, a, b, d.ZeroQuotientOutOfRange)
}

// signedZero is f, or 0 for a negative zero unless negativeZero.
func signedZero(f float64, negativeZero bool) float64 {
	if f == 0 && !negativeZero {
		return 0
	}
	return f
}

// arithmetic computes a op b; zeroOutOfRange is Dialect.ZeroQuotientOutOfRange.
func arithmetic(op router.ExprOp, a, b value, zeroOutOfRange bool) (value, error) {
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
			// MariaDB divides the values as DECIMALs.
			return intDivDecimal(exactOf(a), exactOf(b), a.k == vUint || b.k == vUint, zeroOutOfRange)
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
		if !integer {
			return intDivDecimal(da, db, unsigned, zeroOutOfRange)
		}
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

// intDivDecimal is DIV of values that are not both integers: MariaDB
// divides them as DECIMALs, truncates, and converts to BIGINT (UNSIGNED
// when an operand is). A negative quotient is out of the UNSIGNED range.
// Up to MariaDB 10.11.14 so is a negative zero (zeroOutOfRange): the
// quotient of operands without fractions keeps its sign when it truncates
// to 0 (-1 DIV 5 fails for a DECIMAL -1, -1.0 DIV 5 is 0); 10.11.19 gives
// 0 for both.
func intDivDecimal(a, b sqlvalue.Decimal, unsigned, zeroOutOfRange bool) (value, error) {
	q, ok := a.IntDiv(&b)
	if !ok {
		return nullValue, nil
	}
	if unsigned && a.Sign()*b.Sign() < 0 && (q.Sign() != 0 || zeroOutOfRange && a.Scale()+b.Scale() == 0) {
		return value{}, outOfRange("BIGINT UNSIGNED", "DIV")
	}
	return fitInteger(q, unsigned, "DIV")
}

// exactOf converts a value to DECIMAL as MariaDB does for DIV: a DOUBLE
// (or a string read as one) by its shortest digits.
func exactOf(v value) sqlvalue.Decimal {
	if isExact(v) {
		return toDecimal(v)
	}
	return decimalOf(toFloat(v))
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
	return mysql.NewError(mysql.ER_DATA_OUT_OF_RANGE, fmt.Sprintf("%s value is out of range in '%s' merged across data nodes", typ, op))
}

// absolute is ABS: the argument's type, BIGINT failing for its least
// value, DOUBLE for strings.
func absolute(v value) (value, error) {
	switch v.k {
	case vNull, vUint:
		return v, nil
	case vInt:
		if v.i >= 0 {
			return v, nil
		}
		return negate(v)
	case vDecimal:
		return value{k: vDecimal, d: v.d.Abs()}, nil
	}
	return value{k: vFloat, f: math.Abs(toFloat(v))}, nil
}

// round is ROUND(v, places). Integers and DECIMALs round half away from
// zero (an integer only for places < 0; decimal asks for a DECIMAL, as
// MariaDB answers for a BIGINT, which may then outgrow BIGINT); DOUBLEs
// (and strings, as DOUBLEs) the way MariaDB's my_double_round does: scale
// by a power of ten, round half to even, scale back.
func round(v value, places int64, decimal bool) (value, error) {
	switch v.k {
	case vNull:
		return nullValue, nil
	case vInt, vUint:
		if places >= 0 {
			return v, nil
		}
		d := toDecimal(v)
		r := d.RoundTo(int(max(places, -100)))
		if decimal {
			return value{k: vDecimal, d: r}, nil
		}
		if v.k == vUint {
			if u, err := strconv.ParseUint(r.String(), 10, 64); err == nil {
				return value{k: vUint, u: u}, nil
			}
		} else if i, ok := r.Int64(); ok {
			return value{k: vInt, i: i}, nil
		}
		return value{k: vDecimal, d: r}, nil
	case vDecimal:
		if places >= int64(v.d.Scale()) {
			return v, nil
		}
		return value{k: vDecimal, d: v.d.RoundTo(int(max(places, -100)))}, nil
	}
	return value{k: vFloat, f: roundDouble(toFloat(v), places)}, nil
}

// roundDouble rounds f to places decimal places (negative: to tens,
// hundreds, ...) as MariaDB rounds a DOUBLE.
func roundDouble(f float64, places int64) float64 {
	n := places
	if n < 0 {
		n = -n
	}
	scale := math.Pow10(int(min(n, 400)))
	switch {
	case places < 0 && math.IsInf(scale, 1):
		return 0
	case places >= 0 && math.IsInf(f*scale, 0):
		return f
	case places < 0:
		return math.RoundToEven(f/scale) * scale
	}
	return math.RoundToEven(f*scale) / scale
}

// convertTo converts the value IFNULL or COALESCE chose to the kind of
// their result; dec is the decimals of the argument it came from.
func convertTo(v value, k vkind, dec int) value {
	if v.k == vNull || v.k == k {
		return v
	}
	switch k {
	case vFloat:
		return value{k: vFloat, f: toFloat(v)}
	case vDecimal:
		if v.k == vInt || v.k == vUint {
			return value{k: vDecimal, d: toDecimal(v)}
		}
	case vInt:
		if v.k == vUint && v.u <= math.MaxInt64 {
			return value{k: vInt, i: int64(v.u)}
		}
		if v.k == vUint {
			return value{k: vDecimal, d: toDecimal(v)}
		}
	case vString:
		var b []byte
		switch v.k {
		case vInt:
			b = strconv.AppendInt(nil, v.i, 10)
		case vUint:
			b = strconv.AppendUint(nil, v.u, 10)
		case vDecimal:
			b = v.d.Append(nil, min(dec, maxScale))
		case vFloat:
			b = sqlvalue.AppendDouble(nil, v.f, sqlvalue.NotFixedDecimals)
		default:
			return value{k: vString, s: v.s}
		}
		return value{k: vString, s: b}
	}
	return v
}
