package wire

import (
	"encoding/binary"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// AppendExecuteAs is AppendExecute with each argument sent under the type
// a client bound it with: types holds two bytes per argument (type, then
// 0x80 for unsigned), as Execute.Types. MariaDB describes a result column
// that is a bare parameter (SELECT ?, SELECT ? + 1) by that type: a TINY
// parameter is a TINYINT column, a STRING one CHAR, a DECIMAL one
// DECIMAL, a DATE one DATE. Arguments are the values ParseExecute
// decoded from those types (or LongData in their place). When types is
// nil or an argument does not fit its type, every argument goes by its Go
// type, as AppendExecute sends it.
func AppendExecuteAs(dst []byte, stmtID uint32, args []any, types []byte) ([]byte, error) {
	if types == nil || len(types) != 2*len(args) || len(args) == 0 {
		return AppendExecute(dst, stmtID, args)
	}
	start := len(dst)
	dst, nulls, typeAt := appendExecuteHead(dst, stmtID, len(args))
	for i, a := range args {
		tp, flag := types[2*i], types[2*i+1]&0x80
		if a == nil {
			tp, flag = mysql.MYSQL_TYPE_NULL, 0
			dst[nulls+i/8] |= 1 << (i % 8)
		} else {
			var ok bool
			if dst, ok = appendAs(dst, tp, flag != 0, a); !ok {
				return AppendExecute(dst[:start], stmtID, args)
			}
		}
		dst[typeAt+2*i], dst[typeAt+2*i+1] = tp, flag
	}
	return dst, nil
}

// appendAs appends v's binary value as type tp; false when v does not
// fit tp.
func appendAs(dst []byte, tp byte, unsigned bool, v any) ([]byte, bool) {
	switch tp {
	case mysql.MYSQL_TYPE_TINY, mysql.MYSQL_TYPE_SHORT, mysql.MYSQL_TYPE_YEAR,
		mysql.MYSQL_TYPE_INT24, mysql.MYSQL_TYPE_LONG, mysql.MYSQL_TYPE_LONGLONG:
		return appendIntAs(dst, tp, unsigned, v)
	case mysql.MYSQL_TYPE_FLOAT:
		if f, ok := v.(float32); ok {
			return binary.LittleEndian.AppendUint32(dst, math.Float32bits(f)), true
		}
	case mysql.MYSQL_TYPE_DOUBLE:
		if f, ok := v.(float64); ok {
			return binary.LittleEndian.AppendUint64(dst, math.Float64bits(f)), true
		}
	case mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_TIMESTAMP:
		if t, ok := v.(time.Time); ok {
			return appendBinaryTimestamp(dst, t), true
		}
	case mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_NEWDATE:
		if s, ok := v.(string); ok {
			return appendDateArg(dst, s)
		}
	case mysql.MYSQL_TYPE_TIME:
		if s, ok := v.(string); ok {
			return appendTimeArg(dst, s)
		}
	case mysql.MYSQL_TYPE_NULL:
		return dst, false
	default:
		// The string types, DECIMAL, BIT, ENUM, SET, JSON, the BLOBs and
		// GEOMETRY: a length-encoded string.
		switch x := v.(type) {
		case string:
			dst = AppendLenEncInt(dst, uint64(len(x)))
			return append(dst, x...), true
		case []byte:
			return AppendLenEncString(dst, x), true
		case LongData:
			return dst, true
		}
	}
	return dst, false
}

// appendIntAs appends an integer argument in the width of type tp.
func appendIntAs(dst []byte, tp byte, unsigned bool, v any) ([]byte, bool) {
	var u uint64
	switch x := v.(type) {
	case int64:
		if unsigned && x < 0 {
			return dst, false
		}
		u = uint64(x)
	case uint64:
		if !unsigned || tp != mysql.MYSQL_TYPE_LONGLONG {
			return dst, false
		}
		u = x
	default:
		return dst, false
	}
	switch tp {
	case mysql.MYSQL_TYPE_TINY:
		return append(dst, byte(u)), true
	case mysql.MYSQL_TYPE_SHORT, mysql.MYSQL_TYPE_YEAR:
		return binary.LittleEndian.AppendUint16(dst, uint16(u)), true
	case mysql.MYSQL_TYPE_INT24, mysql.MYSQL_TYPE_LONG:
		return binary.LittleEndian.AppendUint32(dst, uint32(u)), true
	}
	return binary.LittleEndian.AppendUint64(dst, u), true
}

// appendDateArg appends a DATE argument, YYYY-MM-DD as ParseExecute
// wrote it, as a binary DATE.
func appendDateArg(dst []byte, s string) ([]byte, bool) {
	y, rest, ok := strings.Cut(s, "-")
	mo, d, ok2 := strings.Cut(rest, "-")
	if !ok || !ok2 {
		return dst, false
	}
	yv, err1 := strconv.Atoi(y)
	mv, err2 := strconv.Atoi(mo)
	dv, err3 := strconv.Atoi(d)
	if err1 != nil || err2 != nil || err3 != nil || yv < 0 || yv > 9999 || mv < 0 || mv > 12 || dv < 0 || dv > 31 {
		return dst, false
	}
	dst = append(dst, 4)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(yv))
	return append(dst, byte(mv), byte(dv)), true
}

// appendTimeArg appends a TIME argument, [-]HH:MM:SS[.ffffff] as
// ParseExecute wrote it, as a binary TIME.
func appendTimeArg(dst []byte, s string) ([]byte, bool) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	s, frac, _ := strings.Cut(s, ".")
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return dst, false
	}
	h, err1 := strconv.Atoi(parts[0])
	m, err2 := strconv.Atoi(parts[1])
	sec, err3 := strconv.Atoi(parts[2])
	us := 0
	var err4 error
	if frac != "" {
		if len(frac) != 6 {
			return dst, false
		}
		us, err4 = strconv.Atoi(frac)
	}
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || h < 0 || m < 0 || m > 59 || sec < 0 || sec > 59 {
		return dst, false
	}
	size := byte(8)
	if us != 0 {
		size = 12
	}
	sign := byte(0)
	if neg {
		sign = 1
	}
	dst = append(dst, size, sign)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(h/24))
	dst = append(dst, byte(h%24), byte(m), byte(sec))
	if us != 0 {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(us))
	}
	return dst, true
}
