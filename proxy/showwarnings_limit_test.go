package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
)

// TestShowWarningsLimit: SHOW WARNINGS and SHOW ERRORS with MariaDB's
// LIMIT forms (which the SQL parser does not read) list the same
// conditions as MariaDB, and leave them for the next SHOW WARNINGS; so do
// they prepared, which the proxy answered with the parser's 1064.
func TestShowWarningsLimit(t *testing.T) {
	e := startEnv(t, envOptions{})
	for _, prepared := range []bool{false, true} {
		t.Run(fmt.Sprintf("prepared=%v", prepared), func(t *testing.T) {
			showWarningsLimit(t, e, prepared)
		})
	}
}

// showWarningsLimit runs TestShowWarningsLimit's steps, the SHOWs as
// text or as prepared statements (COM_STMT_PREPARE, EXECUTE, CLOSE).
func showWarningsLimit(t *testing.T, e *testEnv, prepared bool) {
	ctx := context.Background()
	proxy, direct := oneConn(t, e.open(t)), oneConn(t, e.backends[0].Open(t, ""))
	answer := func(c *sql.Conn, q string) string {
		if !prepared {
			return answerOf(ctx, c, q)
		}
		st, err := c.PrepareContext(ctx, q)
		if err != nil {
			return "error: " + err.Error()
		}
		defer st.Close()
		return rowsAnswer(st.QueryContext(ctx))
	}
	const warn = "SELECT CAST('a1' AS SIGNED), CAST('b2' AS SIGNED), CAST('c3' AS SIGNED), CAST('d4' AS SIGNED)"
	for _, step := range []struct{ before, q string }{
		{warn, "SHOW WARNINGS LIMIT 2"},
		{"", "SHOW WARNINGS LIMIT 1, 2"},
		{"", "SHOW WARNINGS LIMIT 2 OFFSET 3"},
		{"", "SHOW WARNINGS LIMIT 0"},
		{"", "show warnings limit 9 offset 4"},
		{"", "SHOW WARNINGS /* all of them, still */ LIMIT 10"},
		{"", "SHOW ERRORS LIMIT 1"},
		{"SELECT nosuch FROM DUAL", "SHOW ERRORS LIMIT 1"},
		{"", "SHOW ERRORS LIMIT 1, 1"},
	} {
		for _, c := range []*sql.Conn{proxy, direct} {
			if step.before != "" {
				rows, err := c.QueryContext(ctx, step.before)
				if err == nil {
					rows.Close()
				}
			}
		}
		got, want := answer(proxy, step.q), answer(direct, step.q)
		if got != want {
			t.Errorf("%s after %q:\n got %s\nwant %s", step.q, step.before, got, want)
		}
	}
}
