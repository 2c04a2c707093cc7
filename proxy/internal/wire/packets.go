package wire

import (
	"encoding/binary"
	"errors"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// First bytes of response packets.
const (
	HeaderOK          = 0x00
	HeaderLocalInfile = 0xfb
	HeaderEOF         = 0xfe
	HeaderErr         = 0xff
)

// ErrMalformed means a packet is shorter than its layout requires.
var ErrMalformed = errors.New("wire: malformed packet")

// OK is the content of an OK packet.
type OK struct {
	AffectedRows uint64
	InsertID     uint64
	Status       uint16
	Warnings     uint16
	Info         string
	// State, when set, is session state a client that negotiated
	// CLIENT_SESSION_TRACK hears with the OK, as MariaDB sends it. A
	// pointer: every statement's OK (and route result) carries the field,
	// and only a USE or a SET of a tracked variable fills it.
	State *SessionState
}

// SessionState is what an OK packet reports of the session's changes.
type SessionState struct {
	// Schema, when set, is the schema a USE or COM_INIT_DB switched to
	// (SESSION_TRACK_SCHEMA).
	Schema string
	// Variables are the system variables the statement set and the
	// client tracks (SESSION_TRACK_SYSTEM_VARIABLES), with their values
	// as SHOW VARIABLES shows them.
	Variables []TrackedVariable
	// Changed is that the statement changed the session's state, for a
	// client that set session_track_state_change
	// (SESSION_TRACK_STATE_CHANGE).
	Changed bool
}

// TrackedVariable is a system variable's name and value, as session state.
type TrackedVariable struct{ Name, Value string }

// The session state types of a changed system variable and schema
// (enum_session_state_type's SESSION_TRACK_SYSTEM_VARIABLES and
// SESSION_TRACK_SCHEMA).
const (
	sessionTrackVariables   = 0
	sessionTrackSchema      = 1
	sessionTrackStateChange = 2
)

// AppendOK appends an OK packet. sessionTrack is whether the client
// negotiated CLIENT_SESSION_TRACK, which changes how the info string is
// written.
func AppendOK(dst []byte, ok OK, sessionTrack bool) []byte {
	status := ok.Status &^ mysql.SERVER_SESSION_STATE_CHANGED
	st := ok.State
	tracked := sessionTrack && st != nil && (st.Schema != "" || len(st.Variables) > 0 || st.Changed)
	if tracked {
		status |= mysql.SERVER_SESSION_STATE_CHANGED
	}
	dst = append(dst, HeaderOK)
	dst = AppendLenEncInt(dst, ok.AffectedRows)
	dst = AppendLenEncInt(dst, ok.InsertID)
	dst = binary.LittleEndian.AppendUint16(dst, status)
	dst = binary.LittleEndian.AppendUint16(dst, ok.Warnings)
	if sessionTrack || ok.Info != "" {
		// MySQL and MariaDB write the message length-encoded with or
		// without session tracking, and libmysqlclient reads it so.
		dst = AppendLenEncString(dst, []byte(ok.Info))
	}
	if tracked {
		// The session state: its length, then its entries, in MariaDB's
		// order (variables, schema, state change), each its type, its
		// length and its data: the variable's name and value, the
		// schema's name, each length-encoded; the state change's "1" as
		// it is.
		var state []byte
		for _, v := range st.Variables {
			data := AppendLenEncString(AppendLenEncString(nil, []byte(v.Name)), []byte(v.Value))
			state = append(AppendLenEncInt(append(state, sessionTrackVariables), uint64(len(data))), data...)
		}
		if st.Schema != "" {
			data := AppendLenEncString(nil, []byte(st.Schema))
			state = append(AppendLenEncInt(append(state, sessionTrackSchema), uint64(len(data))), data...)
		}
		if st.Changed {
			state = append(state, sessionTrackStateChange, 1, '1')
		}
		dst = AppendLenEncString(dst, state)
	}
	return dst
}

// ParseOK decodes an OK packet (or an EOF packet that carries OK content).
// sessionTrack is whether CLIENT_SESSION_TRACK was negotiated.
func ParseOK(p []byte, sessionTrack bool) (OK, error) {
	var ok OK
	if len(p) < 1 {
		return ok, ErrMalformed
	}
	pos := 1
	var n int
	var good bool
	if ok.AffectedRows, _, n, good = ReadLenEncInt(p[pos:]); !good {
		return ok, ErrMalformed
	}
	pos += n
	if ok.InsertID, _, n, good = ReadLenEncInt(p[pos:]); !good {
		return ok, ErrMalformed
	}
	pos += n
	if len(p) < pos+4 {
		return ok, ErrMalformed
	}
	ok.Status = binary.LittleEndian.Uint16(p[pos:])
	ok.Warnings = binary.LittleEndian.Uint16(p[pos+2:])
	pos += 4
	if sessionTrack {
		if s, _, _, err := ReadLenEncString(p[pos:]); err == nil {
			ok.Info = string(s)
		}
	} else if rest := p[pos:]; len(rest) > 0 {
		// The protocol documents string<EOF>, but servers send the
		// message length-encoded (MariaDB's net_store_data).
		if s, _, n, err := ReadLenEncString(rest); err == nil && n == len(rest) {
			ok.Info = string(s)
		} else {
			ok.Info = string(rest)
		}
	}
	return ok, nil
}

// AppendErr appends an error packet.
func AppendErr(dst []byte, code uint16, state, message string) []byte {
	if len(state) != 5 {
		state = "HY000"
	}
	dst = append(dst, HeaderErr)
	dst = binary.LittleEndian.AppendUint16(dst, code)
	dst = append(dst, '#')
	dst = append(dst, state...)
	return append(dst, message...)
}

// ParseErr decodes an error packet.
func ParseErr(p []byte) *mysql.MyError {
	e := &mysql.MyError{Code: mysql.ER_UNKNOWN_ERROR, State: "HY000"}
	if len(p) < 3 {
		e.Message = "malformed error packet"
		return e
	}
	e.Code = binary.LittleEndian.Uint16(p[1:])
	rest := p[3:]
	if len(rest) >= 6 && rest[0] == '#' {
		e.State = string(rest[1:6])
		rest = rest[6:]
	}
	e.Message = string(rest)
	return e
}

// AppendEOF appends an EOF packet.
func AppendEOF(dst []byte, warnings, status uint16) []byte {
	dst = append(dst, HeaderEOF)
	dst = binary.LittleEndian.AppendUint16(dst, warnings)
	return binary.LittleEndian.AppendUint16(dst, status&^mysql.SERVER_SESSION_STATE_CHANGED)
}

// IsEOF reports whether p is an EOF packet (a result row can start with
// 0xfe too, but is then at least 9 bytes long).
func IsEOF(p []byte) bool { return len(p) > 0 && p[0] == HeaderEOF && len(p) < 9 }

// IsErr reports whether p is an error packet.
func IsErr(p []byte) bool { return len(p) > 0 && p[0] == HeaderErr }

// IsOK reports whether p is an OK packet (as the first packet of a
// response: a result set's column count is never 0).
func IsOK(p []byte) bool { return len(p) > 0 && p[0] == HeaderOK }

// IsLocalInfile reports whether p is a LOCAL INFILE request, the server
// asking the client for a file (LOAD DATA LOCAL).
func IsLocalInfile(p []byte) bool { return len(p) > 0 && p[0] == HeaderLocalInfile }

// LocalInfileName returns the file name a LOCAL INFILE request asks for;
// ok is false when p is no such request.
func LocalInfileName(p []byte) (name []byte, ok bool) {
	if !IsLocalInfile(p) {
		return nil, false
	}
	return p[1:], true
}

// AppendLocalInfile appends a LOCAL INFILE request for the file name.
func AppendLocalInfile(dst []byte, name string) []byte {
	return append(append(dst, HeaderLocalInfile), name...)
}

// ParseEOF returns the warnings and status flags of an EOF packet.
func ParseEOF(p []byte) (warnings, status uint16) {
	if len(p) < 5 {
		return 0, 0
	}
	return binary.LittleEndian.Uint16(p[1:]), binary.LittleEndian.Uint16(p[3:])
}

// AppendLenEncInt appends a length-encoded integer.
func AppendLenEncInt(dst []byte, n uint64) []byte {
	return mysql.AppendLengthEncodedInteger(dst, n)
}

// ReadLenEncInt decodes a length-encoded integer: its value, whether it was
// the NULL marker, its size, and whether p was long enough.
func ReadLenEncInt(p []byte) (v uint64, null bool, n int, ok bool) {
	if len(p) == 0 {
		return 0, false, 0, false
	}
	switch p[0] {
	case 0xfb:
		return 0, true, 1, true
	case 0xfc:
		if len(p) < 3 {
			return 0, false, 0, false
		}
		return uint64(p[1]) | uint64(p[2])<<8, false, 3, true
	case 0xfd:
		if len(p) < 4 {
			return 0, false, 0, false
		}
		return uint64(p[1]) | uint64(p[2])<<8 | uint64(p[3])<<16, false, 4, true
	case 0xfe:
		if len(p) < 9 {
			return 0, false, 0, false
		}
		return binary.LittleEndian.Uint64(p[1:]), false, 9, true
	}
	return uint64(p[0]), false, 1, true
}

// AppendLenEncString appends a length-encoded string.
func AppendLenEncString(dst, s []byte) []byte {
	dst = AppendLenEncInt(dst, uint64(len(s)))
	return append(dst, s...)
}

// ReadLenEncString decodes a length-encoded string: the bytes (aliasing p),
// whether it was NULL, and how many bytes of p it took.
func ReadLenEncString(p []byte) (s []byte, null bool, n int, err error) {
	l, null, n, ok := ReadLenEncInt(p)
	if !ok {
		return nil, false, 0, ErrMalformed
	}
	if null {
		return nil, true, n, nil
	}
	end := n + int(l)
	if l > uint64(len(p)) || end > len(p) {
		return nil, false, 0, ErrMalformed
	}
	return p[n:end:end], false, end, nil
}

// A column definition can carry MariaDB's extended metadata
// (MARIADB_CLIENT_EXTENDED_METADATA): after org_name, a length-encoded
// block of entries, each a byte (0 a type, 1 a format) and a
// length-encoded string, telling a JSON alias (format "json") or a type
// the classic type byte cannot (UUID, INET4, INET6, geometry kinds) from
// the string or blob it travels as. MariaDB sends the block, empty for a
// column with nothing to tell, in every definition to a client that
// negotiated the capability, and in none to one that did not. ParseColumn
// keeps a definition's block in its Field's Data (go-mysql's Field has no
// place of its own for it; the proxy never sends Field.Dump, which would
// send Data as the whole definition), and AppendColumn writes it back for
// a client that negotiated the capability.

// AppendColumn appends a column definition (Protocol::ColumnDefinition41),
// with the extended metadata block when extended: the client negotiated
// MARIADB_CLIENT_EXTENDED_METADATA.
func AppendColumn(dst []byte, f *mysql.Field, extended bool) []byte {
	dst = AppendLenEncString(dst, []byte("def"))
	dst = AppendLenEncString(dst, f.Schema)
	dst = AppendLenEncString(dst, f.Table)
	dst = AppendLenEncString(dst, f.OrgTable)
	dst = AppendLenEncString(dst, f.Name)
	dst = AppendLenEncString(dst, f.OrgName)
	if extended {
		dst = AppendLenEncString(dst, f.Data)
	}
	dst = append(dst, 0x0c)
	dst = binary.LittleEndian.AppendUint16(dst, f.Charset)
	dst = binary.LittleEndian.AppendUint32(dst, f.ColumnLength)
	dst = append(dst, f.Type)
	dst = binary.LittleEndian.AppendUint16(dst, f.Flag)
	dst = append(dst, f.Decimal, 0, 0)
	return dst
}

// ParseColumn decodes a column definition; extended says the server sends
// the extended metadata block (the connection negotiated
// MARIADB_CLIENT_EXTENDED_METADATA). The Field keeps its own copy of p,
// so p may be reused afterwards.
func ParseColumn(p []byte, extended bool) (*mysql.Field, error) {
	f := new(mysql.Field)
	if !extended {
		if err := safeParseField(f, append([]byte(nil), p...)); err != nil {
			return nil, err
		}
		f.Data = nil
		return f, nil
	}
	// Skip catalog, schema, table, org_table, name and org_name.
	pos := 0
	for range 6 {
		_, _, n, err := ReadLenEncString(p[pos:])
		if err != nil {
			return nil, err
		}
		pos += n
	}
	block, _, n, err := ReadLenEncString(p[pos:])
	if err != nil {
		return nil, err
	}
	// One allocation: the definition without its block, then the block.
	c := make([]byte, 0, len(p)-(n-len(block)))
	c = append(c, p[:pos]...)
	c = append(c, p[pos+n:]...)
	rest := len(c)
	c = append(c, block...)
	if err := safeParseField(f, c[:rest:rest]); err != nil {
		return nil, err
	}
	f.Data = nil
	if len(block) > 0 {
		f.Data = c[rest:]
	}
	return f, nil
}

func safeParseField(f *mysql.Field, p []byte) (err error) {
	// go-mysql indexes without bounds checks; a short packet must not
	// take the proxy down.
	defer func() {
		if recover() != nil {
			err = ErrMalformed
		}
	}()
	return f.Parse(p)
}

// AppendTextRow appends a text-protocol row: each value length-encoded,
// nil as NULL.
func AppendTextRow(dst []byte, values [][]byte) []byte {
	for _, v := range values {
		if v == nil {
			dst = append(dst, 0xfb)
			continue
		}
		dst = AppendLenEncString(dst, v)
	}
	return dst
}

// SplitTextRow decodes a text-protocol row of n columns into dst (reused
// when large enough). Values alias p; NULL is nil, an empty string is an
// empty non-nil slice.
func SplitTextRow(p []byte, n int, dst [][]byte) ([][]byte, error) {
	if cap(dst) < n {
		dst = make([][]byte, n)
	}
	dst = dst[:n]
	pos := 0
	for i := range n {
		s, null, size, err := ReadLenEncString(p[pos:])
		if err != nil {
			return nil, err
		}
		pos += size
		if null {
			s = nil
		}
		dst[i] = s
	}
	if pos != len(p) {
		return nil, ErrMalformed
	}
	return dst, nil
}
