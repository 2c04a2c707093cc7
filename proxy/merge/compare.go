package merge

import (
	"github.com/shardflake/shardflake/proxy/internal/sqlvalue"
)

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
