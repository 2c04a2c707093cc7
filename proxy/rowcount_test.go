package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"testing"
)

// TestRowCountDifferential: ROW_COUNT() after each statement is what one
// MariaDB answers: a write's affected rows (summed over data nodes; one
// copy's for a broadcast table; 2 for a row ON DUPLICATE KEY UPDATE
// changed), -1 after a result set or an error, 0 after SET. The proxy
// sent ROW_COUNT() to a pooled connection of the default data source,
// which had not run the write: 0 after a write to a sharded table.
func TestRowCountDifferential(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	statusRefDB(t, e, "rc_ref")
	e.backends[0].Exec(t, "rc_ref", "CREATE TABLE t_dict (code VARCHAR(16) PRIMARY KEY, label VARCHAR(64))")
	ctx := context.Background()
	steps := []struct {
		sql  string
		args []any
	}{
		{"INSERT INTO t_order (order_id, user_id, status) VALUES (1, 0, 'a'), (2, 1, 'a'), (3, 0, 'b'), (4, 1, 'b')", nil},
		{"UPDATE t_order SET status = 'c' WHERE status = 'a'", nil},
		{"UPDATE t_order SET status = 'c' WHERE order_id = 1", nil},
		{"UPDATE t_order SET status = ? WHERE order_id = ?", []any{"d", 2}},
		{"INSERT INTO t_order (order_id, user_id, status) VALUES (3, 0, 'b') ON DUPLICATE KEY UPDATE status = 'z'", nil},
		{"INSERT INTO t_dict (code, label) VALUES ('k', 'v'), ('l', 'w')", nil},
		{"REPLACE INTO t_dict (code, label) VALUES ('k', 'x')", nil},
		{"DELETE FROM t_order WHERE user_id = 1", nil},
		{"SELECT * FROM t_order", nil},
		{"INSERT INTO t_order (order_id, user_id) VALUES (1, 0)", nil}, // 1062
		{"SET @rc = 1", nil},
		{"BEGIN", nil},
		{"DELETE FROM t_order", nil},
		{"ROLLBACK", nil},
	}
	run := func(c *sql.Conn) []string {
		var out []string
		for _, s := range []string{"DELETE FROM t_order", "DELETE FROM t_dict"} {
			if _, err := c.ExecContext(ctx, s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		for _, st := range steps {
			if st.sql == "SELECT * FROM t_order" {
				queryStrings(t, c, st.sql)
			} else if _, err := c.ExecContext(ctx, st.sql, st.args...); err != nil && errCode(err) != 1062 {
				t.Fatalf("%s: %v", st.sql, err)
			}
			out = append(out, fmt.Sprintf("%s: %q", st.sql, queryStrings(t, c, "SELECT ROW_COUNT(), ROW_COUNT() + 0 AS mixed")))
		}
		return out
	}
	proxy, err := e.open(t).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	ref, err := e.backends[0].Open(t, "rc_ref").Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	got, want := run(proxy), run(ref)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("proxy:   %s\nMariaDB: %s", got[i], want[i])
		}
	}
	if !slices.Equal(got, want) && len(got) != len(want) {
		t.Errorf("proxy %q, MariaDB %q", got, want)
	}
}

// TestBroadcastWriteWarningsOnce: a write to a broadcast table raises its
// warnings once, as the one logical table of one MariaDB does (the OK
// packet already counted one copy's), not once per data source's copy.
func TestBroadcastWriteWarningsOnce(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	statusRefDB(t, e, "bw_ref")
	e.backends[0].Exec(t, "bw_ref", "CREATE TABLE t_dict (code VARCHAR(16) PRIMARY KEY, label VARCHAR(64))")
	ctx := context.Background()
	run := func(c *sql.Conn) []string {
		var out []string
		for _, q := range []string{
			"INSERT IGNORE INTO t_dict (code, label) VALUES ('a', 'x'), ('a', 'y'), ('b', 'z')",
			"INSERT IGNORE INTO t_dict (code, label) VALUES ('d', REPEAT('l', 70))",
			"INSERT INTO t_dict (code, label) VALUES ('c', REPEAT('l', 70)) ON DUPLICATE KEY UPDATE label = 'u'",
		} {
			if _, err := c.ExecContext(ctx, q); err != nil {
				out = append(out, fmt.Sprintf("%s: %d", q, errCode(err)))
			}
			out = append(out, fmt.Sprintf("%s: %q %q", q, queryStrings(t, c, "SHOW WARNINGS"), queryStrings(t, c, "SELECT @@warning_count")))
		}
		return out
	}
	proxy := e.conn(t)
	if _, err := proxy.ExecContext(ctx, "DELETE FROM t_dict"); err != nil {
		t.Fatal(err)
	}
	ref, err := e.backends[0].Open(t, "bw_ref").Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	got, want := run(proxy), run(ref)
	if !slices.Equal(got, want) {
		t.Errorf("proxy:   %q\nMariaDB: %q", got, want)
	}
}
