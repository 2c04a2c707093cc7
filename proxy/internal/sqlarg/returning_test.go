package sqlarg

import "testing"

func TestSplitReturning(t *testing.T) {
	tests := []struct {
		give, base, list string
		ok               bool
	}{
		{"INSERT INTO t (a) VALUES (1) RETURNING a", "INSERT INTO t (a) VALUES (1)", "a", true},
		{"  /* c */ insert into t values (1) returning id, a * 2 AS b;", "/* c */ insert into t values (1)", "id, a * 2 AS b", true},
		{"REPLACE t SET a = 1 RETURNING *", "REPLACE t SET a = 1", "*", true},
		{"INSERT INTO t (a) VALUES ('returning x')", "", "", false},
		{"INSERT INTO t (`returning`) VALUES (1)", "", "", false},
		{"INSERT INTO t (a) SELECT (SELECT 1 returning) FROM u", "", "", false},
		{"INSERT INTO t (a) VALUES (1) -- returning a", "", "", false},
		{"DELETE FROM t WHERE a = 1 RETURNING a, b", "DELETE FROM t WHERE a = 1", "a, b", true},
		{"delete from t where a in (select a from u returning) returning *", "delete from t where a in (select a from u returning)", "*", true},
		{"DELETE FROM t WHERE a = 'returning'", "", "", false},
		{"UPDATE t SET a = 1 RETURNING a", "", "", false},
		{"SELECT returning FROM t", "", "", false},
		{"INSERT INTO t (a) VALUES (1) RETURNING", "", "", false},
		{"INSERT INTO t (a) VALUES (1) returningx", "", "", false},
	}
	for _, tt := range tests {
		base, list, ok := SplitReturning(tt.give)
		if base != tt.base || list != tt.list || ok != tt.ok {
			t.Errorf("SplitReturning(%q) = %q, %q, %v; want %q, %q, %v", tt.give, base, list, ok, tt.base, tt.list, tt.ok)
		}
	}
}
