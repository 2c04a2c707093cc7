package proxy

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"testing"
)

// TestDeleteReturning: DELETE ... RETURNING (MariaDB 10.0.5+, what bun
// sends for a delete with Returning once the server says MariaDB) gives
// the deleted rows as MariaDB does: from one data node, from every data
// node (in data-node order, as a SELECT without ORDER BY: compared as
// sets), qualified by the logical table, as text and prepared, inside a
// transaction that rolls back, and with MariaDB's errors.
func TestDeleteReturning(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS delret_ref", "CREATE DATABASE delret_ref",
		"CREATE TABLE delret_ref.t_order (order_id BIGINT NOT NULL, user_id INT NOT NULL, status VARCHAR(32), PRIMARY KEY (order_id))",
		"CREATE TABLE delret_ref.t_dict (code VARCHAR(16) PRIMARY KEY, label VARCHAR(64))")
	t.Cleanup(func() { e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS delret_ref") })
	ref, err := e.backends[0].Open(t, "delret_ref").Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	c := e.conn(t)
	fill := "INSERT INTO t_order (order_id, user_id, status) VALUES (1, 1, 'a'), (2, 2, 'b'), (3, 3, 'x'), (4, 4, 'x'), (5, 5, 'x'), (6, 6, 'x'), (7, 7, 'g'), (8, 8, 'h'), (9, 1, 'i')"
	dict := "INSERT INTO t_dict (code, label) VALUES ('a', 'A'), ('b', 'B')"
	for _, q := range []string{fill, dict} {
		if _, err := c.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("proxy: %s: %v", q, err)
		}
		if _, err := ref.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("direct: %s: %v", q, err)
		}
	}
	ordered := []string{
		// One data node.
		"DELETE FROM t_order WHERE user_id = 1 AND order_id = 1 RETURNING order_id, status",
		"DELETE FROM t_order WHERE order_id = 2 RETURNING *",
		// Qualified by the logical table: each route names its physical
		// table, whose name the qualifiers must take.
		"DELETE FROM t_order WHERE user_id = 7 RETURNING `t_order`.`order_id`, t_order.status, UPPER(t_order.status) AS up",
		// Nothing deleted: the columns, no rows.
		"DELETE FROM t_order WHERE order_id = 999 RETURNING order_id",
		// Errors, and the connection goes on.
		"DELETE FROM t_order WHERE order_id = 8 RETURNING nosuch",
		"DELETE FROM t_order WHERE order_id = 8 RETURNING",
		// A broadcast table: its rows once, not once a data source.
		"DELETE FROM t_dict WHERE code = 'a' RETURNING code, label",
		"INSERT INTO t_dict (code, label) VALUES ('c', 'C'), ('d', 'D') RETURNING code",
		"SELECT order_id, user_id, status FROM t_order ORDER BY order_id",
		"SELECT code FROM t_dict ORDER BY code",
	}
	if got, want := outcomes(c, ordered), outcomes(ref, ordered); !slices.Equal(got, want) {
		for i := range ordered {
			if got[i] != want[i] {
				t.Errorf("through the proxy: %s\n                 directly: %s", got[i], want[i])
			}
		}
	}
	// Over every data node: the same rows, in data-node order.
	sorted := func(out []string) []string {
		for i, o := range out {
			q, rows, _ := strings.Cut(o, " -> ")
			list := strings.Split(rows, ";")
			slices.Sort(list)
			out[i] = q + " -> " + strings.Join(list, ";")
		}
		return out
	}
	// Inside a transaction that rolls back, then for good.
	inTxn := []string{
		"BEGIN",
		"DELETE FROM t_order WHERE status = 'x' RETURNING order_id, user_id",
		"ROLLBACK",
		"DELETE FROM t_order WHERE status = 'x' RETURNING order_id, user_id",
		"SELECT order_id FROM t_order",
	}
	if got, want := sorted(outcomes(c, inTxn)), sorted(outcomes(ref, inTxn)); !slices.Equal(got, want) {
		for i := range inTxn {
			if got[i] != want[i] {
				t.Errorf("through the proxy: %s\n                 directly: %s", got[i], want[i])
			}
		}
	}
	// Prepared (the binary protocol), over the data nodes of user 1.
	q := "DELETE FROM t_order WHERE user_id = ? RETURNING order_id, status"
	for name, conn := range map[string]*sql.Conn{"proxy": c, "direct": ref} {
		rows, err := conn.QueryContext(context.Background(), q, 1)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := scanStrings(t, rows, q, ","); !slices.Equal(got, []string{"9,i"}) {
			t.Errorf("%s: prepared DELETE ... RETURNING %q", name, got)
		}
	}
}
