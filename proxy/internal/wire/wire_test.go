package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
)

func TestPacketsRoundTrip(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	w, r := NewConn(a), NewConn(b)

	big := bytes.Repeat([]byte{'x'}, MaxPayload+10)
	exact := bytes.Repeat([]byte{'y'}, MaxPayload)
	payloads := [][]byte{{0x03, 's', 'e', 'l'}, {}, big, exact, {0x01}}
	go func() {
		for _, p := range payloads {
			if err := w.WritePacket(p); err != nil {
				t.Error(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Error(err)
		}
	}()
	for i, want := range payloads {
		got, err := r.ReadPacket()
		if err != nil {
			t.Fatalf("packet %d: %v", i, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("packet %d: got %d bytes, want %d", i, len(got), len(want))
		}
	}
}

func TestReadPacketRejectsWrongSequence(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go a.Write([]byte{1, 0, 0, 5, 0x0e})
	if _, err := NewConn(b).ReadPacket(); err == nil {
		t.Fatal("want a sequence error")
	}
}

func TestOKErrEOF(t *testing.T) {
	tests := []struct {
		give         OK
		sessionTrack bool
	}{
		{OK{AffectedRows: 3, InsertID: 1 << 40, Status: 2, Warnings: 1, Info: "Rows matched: 3"}, false},
		{OK{AffectedRows: 0, Status: 3}, true},
		{OK{AffectedRows: 70000, InsertID: 251, Info: "x"}, true},
	}
	for _, tt := range tests {
		p := AppendOK(nil, tt.give, tt.sessionTrack)
		got, err := ParseOK(p, tt.sessionTrack)
		if tt.give.Info != "" && !bytes.HasSuffix(p, append([]byte{byte(len(tt.give.Info))}, tt.give.Info...)) {
			t.Errorf("AppendOK(%+v): the message is not length-encoded, as servers write it: %q", tt.give, p)
		}
		if err != nil {
			t.Fatal(err)
		}
		if got != tt.give {
			t.Errorf("ParseOK(AppendOK(%+v)) = %+v", tt.give, got)
		}
	}

	// A USE's OK as MariaDB sends it to a client that tracks the schema
	// (SESSION_STATE_CHANGED, then the state: one SESSION_TRACK_SCHEMA
	// entry), and to one that does not.
	use := OK{Status: mysql.SERVER_STATUS_AUTOCOMMIT, State: &SessionState{Schema: "information_schema"}}
	want := append([]byte{HeaderOK, 0, 0, 0x02, 0x40, 0, 0, 0, 21, 1, 19, 18}, "information_schema"...)
	if p := AppendOK(nil, use, true); !bytes.Equal(p, want) {
		t.Errorf("AppendOK(%+v, tracked) = %q, want %q", use, p, want)
	}
	if p := AppendOK(nil, use, false); !bytes.Equal(p, []byte{HeaderOK, 0, 0, 0x02, 0, 0, 0}) {
		t.Errorf("AppendOK(%+v, untracked) = %q: no session state without CLIENT_SESSION_TRACK", use, p)
	}

	// SET autocommit = 0's, as MariaDB sends it to a client that tracks
	// autocommit: one SESSION_TRACK_SYSTEM_VARIABLES entry.
	set := OK{State: &SessionState{Variables: []TrackedVariable{{Name: "autocommit", Value: "OFF"}}}}
	want = append(append([]byte{HeaderOK, 0, 0, 0x00, 0x40, 0, 0, 0, 17, 0, 15, 10}, "autocommit"...), 3, 'O', 'F', 'F')
	if p := AppendOK(nil, set, true); !bytes.Equal(p, want) {
		t.Errorf("AppendOK(%+v, tracked) = %q, want %q", set, p, want)
	}

	// A backend's OK packet without session tracking, as MariaDB sends it:
	// the message length-encoded.
	raw := []byte{HeaderOK, 2, 0, 2, 0, 0, 0, 38}
	raw = append(raw, "Records: 2  Duplicates: 0  Warnings: 0"...)
	if got, err := ParseOK(raw, false); err != nil || got.Info != "Records: 2  Duplicates: 0  Warnings: 0" {
		t.Errorf("ParseOK of MariaDB's OK: %+v, %v", got, err)
	}

	e := ParseErr(AppendErr(nil, 1146, "42S02", "Table 'x' doesn't exist"))
	if e.Code != 1146 || e.State != "42S02" || e.Message != "Table 'x' doesn't exist" {
		t.Errorf("ParseErr: got %+v", e)
	}
	if e := ParseErr(AppendErr(nil, 1105, "", "m")); e.State != "HY000" {
		t.Errorf("empty state: got %q, want HY000", e.State)
	}

	eof := AppendEOF(nil, 2, mysql.SERVER_MORE_RESULTS_EXISTS|mysql.SERVER_SESSION_STATE_CHANGED)
	if !IsEOF(eof) {
		t.Fatal("IsEOF(AppendEOF) = false")
	}
	if w, s := ParseEOF(eof); w != 2 || s != mysql.SERVER_MORE_RESULTS_EXISTS {
		t.Errorf("ParseEOF: got %d, %#x", w, s)
	}
	longRow := AppendTextRow([]byte{}, [][]byte{bytes.Repeat([]byte{'a'}, 1<<24)})
	if IsEOF(longRow) {
		t.Error("a row with a 16 MiB value is not an EOF packet")
	}
}

func TestTextRows(t *testing.T) {
	tests := []struct {
		give [][]byte
	}{
		{[][]byte{[]byte("1"), nil, {}, []byte("hello")}},
		{[][]byte{bytes.Repeat([]byte{'z'}, 300), bytes.Repeat([]byte{'q'}, 70000)}},
		{[][]byte{nil}},
	}
	for _, tt := range tests {
		p := AppendTextRow(nil, tt.give)
		got, err := SplitTextRow(p, len(tt.give), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(tt.give) {
			t.Fatalf("got %d values, want %d", len(got), len(tt.give))
		}
		for i := range got {
			if (got[i] == nil) != (tt.give[i] == nil) || !bytes.Equal(got[i], tt.give[i]) {
				t.Errorf("value %d: got %q (nil %v), want %q (nil %v)", i, got[i], got[i] == nil, tt.give[i], tt.give[i] == nil)
			}
		}
	}
	if _, err := SplitTextRow([]byte{5, 'a'}, 1, nil); err == nil {
		t.Error("short row: want an error")
	}
	if _, err := SplitTextRow([]byte{1, 'a', 1, 'b'}, 1, nil); err == nil {
		t.Error("row with extra bytes: want an error")
	}
}

func TestColumnRoundTrip(t *testing.T) {
	f := &mysql.Field{Schema: []byte("ds_0"), Table: []byte("t"), OrgTable: []byte("t_order_1"), Name: []byte("id"),
		OrgName: []byte("id"), Charset: 63, ColumnLength: 20, Type: mysql.MYSQL_TYPE_LONGLONG, Flag: mysql.NOT_NULL_FLAG, Decimal: 0}
	got, err := ParseColumn(AppendColumn(nil, f, false), false)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, f) {
		t.Errorf("got %+v, want %+v", got, f)
	}
	if _, err := ParseColumn([]byte{3, 'd', 'e'}, false); err == nil {
		t.Error("short column definition: want an error")
	}
}

// TestColumnExtendedMetadata: a definition with MariaDB's extended
// metadata block parses to the same Field as without it, keeps the block,
// and is written back with it for a client that negotiated it and
// without it for one that did not; a definition without a block gets an
// empty one.
func TestColumnExtendedMetadata(t *testing.T) {
	f := &mysql.Field{Schema: []byte("ds_0"), Table: []byte("t"), OrgTable: []byte("t"), Name: []byte("j"),
		OrgName: []byte("j"), Charset: 45, ColumnLength: 4294967295, Type: mysql.MYSQL_TYPE_BLOB, Flag: mysql.BLOB_FLAG}
	plain := AppendColumn(nil, f, false)
	block := []byte{1, 4, 'j', 's', 'o', 'n'} // format=json
	at := len(plain) - 13                     // the fixed part: 0x0c and 12 bytes
	extended := append(append(append([]byte(nil), plain[:at]...), byte(len(block))), block...)
	extended = append(extended, plain[at:]...)
	tests := []struct {
		name     string
		give     []byte
		extended bool
		wantData []byte
	}{
		{name: "plain", give: plain},
		{name: "with a block", give: extended, extended: true, wantData: block},
		{name: "with an empty block", give: AppendColumn(nil, f, true), extended: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseColumn(tt.give, tt.extended)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Data, tt.wantData) {
				t.Errorf("block %q, want %q", got.Data, tt.wantData)
			}
			if p := AppendColumn(nil, got, false); !bytes.Equal(p, plain) {
				t.Errorf("written without the block: %q, want %q", p, plain)
			}
			want := extended
			if tt.wantData == nil {
				want = append(append(append([]byte(nil), plain[:at]...), 0), plain[at:]...)
			}
			if p := AppendColumn(nil, got, true); !bytes.Equal(p, want) {
				t.Errorf("written with the block: %q, want %q", p, want)
			}
		})
	}
	if _, err := ParseColumn(plain[:at+1], true); err == nil {
		t.Error("block longer than the definition: want an error")
	}
}

func TestBinaryRow(t *testing.T) {
	field := func(tp uint8, flag uint16) *mysql.Field { return &mysql.Field{Type: tp, Flag: flag} }
	le16 := func(v uint16) []byte { return binary.LittleEndian.AppendUint16(nil, v) }
	le32 := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	le64 := func(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	tests := []struct {
		name  string
		field *mysql.Field
		give  string
		want  []byte
	}{
		{"tiny", field(mysql.MYSQL_TYPE_TINY, 0), "-1", []byte{0xff}},
		{"short", field(mysql.MYSQL_TYPE_SHORT, 0), "300", le16(300)},
		{"long", field(mysql.MYSQL_TYPE_LONG, 0), "-2", le32(math.MaxUint32 - 1)},
		{"longlong unsigned", field(mysql.MYSQL_TYPE_LONGLONG, mysql.UNSIGNED_FLAG), "18446744073709551615", le64(math.MaxUint64)},
		{"double", field(mysql.MYSQL_TYPE_DOUBLE, 0), "1.5", le64(math.Float64bits(1.5))},
		{"float", field(mysql.MYSQL_TYPE_FLOAT, 0), "0.25", le32(math.Float32bits(0.25))},
		{"decimal", field(mysql.MYSQL_TYPE_NEWDECIMAL, 0), "12.30", []byte("\x0512.30")},
		{"varchar", field(mysql.MYSQL_TYPE_VAR_STRING, 0), "abc", []byte("\x03abc")},
		{"date", field(mysql.MYSQL_TYPE_DATE, 0), "2024-02-29", cat([]byte{4}, le16(2024), []byte{2, 29})},
		{"zero date", field(mysql.MYSQL_TYPE_DATE, 0), "0000-00-00", []byte{0}},
		{"datetime", field(mysql.MYSQL_TYPE_DATETIME, 0), "2024-02-29 13:14:15", cat([]byte{7}, le16(2024), []byte{2, 29, 13, 14, 15})},
		{"datetime micro", field(mysql.MYSQL_TYPE_TIMESTAMP, 0), "2024-02-29 13:14:15.5", cat([]byte{11}, le16(2024), []byte{2, 29, 13, 14, 15}, le32(500000))},
		{"time", field(mysql.MYSQL_TYPE_TIME, 0), "-838:59:59", cat([]byte{8, 1}, le32(34), []byte{22, 59, 59})},
		{"zero time", field(mysql.MYSQL_TYPE_TIME, 0), "00:00:00", []byte{0}},
		{"time micro", field(mysql.MYSQL_TYPE_TIME, 0), "01:02:03.000004", cat([]byte{12, 0}, le32(0), []byte{1, 2, 3}, le32(4))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AppendBinaryRow(nil, []*mysql.Field{tt.field}, [][]byte{[]byte(tt.give)})
			if err != nil {
				t.Fatal(err)
			}
			want := cat([]byte{0, 0}, tt.want)
			if !bytes.Equal(got, want) {
				t.Errorf("got %x, want %x", got, want)
			}
		})
	}

	fields := []*mysql.Field{field(mysql.MYSQL_TYPE_LONG, 0), field(mysql.MYSQL_TYPE_VAR_STRING, 0)}
	got, err := AppendBinaryRow(nil, fields, [][]byte{nil, []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte{0, 0x04, 1, 'x'}; !bytes.Equal(got, want) {
		t.Errorf("NULL bitmap: got %x, want %x", got, want)
	}
	if _, err := AppendBinaryRow(nil, fields[:1], [][]byte{[]byte("1x")}); err == nil {
		t.Error("bad integer: want an error")
	}
}

func TestParseExecute(t *testing.T) {
	types := []byte{
		mysql.MYSQL_TYPE_LONGLONG, 0,
		mysql.MYSQL_TYPE_VAR_STRING, 0,
		mysql.MYSQL_TYPE_NULL, 0,
		mysql.MYSQL_TYPE_DOUBLE, 0,
		mysql.MYSQL_TYPE_DATETIME, 0,
		mysql.MYSQL_TYPE_BLOB, 0,
		mysql.MYSQL_TYPE_TINY, 0x80,
		mysql.MYSQL_TYPE_TIME, 0,
	}
	p := binary.LittleEndian.AppendUint32(nil, 7)
	p = append(p, 0)                                     // flags
	p = binary.LittleEndian.AppendUint32(p, 1)           // iteration count
	p = append(p, 0x04)                                  // NULL bitmap: parameter 3
	p = append(p, 1)                                     // new params bound
	p = append(p, types...)                              // types
	p = binary.LittleEndian.AppendUint64(p, ^uint64(41)) // -42
	p = append(p, 2, 'h', 'i')
	p = binary.LittleEndian.AppendUint64(p, math.Float64bits(2.5))
	p = append(p, 7, 0xe8, 0x07, 1, 2, 3, 4, 5)
	p = append(p, 200) // TINY unsigned
	p = append(p, 8, 0, 1, 0, 0, 0, 2, 3, 4)
	e, err := ParseExecute(p, 8, nil, [][]byte{5: []byte("long\x00data")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []any{int64(-42), "hi", nil, 2.5, time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), []byte("long\x00data"), int64(200), "26:03:04"}
	if e.StmtID != 7 || !reflect.DeepEqual(e.Args, want) {
		t.Errorf("got id %d args %#v, want 7 %#v", e.StmtID, e.Args, want)
	}

	// A later execute may omit the types and reuse the bound ones.
	q := binary.LittleEndian.AppendUint32(nil, 7)
	q = append(q, 0, 1, 0, 0, 0, 0xff, 0) // flags, iterations, all NULL, not bound
	e2, err := ParseExecute(q, 8, e.Types, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(e2.Args, make([]any, 8)) {
		t.Errorf("all-NULL execute: got %#v", e2.Args)
	}
	// With none bound before, all NULL needs no types (as MariaDB reads
	// it); a value does.
	if e3, err := ParseExecute(q, 8, nil, nil, nil); err != nil || !reflect.DeepEqual(e3.Args, make([]any, 8)) {
		t.Errorf("all-NULL execute, no types bound before: got %#v, %v", e3.Args, err)
	}
	one := append([]byte(nil), q...)
	one[9] = 0x7f
	if _, err := ParseExecute(one, 8, nil, nil, nil); err == nil {
		t.Error("execute of a value without types and none bound before: want an error")
	}
	if _, err := ParseExecute(p[:len(p)-3], 8, nil, nil, nil); err == nil {
		t.Error("truncated execute: want an error")
	}

	// Long data wins over the NULL bitmap, as in MariaDB: mysqli binds a
	// blob as a NULL variable and sends its bytes with send_long_data
	// (PHP's documented way), so the execute marks it NULL and carries no
	// value for it.
	r := binary.LittleEndian.AppendUint32(nil, 7)
	r = append(r, 0, 1, 0, 0, 0, 0x06, 1) // flags, iterations, NULL: 2 and 3, bound
	r = append(r, mysql.MYSQL_TYPE_LONGLONG, 0, mysql.MYSQL_TYPE_LONG_BLOB, 0, mysql.MYSQL_TYPE_VAR_STRING, 0)
	r = binary.LittleEndian.AppendUint64(r, 9)
	long, err := ParseExecute(r, 3, nil, [][]byte{1: []byte("\x00blob")}, nil)
	if want := []any{int64(9), []byte("\x00blob"), nil}; err != nil || !reflect.DeepEqual(long.Args, want) {
		t.Errorf("long data of a parameter marked NULL: got %#v, %v, want %#v", long.Args, err, want)
	}
	// The same with no types bound and every parameter marked NULL.
	r = append(r[:9], 0x07, 0)
	if long, err := ParseExecute(r, 3, nil, [][]byte{1: []byte("text")}, nil); err != nil || !reflect.DeepEqual(long.Args, []any{nil, "text", nil}) {
		t.Errorf("long data, all marked NULL, no types: got %#v, %v", long.Args, err)
	}

	// PARAMETER_COUNT_AVAILABLE (0x08), which MySQL 8 clients set, is not
	// a cursor; CURSOR_TYPE_READ_ONLY (0x01) is.
	for _, tt := range []struct {
		give byte
		want byte
	}{{0x08, 0}, {0x01, 0x01}, {0x09, 0x01}} {
		r := append([]byte(nil), q...)
		r[4] = tt.give
		e, err := ParseExecute(r, 8, e.Types, nil, nil)
		if err != nil || e.CursorFlags != tt.want {
			t.Errorf("flags %#x: cursor flags %#x (%v), want %#x", tt.give, e.CursorFlags, err, tt.want)
		}
	}
}

func TestWatchNoticesPeerLeaving(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	c := NewConn(a)
	var gone atomic.Bool
	called := make(chan struct{})
	stop := c.Watch(func() { gone.Store(true); close(called) })
	b.Close()
	select {
	case <-called:
	case <-time.After(10 * time.Second):
		t.Fatal("gone not called after the peer closed")
	}
	stop()
	if _, err := c.ReadPacket(); err == nil {
		t.Error("ReadPacket after the peer left: want an error")
	}
}

func TestWatchKeepsWhatThePeerSent(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	c := NewConn(a)
	var gone atomic.Bool
	stop := c.Watch(func() { gone.Store(true) })
	if _, err := b.Write([]byte{2, 0, 0, 0, 0x0e, 0x01}); err != nil {
		t.Fatal(err)
	}
	stop()
	if gone.Load() {
		t.Fatal("gone called for a live peer")
	}
	got, err := c.ReadPacket()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, []byte{0x0e, 0x01}) {
		t.Errorf("got %x, want 0e01", got)
	}

	// A watch that sees nothing ends cleanly and leaves the connection usable.
	c.ResetSeq()
	stop = c.Watch(func() { gone.Store(true) })
	stop()
	go b.Write([]byte{1, 0, 0, 0, 0x0e})
	if got, err := c.ReadPacket(); err != nil || !bytes.Equal(got, []byte{0x0e}) {
		t.Errorf("after an idle watch: got %x, %v", got, err)
	}
	if gone.Load() {
		t.Error("gone called for an idle watch")
	}
}

// TestReadPacketBoundaries round-trips payloads at and around every
// continuation boundary, with bytes that differ everywhere, so a
// continuation read over an earlier part shows as a mismatch, not only as a
// wrong length.
func TestReadPacketBoundaries(t *testing.T) {
	sizes := []int{
		MaxPayload - 1, MaxPayload, MaxPayload + 1, 64<<10 + 1,
		2 * MaxPayload, 2*MaxPayload + 1, 32 << 20, 64 << 20,
	}
	for _, size := range sizes {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			want := make([]byte, size)
			for i := range want {
				want[i] = byte(i*7 + i>>16)
			}
			a, b := net.Pipe()
			defer a.Close()
			defer b.Close()
			w, r := NewConn(a), NewConn(b)
			go func() {
				if err := w.WritePacket(want); err != nil {
					t.Error(err)
				}
				if err := w.WritePacket([]byte{0x0e}); err != nil {
					t.Error(err)
				}
				if err := w.Flush(); err != nil {
					t.Error(err)
				}
			}()
			got, err := r.ReadPacket()
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("got %d bytes, want %d", len(got), len(want))
			}
			if i := firstDiff(got, want); i >= 0 {
				t.Fatalf("byte %d differs: got %#x, want %#x", i, got[i], want[i])
			}
			next, err := r.ReadPacket()
			if err != nil || !bytes.Equal(next, []byte{0x0e}) {
				t.Fatalf("packet after it: %q, %v", next, err)
			}
		})
	}
}

// TestReadPacketMaxPayload refuses a payload above the limit and reads one
// at the limit.
func TestReadPacketMaxPayload(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	w, r := NewConn(a), NewConn(b)
	r.SetMaxPayload(MaxPayload + 5)
	go func() {
		w.WritePacket(make([]byte, MaxPayload+5))
		w.WritePacket(make([]byte, MaxPayload+6))
		w.Flush()
	}()
	if p, err := r.ReadPacket(); err != nil || len(p) != MaxPayload+5 {
		t.Fatalf("at the limit: %d bytes, %v", len(p), err)
	}
	if _, err := r.ReadPacket(); !errors.Is(err, ErrPacketTooLarge) {
		t.Fatalf("above the limit: %v, want ErrPacketTooLarge", err)
	}
}

func firstDiff(a, b []byte) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// TestLocalInfile checks the LOCAL INFILE request both ways, and that OK,
// error and LOCAL INFILE packets are told apart by their first byte only
// when there is one.
func TestLocalInfile(t *testing.T) {
	p := AppendLocalInfile([]byte("x"), "/tmp/a b.csv")[1:]
	name, ok := LocalInfileName(p)
	if !ok || string(name) != "/tmp/a b.csv" {
		t.Fatalf("LocalInfileName(%q) = %q, %v", p, name, ok)
	}
	if !IsLocalInfile(p) || IsOK(p) || IsErr(p) {
		t.Errorf("a LOCAL INFILE request read as OK or error")
	}
	for _, q := range [][]byte{nil, {}, {HeaderOK, 0, 0, 2, 0, 0, 0}} {
		if _, ok := LocalInfileName(q); ok || IsLocalInfile(q) {
			t.Errorf("%q read as a LOCAL INFILE request", q)
		}
	}
	if !IsOK([]byte{HeaderOK, 0, 0, 2, 0, 0, 0}) || IsOK(nil) || IsOK([]byte{HeaderErr}) {
		t.Errorf("IsOK misreads an OK, an empty or an error packet")
	}
}

// TestCommandPayloads checks the decoders of the small commands against
// their encoders and against short payloads.
func TestCommandPayloads(t *testing.T) {
	p := AppendSendLongData(nil, 7, 3, []byte("chunk"))[1:]
	ld, err := ParseSendLongData(p)
	if err != nil || ld.StmtID != 7 || ld.Param != 3 || string(ld.Data) != "chunk" {
		t.Errorf("ParseSendLongData = %+v, %v", ld, err)
	}
	if id, err := ParseProcessKill([]byte{0x2a, 0, 0, 0x80}); err != nil || id != 0x8000002a {
		t.Errorf("ParseProcessKill = %#x, %v", id, err)
	}
	if opt, err := ParseSetOption([]byte{1, 0}); err != nil || opt != 1 {
		t.Errorf("ParseSetOption = %d, %v", opt, err)
	}
	if _, err := ParseSendLongData(p[:5]); err != ErrMalformed {
		t.Errorf("5-byte COM_STMT_SEND_LONG_DATA: %v", err)
	}
	if _, err := ParseProcessKill(p[:3]); err != ErrMalformed {
		t.Errorf("3-byte COM_PROCESS_KILL: %v", err)
	}
	if _, err := ParseSetOption(p[:1]); err != ErrMalformed {
		t.Errorf("1-byte COM_SET_OPTION: %v", err)
	}
}

// AppendPacket frames payloads queued in one buffer, which a reader then
// takes apart as packets; a payload too large for one packet leaves the
// buffer as it was.
func TestAppendPacket(t *testing.T) {
	var buf []byte
	var err error
	for _, p := range []string{"first", "", "third payload"} {
		if buf, err = AppendPacket(buf, 0, func(b []byte) ([]byte, error) { return append(b, p...), nil }); err != nil {
			t.Fatal(err)
		}
	}
	want := []byte("\x05\x00\x00\x00first\x00\x00\x00\x00\x0d\x00\x00\x00third payload")
	if !bytes.Equal(buf, want) {
		t.Fatalf("framed %q, want %q", buf, want)
	}
	before := len(buf)
	buf, err = AppendPacket(buf, 0, func(b []byte) ([]byte, error) { return append(b, make([]byte, MaxPayload)...), nil })
	if !errors.Is(err, ErrOverOnePacket) || len(buf) != before {
		t.Fatalf("a payload of MaxPayload bytes: %v, %d bytes kept, want ErrOverOnePacket and %d", err, len(buf), before)
	}
	boom := errors.New("boom")
	if buf, err = AppendPacket(buf, 0, func(b []byte) ([]byte, error) { return append(b, 'x'), boom }); err != boom || len(buf) != before {
		t.Fatalf("a failing build: %v, %d bytes kept, want boom and %d", err, len(buf), before)
	}
}
