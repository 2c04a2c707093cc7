package sqlarg

import (
	"math"
	"reflect"
	"testing"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		give     string
		want     string
		wantArgs []any
		wantOK   bool
	}{
		// sysbench's statements
		{"SELECT c FROM sbtest1 WHERE id=5012", "SELECT c FROM sbtest1 WHERE id=?", []any{int64(5012)}, true},
		{"SELECT c FROM sbtest1 WHERE id BETWEEN 10 AND 109 ORDER BY c", "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c", []any{int64(10), int64(109)}, true},
		{"UPDATE sbtest1 SET k=k+1 WHERE id=7", "UPDATE sbtest1 SET k=k+? WHERE id=?", []any{int64(1), int64(7)}, true},
		{"DELETE FROM sbtest1 WHERE id=3", "DELETE FROM sbtest1 WHERE id=?", []any{int64(3)}, true},
		{"INSERT INTO sbtest1 (id, k, c, pad) VALUES (-2147483648, 4990, '6-7', 'x y')",
			"INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)", []any{int64(-2147483648), int64(4990), "6-7", "x y"}, true},
		// signs
		{"select * from t where a = -5 and b - 3 > 0", "select * from t where a = ? and b - ? > ?", []any{int64(-5), int64(3), int64(0)}, true},
		{"SELECT a FROM t WHERE b = 5--5", "SELECT a FROM t WHERE b = ?-?", []any{int64(5), int64(-5)}, true},
		{"SELECT a FROM t WHERE b = - 5", "SELECT a FROM t WHERE b = - ?", []any{int64(5)}, true},
		{"SELECT a FROM t WHERE b = a -5", "SELECT a FROM t WHERE b = a -?", []any{int64(5)}, true},
		{"DELETE FROM t WHERE b IN (SELECT 1 FROM u WHERE c = -2) AND d = 3",
			"DELETE FROM t WHERE b IN (SELECT 1 FROM u WHERE c = ?) AND d = ?", []any{int64(-2), int64(3)}, true},
		{"SELECT a + 1, 'x', SUBSTRING(c FROM 2), (SELECT 5 FROM u WHERE v = 6) FROM t WHERE w = 7 UNION SELECT 8 FROM x WHERE y = 9",
			"SELECT a + 1, 'x', SUBSTRING(c FROM 2), (SELECT 5 FROM u WHERE v = 6) FROM t WHERE w = ? UNION SELECT 8 FROM x WHERE y = ?", []any{int64(7), int64(9)}, true},
		{"INSERT INTO t (a, b) SELECT 1, c FROM u WHERE d = 2 ON DUPLICATE KEY UPDATE b = 3",
			"INSERT INTO t (a, b) SELECT 1, c FROM u WHERE d = ? ON DUPLICATE KEY UPDATE b = ?", []any{int64(2), int64(3)}, true},
		{"SELECT * FROM t WHERE id IN (-1,-2)", "SELECT * FROM t WHERE id IN (?,?)", []any{int64(-1), int64(-2)}, true},
		{"SELECT * FROM t WHERE id = -9223372036854775808", "SELECT * FROM t WHERE id = ?", []any{int64(math.MinInt64)}, true},
		{"SELECT * FROM t WHERE id = -9223372036854775809", "SELECT * FROM t WHERE id = -9223372036854775809", []any{}, true},
		{"SELECT * FROM t WHERE u = 18446744073709551615", "SELECT * FROM t WHERE u = ?", []any{uint64(math.MaxUint64)}, true},
		{"SELECT * FROM t WHERE u = 18446744073709551616", "SELECT * FROM t WHERE u = 18446744073709551616", []any{}, true},
		// strings
		{`SELECT * FROM t WHERE s = 'it''s' AND r = 'a\'b\\c\n\0\Z\t' AND l LIKE 'x\%\_y'`,
			`SELECT * FROM t WHERE s = ? AND r = ? AND l LIKE ?`, []any{"it's", "a'b\\c\n\x00\x1a\t", `x\%\_y`}, true},
		{"SELECT * FROM t WHERE s = 'héllo' AND e = ''", "SELECT * FROM t WHERE s = ? AND e = ?", []any{"héllo", ""}, true},
		{"SELECT * FROM t WHERE s = 'a' 'b'", "", nil, false},
		{"SELECT * FROM t WHERE s = _utf8mb4 'a'", "", nil, false},
		{"SELECT * FROM t WHERE s = _utf8mb4'a'", "", nil, false},
		{"SELECT * FROM t WHERE s = N'a'", "", nil, false},
		{"SELECT * FROM t WHERE s = X'ff'", "", nil, false},
		{"SELECT * FROM t WHERE s = 'a\xff'", "", nil, false},
		{`SELECT * FROM t WHERE s = "a"`, "", nil, false},
		{"SELECT * FROM t WHERE s = 'open", "", nil, false},
		// literals that stay
		{"SELECT a FROM t WHERE b IN (1.5, .5, 1e3, 1e-3, 0x1f, 007, 0, 1st)", "SELECT a FROM t WHERE b IN (1.5, .5, 1e3, 1e-3, 0x1f, 007, ?, 1st)", []any{int64(0)}, true},
		{"SELECT a, COUNT(*) FROM t WHERE b = 2 GROUP BY 1, 'x' HAVING COUNT(*) > 3 ORDER BY 2 DESC LIMIT 10, 5",
			"SELECT a, COUNT(*) FROM t WHERE b = ? GROUP BY 1, 'x' HAVING COUNT(*) > 3 ORDER BY 2 DESC LIMIT ?, ?", []any{int64(2), int64(10), int64(5)}, true},
		{"SELECT * FROM (SELECT a FROM t ORDER BY 1) x WHERE a = 4", "SELECT * FROM (SELECT a FROM t ORDER BY 1) x WHERE a = ?", []any{int64(4)}, true},
		{"SELECT ROW_NUMBER() OVER (ORDER BY a ROWS 2 PRECEDING) FROM t WHERE b = 1", "SELECT ROW_NUMBER() OVER (ORDER BY a ROWS 2 PRECEDING) FROM t WHERE b = ?", []any{int64(1)}, true},
		// names, variables, comments
		{"SELECT `a``1`, t1.c2, @v1, @@session.x FROM `t 2` WHERE `x` = 1", "SELECT `a``1`, t1.c2, @v1, @@session.x FROM `t 2` WHERE `x` = ?", []any{int64(1)}, true},
		{"/* 1 */ SELECT /*+ MAX_EXECUTION_TIME(5) */ a FROM t -- 'x'\nWHERE a = 2 # 3", "/* 1 */ SELECT /*+ MAX_EXECUTION_TIME(5) */ a FROM t -- 'x'\nWHERE a = ? # 3", []any{int64(2)}, true},
		{"SELECT @'x' FROM t", "", nil, false},
		// not normalized at all
		{"SET @a = 1", "", nil, false},
		{"SHOW TABLES", "", nil, false},
		{"WITH x AS (SELECT 1) SELECT * FROM x", "", nil, false},
		{"SELECT 1; SELECT 2", "", nil, false},
		{"SELECT * FROM t WHERE a = ?", "", nil, false},
		{"SELECT * FROM t /* open", "", nil, false},
		{"", "", nil, false},
	}
	for _, tt := range tests {
		got, args, ok := Normalize(tt.give, []byte("junk"), []any{"junk"})
		if ok != tt.wantOK {
			t.Errorf("Normalize(%q): ok %v, want %v (%q)", tt.give, ok, tt.wantOK, got)
			continue
		}
		if !ok {
			continue
		}
		if string(got) != tt.want {
			t.Errorf("Normalize(%q)\n got %q\nwant %q", tt.give, got, tt.want)
		}
		if !reflect.DeepEqual(args, tt.wantArgs) {
			t.Errorf("Normalize(%q) args %#v, want %#v", tt.give, args, tt.wantArgs)
		}
	}
}

// TestNormalizeInterpolateRoundTrip: writing the values back into the
// normalized text gives a statement that reads the same: the original text
// up to how literals are spelled.
func TestNormalizeInterpolateRoundTrip(t *testing.T) {
	tests := []struct {
		give string
		want string
	}{
		{"SELECT c FROM t WHERE id=5", "SELECT c FROM t WHERE id=5"},
		{"INSERT INTO t VALUES (-5, 'a''b', 'c\\nd')", "INSERT INTO t VALUES (-5, 'a''b', 'c\\nd')"},
		{"SELECT a FROM t WHERE b = 5--5 AND c = a -5 AND l LIKE 'x\\%'", "SELECT a FROM t WHERE b = 5--5 AND c = a -5 AND l LIKE 'x\\\\%'"},
	}
	for _, tt := range tests {
		norm, args, ok := Normalize(tt.give, nil, nil)
		if !ok {
			t.Fatalf("Normalize(%q): not normalized", tt.give)
		}
		got, err := Interpolate(string(norm), args, Backslash)
		if err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("Interpolate(Normalize(%q)) = %q, want %q", tt.give, got, tt.want)
		}
	}
}

func BenchmarkNormalize(b *testing.B) {
	const insert = "INSERT INTO sbtest1 (id, k, c, pad) VALUES (-2147481648, 5012, '83868641912-28773972837-60736120486-75162659906-27563526494-20381887404-41576422241-93426793964-56405065102-33518432330', '67847967377-48000963322-62604785301-91415491898-96926520291')"
	var dst []byte
	var args []any
	b.ReportAllocs()
	for b.Loop() {
		var ok bool
		if dst, args, ok = Normalize(insert, dst, args); !ok {
			b.Fatal("not normalized")
		}
	}
}
