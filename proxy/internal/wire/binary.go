package wire

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// AppendBinaryRow converts one text-protocol row into a binary-protocol row,
// the form rows take in the result of COM_STMT_EXECUTE. fields give each
// column's type; values are the text values, nil for NULL.
func AppendBinaryRow(dst []byte, fields []*mysql.Field, values [][]byte) ([]byte, error) {
	dst = append(dst, 0x00)
	bitmap := len(dst)
	for range (len(values) + 7 + 2) / 8 {
		dst = append(dst, 0)
	}
	var err error
	for i, v := range values {
		if v == nil || fields[i].Type == mysql.MYSQL_TYPE_NULL {
			dst[bitmap+(i+2)/8] |= 1 << ((i + 2) % 8)
			continue
		}
		if dst, err = appendBinaryValue(dst, fields[i], v); err != nil {
			return nil, fmt.Errorf("column %d (%s): %w", i+1, fields[i].Name, err)
		}
	}
	return dst, nil
}

func appendBinaryValue(dst []byte, f *mysql.Field, v []byte) ([]byte, error) {
	unsigned := f.Flag&mysql.UNSIGNED_FLAG != 0
	switch f.Type {
	case mysql.MYSQL_TYPE_TINY:
		n, err := parseInt(v, unsigned)
		return append(dst, byte(n)), err
	case mysql.MYSQL_TYPE_SHORT, mysql.MYSQL_TYPE_YEAR:
		n, err := parseInt(v, unsigned)
		return binary.LittleEndian.AppendUint16(dst, uint16(n)), err
	case mysql.MYSQL_TYPE_INT24, mysql.MYSQL_TYPE_LONG:
		n, err := parseInt(v, unsigned)
		return binary.LittleEndian.AppendUint32(dst, uint32(n)), err
	case mysql.MYSQL_TYPE_LONGLONG:
		n, err := parseInt(v, unsigned)
		return binary.LittleEndian.AppendUint64(dst, n), err
	case mysql.MYSQL_TYPE_FLOAT:
		x, err := strconv.ParseFloat(string(v), 32)
		return binary.LittleEndian.AppendUint32(dst, math.Float32bits(float32(x))), err
	case mysql.MYSQL_TYPE_DOUBLE:
		x, err := strconv.ParseFloat(string(v), 64)
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(x)), err
	case mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_NEWDATE, mysql.MYSQL_TYPE_DATETIME,
		mysql.MYSQL_TYPE_TIMESTAMP, mysql.MYSQL_TYPE_DATETIME2, mysql.MYSQL_TYPE_TIMESTAMP2:
		return appendBinaryDateTime(dst, v)
	case mysql.MYSQL_TYPE_TIME, mysql.MYSQL_TYPE_TIME2:
		return appendBinaryTime(dst, v)
	}
	return AppendLenEncString(dst, v), nil
}

// parseInt parses a decimal integer without allocating; negative values
// come back in two's complement, which is what the binary protocol sends.
func parseInt(v []byte, unsigned bool) (uint64, error) {
	neg := false
	s := v
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if len(s) == 0 {
		return 0, fmt.Errorf("bad integer %q", v)
	}
	var n uint64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("bad integer %q", v)
		}
		d := uint64(c - '0')
		if n > (math.MaxUint64-d)/10 {
			return 0, fmt.Errorf("integer out of range %q", v)
		}
		n = n*10 + d
	}
	if neg {
		if unsigned && n != 0 {
			return 0, fmt.Errorf("negative unsigned integer %q", v)
		}
		return -n, nil
	}
	return n, nil
}

// appendBinaryDateTime encodes "YYYY-MM-DD[ hh:mm:ss[.ffffff]]" in the
// binary protocol's shortest form.
func appendBinaryDateTime(dst []byte, v []byte) ([]byte, error) {
	var f [7]int // year month day hour minute second microsecond
	if len(v) < 10 || v[4] != '-' || v[7] != '-' {
		return nil, fmt.Errorf("bad date %q", v)
	}
	var ok bool
	f[0], ok = digits(v[0:4])
	f[1], ok = digitsAnd(ok, v[5:7])
	f[2], ok = digitsAnd(ok, v[8:10])
	rest := v[10:]
	if len(rest) >= 9 && (rest[0] == ' ' || rest[0] == 'T') && rest[3] == ':' && rest[6] == ':' {
		f[3], ok = digitsAnd(ok, rest[1:3])
		f[4], ok = digitsAnd(ok, rest[4:6])
		f[5], ok = digitsAnd(ok, rest[7:9])
		rest = rest[9:]
		if len(rest) > 1 && rest[0] == '.' {
			f[6], ok = digitsAnd(ok, rest[1:])
			for i := len(rest) - 1; i < 6; i++ {
				f[6] *= 10
			}
			rest = nil
		}
	}
	if !ok || len(rest) > 0 {
		return nil, fmt.Errorf("bad datetime %q", v)
	}
	var n byte
	switch {
	case f[6] != 0:
		n = 11
	case f[3] != 0 || f[4] != 0 || f[5] != 0:
		n = 7
	case f[0] != 0 || f[1] != 0 || f[2] != 0:
		n = 4
	}
	dst = append(dst, n)
	if n >= 4 {
		dst = binary.LittleEndian.AppendUint16(dst, uint16(f[0]))
		dst = append(dst, byte(f[1]), byte(f[2]))
	}
	if n >= 7 {
		dst = append(dst, byte(f[3]), byte(f[4]), byte(f[5]))
	}
	if n == 11 {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(f[6]))
	}
	return dst, nil
}

// appendBinaryTime encodes "[-]h...h:mm:ss[.ffffff]" in the binary
// protocol's shortest form.
func appendBinaryTime(dst []byte, v []byte) ([]byte, error) {
	s := v
	neg := len(s) > 0 && s[0] == '-'
	if neg {
		s = s[1:]
	}
	colon := -1
	for i, c := range s {
		if c == ':' {
			colon = i
			break
		}
	}
	if colon < 1 || len(s) < colon+6 || s[colon+3] != ':' {
		return nil, fmt.Errorf("bad time %q", v)
	}
	hours, ok := digits(s[:colon])
	minutes, ok := digitsAnd(ok, s[colon+1:colon+3])
	seconds, ok := digitsAnd(ok, s[colon+4:colon+6])
	micro := 0
	rest := s[colon+6:]
	if len(rest) > 1 && rest[0] == '.' {
		micro, ok = digitsAnd(ok, rest[1:])
		for i := len(rest) - 1; i < 6; i++ {
			micro *= 10
		}
		rest = nil
	}
	if !ok || len(rest) > 0 {
		return nil, fmt.Errorf("bad time %q", v)
	}
	var n byte
	switch {
	case micro != 0:
		n = 12
	case hours != 0 || minutes != 0 || seconds != 0:
		n = 8
	}
	dst = append(dst, n)
	if n == 0 {
		return dst, nil
	}
	sign := byte(0)
	if neg {
		sign = 1
	}
	dst = append(dst, sign)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(hours/24))
	dst = append(dst, byte(hours%24), byte(minutes), byte(seconds))
	if n == 12 {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(micro))
	}
	return dst, nil
}

func digits(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 9 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func digitsAnd(ok bool, b []byte) (int, bool) {
	n, ok2 := digits(b)
	return n, ok && ok2
}
