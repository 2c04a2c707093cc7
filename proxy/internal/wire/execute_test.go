package wire

import (
	"bytes"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
)

func TestAppendExecuteReadsBack(t *testing.T) {
	tests := []struct {
		name string
		give []any
		want []any // as ParseExecute decodes them
	}{
		{"none", nil, nil},
		{"integers", []any{int64(-42), 7, int8(-1), int16(300), int32(-70000), uint8(200), uint16(65535), uint32(1 << 31), uint(5)},
			[]any{int64(-42), int64(7), int64(-1), int64(300), int64(-70000), int64(200), int64(65535), int64(1 << 31), int64(5)}},
		{"uint64 above int64", []any{uint64(math.MaxUint64)}, []any{uint64(math.MaxUint64)}},
		{"floats", []any{2.5, float32(0.25)}, []any{2.5, float32(0.25)}},
		{"bool", []any{true, false}, []any{int64(1), int64(0)}},
		{"strings and bytes", []any{"it's", "", []byte("\x00\xff"), []byte{}}, []any{"it's", "", []byte("\x00\xff"), []byte{}}},
		{"NULLs", []any{nil, int64(1), nil, []byte(nil), "x", nil, nil, nil, nil, int64(2)},
			[]any{nil, int64(1), nil, nil, "x", nil, nil, nil, nil, int64(2)}},
		{"datetime", []any{time.Date(2024, 2, 29, 13, 14, 15, 500000000, time.UTC)}, []any{time.Date(2024, 2, 29, 13, 14, 15, 500000000, time.UTC)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := AppendExecute(nil, 9, tt.give)
			if err != nil {
				t.Fatal(err)
			}
			if p[0] != mysql.COM_STMT_EXECUTE {
				t.Fatalf("command byte %#x", p[0])
			}
			e, err := ParseExecute(p[1:], len(tt.give), nil, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if e.StmtID != 9 || e.CursorFlags != 0 {
				t.Errorf("statement id %d, cursor flags %d; want 9, 0", e.StmtID, e.CursorFlags)
			}
			if len(tt.want) == 0 && len(e.Args) == 0 {
				return
			}
			if !reflect.DeepEqual(e.Args, tt.want) {
				t.Errorf("got %#v, want %#v", e.Args, tt.want)
			}
		})
	}
	if _, err := AppendExecute(nil, 1, []any{struct{}{}}); err == nil {
		t.Error("unsupported argument type: want an error")
	}
}

func TestPrepareOKAndClose(t *testing.T) {
	got, err := ParsePrepareOK(AppendPrepareOK(nil, 77, 3, 2, 0))
	if err != nil {
		t.Fatal(err)
	}
	if want := (PrepareOK{StmtID: 77, Columns: 3, Params: 2}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if _, err := ParsePrepareOK([]byte{0, 1, 2}); err == nil {
		t.Error("short packet: want an error")
	}
	if _, err := ParsePrepareOK(AppendErr(nil, 1064, "42000", "syntax")); err == nil {
		t.Error("error packet: want an error")
	}
	if got, want := AppendStmtClose(nil, 0x01020304), []byte{mysql.COM_STMT_CLOSE, 4, 3, 2, 1}; !bytes.Equal(got, want) {
		t.Errorf("AppendStmtClose: got %x, want %x", got, want)
	}
}

// TestSplitBinaryRow decodes binary rows back into the text values they
// were made from (AppendBinaryRow is the reverse direction).
func TestSplitBinaryRow(t *testing.T) {
	field := func(tp uint8, flag uint16, decimals uint8) *mysql.Field {
		return &mysql.Field{Name: []byte("v"), Type: tp, Flag: flag, Decimal: decimals}
	}
	tests := []struct {
		name  string
		field *mysql.Field
		give  string // text value
	}{
		{"tiny", field(mysql.MYSQL_TYPE_TINY, 0, 0), "-128"},
		{"tiny unsigned", field(mysql.MYSQL_TYPE_TINY, mysql.UNSIGNED_FLAG, 0), "255"},
		{"short", field(mysql.MYSQL_TYPE_SHORT, 0, 0), "-300"},
		{"year", field(mysql.MYSQL_TYPE_YEAR, mysql.UNSIGNED_FLAG, 0), "2024"},
		{"zero year", field(mysql.MYSQL_TYPE_YEAR, mysql.UNSIGNED_FLAG, 0), "0000"},
		{"int24", field(mysql.MYSQL_TYPE_INT24, 0, 0), "-8388608"},
		{"long unsigned", field(mysql.MYSQL_TYPE_LONG, mysql.UNSIGNED_FLAG, 0), "4294967295"},
		{"longlong", field(mysql.MYSQL_TYPE_LONGLONG, 0, 0), "-9223372036854775808"},
		{"longlong unsigned", field(mysql.MYSQL_TYPE_LONGLONG, mysql.UNSIGNED_FLAG, 0), "18446744073709551615"},
		{"double", field(mysql.MYSQL_TYPE_DOUBLE, 0, 31), "-1.5"},
		{"double large", field(mysql.MYSQL_TYPE_DOUBLE, 0, 31), "1e20"},
		{"double small", field(mysql.MYSQL_TYPE_DOUBLE, 0, 31), "1.5e-7"},
		{"float", field(mysql.MYSQL_TYPE_FLOAT, 0, 31), "0.25"},
		{"decimal", field(mysql.MYSQL_TYPE_NEWDECIMAL, 0, 2), "-12.30"},
		{"string", field(mysql.MYSQL_TYPE_VAR_STRING, 0, 0), "héllo"},
		{"empty string", field(mysql.MYSQL_TYPE_STRING, 0, 0), ""},
		{"blob", field(mysql.MYSQL_TYPE_BLOB, mysql.BINARY_FLAG, 0), "\x00\x01\xff"},
		{"date", field(mysql.MYSQL_TYPE_DATE, 0, 0), "2024-02-29"},
		{"zero date", field(mysql.MYSQL_TYPE_DATE, 0, 0), "0000-00-00"},
		{"datetime", field(mysql.MYSQL_TYPE_DATETIME, 0, 0), "2024-02-29 13:14:15"},
		{"datetime(6)", field(mysql.MYSQL_TYPE_DATETIME, 0, 6), "2024-02-29 13:14:15.000001"},
		{"timestamp(3) whole second", field(mysql.MYSQL_TYPE_TIMESTAMP, 0, 3), "2024-02-29 13:14:15.000"},
		{"zero datetime", field(mysql.MYSQL_TYPE_DATETIME, 0, 0), "0000-00-00 00:00:00"},
		{"time", field(mysql.MYSQL_TYPE_TIME, 0, 0), "-838:59:59"},
		{"time(2)", field(mysql.MYSQL_TYPE_TIME, 0, 2), "01:02:03.50"},
		{"zero time", field(mysql.MYSQL_TYPE_TIME, 0, 0), "00:00:00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fields := []*mysql.Field{tt.field}
			p, err := AppendBinaryRow(nil, fields, [][]byte{[]byte(tt.give)})
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := SplitBinaryRow(p, fields, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if string(got[0]) != tt.give || got[0] == nil {
				t.Errorf("got %q, want %q", got[0], tt.give)
			}
		})
	}

	// NULLs in every position of the bitmap, and values around them.
	var fields []*mysql.Field
	var values [][]byte
	for i := range 20 {
		fields = append(fields, field(mysql.MYSQL_TYPE_LONG, 0, 0))
		if i%3 == 0 {
			values = append(values, nil)
		} else {
			values = append(values, []byte{byte('0' + i%10)})
		}
	}
	p, err := AppendBinaryRow(nil, fields, values)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := SplitBinaryRow(p, fields, make([][]byte, 3), []byte("old"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range values {
		if (got[i] == nil) != (values[i] == nil) || string(got[i]) != string(values[i]) {
			t.Errorf("value %d: got %q, want %q", i, got[i], values[i])
		}
	}
	if _, _, err := SplitBinaryRow(p[:len(p)-2], fields, nil, nil); err == nil {
		t.Error("truncated row: want an error")
	}
	if _, _, err := SplitBinaryRow(append(p, 0), fields, nil, nil); err == nil {
		t.Error("row with extra bytes: want an error")
	}
}

// TestDateTimeParams reads binary DATETIME and TIMESTAMP parameters as
// time.Time (so they go on as DATETIME), and those a time.Time cannot hold
// as they are, and DATEs, as their text.
func TestDateTimeParams(t *testing.T) {
	dt := func(y, mo, d, h, mi, s, us int) []byte {
		b := []byte{11, byte(y), byte(y >> 8), byte(mo), byte(d), byte(h), byte(mi), byte(s)}
		return append(b, byte(us), byte(us>>8), byte(us>>16), byte(us>>24))
	}
	tests := []struct {
		name string
		tp   byte
		b    []byte
		want any
	}{
		{"datetime", mysql.MYSQL_TYPE_DATETIME, dt(2024, 2, 29, 13, 14, 15, 500000), time.Date(2024, 2, 29, 13, 14, 15, 500000000, time.UTC)},
		{"timestamp", mysql.MYSQL_TYPE_TIMESTAMP, dt(1999, 12, 31, 23, 59, 59, 0), time.Date(1999, 12, 31, 23, 59, 59, 0, time.UTC)},
		{"zero datetime", mysql.MYSQL_TYPE_DATETIME, []byte{0}, "0000-00-00 00:00:00"},
		{"zero day", mysql.MYSQL_TYPE_DATETIME, dt(2024, 2, 0, 1, 2, 3, 0), "2024-02-00 01:02:03"},
		{"past the month", mysql.MYSQL_TYPE_DATETIME, dt(2023, 2, 29, 1, 2, 3, 0), "2023-02-29 01:02:03"},
		{"date", mysql.MYSQL_TYPE_DATE, []byte{4, 0xe8, 0x07, 2, 29}, "2024-02-29"},
	}
	for _, tt := range tests {
		got, n, err := binaryParam(tt.b, tt.tp, false)
		if err != nil || n != len(tt.b) || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %#v, %d bytes, %v; want %#v", tt.name, got, n, err, tt.want)
		}
	}
}

// TestAppendExecuteAsKeepsTypes: a client's parameters, decoded by
// ParseExecute and sent on with AppendExecuteAs, reach the data source
// under the types the client bound them with, with the same values.
func TestAppendExecuteAsKeepsTypes(t *testing.T) {
	le16 := func(v uint16) []byte { return []byte{byte(v), byte(v >> 8)} }
	le32 := func(v uint32) []byte { return []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)} }
	lenenc := func(s string) []byte { return append([]byte{byte(len(s))}, s...) }
	params := []struct {
		tp, flag byte
		value    []byte
	}{
		{mysql.MYSQL_TYPE_TINY, 0, []byte{0xfe}},
		{mysql.MYSQL_TYPE_TINY, 0x80, []byte{0xfe}},
		{mysql.MYSQL_TYPE_SHORT, 0, le16(0x8001)},
		{mysql.MYSQL_TYPE_YEAR, 0x80, le16(2024)},
		{mysql.MYSQL_TYPE_LONG, 0, le32(0x80000001)},
		{mysql.MYSQL_TYPE_INT24, 0x80, le32(70000)},
		{mysql.MYSQL_TYPE_LONGLONG, 0x80, append(le32(0xffffffff), le32(0xffffffff)...)},
		{mysql.MYSQL_TYPE_FLOAT, 0, le32(math.Float32bits(0.5))},
		{mysql.MYSQL_TYPE_NEWDECIMAL, 0, lenenc("12.340")},
		{mysql.MYSQL_TYPE_STRING, 0, lenenc("char")},
		{mysql.MYSQL_TYPE_VARCHAR, 0, lenenc("varchar")},
		{mysql.MYSQL_TYPE_BLOB, 0, lenenc("\x00\xff")},
		{mysql.MYSQL_TYPE_JSON, 0, lenenc(`{"a":1}`)},
		{mysql.MYSQL_TYPE_DATE, 0, []byte{4, 0xe8, 0x07, 2, 29}},
		{mysql.MYSQL_TYPE_TIME, 0, append(append([]byte{12, 1}, le32(1)...), 2, 3, 4, 0x20, 0xa1, 0x07, 0)},
		{mysql.MYSQL_TYPE_TIME, 0, append(append([]byte{8, 0}, le32(0)...), 23, 59, 58)},
		{mysql.MYSQL_TYPE_TIMESTAMP, 0, []byte{7, 0xcf, 0x07, 12, 31, 23, 59, 59}},
		{mysql.MYSQL_TYPE_NULL, 0, nil},
	}
	n := len(params)
	p := append([]byte{7, 0, 0, 0, 0}, le32(1)...)
	nulls := make([]byte, (n+7)/8)
	nulls[(n-1)/8] |= 1 << ((n - 1) % 8)
	p = append(p, nulls...)
	p = append(p, 1)
	for _, q := range params {
		p = append(p, q.tp, q.flag)
	}
	for _, q := range params {
		p = append(p, q.value...)
	}
	client, err := ParseExecute(p, n, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	sent, err := AppendExecuteAs(nil, 3, client.Args, client.Types)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseExecute(sent[1:], n, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range params {
		if got.Types[2*i] != q.tp || got.Types[2*i+1] != q.flag {
			t.Errorf("parameter %d: sent as type %d flag %#x, the client bound %d %#x", i+1, got.Types[2*i], got.Types[2*i+1], q.tp, q.flag)
		}
	}
	if !reflect.DeepEqual(got.Args, client.Args) {
		t.Errorf("values sent %#v, the client's %#v", got.Args, client.Args)
	}
	// Without types, or with a value its type cannot carry, every
	// argument goes by its Go type.
	plain, _ := AppendExecute(nil, 3, []any{int64(1), "x"})
	if as, _ := AppendExecuteAs(nil, 3, []any{int64(1), "x"}, nil); !bytes.Equal(as, plain) {
		t.Errorf("no types: %x, want %x", as, plain)
	}
	if as, _ := AppendExecuteAs(nil, 3, []any{int64(1), "x"}, []byte{mysql.MYSQL_TYPE_TINY, 0, mysql.MYSQL_TYPE_DOUBLE, 0}); !bytes.Equal(as, plain) {
		t.Errorf("a string as DOUBLE: %x, want %x", as, plain)
	}
}

// TestExecuteAllNullWithoutTypes: an execute whose values are all NULL
// may leave the types out, even the first time.
func TestExecuteAllNullWithoutTypes(t *testing.T) {
	p := append([]byte{7, 0, 0, 0, 0, 1, 0, 0, 0}, 0x03, 0)
	e, err := ParseExecute(p, 2, nil, nil, nil)
	if err != nil || len(e.Args) != 2 || e.Args[0] != nil || e.Args[1] != nil {
		t.Errorf("got %#v, %v; want two NULLs", e.Args, err)
	}
	if _, err := ParseExecute(append([]byte{7, 0, 0, 0, 0, 1, 0, 0, 0}, 0x01, 0), 2, nil, nil, nil); err == nil {
		t.Error("a value without a type: want an error")
	}
}
