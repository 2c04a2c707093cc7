package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
)

// TestFoundRows is go-sql-driver's TestFoundRows1 and TestFoundRows2
// through the proxy and on one plain MariaDB: with CLIENT_FOUND_ROWS
// (clientFoundRows=true) an UPDATE reports the rows it matched, without
// it the rows it changed. On an unsharded table and on a sharded one
// whose UPDATE runs on every data node (the counts add up), as text and
// as prepared statements, outside and inside a transaction.
func TestFoundRows(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	statusRefDB(t, e, "fr_ref")
	ctx := context.Background()
	ref := e.backends[0].Open(t, "fr_ref")
	// Other tests list the shared servers' tables.
	t.Cleanup(func() { e.backends[0].Exec(t, "ds_0", "DROP TABLE IF EXISTS t_found") })
	for _, db := range []*sql.DB{e.open(t), ref} {
		for _, q := range []string{
			"DROP TABLE IF EXISTS t_found",
			"CREATE TABLE t_found (id INT NOT NULL, data INT NOT NULL)",
		} {
			if _, err := db.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	// The environment is shared: leave no table behind for the tests that
	// list the default data source's tables.
	cleanup := e.open(t)
	t.Cleanup(func() { cleanup.Exec("DROP TABLE IF EXISTS t_found") })
	reset := []string{
		"DELETE FROM t_found",
		"INSERT INTO t_found (id, data) VALUES (0, 0), (0, 0), (1, 0), (1, 0), (1, 1)",
		"DELETE FROM t_order",
		"INSERT INTO t_order (order_id, user_id, status) VALUES (1, 0, 'a'), (2, 1, 'a'), (3, 0, 'b'), (4, 1, 'b'), (5, 1, 'a')",
	}
	updates := []struct {
		sql  string
		args []any
	}{
		{"UPDATE t_found SET data = 1 WHERE id = 0", nil},
		{"UPDATE t_found SET data = 1 WHERE id = 1", nil},
		{"UPDATE t_found SET data = ? WHERE id = ?", []any{1, 1}},
		{"UPDATE t_order SET status = 'a' WHERE status <> 'c'", nil},
		{"UPDATE t_order SET status = ? WHERE status <> ?", []any{"a", "c"}},
		{"UPDATE t_order SET status = 'b' WHERE order_id IN (1, 2, 3)", nil},
		{"UPDATE t_order SET status = ? WHERE order_id = ?", []any{"b", 3}},
		{"INSERT INTO t_order (order_id, user_id, status) VALUES (3, 0, 'b') ON DUPLICATE KEY UPDATE status = 'b'", nil},
	}
	for _, found := range []bool{false, true} {
		for _, inTxn := range []bool{false, true} {
			param := fmt.Sprintf("clientFoundRows=%v", found)
			proxy := e.conn(t, param)
			direct, err := sql.Open("mysql", e.backends[0].DSN("fr_ref")+"&"+param)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { direct.Close() })
			directConn, err := direct.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { directConn.Close() })
			for _, u := range updates {
				for _, c := range []*sql.Conn{proxy, directConn} {
					for _, q := range reset {
						if _, err := c.ExecContext(ctx, q); err != nil {
							t.Fatalf("%s: %v", q, err)
						}
					}
					if inTxn {
						if _, err := c.ExecContext(ctx, "BEGIN"); err != nil {
							t.Fatal(err)
						}
					}
				}
				got := affected(t, proxy, u.sql, u.args)
				want := affected(t, directConn, u.sql, u.args)
				if got != want {
					t.Errorf("%s %v (%s, in a transaction: %v): proxy %d affected rows, MariaDB %d", u.sql, u.args, param, inTxn, got, want)
				}
				for _, c := range []*sql.Conn{proxy, directConn} {
					if inTxn {
						if _, err := c.ExecContext(ctx, "COMMIT"); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
		}
	}
}

func affected(t *testing.T, c *sql.Conn, q string, args []any) int64 {
	t.Helper()
	res, err := c.ExecContext(context.Background(), q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		t.Fatal(err)
	}
	return n
}
