package proxy

import (
	"log/slog"
	"strings"
	"testing"
)

// TestDebugLogMasksFailingStatements: at debug level a failing statement
// is logged as its fingerprint with the error's number, and no literal
// of it (nor of the error message) reaches the log.
func TestDebugLogMasksFailingStatements(t *testing.T) {
	var logs lockedBuffer
	e := startEnv(t, envOptions{logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	createTables(t, e)
	db := e.open(t)
	if _, err := db.Exec("INSERT INTO t_order (order_id, user_id, status) VALUES (1, 1, 'hunter2')"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"INSERT INTO t_order (order_id, user_id, status) VALUES (1, 1, 'hunter2')",            // 1062 Duplicate entry '1' ...
		"SELECT * FROM t_order WHERE status = 'hunter2' AND nope = 'hunter2'",                 // 1054
		"INSERT INTO t_order (order_id, user_id, status) VALUES (2, 2, REPEAT('hunter2', 9))", // 1406 Data too long
	} {
		if _, err := db.Exec(q); err == nil {
			t.Fatalf("%s: no error", q)
		}
	}
	out := logs.String()
	if n := strings.Count(out, `msg="statement failed"`); n < 3 {
		t.Fatalf("%d failing statements logged, want 3:\n%s", n, out)
	}
	for _, secret := range []string{"hunter2", "'1'"} {
		if strings.Contains(out, secret) {
			t.Errorf("the debug log holds %s:\n%s", secret, out)
		}
	}
	for _, want := range []string{"error=1062", "error=1054", "error=1406", "fingerprint=\"insert into"} {
		if !strings.Contains(out, want) {
			t.Errorf("the debug log lacks %s:\n%s", want, out)
		}
	}
}

func TestMaskQuoted(t *testing.T) {
	tests := []struct{ give, want string }{
		{"Duplicate entry '1-x' for key 'PRIMARY'", "Duplicate entry '?' for key '?'"},
		{`Unknown column "a" in 'where clause'`, `Unknown column "?" in '?'`},
		{"no quotes", "no quotes"},
		{"unterminated 'abc", "unterminated 'abc"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := maskQuoted(tt.give); got != tt.want {
			t.Errorf("maskQuoted(%q) = %q, want %q", tt.give, got, tt.want)
		}
	}
}
