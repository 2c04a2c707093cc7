package sqlvalue

import (
	"strconv"
)

// NotFixedDecimals is the Decimals of a column definition for a DOUBLE
// printed with as many digits as it needs (MariaDB's NOT_FIXED_DEC).
const NotFixedDecimals = 31

// AppendDouble appends f as MariaDB prints a DOUBLE value with decimals
// digits after the point: fixed when decimals < NotFixedDecimals (the
// shortest digits that read back as f, padded with zeros, so 2/3 with 17
// decimals is 0.66666666666666660 and 1149425287356321792 is
// 1149425287356321800; rounded when they have more decimals),
// otherwise the shortest digits that read back as f, positional when the
// point falls among the digits or at most 15 places after their start or
// 14 zeros before it, and in exponent form ("1e15", "1.5e-16") otherwise
// (the rule measured on MariaDB 10.11 for every digit count and exponent).
func AppendDouble(dst []byte, f float64, decimals int) []byte {
	if decimals < NotFixedDecimals {
		start := len(dst)
		dst = strconv.AppendFloat(dst, f, 'f', -1, 64)
		frac := 0
		for i := len(dst) - 1; i >= start; i-- {
			if dst[i] == '.' {
				frac = len(dst) - 1 - i
				break
			}
		}
		if frac > decimals {
			return strconv.AppendFloat(dst[:start], f, 'f', decimals, 64)
		}
		if frac == 0 && decimals > 0 {
			dst = append(dst, '.')
		}
		for range decimals - frac {
			dst = append(dst, '0')
		}
		return dst
	}
	if f == 0 {
		if 1/f < 0 {
			return append(dst, "-0"...)
		}
		return append(dst, '0')
	}
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
	if e[0] == '-' {
		dst = append(dst, '-')
		e = e[1:]
	}
	// e is d[.ddd]e±XX: collect the digits and the exponent.
	var digits [20]byte
	n := 0
	i := 0
	for ; e[i] != 'e'; i++ {
		if e[i] != '.' {
			digits[n] = e[i]
			n++
		}
	}
	exp, _ := strconv.Atoi(string(e[i+1:]))
	decpt := exp + 1 // the point sits after decpt digits
	ds := digits[:n]
	switch {
	case (decpt > 15 || decpt < -14) && !(decpt > 0 && decpt < n):
		dst = append(dst, ds[0])
		if n > 1 {
			dst = append(dst, '.')
			dst = append(dst, ds[1:]...)
		}
		dst = append(dst, 'e')
		return strconv.AppendInt(dst, int64(exp), 10)
	case decpt <= 0:
		dst = append(dst, "0."...)
		for range -decpt {
			dst = append(dst, '0')
		}
		return append(dst, ds...)
	case decpt >= n:
		dst = append(dst, ds...)
		for range decpt - n {
			dst = append(dst, '0')
		}
		return dst
	default:
		dst = append(dst, ds[:decpt]...)
		dst = append(dst, '.')
		return append(dst, ds[decpt:]...)
	}
}

// ParseDouble reads a number the way MariaDB converts a string to DOUBLE:
// leading spaces, then the longest prefix that is a number ("12abc" is
// 12, "abc" is 0). ok is false when the text is not entirely a number
// (MariaDB warns then, and still uses the prefix).
func ParseDouble(s []byte) (f float64, ok bool) {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	start := i
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	digits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return 0, false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '-' || s[j] == '+') {
			j++
		}
		if j < len(s) && s[j] >= '0' && s[j] <= '9' {
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			i = j
		}
	}
	f, err := strconv.ParseFloat(string(s[start:i]), 64)
	if err != nil {
		// Out of range: ParseFloat returns ±Inf, which MariaDB clamps.
		if f > 0 {
			f = 1.7976931348623157e308
		} else if f < 0 {
			f = -1.7976931348623157e308
		}
	}
	return f, i == len(s)
}
