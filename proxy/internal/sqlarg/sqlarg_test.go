package sqlarg

import (
	"errors"
	"math"
	"slices"
	"testing"
	"time"
)

func TestAppendLiteral(t *testing.T) {
	tests := []struct {
		give any
		mode Mode
		want string
	}{
		{nil, Backslash, "NULL"},
		{true, Backslash, "1"},
		{int64(-42), Backslash, "-42"},
		{uint64(math.MaxUint64), Backslash, "18446744073709551615"},
		{int8(-3), Backslash, "-3"},
		{1.5, Backslash, "1.5e+00"},
		{float32(0.1), Backslash, "1e-01"},
		{"it's", Backslash, `'it''s'`},
		{`a\b`, Backslash, `'a\\b'`},
		{`a\b`, NoBackslashEscapes, `'a\b'`},
		{"nl\n\x00\x1a\r", Backslash, `'nl\n\0\Z\r'`},
		{"héllo", Backslash, "'héllo'"},
		{"\xff\xfe", Backslash, "X'fffe'"},
		{[]byte{0, 1, 'a'}, Backslash, "X'000161'"},
		{[]byte{}, Backslash, "''"},
		{[]byte(nil), Backslash, "NULL"},
		{time.Date(2024, 1, 2, 3, 4, 5, 600000000, time.UTC), Backslash, "TIMESTAMP'2024-01-02 03:04:05.600000'"},
		{time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), Backslash, "TIMESTAMP'2024-01-02 03:04:05'"},
	}
	for _, tt := range tests {
		got, err := AppendLiteral(nil, tt.give, tt.mode)
		if err != nil {
			t.Errorf("AppendLiteral(%#v): %v", tt.give, err)
			continue
		}
		if string(got) != tt.want {
			t.Errorf("AppendLiteral(%#v, %v) = %s, want %s", tt.give, tt.mode, got, tt.want)
		}
	}
	for _, bad := range []any{math.NaN(), math.Inf(1), struct{}{}} {
		if _, err := AppendLiteral(nil, bad, Backslash); err == nil {
			t.Errorf("AppendLiteral(%#v): want an error", bad)
		}
	}
}

func TestInterpolate(t *testing.T) {
	tests := []struct {
		give string
		args []any
		mode Mode
		want string
	}{
		{"SELECT * FROM t WHERE a = ? AND b = ?", []any{int64(1), "x"}, Backslash, "SELECT * FROM t WHERE a = 1 AND b = 'x'"},
		{"SELECT '?', `?`, \"?\", ? -- ?\n", []any{int64(2)}, Backslash, "SELECT '?', `?`, \"?\", 2 -- ?\n"},
		{"SELECT /* ? */ ? # ?", []any{nil}, Backslash, "SELECT /* ? */ NULL # ?"},
		{`SELECT 'a\'?', ?`, []any{int64(3)}, Backslash, `SELECT 'a\'?', 3`},
		{`SELECT 'a\', ?`, []any{int64(4)}, NoBackslashEscapes, `SELECT 'a\', 4`},
		{"SELECT 1--?", []any{int64(5)}, Backslash, "SELECT 1--5"},
		{"SELECT 'it''s ?', ?", []any{"y"}, Backslash, "SELECT 'it''s ?', 'y'"},
	}
	for _, tt := range tests {
		got, err := Interpolate(tt.give, tt.args, tt.mode)
		if err != nil {
			t.Errorf("Interpolate(%q): %v", tt.give, err)
			continue
		}
		if got != tt.want {
			t.Errorf("Interpolate(%q) = %q, want %q", tt.give, got, tt.want)
		}
		if n := Count(tt.give); tt.mode == Backslash && n != len(tt.args) {
			t.Errorf("Count(%q) = %d, want %d", tt.give, n, len(tt.args))
		}
	}
	for _, tt := range []struct {
		give string
		args []any
	}{
		{"SELECT ?, ?", []any{int64(1)}},
		{"SELECT ?", []any{int64(1), int64(2)}},
	} {
		if _, err := Interpolate(tt.give, tt.args, Backslash); !errors.Is(err, ErrArgCount) {
			t.Errorf("Interpolate(%q, %d args): got %v, want ErrArgCount", tt.give, len(tt.args), err)
		}
	}
}

func TestSplit(t *testing.T) {
	tests := []struct {
		give string
		want []string
	}{
		{"SELECT 1", []string{"SELECT 1"}},
		{"SELECT 1; SELECT 2;", []string{"SELECT 1", "SELECT 2"}},
		{"SELECT ';'; SELECT `a;b` -- ;\n; /* ; */ SELECT \"x;\"", []string{"SELECT ';'", "SELECT `a;b` -- ;", "/* ; */ SELECT \"x;\""}},
		{" ; ;", nil},
		// A routine's body keeps its semicolons (go-sql-driver's
		// TestMultiResultSet sends one so).
		{"DROP PROCEDURE IF EXISTS p; CREATE PROCEDURE p() BEGIN SELECT 1; SELECT 2; END; CALL p()",
			[]string{"DROP PROCEDURE IF EXISTS p", "CREATE PROCEDURE p() BEGIN SELECT 1; SELECT 2; END", "CALL p()"}},
		{"CREATE DEFINER=`a`@`%` PROCEDURE p(x INT) lbl: BEGIN IF x > 1 THEN SELECT 1; ELSE BEGIN SELECT CASE x WHEN 1 THEN 'a;' ELSE 'b' END; END; END IF; WHILE x > 0 DO SET x = x - 1; END WHILE; CASE x WHEN 0 THEN SELECT 0; END CASE; END lbl; SELECT 3",
			[]string{"CREATE DEFINER=`a`@`%` PROCEDURE p(x INT) lbl: BEGIN IF x > 1 THEN SELECT 1; ELSE BEGIN SELECT CASE x WHEN 1 THEN 'a;' ELSE 'b' END; END; END IF; WHILE x > 0 DO SET x = x - 1; END WHILE; CASE x WHEN 0 THEN SELECT 0; END CASE; END lbl", "SELECT 3"}},
		{"CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET NEW.a = 1; SELECT 1", []string{"CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET NEW.a = 1", "SELECT 1"}},
		{"CREATE FUNCTION f() RETURNS INT BEGIN RETURN 1; END; SELECT f()", []string{"CREATE FUNCTION f() RETURNS INT BEGIN RETURN 1; END", "SELECT f()"}},
		{"BEGIN; SELECT 1; END", []string{"BEGIN", "SELECT 1", "END"}},
		{"CREATE TABLE t (a INT); BEGIN; COMMIT", []string{"CREATE TABLE t (a INT)", "BEGIN", "COMMIT"}},
	}
	for _, tt := range tests {
		if got := Split(tt.give); !slices.Equal(got, tt.want) {
			t.Errorf("Split(%q) = %q, want %q", tt.give, got, tt.want)
		}
	}
}

func TestLoadIgnoreRows(t *testing.T) {
	tests := []struct {
		give, want string
		ok         bool
	}{
		{"LOAD DATA LOCAL INFILE 'f' INTO TABLE t IGNORE 2 ROWS (a)", "LOAD DATA LOCAL INFILE 'f' INTO TABLE t IGNORE 2 LINES (a)", true},
		{"load data infile 'f' into table t fields terminated by ',' ignore 10 rows", "load data infile 'f' into table t fields terminated by ',' ignore 10 LINES", true},
		{"LOAD DATA INFILE 'IGNORE 2 ROWS' INTO TABLE t", "", false},
		{"LOAD DATA INFILE 'f' IGNORE INTO TABLE t IGNORE 1 LINES", "", false},
		{"SELECT 1 IGNORE 2 ROWS", "", false},
	}
	for _, tt := range tests {
		got, ok := LoadIgnoreRows(tt.give)
		if got != tt.want || ok != tt.ok {
			t.Errorf("LoadIgnoreRows(%q) = %q, %v; want %q, %v", tt.give, got, ok, tt.want, tt.ok)
		}
	}
}

func TestSplitFirst(t *testing.T) {
	tests := []struct {
		give        string
		mode        Mode
		first, rest string
	}{
		{"SELECT 1; SELECT 2;", Backslash, "SELECT 1", " SELECT 2;"},
		{" ; ;SELECT 1", Backslash, "SELECT 1", ""},
		{" ; ; ", Backslash, "", ""},
		{`SELECT 'a\'; b'; SELECT 2`, Backslash, `SELECT 'a\'; b'`, " SELECT 2"},
		{`SELECT 'a\'; SELECT 2`, NoBackslashEscapes, `SELECT 'a\'`, " SELECT 2"},
		{"CREATE PROCEDURE p() BEGIN SELECT 1; END; CALL p()", Backslash, "CREATE PROCEDURE p() BEGIN SELECT 1; END", " CALL p()"},
		{"SELECT 1 -- ;\n", Backslash, "SELECT 1 -- ;", ""},
	}
	for _, tt := range tests {
		first, rest := SplitFirst(tt.give, tt.mode)
		if first != tt.first || rest != tt.rest {
			t.Errorf("SplitFirst(%q, %v) = %q, %q; want %q, %q", tt.give, tt.mode, first, rest, tt.first, tt.rest)
		}
	}
}

func TestTrailingComment(t *testing.T) {
	for sql, want := range map[string]bool{
		"SELECT 1; -- done":             true,
		"SELECT 1; /* a */ /* b */":     true,
		"SELECT 1; # done\n":            true,
		"SELECT 1;":                     false,
		"SELECT 1;  \n":                 false,
		"SELECT 1 /* c */;":             false,
		"SELECT 1; SELECT 2":            false,
		"SELECT 1;/*!40101 SET @x=1 */": false,
		"SELECT ';-- x'":                false,
		"SELECT 1 -- x":                 false,
		"SELECT 1; /* unterminated":     false,
	} {
		if got := TrailingComment(sql, Backslash); got != want {
			t.Errorf("TrailingComment(%q) = %v, want %v", sql, got, want)
		}
	}
}

func TestFirstPlaceholder(t *testing.T) {
	tests := []struct {
		give string
		mode Mode
		want int
	}{
		{"SELECT 1", Backslash, -1},
		{"SELECT ?", Backslash, 7},
		{"SELECT '?', `?`, \"?\", ? -- ?", Backslash, 22},
		{"SELECT /* ? */ a FROM t # ?\nWHERE b = ?", Backslash, 38},
		{`SELECT 'a\'?', ?`, Backslash, 15},
		{`SELECT 'a\', ?`, NoBackslashEscapes, 13},
		{`SELECT 'a\', ?`, Backslash, -1}, // unterminated
	}
	for _, tt := range tests {
		if got := FirstPlaceholder(tt.give, tt.mode); got != tt.want {
			t.Errorf("FirstPlaceholder(%q) = %d, want %d", tt.give, got, tt.want)
		}
	}
}

// TestAppendQuotedEveryByte writes every byte alone and between other
// text in both modes, against the escaping rules byte by byte: in
// backslash mode ' doubled, \ NUL LF CR ^Z escaped with a backslash; with
// NO_BACKSLASH_ESCAPES only ' doubled.
func TestAppendQuotedEveryByte(t *testing.T) {
	want := func(s string, mode Mode) string {
		out := "'"
		for i := 0; i < len(s); i++ {
			c := s[i]
			switch {
			case c == '\'':
				out += "''"
			case mode == NoBackslashEscapes:
				out += string([]byte{c})
			case c == '\\':
				out += `\\`
			case c == 0:
				out += `\0`
			case c == '\n':
				out += `\n`
			case c == '\r':
				out += `\r`
			case c == 0x1a:
				out += `\Z`
			default:
				out += string([]byte{c})
			}
		}
		return out + "'"
	}
	for _, mode := range []Mode{Backslash, NoBackslashEscapes} {
		all := make([]byte, 0, 256)
		for c := 0; c < 256; c++ {
			all = append(all, byte(c))
			for _, s := range []string{string([]byte{byte(c)}), "ab" + string([]byte{byte(c)}) + "cd", string([]byte{byte(c), byte(c)})} {
				if got := string(appendQuoted([]byte("x"), s, mode)); got != "x"+want(s, mode) {
					t.Fatalf("appendQuoted(%q, %v) = %q, want %q", s, mode, got, want(s, mode))
				}
			}
		}
		if got := string(appendQuoted(nil, string(all), mode)); got != want(string(all), mode) {
			t.Fatalf("appendQuoted(all bytes, %v) = %q", mode, got)
		}
	}
}

func BenchmarkInterpolateInsert(b *testing.B) {
	const sql = "INSERT INTO `sbtest1_2` (`id`,`k`,`c`,`pad`) VALUES (?,?,?,?)"
	args := []any{int64(-2147481648), int64(5012), "83868641912-28773972837-60736120486-75162659906-27563526494-20381887404-41576422241-93426793964-56405065102-33518432330", "67847967377-48000963322-62604785301-91415491898-96926520291"}
	var dst []byte
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if dst, err = AppendInterpolated(dst[:0], sql, args, Backslash); err != nil {
			b.Fatal(err)
		}
	}
}
