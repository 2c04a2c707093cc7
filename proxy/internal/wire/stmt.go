package wire

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// AppendPrepareOK appends the first packet of a COM_STMT_PREPARE response.
func AppendPrepareOK(dst []byte, stmtID uint32, columns, params uint16, warnings uint16) []byte {
	dst = append(dst, HeaderOK)
	dst = binary.LittleEndian.AppendUint32(dst, stmtID)
	dst = binary.LittleEndian.AppendUint16(dst, columns)
	dst = binary.LittleEndian.AppendUint16(dst, params)
	dst = append(dst, 0)
	return binary.LittleEndian.AppendUint16(dst, warnings)
}

// LastStmtID is the statement id that names the statement the session
// prepared last, as MariaDB reads it: its connectors send COM_STMT_PREPARE
// and COM_STMT_EXECUTE together, before the prepare's answer tells them
// the id.
const LastStmtID = 0xffffffff

// StmtID returns the statement id that starts the payload of
// COM_STMT_EXECUTE, COM_STMT_CLOSE, COM_STMT_RESET and
// COM_STMT_SEND_LONG_DATA (p excludes the command byte).
func StmtID(p []byte) (uint32, error) {
	if len(p) < 4 {
		return 0, ErrMalformed
	}
	return binary.LittleEndian.Uint32(p), nil
}

// SendLongData is a decoded COM_STMT_SEND_LONG_DATA (AppendSendLongData
// builds one).
type SendLongData struct {
	StmtID uint32
	Param  int    // the parameter the bytes are for
	Data   []byte // a piece of its value; aliases the packet
}

// ParseSendLongData decodes the payload of COM_STMT_SEND_LONG_DATA (p
// excludes the command byte).
func ParseSendLongData(p []byte) (SendLongData, error) {
	if len(p) < 6 {
		return SendLongData{}, ErrMalformed
	}
	return SendLongData{StmtID: binary.LittleEndian.Uint32(p), Param: int(binary.LittleEndian.Uint16(p[4:])), Data: p[6:]}, nil
}

// ParseProcessKill returns the connection id of a COM_PROCESS_KILL (p
// excludes the command byte).
func ParseProcessKill(p []byte) (uint32, error) {
	if len(p) < 4 {
		return 0, ErrMalformed
	}
	return binary.LittleEndian.Uint32(p), nil
}

// ParseSetOption returns the option of a COM_SET_OPTION (p excludes the
// command byte): 0 turns multi-statements on, 1 off.
func ParseSetOption(p []byte) (uint16, error) {
	if len(p) < 2 {
		return 0, ErrMalformed
	}
	return binary.LittleEndian.Uint16(p), nil
}

// ErrExecuteTypes means a COM_STMT_EXECUTE that binds parameter types
// ends before all of them: MariaDB answers it as a malformed packet, not
// as wrong arguments.
var ErrExecuteTypes = fmt.Errorf("%w: parameter types cut short", ErrMalformed)

// Execute is a decoded COM_STMT_EXECUTE.
type Execute struct {
	StmtID uint32
	// CursorFlags are the cursor bits of the flags byte; the proxy supports
	// none (CURSOR_TYPE_NO_CURSOR).
	CursorFlags byte
	// Types holds two bytes per parameter (type, then 0x80 for unsigned),
	// a copy the caller may keep for the next execute.
	Types []byte
	Args  []any
}

// ParseExecute decodes the payload of COM_STMT_EXECUTE (without the command
// byte) for a statement with nParams parameters. prevTypes are the types the
// client bound last time, used when this execute does not resend them (and
// their storage reused when it does); longData holds what
// COM_STMT_SEND_LONG_DATA sent per parameter (nil entries for none); args
// is reused for Execute.Args when it has room, so a session that executes
// statement after statement allocates none of this.
//
// Arguments come back as nil, int64, uint64 (only above MaxInt64), float32,
// float64, string (text, decimals, dates and times in their SQL form) or
// []byte (blobs).
func ParseExecute(p []byte, nParams int, prevTypes []byte, longData [][]byte, args []any) (Execute, error) {
	var e Execute
	if len(p) < 9 {
		return e, ErrMalformed
	}
	e.StmtID = binary.LittleEndian.Uint32(p)
	e.CursorFlags = p[4] & 0x07
	pos := 9 // statement id, flags, iteration count (always 1)
	if nParams == 0 {
		return e, nil
	}
	nb := (nParams + 7) / 8
	if len(p) < pos+nb+1 {
		return e, ErrMalformed
	}
	nulls := p[pos : pos+nb]
	pos += nb
	bound := p[pos]
	pos++
	if bound == 1 {
		if len(p) < pos+2*nParams {
			return e, ErrExecuteTypes
		}
		e.Types = append(prevTypes[:0], p[pos:pos+2*nParams]...)
		pos += 2 * nParams
	} else {
		if len(prevTypes) != 2*nParams && allNull(nulls, nParams) {
			// Values that are all NULL need no types (go-mysql's client
			// binds none for them), as MariaDB reads them; long data
			// is text then.
			e.Args = nullArgs(args, nParams)
			for i := range min(nParams, len(longData)) {
				if longData[i] != nil {
					e.Args[i] = string(longData[i])
				}
			}
			return e, nil
		}
		if len(prevTypes) != 2*nParams {
			return e, fmt.Errorf("%w: execute without parameter types and none bound before", ErrMalformed)
		}
		e.Types = prevTypes
	}
	if cap(args) >= nParams {
		e.Args = args[:nParams]
		clear(e.Args)
	} else {
		e.Args = make([]any, nParams)
	}
	for i := range nParams {
		if !knownParamType(e.Types[2*i]) {
			return e, fmt.Errorf("%w: parameter %d has unknown type %#x", ErrMalformed, i+1, e.Types[2*i])
		}
	}
	for i := range nParams {
		tp, unsigned := e.Types[2*i], e.Types[2*i+1]&0x80 != 0
		// Long data wins over the NULL bitmap, as in MariaDB: mysqli
		// binds a blob as a NULL variable and sends its bytes with
		// send_long_data, and the execute marks it NULL.
		if i < len(longData) && longData[i] != nil {
			e.Args[i] = longValue(tp, longData[i])
			continue
		}
		if nulls[i/8]&(1<<(i%8)) != 0 {
			continue
		}
		v, n, err := binaryParam(p[pos:], tp, unsigned)
		if err != nil {
			return e, fmt.Errorf("parameter %d: %w", i+1, err)
		}
		pos += n
		e.Args[i] = v
	}
	// Bytes after the values are ignored, as MariaDB ignores them.
	return e, nil
}

// allNull reports whether the NULL bitmap marks all n parameters.
func allNull(nulls []byte, n int) bool {
	for i := range n {
		if nulls[i/8]&(1<<(i%8)) == 0 {
			return false
		}
	}
	return true
}

// nullArgs returns n nil arguments, in args when it has room.
func nullArgs(args []any, n int) []any {
	if cap(args) >= n {
		args = args[:n]
		clear(args)
		return args
	}
	return make([]any, n)
}

// knownParamType reports whether tp is a type a client may bind a
// parameter as: MYSQL_TYPE_DECIMAL to MYSQL_TYPE_BIT, and JSON to
// GEOMETRY.
func knownParamType(tp byte) bool {
	return tp <= mysql.MYSQL_TYPE_BIT || tp >= mysql.MYSQL_TYPE_JSON
}

func longValue(tp byte, b []byte) any {
	if isBlob(tp) {
		return append([]byte{}, b...)
	}
	return string(b)
}

func isBlob(tp byte) bool {
	switch tp {
	case mysql.MYSQL_TYPE_TINY_BLOB, mysql.MYSQL_TYPE_MEDIUM_BLOB, mysql.MYSQL_TYPE_LONG_BLOB,
		mysql.MYSQL_TYPE_BLOB, mysql.MYSQL_TYPE_GEOMETRY:
		return true
	}
	return false
}

func binaryParam(p []byte, tp byte, unsigned bool) (any, int, error) {
	need := func(n int) error {
		if len(p) < n {
			return ErrMalformed
		}
		return nil
	}
	switch tp {
	case mysql.MYSQL_TYPE_NULL:
		return nil, 0, nil
	case mysql.MYSQL_TYPE_TINY:
		if err := need(1); err != nil {
			return nil, 0, err
		}
		if unsigned {
			return int64(p[0]), 1, nil
		}
		return int64(int8(p[0])), 1, nil
	case mysql.MYSQL_TYPE_SHORT, mysql.MYSQL_TYPE_YEAR:
		if err := need(2); err != nil {
			return nil, 0, err
		}
		v := binary.LittleEndian.Uint16(p)
		if unsigned {
			return int64(v), 2, nil
		}
		return int64(int16(v)), 2, nil
	case mysql.MYSQL_TYPE_INT24, mysql.MYSQL_TYPE_LONG:
		if err := need(4); err != nil {
			return nil, 0, err
		}
		v := binary.LittleEndian.Uint32(p)
		if unsigned {
			return int64(v), 4, nil
		}
		return int64(int32(v)), 4, nil
	case mysql.MYSQL_TYPE_LONGLONG:
		if err := need(8); err != nil {
			return nil, 0, err
		}
		v := binary.LittleEndian.Uint64(p)
		if unsigned && v > math.MaxInt64 {
			return v, 8, nil
		}
		return int64(v), 8, nil
	case mysql.MYSQL_TYPE_FLOAT:
		if err := need(4); err != nil {
			return nil, 0, err
		}
		return math.Float32frombits(binary.LittleEndian.Uint32(p)), 4, nil
	case mysql.MYSQL_TYPE_DOUBLE:
		if err := need(8); err != nil {
			return nil, 0, err
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(p)), 8, nil
	case mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_NEWDATE, mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_TIMESTAMP:
		s, _, n, err := ReadLenEncString(p)
		if err != nil {
			return nil, 0, err
		}
		if tp == mysql.MYSQL_TYPE_DATETIME || tp == mysql.MYSQL_TYPE_TIMESTAMP {
			// A time.Time goes on to a data source as a DATETIME again, so
			// SELECT ? describes a DATETIME column as MariaDB does; a date
			// time.Time cannot hold (a zero date) stays text.
			if t, ok := binaryTime(s); ok {
				return t, n, nil
			}
		}
		v, err := formatBinaryDateTime(s, tp)
		return v, n, err
	case mysql.MYSQL_TYPE_TIME:
		s, _, n, err := ReadLenEncString(p)
		if err != nil {
			return nil, 0, err
		}
		v, err := formatBinaryTime(s)
		return v, n, err
	}
	s, null, n, err := ReadLenEncString(p)
	if err != nil {
		return nil, 0, err
	}
	if null {
		return nil, n, nil
	}
	if isBlob(tp) {
		// Non-nil even when empty: nil is NULL.
		return append([]byte{}, s...), n, nil
	}
	return string(s), n, nil
}

// binaryDateTime is a binary DATE/DATETIME/TIMESTAMP value taken apart.
type binaryDateTime struct{ y, mo, d, h, mi, s, us int }

// decodeBinaryDateTime takes apart the 0, 4, 7 or 11 bytes of a binary
// DATE/DATETIME/TIMESTAMP (parameters and row values alike).
func decodeBinaryDateTime(b []byte) (binaryDateTime, error) {
	var t binaryDateTime
	switch len(b) {
	case 0:
	case 4, 7, 11:
		t.y = int(binary.LittleEndian.Uint16(b))
		t.mo, t.d = int(b[2]), int(b[3])
		if len(b) >= 7 {
			t.h, t.mi, t.s = int(b[4]), int(b[5]), int(b[6])
		}
		if len(b) == 11 {
			t.us = int(binary.LittleEndian.Uint32(b[7:]))
		}
	default:
		return t, fmt.Errorf("%w: date of %d bytes", ErrMalformed, len(b))
	}
	return t, nil
}

// binaryTime returns a binary DATETIME/TIMESTAMP value as a time.Time in
// UTC (the value's wall clock), false for one it cannot hold as it is: a
// zero date, a zero month or day, a day past the month's end.
func binaryTime(b []byte) (time.Time, bool) {
	t, err := decodeBinaryDateTime(b)
	if err != nil || t.y < 1 || t.mo < 1 || t.mo > 12 || t.d < 1 || t.h > 23 || t.mi > 59 || t.s > 59 || t.us > 999999 {
		return time.Time{}, false
	}
	v := time.Date(t.y, time.Month(t.mo), t.d, t.h, t.mi, t.s, t.us*1000, time.UTC)
	if v.Day() != t.d {
		return time.Time{}, false
	}
	return v, true
}

// formatBinaryDateTime turns a binary DATE/DATETIME value into its SQL text.
func formatBinaryDateTime(b []byte, tp byte) (string, error) {
	t, err := decodeBinaryDateTime(b)
	if err != nil {
		return "", err
	}
	y, mo, d, h, mi, s, us := t.y, t.mo, t.d, t.h, t.mi, t.s, t.us
	out := fmt.Sprintf("%04d-%02d-%02d", y, mo, d)
	if tp == mysql.MYSQL_TYPE_DATE || tp == mysql.MYSQL_TYPE_NEWDATE {
		return out, nil
	}
	out += fmt.Sprintf(" %02d:%02d:%02d", h, mi, s)
	if us != 0 {
		out += "." + fmt.Sprintf("%06d", us)
	}
	return out, nil
}

// formatBinaryTime turns a binary TIME value into its SQL text.
func formatBinaryTime(b []byte) (string, error) {
	switch len(b) {
	case 0:
		return "00:00:00", nil
	case 8, 12:
	default:
		return "", fmt.Errorf("%w: time of %d bytes", ErrMalformed, len(b))
	}
	sign := ""
	if b[0] == 1 {
		sign = "-"
	}
	hours := int(binary.LittleEndian.Uint32(b[1:]))*24 + int(b[5])
	out := sign + strconv.Itoa(hours) + fmt.Sprintf(":%02d:%02d", b[6], b[7])
	if len(b) == 12 {
		if us := binary.LittleEndian.Uint32(b[8:]); us != 0 {
			out += fmt.Sprintf(".%06d", us)
		}
	}
	if hours < 10 {
		out = sign + "0" + out[len(sign):]
	}
	return out, nil
}
