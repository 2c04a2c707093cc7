package sqlvalue

import (
	"bytes"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
)

func field(typ uint8, flag uint16, charset uint16, decimals uint8) *mysql.Field {
	return &mysql.Field{Type: typ, Flag: flag, Charset: charset, Decimal: decimals}
}

// plugin is the definition MariaDB sends for a column of one of its data
// type plugins (INET4, INET6, UUID): a string with UNSIGNED_FLAG over a
// utf8mb4 connection, block its extended metadata.
func plugin(block string, flag uint16) *mysql.Field {
	f := field(mysql.MYSQL_TYPE_STRING, mysql.UNSIGNED_FLAG|flag, 45, 0)
	if block != "" {
		f.Data = []byte(block)
	}
	return f
}

func TestTypeOf(t *testing.T) {
	tests := []struct {
		name          string
		give          *mysql.Field
		collation     uint16
		wantClass     Class
		wantCollation string
		wantOrderErr  bool
		wantEqualErr  bool
		wantMinMaxErr bool
	}{
		{name: "bigint", give: field(mysql.MYSQL_TYPE_LONGLONG, 0, 63, 0), wantClass: ClassInt},
		{name: "decimal", give: field(mysql.MYSQL_TYPE_NEWDECIMAL, 0, 63, 2), wantClass: ClassDecimal},
		{name: "double", give: field(mysql.MYSQL_TYPE_DOUBLE, 0, 63, 31), wantClass: ClassFloat},
		{name: "datetime", give: field(mysql.MYSQL_TYPE_DATETIME, 0, 63, 0), wantClass: ClassDate},
		{name: "time", give: field(mysql.MYSQL_TYPE_TIME, 0, 63, 0), wantClass: ClassTime},
		{name: "varchar", give: field(mysql.MYSQL_TYPE_VAR_STRING, 0, 45, 0), wantClass: ClassString, wantCollation: "utf8mb4_general_ci"},
		{name: "varchar binary flag", give: field(mysql.MYSQL_TYPE_VAR_STRING, mysql.BINARY_FLAG, 45, 0), wantClass: ClassString, wantCollation: "utf8mb4_bin"},
		{name: "resolved collation wins", give: field(mysql.MYSQL_TYPE_VAR_STRING, 0, 45, 0), collation: 224, wantClass: ClassString, wantCollation: "utf8mb4_unicode_ci"},
		{name: "resolved latin1 column over utf8mb4", give: field(mysql.MYSQL_TYPE_VAR_STRING, 0, 45, 0), collation: 8, wantClass: ClassString, wantCollation: "latin1_swedish_ci"},
		{name: "resolved collation the merge cannot convert", give: field(mysql.MYSQL_TYPE_VAR_STRING, 0, 45, 0), collation: 2304, wantClass: ClassString, wantOrderErr: true, wantEqualErr: true},
		{name: "latin1 connection", give: field(mysql.MYSQL_TYPE_STRING, 0, 8, 0), wantClass: ClassString, wantCollation: "latin1_swedish_ci"},
		{name: "varbinary", give: field(mysql.MYSQL_TYPE_VAR_STRING, mysql.BINARY_FLAG, 63, 0), wantClass: ClassBinary},
		{name: "blob", give: field(mysql.MYSQL_TYPE_BLOB, mysql.BINARY_FLAG|mysql.BLOB_FLAG, 63, 0), wantClass: ClassBinary},
		{name: "bit", give: field(mysql.MYSQL_TYPE_BIT, mysql.UNSIGNED_FLAG, 63, 0), wantClass: ClassBinary},
		{name: "enum orders by position", give: field(mysql.MYSQL_TYPE_STRING, mysql.ENUM_FLAG, 45, 0), wantClass: ClassString, wantCollation: "utf8mb4_general_ci", wantOrderErr: true},
		{name: "unknown collation", give: field(mysql.MYSQL_TYPE_VAR_STRING, 0, 2048, 0), wantClass: ClassString, wantOrderErr: true, wantEqualErr: true},
		{name: "geometry", give: field(mysql.MYSQL_TYPE_GEOMETRY, mysql.BINARY_FLAG, 63, 0), wantClass: ClassOther, wantOrderErr: true, wantEqualErr: true},
		{name: "uuid", give: plugin("\x00\x04uuid", mysql.BINARY_FLAG), wantClass: ClassUUID},
		{name: "inet6", give: plugin("\x00\x05inet6", mysql.BINARY_FLAG), wantClass: ClassInet6},
		{name: "MIN of inet4", give: plugin("\x00\x05inet4", 0), wantClass: ClassInet4},
		{name: "type name after a format", give: plugin("\x01\x04json\x00\x04uuid", 0), wantClass: ClassUUID},
		{name: "plugin type without its name", give: plugin("", mysql.BINARY_FLAG), wantClass: ClassString, wantCollation: "utf8mb4_bin", wantOrderErr: true, wantMinMaxErr: true},
		{name: "plugin type the merge does not know", give: plugin("\x00\x04xyzw", 0), wantClass: ClassString, wantCollation: "utf8mb4_general_ci", wantOrderErr: true, wantMinMaxErr: true},
		{name: "truncated block", give: plugin("\x00\x09uuid", 0), wantClass: ClassString, wantCollation: "utf8mb4_general_ci", wantOrderErr: true, wantMinMaxErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TypeOf(tt.give, tt.collation)
			if got.Class != tt.wantClass {
				t.Errorf("class %v, want %v", got.Class, tt.wantClass)
			}
			name := ""
			if got.Collation != nil {
				name = got.Collation.Name
			}
			if name != tt.wantCollation {
				t.Errorf("collation %q, want %q", name, tt.wantCollation)
			}
			if (got.OrderError() != nil) != tt.wantOrderErr {
				t.Errorf("OrderError() = %v, want error %v", got.OrderError(), tt.wantOrderErr)
			}
			if (got.EqualError() != nil) != tt.wantEqualErr {
				t.Errorf("EqualError() = %v, want error %v", got.EqualError(), tt.wantEqualErr)
			}
			if (got.MinMaxError() != nil) != (tt.wantMinMaxErr || tt.wantEqualErr) {
				t.Errorf("MinMaxError() = %v, want error %v", got.MinMaxError(), tt.wantMinMaxErr || tt.wantEqualErr)
			}
		})
	}
}

func TestTypeCompareAndKey(t *testing.T) {
	signed := TypeOf(field(mysql.MYSQL_TYPE_LONGLONG, 0, 63, 0), 0)
	unsigned := TypeOf(field(mysql.MYSQL_TYPE_LONGLONG, mysql.UNSIGNED_FLAG, 63, 0), 0)
	decimal := TypeOf(field(mysql.MYSQL_TYPE_NEWDECIMAL, 0, 63, 2), 0)
	double := TypeOf(field(mysql.MYSQL_TYPE_DOUBLE, 0, 63, 31), 0)
	date := TypeOf(field(mysql.MYSQL_TYPE_DATETIME, 0, 63, 0), 0)
	tim := TypeOf(field(mysql.MYSQL_TYPE_TIME, 0, 63, 0), 0)
	str := TypeOf(field(mysql.MYSQL_TYPE_VAR_STRING, 0, 45, 0), 0)
	bin := TypeOf(field(mysql.MYSQL_TYPE_VAR_STRING, mysql.BINARY_FLAG, 63, 0), 0)
	tests := []struct {
		name string
		typ  Type
		a, b []byte
		want int
	}{
		{"null first", signed, nil, []byte("-5"), -1},
		{"nulls equal", str, nil, nil, 0},
		{"negative", signed, []byte("-10"), []byte("-9"), -1},
		{"length", signed, []byte("10"), []byte("9"), 1},
		{"zerofill", signed, []byte("00042"), []byte("42"), 0},
		{"unsigned beyond int64", unsigned, []byte("18446744073709551615"), []byte("9223372036854775808"), 1},
		{"decimal", decimal, []byte("-0.50"), []byte("-0.49"), -1},
		{"decimal zero signs", decimal, []byte("-0.00"), []byte("0.00"), 0},
		{"decimal magnitude", decimal, []byte("100.00"), []byte("99.99"), 1},
		{"double", double, []byte("1e15"), []byte("999999999999999"), 1},
		{"double negative zero", double, []byte("-0"), []byte("0"), 0},
		{"datetime", date, []byte("2024-01-02 00:00:00"), []byte("2024-01-01 23:59:59"), 1},
		{"time sign", tim, []byte("-01:00:00"), []byte("00:30:00"), -1},
		{"time hours", tim, []byte("100:00:00"), []byte("99:59:59"), 1},
		{"time fraction", tim, []byte("00:00:01.5"), []byte("00:00:01.25"), 1},
		{"string case", str, []byte("abc"), []byte("ABC"), 0},
		{"string trailing space", str, []byte("abc "), []byte("abc"), 0},
		{"string accent general_ci", str, []byte("é"), []byte("E"), 0},
		{"string below space", str, []byte("a\t"), []byte("a"), -1},
		{"binary no pad", bin, []byte("a "), []byte("a"), 1},
		{"binary case", bin, []byte("A"), []byte("a"), -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.typ.Compare(tt.a, tt.b); got != tt.want {
				t.Errorf("Compare(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
			}
			if got := tt.typ.Compare(tt.b, tt.a); got != -tt.want {
				t.Errorf("Compare(%q, %q) = %d, want %d", tt.b, tt.a, got, -tt.want)
			}
			ka, kb := tt.typ.AppendKey(nil, tt.a), tt.typ.AppendKey(nil, tt.b)
			if bytes.Equal(ka, kb) != (tt.want == 0) {
				t.Errorf("keys %q and %q: equal %v, want %v", ka, kb, bytes.Equal(ka, kb), tt.want == 0)
			}
		})
	}
}

// TestKeysConcatenate checks that keys of several columns cannot run into
// each other: ("ab", "c") and ("a", "bc") differ.
func TestKeysConcatenate(t *testing.T) {
	str := TypeOf(field(mysql.MYSQL_TYPE_VAR_STRING, mysql.BINARY_FLAG, 63, 0), 0)
	k1 := str.AppendKey(str.AppendKey(nil, []byte("ab")), []byte("c"))
	k2 := str.AppendKey(str.AppendKey(nil, []byte("a")), []byte("bc"))
	if bytes.Equal(k1, k2) {
		t.Errorf("keys of (ab, c) and (a, bc) are equal: %q", k1)
	}
	k3 := str.AppendKey(str.AppendKey(nil, nil), []byte(""))
	k4 := str.AppendKey(str.AppendKey(nil, []byte("")), nil)
	if bytes.Equal(k3, k4) {
		t.Errorf("keys of (NULL, '') and ('', NULL) are equal: %q", k3)
	}
}
