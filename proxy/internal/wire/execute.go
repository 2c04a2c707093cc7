package wire

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// PrepareOK is the first packet of a COM_STMT_PREPARE response.
type PrepareOK struct {
	StmtID  uint32
	Columns int
	Params  int
}

// ParsePrepareOK decodes the first packet of a successful COM_STMT_PREPARE
// response; the parameter and column definitions follow it, each list
// ended by an EOF packet when it is not empty.
func ParsePrepareOK(p []byte) (PrepareOK, error) {
	if len(p) < 9 || p[0] != HeaderOK {
		return PrepareOK{}, ErrMalformed
	}
	return PrepareOK{
		StmtID:  binary.LittleEndian.Uint32(p[1:]),
		Columns: int(binary.LittleEndian.Uint16(p[5:])),
		Params:  int(binary.LittleEndian.Uint16(p[7:])),
	}, nil
}

// AppendStmtClose appends a COM_STMT_CLOSE (the server does not answer it).
func AppendStmtClose(dst []byte, stmtID uint32) []byte {
	dst = append(dst, mysql.COM_STMT_CLOSE)
	return binary.LittleEndian.AppendUint32(dst, stmtID)
}

// appendExecuteHead appends a COM_STMT_EXECUTE's head for n arguments:
// the command, stmtID, no cursor, one iteration and, when n > 0, a zeroed
// NULL bitmap, the new-parameters-bound flag and n zeroed type pairs.
// nulls and types are where the bitmap and the type pairs start.
func appendExecuteHead(dst []byte, stmtID uint32, n int) (out []byte, nulls, types int) {
	dst = append(dst, mysql.COM_STMT_EXECUTE)
	dst = binary.LittleEndian.AppendUint32(dst, stmtID)
	dst = append(dst, 0)                           // CURSOR_TYPE_NO_CURSOR
	dst = binary.LittleEndian.AppendUint32(dst, 1) // iteration count
	if n == 0 {
		return dst, len(dst), len(dst)
	}
	nulls = len(dst)
	for range (n + 7) / 8 {
		dst = append(dst, 0)
	}
	dst = append(dst, 1) // new parameters bound: the types follow
	types = len(dst)
	for range n {
		dst = append(dst, 0, 0)
	}
	return dst, nulls, types
}

// AppendExecute appends a COM_STMT_EXECUTE of statement stmtID, the
// command a client sends: no cursor, the parameter types bound, then the
// values. Each argument keeps its type class: integers go as BIGINT
// (UNSIGNED for uint64), floats as FLOAT or DOUBLE, strings as VARCHAR (the
// server reads them in the connection's character set), []byte as BLOB
// (binary), time.Time as DATETIME, nil as NULL, LongData as its type
// alone. Other types are an error.
func AppendExecute(dst []byte, stmtID uint32, args []any) ([]byte, error) {
	dst, nulls, types := appendExecuteHead(dst, stmtID, len(args))
	for i, a := range args {
		tp, flag := byte(mysql.MYSQL_TYPE_LONGLONG), byte(0)
		switch x := a.(type) {
		case nil:
			tp = mysql.MYSQL_TYPE_NULL
			dst[nulls+i/8] |= 1 << (i % 8)
		case int64:
			dst = binary.LittleEndian.AppendUint64(dst, uint64(x))
		case int:
			dst = binary.LittleEndian.AppendUint64(dst, uint64(x))
		case int32:
			dst = binary.LittleEndian.AppendUint64(dst, uint64(x))
		case int16:
			dst = binary.LittleEndian.AppendUint64(dst, uint64(x))
		case int8:
			dst = binary.LittleEndian.AppendUint64(dst, uint64(x))
		case uint64:
			flag = 0x80
			dst = binary.LittleEndian.AppendUint64(dst, x)
		case uint:
			flag = 0x80
			dst = binary.LittleEndian.AppendUint64(dst, uint64(x))
		case uint32:
			flag = 0x80
			dst = binary.LittleEndian.AppendUint64(dst, uint64(x))
		case uint16:
			flag = 0x80
			dst = binary.LittleEndian.AppendUint64(dst, uint64(x))
		case uint8:
			flag = 0x80
			dst = binary.LittleEndian.AppendUint64(dst, uint64(x))
		case bool:
			tp = mysql.MYSQL_TYPE_TINY
			if x {
				dst = append(dst, 1)
			} else {
				dst = append(dst, 0)
			}
		case float64:
			tp = mysql.MYSQL_TYPE_DOUBLE
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(x))
		case float32:
			tp = mysql.MYSQL_TYPE_FLOAT
			dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(x))
		case string:
			tp = mysql.MYSQL_TYPE_VAR_STRING
			dst = AppendLenEncInt(dst, uint64(len(x)))
			dst = append(dst, x...)
		case []byte:
			if x == nil {
				tp = mysql.MYSQL_TYPE_NULL
				dst[nulls+i/8] |= 1 << (i % 8)
				break
			}
			tp = mysql.MYSQL_TYPE_BLOB
			dst = AppendLenEncString(dst, x)
		case time.Time:
			tp = mysql.MYSQL_TYPE_DATETIME
			dst = appendBinaryTimestamp(dst, x)
		case LongData:
			tp = mysql.MYSQL_TYPE_VAR_STRING
			if x.Binary {
				tp = mysql.MYSQL_TYPE_BLOB
			}
		default:
			return nil, fmt.Errorf("wire: parameter %d: cannot send %T", i+1, a)
		}
		dst[types+2*i], dst[types+2*i+1] = tp, flag
	}
	return dst, nil
}

// appendBinaryTimestamp encodes t as a binary DATETIME value.
func appendBinaryTimestamp(dst []byte, t time.Time) []byte {
	us := t.Nanosecond() / 1000
	dst = append(dst, 11)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(t.Year()))
	dst = append(dst, byte(t.Month()), byte(t.Day()), byte(t.Hour()), byte(t.Minute()), byte(t.Second()))
	return binary.LittleEndian.AppendUint32(dst, uint32(us))
}

// SplitBinaryRow decodes a binary-protocol row (a COM_STMT_EXECUTE result
// row) into the text protocol's values, as AppendTextRow writes them: nil
// for NULL, numbers in decimal, dates and times as MySQL prints them with
// the column's fractional digits, strings as their bytes. Values are
// written into buf (returned grown) and dst (reused when large enough);
// both are only valid until they are reused.
func SplitBinaryRow(p []byte, fields []*mysql.Field, dst [][]byte, buf []byte) ([][]byte, []byte, error) {
	n := len(fields)
	if cap(dst) < n {
		dst = make([][]byte, n)
	}
	dst = dst[:n]
	nb := (n + 7 + 2) / 8
	if len(p) < 1+nb || p[0] != HeaderOK {
		return nil, buf, ErrMalformed
	}
	bitmap := p[1 : 1+nb]
	pos := 1 + nb
	if buf == nil {
		// An empty value must come back empty, not nil (NULL).
		buf = make([]byte, 0, 256)
	}
	buf = buf[:0]
	var stack [16]int
	starts := stack[:0]
	for i, f := range fields {
		if bitmap[(i+2)/8]&(1<<((i+2)%8)) != 0 {
			starts = append(starts, -1)
			continue
		}
		start := len(buf)
		var size int
		var err error
		buf, size, err = appendTextValue(buf, p[pos:], f)
		if err != nil {
			return nil, buf, fmt.Errorf("column %d (%s): %w", i+1, f.Name, err)
		}
		pos += size
		starts = append(starts, start)
	}
	if pos != len(p) {
		return nil, buf, ErrMalformed
	}
	// buf may have moved while growing: slice it once it is complete.
	for i, start := range starts {
		if start < 0 {
			dst[i] = nil
			continue
		}
		end := len(buf)
		for _, s := range starts[i+1:] {
			if s >= 0 {
				end = s
				break
			}
		}
		dst[i] = buf[start:end:end]
	}
	return dst, buf, nil
}

// appendTextValue appends the text form of the binary value at the start
// of p and returns how many bytes of p it took.
func appendTextValue(dst, p []byte, f *mysql.Field) ([]byte, int, error) {
	unsigned := f.Flag&mysql.UNSIGNED_FLAG != 0
	fixed := func(n int) error {
		if len(p) < n {
			return ErrMalformed
		}
		return nil
	}
	switch f.Type {
	case mysql.MYSQL_TYPE_TINY:
		if err := fixed(1); err != nil {
			return dst, 0, err
		}
		if unsigned {
			return strconv.AppendUint(dst, uint64(p[0]), 10), 1, nil
		}
		return strconv.AppendInt(dst, int64(int8(p[0])), 10), 1, nil
	case mysql.MYSQL_TYPE_SHORT, mysql.MYSQL_TYPE_YEAR:
		if err := fixed(2); err != nil {
			return dst, 0, err
		}
		v := binary.LittleEndian.Uint16(p)
		if f.Type == mysql.MYSQL_TYPE_YEAR {
			return appendDigits(dst, int(v), 4), 2, nil
		}
		if unsigned {
			return strconv.AppendUint(dst, uint64(v), 10), 2, nil
		}
		return strconv.AppendInt(dst, int64(int16(v)), 10), 2, nil
	case mysql.MYSQL_TYPE_INT24, mysql.MYSQL_TYPE_LONG:
		if err := fixed(4); err != nil {
			return dst, 0, err
		}
		v := binary.LittleEndian.Uint32(p)
		if unsigned {
			return strconv.AppendUint(dst, uint64(v), 10), 4, nil
		}
		return strconv.AppendInt(dst, int64(int32(v)), 10), 4, nil
	case mysql.MYSQL_TYPE_LONGLONG:
		if err := fixed(8); err != nil {
			return dst, 0, err
		}
		v := binary.LittleEndian.Uint64(p)
		if unsigned {
			return strconv.AppendUint(dst, v, 10), 8, nil
		}
		return strconv.AppendInt(dst, int64(v), 10), 8, nil
	case mysql.MYSQL_TYPE_FLOAT:
		if err := fixed(4); err != nil {
			return dst, 0, err
		}
		return appendFloatText(dst, float64(math.Float32frombits(binary.LittleEndian.Uint32(p))), 32), 4, nil
	case mysql.MYSQL_TYPE_DOUBLE:
		if err := fixed(8); err != nil {
			return dst, 0, err
		}
		return appendFloatText(dst, math.Float64frombits(binary.LittleEndian.Uint64(p)), 64), 8, nil
	case mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_NEWDATE, mysql.MYSQL_TYPE_DATETIME,
		mysql.MYSQL_TYPE_TIMESTAMP, mysql.MYSQL_TYPE_DATETIME2, mysql.MYSQL_TYPE_TIMESTAMP2:
		b, _, n, err := ReadLenEncString(p)
		if err != nil {
			return dst, 0, err
		}
		dst, err = appendDateTimeText(dst, b, f)
		return dst, n, err
	case mysql.MYSQL_TYPE_TIME, mysql.MYSQL_TYPE_TIME2:
		b, _, n, err := ReadLenEncString(p)
		if err != nil {
			return dst, 0, err
		}
		dst, err = appendTimeText(dst, b, f.Decimal)
		return dst, n, err
	}
	b, _, n, err := ReadLenEncString(p)
	if err != nil {
		return dst, 0, err
	}
	return append(dst, b...), n, nil
}

// appendFloatText writes a float as MySQL's text protocol does for the
// common values: the shortest form that reads back the same, with an
// exponent only for very large or small magnitudes.
func appendFloatText(dst []byte, f float64, bits int) []byte {
	if a := math.Abs(f); a != 0 && (a >= 1e15 || a < 1e-4) {
		b := strconv.AppendFloat(nil, f, 'g', -1, bits)
		// MySQL writes 1e20 and 1e-5, Go 1e+20 and 1e-05.
		for i := 0; i < len(b); i++ {
			if b[i] == 'e' {
				exp := b[i+1:]
				sign := ""
				if exp[0] == '-' {
					sign = "-"
				}
				digits := exp[1:]
				for len(digits) > 1 && digits[0] == '0' {
					digits = digits[1:]
				}
				dst = append(dst, b[:i+1]...)
				dst = append(dst, sign...)
				return append(dst, digits...)
			}
		}
		return append(dst, b...)
	}
	return strconv.AppendFloat(dst, f, 'f', -1, bits)
}

// appendDateTimeText writes a binary DATE/DATETIME/TIMESTAMP value as
// 'YYYY-MM-DD[ hh:mm:ss[.fraction]]', with the column's fractional digits.
func appendDateTimeText(dst, b []byte, f *mysql.Field) ([]byte, error) {
	t, err := decodeBinaryDateTime(b)
	if err != nil {
		return dst, err
	}
	y, mo, d, h, mi, s, us := t.y, t.mo, t.d, t.h, t.mi, t.s, t.us
	dst = appendDigits(dst, y, 4)
	dst = append(dst, '-')
	dst = appendDigits(dst, mo, 2)
	dst = append(dst, '-')
	dst = appendDigits(dst, d, 2)
	if f.Type == mysql.MYSQL_TYPE_DATE || f.Type == mysql.MYSQL_TYPE_NEWDATE {
		return dst, nil
	}
	dst = append(dst, ' ')
	dst = appendDigits(dst, h, 2)
	dst = append(dst, ':')
	dst = appendDigits(dst, mi, 2)
	dst = append(dst, ':')
	dst = appendDigits(dst, s, 2)
	return appendFraction(dst, us, f.Decimal), nil
}

// appendTimeText writes a binary TIME value as '[-]hh:mm:ss[.fraction]'.
func appendTimeText(dst, b []byte, decimals uint8) ([]byte, error) {
	var neg bool
	var hours, mi, s, us int
	switch len(b) {
	case 0:
	case 8, 12:
		neg = b[0] == 1
		hours = int(binary.LittleEndian.Uint32(b[1:]))*24 + int(b[5])
		mi, s = int(b[6]), int(b[7])
		if len(b) == 12 {
			us = int(binary.LittleEndian.Uint32(b[8:]))
		}
	default:
		return dst, fmt.Errorf("%w: time of %d bytes", ErrMalformed, len(b))
	}
	if neg {
		dst = append(dst, '-')
	}
	dst = appendDigits(dst, hours, 2)
	dst = append(dst, ':')
	dst = appendDigits(dst, mi, 2)
	dst = append(dst, ':')
	dst = appendDigits(dst, s, 2)
	return appendFraction(dst, us, decimals), nil
}

// appendFraction writes microseconds with a column's fractional digits
// (0-6; larger values, such as 31 for "not fixed", mean none).
func appendFraction(dst []byte, us int, decimals uint8) []byte {
	if decimals == 0 || decimals > 6 {
		return dst
	}
	var digits [6]byte
	for i := 5; i >= 0; i-- {
		digits[i] = byte('0' + us%10)
		us /= 10
	}
	return append(append(dst, '.'), digits[:decimals]...)
}

// appendDigits writes n in decimal, zero-padded to at least width digits.
func appendDigits(dst []byte, n, width int) []byte {
	var b [20]byte
	s := strconv.AppendInt(b[:0], int64(n), 10)
	for i := len(s); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}
