package sqlvalue

import (
	"cmp"
	"errors"
	"math"
	"math/big"
	"strconv"
)

// ErrNotDecimal is returned for text that is not a decimal number.
var ErrNotDecimal = errors.New("not a decimal number")

// Decimal is an exact decimal number, unscaled × 10^-scale. The zero
// value is 0. Decimals are values: operations return new ones.
type Decimal struct {
	unscaled big.Int
	scale    int
	// negZero marks a zero that MariaDB prints as "-0.00": a quotient of
	// operands with opposite signs truncated to zero, a remainder of a
	// negative dividend, or such a value read back. Rounding (to fewer
	// digits) and arithmetic drop it, as in MariaDB; comparisons put it
	// just below zero (MariaDB's decimal_cmp looks at the sign first).
	negZero bool
}

// ParseDecimal reads a decimal number as MariaDB prints one: an optional
// sign, digits, optionally a point and more digits ("-12.50", "3", ".5").
func ParseDecimal(s []byte) (Decimal, error) {
	var d Decimal
	i := 0
	neg := false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	digits := make([]byte, 0, len(s))
	seenDigit, seenPoint := false, false
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits = append(digits, c)
			seenDigit = true
			if seenPoint {
				d.scale++
			}
		case c == '.' && !seenPoint:
			seenPoint = true
		default:
			return Decimal{}, ErrNotDecimal
		}
	}
	if !seenDigit {
		return Decimal{}, ErrNotDecimal
	}
	d.unscaled.SetString(string(digits), 10)
	if neg {
		d.unscaled.Neg(&d.unscaled)
		d.negZero = d.unscaled.Sign() == 0
	}
	return d, nil
}

// DecimalFromInt returns v as a Decimal with scale 0.
func DecimalFromInt(v int64) Decimal {
	var d Decimal
	d.unscaled.SetInt64(v)
	return d
}

// DecimalFromUint returns v as a Decimal with scale 0.
func DecimalFromUint(v uint64) Decimal {
	var d Decimal
	d.unscaled.SetUint64(v)
	return d
}

// Scale returns the number of digits after the point.
func (d *Decimal) Scale() int { return d.scale }

// Sign returns -1, 0 or +1.
func (d *Decimal) Sign() int { return d.unscaled.Sign() }

var bigTen = big.NewInt(10)

func pow10(n int) *big.Int {
	return new(big.Int).Exp(bigTen, big.NewInt(int64(n)), nil)
}

// rescaled returns d's unscaled value at scale s >= d.scale.
func (d *Decimal) rescaled(s int) *big.Int {
	if s == d.scale {
		return new(big.Int).Set(&d.unscaled)
	}
	return new(big.Int).Mul(&d.unscaled, pow10(s-d.scale))
}

// Add returns d + e, with the larger of their scales.
func (d *Decimal) Add(e *Decimal) Decimal {
	s := max(d.scale, e.scale)
	var r Decimal
	r.scale = s
	r.unscaled.Add(d.rescaled(s), e.rescaled(s))
	return r
}

// Sub returns d - e, with the larger of their scales.
func (d *Decimal) Sub(e *Decimal) Decimal {
	n := e.Neg()
	return d.Add(&n)
}

// Neg returns -d.
func (d *Decimal) Neg() Decimal {
	var r Decimal
	r.scale = d.scale
	r.unscaled.Neg(&d.unscaled)
	return r
}

// Mul returns d × e, with the sum of their scales (as MySQL's * does).
func (d *Decimal) Mul(e *Decimal) Decimal {
	var r Decimal
	r.scale = d.scale + e.scale
	r.unscaled.Mul(&d.unscaled, &e.unscaled)
	return r
}

// Cmp returns -1, 0 or +1 as d is less than, equal to or greater than e,
// with a negative zero less than zero as MariaDB compares them.
func (d *Decimal) Cmp(e *Decimal) int {
	s := max(d.scale, e.scale)
	if c := d.rescaled(s).Cmp(e.rescaled(s)); c != 0 || d.Sign() != 0 {
		return c
	}
	switch {
	case d.negZero == e.negZero:
		return 0
	case d.negZero:
		return -1
	}
	return 1
}

// Abs returns |d| (a negative zero becomes zero).
func (d *Decimal) Abs() Decimal {
	var r Decimal
	r.scale = d.scale
	r.unscaled.Abs(&d.unscaled)
	return r
}

// DivPrecisionIncrement is MariaDB's div_precision_increment default: a
// quotient's scale is the dividend's plus this.
const DivPrecisionIncrement = 4

// Quo returns d / e as MariaDB's DECIMAL division computes it, and false
// when e is zero.
//
// MariaDB divides in base-10^9 words: each operand's scale is rounded up
// to whole 9-digit words, the padding that adds counts towards the
// increment, and the quotient is truncated (not rounded) at the result's
// whole words. The value a client sees is that quotient rounded half up
// to the dividend's scale + increment (QuoScale); it differs from the
// exactly rounded quotient when that scale is a multiple of 9 (2.00000/3
// is 0.666666666).
func (d *Decimal) Quo(e *Decimal, increment int) (Decimal, bool) {
	if e.Sign() == 0 {
		return Decimal{}, false
	}
	f1 := roundUp9(d.scale)
	f2 := roundUp9(e.scale)
	incr := max(0, increment-(f1-d.scale)-(f2-e.scale))
	scale := roundUp9(f1 + f2 + incr)
	// d/e = (du·10^-ds) / (eu·10^-es); at scale: du·10^(scale-ds+es) / eu.
	num := new(big.Int).Set(&d.unscaled)
	den := new(big.Int).Set(&e.unscaled)
	if k := scale - d.scale + e.scale; k >= 0 {
		num.Mul(num, pow10(k))
	} else {
		den.Mul(den, pow10(-k))
	}
	var r Decimal
	r.scale = scale
	r.unscaled.Quo(num, den) // truncates towards zero
	r.negZero = r.unscaled.Sign() == 0 && num.Sign() != 0 && (num.Sign() < 0) != (den.Sign() < 0)
	return r, true
}

// QuoScale is the scale a client sees for a quotient whose dividend has
// scale dividendScale (capped at MariaDB's DECIMAL maximum of 38).
func QuoScale(dividendScale, increment int) int { return min(dividendScale+increment, 38) }

func roundUp9(n int) int { return (n + 8) / 9 * 9 }

// IntDiv returns the integer part of d / e (MySQL's DIV), and false when
// e is zero.
func (d *Decimal) IntDiv(e *Decimal) (Decimal, bool) {
	if e.Sign() == 0 {
		return Decimal{}, false
	}
	s := max(d.scale, e.scale)
	var r Decimal
	r.unscaled.Quo(d.rescaled(s), e.rescaled(s))
	return r, true
}

// Mod returns d modulo e with the sign of d (MySQL's %: a negative
// dividend gives a negative zero when the result has a fraction), and
// false when e is zero.
func (d *Decimal) Mod(e *Decimal) (Decimal, bool) {
	if e.Sign() == 0 {
		return Decimal{}, false
	}
	s := max(d.scale, e.scale)
	var r Decimal
	r.scale = s
	r.unscaled.Rem(d.rescaled(s), e.rescaled(s))
	r.negZero = r.unscaled.Sign() == 0 && d.Sign() < 0 && s > 0
	return r, true
}

// roundQuo returns num/den rounded half away from zero, at scale.
func roundQuo(num, den *big.Int, scale int) Decimal {
	var r Decimal
	r.scale = scale
	neg := (num.Sign() < 0) != (den.Sign() < 0)
	n := new(big.Int).Abs(num)
	dd := new(big.Int).Abs(den)
	q, rem := new(big.Int).QuoRem(n, dd, new(big.Int))
	if rem.Lsh(rem, 1).Cmp(dd) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	if neg {
		q.Neg(q)
	}
	r.unscaled.Set(q)
	return r
}

// Round returns d rounded half away from zero to scale digits (or
// extended with zeros when scale is larger than d's).
func (d *Decimal) Round(scale int) Decimal {
	if scale >= d.scale {
		var r Decimal
		r.scale = scale
		r.unscaled.Set(d.rescaled(scale))
		r.negZero = d.negZero
		return r
	}
	return roundQuo(&d.unscaled, pow10(d.scale-scale), scale)
}

// RoundTo returns d rounded half away from zero to places digits after
// the point; a negative places rounds to tens, hundreds, ... (ROUND(d,
// -2)) and gives scale 0.
func (d *Decimal) RoundTo(places int) Decimal {
	if places >= 0 {
		return d.Round(places)
	}
	unit := pow10(-places)
	r := roundQuo(&d.unscaled, new(big.Int).Mul(pow10(d.scale), unit), 0)
	r.unscaled.Mul(&r.unscaled, unit)
	return r
}

// Append appends d as MariaDB prints a DECIMAL with scale digits after
// the point, rounding half away from zero when d has more.
func (d *Decimal) Append(dst []byte, scale int) []byte {
	r := d.Round(scale)
	digits := r.unscaled.Text(10)
	if r.negZero {
		dst = append(dst, '-')
	}
	if r.unscaled.Sign() < 0 {
		dst = append(dst, '-')
		digits = digits[1:]
	}
	if len(digits) <= scale {
		dst = append(dst, '0')
		if scale > 0 {
			dst = append(dst, '.')
			for range scale - len(digits) {
				dst = append(dst, '0')
			}
			dst = append(dst, digits...)
		}
		return dst
	}
	dst = append(dst, digits[:len(digits)-scale]...)
	if scale > 0 {
		dst = append(dst, '.')
		dst = append(dst, digits[len(digits)-scale:]...)
	}
	return dst
}

// String returns d with its own scale.
func (d Decimal) String() string { return string(d.Append(nil, d.scale)) }

// Float64 returns the nearest float64.
func (d *Decimal) Float64() float64 {
	f, err := strconv.ParseFloat(d.String(), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return math.NaN()
	}
	return f
}

// Int64 returns d truncated to an integer, and false when it does not fit.
func (d *Decimal) Int64() (int64, bool) {
	q := new(big.Int).Quo(&d.unscaled, pow10(d.scale))
	if !q.IsInt64() {
		return 0, false
	}
	return q.Int64(), true
}

// CompareDecimalText compares two decimal numbers in MariaDB's text form
// without allocating; text that is not a decimal compares by bytes.
func CompareDecimalText(a, b []byte) int {
	na, ia, fa, oka := splitDecimal(a)
	nb, ib, fb, okb := splitDecimal(b)
	if !oka || !okb {
		return compareBytes(a, b, false)
	}
	za := isZeroDigits(ia) && isZeroDigits(fa)
	zb := isZeroDigits(ib) && isZeroDigits(fb)
	if za {
		na = false
	}
	if zb {
		nb = false
	}
	if na != nb {
		if na {
			return -1
		}
		return 1
	}
	r := compareMagnitude(ia, fa, ib, fb)
	if na {
		return -r
	}
	return r
}

// splitDecimal returns the sign, the integer digits without leading zeros
// and the fraction digits of a decimal's text.
func splitDecimal(s []byte) (neg bool, intPart, frac []byte, ok bool) {
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	dot := len(s)
	for i, c := range s {
		if c == '.' {
			if dot != len(s) {
				return false, nil, nil, false
			}
			dot = i
		} else if c < '0' || c > '9' {
			return false, nil, nil, false
		}
	}
	intPart = s[:dot]
	if dot < len(s) {
		frac = s[dot+1:]
	}
	for len(intPart) > 0 && intPart[0] == '0' {
		intPart = intPart[1:]
	}
	return neg, intPart, frac, true
}

func isZeroDigits(s []byte) bool {
	for _, c := range s {
		if c != '0' {
			return false
		}
	}
	return true
}

// compareMagnitude compares two unsigned decimals given as integer digits
// (no leading zeros) and fraction digits.
func compareMagnitude(ia, fa, ib, fb []byte) int {
	if len(ia) != len(ib) {
		return cmp.Compare(len(ia), len(ib))
	}
	for i := range ia {
		if ia[i] != ib[i] {
			return cmp.Compare(int(ia[i]), int(ib[i]))
		}
	}
	n := max(len(fa), len(fb))
	for i := range n {
		ca, cb := byte('0'), byte('0')
		if i < len(fa) {
			ca = fa[i]
		}
		if i < len(fb) {
			cb = fb[i]
		}
		if ca != cb {
			return cmp.Compare(int(ca), int(cb))
		}
	}
	return 0
}
