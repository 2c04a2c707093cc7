package proxy

import (
	"context"
	"database/sql"
	"slices"
	"strconv"
	"testing"
)

// TestUpdateShardingColumn: an UPDATE that assigns a sharding column (as
// ORMs' save() does, writing every column) runs when no row moves, and
// moves the row to its new data node when one does, inside the
// statement's atomicity and the client's transaction; the affected rows
// and the table's contents are MariaDB's, compared with one plain table.
func TestUpdateShardingColumn(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS keymove_ref", "CREATE DATABASE keymove_ref",
		"CREATE TABLE keymove_ref.t_order (order_id BIGINT NOT NULL, user_id INT NOT NULL, status VARCHAR(32), PRIMARY KEY (order_id))")
	refDB := e.backends[0].Open(t, "keymove_ref")
	ref, err := refDB.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	c := e.conn(t)
	both := func(q string) {
		t.Helper()
		got, want := affectedOrError(c, q), affectedOrError(ref, q)
		if got != want {
			t.Errorf("%s: through the proxy %s, directly %s", q, got, want)
		}
	}
	same := func(step string) {
		t.Helper()
		q := "SELECT order_id, user_id, status FROM t_order ORDER BY order_id"
		if got, want := queryStrings(t, c, q), queryStrings(t, ref, q); !slices.Equal(got, want) {
			t.Errorf("%s: rows through the proxy %q, directly %q", step, got, want)
		}
	}
	both("INSERT INTO t_order (order_id, user_id, status) VALUES (10, 1, 'new'), (12, 2, 'other')")
	checks := []struct {
		sql  string
		want string // where order 10 (11 once renumbered) is afterwards
		key  int64
	}{
		// ORM save() by primary key: the WHERE reaches both data sources,
		// the row stays.
		{"UPDATE t_order SET user_id = 1, status = 'saved' WHERE order_id = 10", "ds_1.t_order_0", 0},
		// The new value routes to the one data node the WHERE reaches.
		{"UPDATE t_order SET user_id = 3, status = 'stays' WHERE user_id = 1 AND order_id = 10", "ds_1.t_order_0", 0},
		// Moves: user 4 lives on ds_0.
		{"UPDATE t_order SET user_id = 4, status = 'moved' WHERE order_id = 10", "ds_0.t_order_0", 0},
		// Moves by an expression, back to ds_1.
		{"UPDATE t_order SET user_id = user_id + 1 WHERE order_id = 10", "ds_1.t_order_0", 0},
		// Matches nothing.
		{"UPDATE t_order SET user_id = 8 WHERE order_id = 99", "ds_1.t_order_0", 0},
		// Assigning the same value: matched, not changed.
		{"UPDATE t_order SET user_id = 5 WHERE order_id = 10", "ds_1.t_order_0", 0},
		// The table's sharding column is the primary key: the row moves
		// to t_order_1 under its new key, and back.
		{"UPDATE t_order SET order_id = 11, status = 'renumbered' WHERE order_id = 10", "ds_1.t_order_1", 11},
		{"UPDATE t_order SET order_id = 10 WHERE user_id = 5 AND order_id = 11", "ds_1.t_order_0", 10},
	}
	for _, tt := range checks {
		both(tt.sql)
		same(tt.sql)
		key := tt.key
		if key == 0 {
			key = 10
		}
		if got := landed(t, e); got[key] != tt.want || got[12] != "ds_0.t_order_0" || len(got) != 2 {
			t.Errorf("%s: rows are on %v, want order %d on %s", tt.sql, got, key, tt.want)
		}
	}

	// Inside a transaction: the move is seen by the transaction and
	// undone by its ROLLBACK.
	for _, q := range []string{"BEGIN", "UPDATE t_order SET user_id = 6, status = 'in txn' WHERE order_id = 10"} {
		both(q)
	}
	same("moved inside a transaction")
	if got := landed(t, e)[10]; got != "ds_1.t_order_0" {
		// Not committed: the row is still visible where it was to other
		// sessions (landed reads with its own connections).
		t.Errorf("before COMMIT, another session sees order 10 on %s", got)
	}
	both("ROLLBACK")
	same("after ROLLBACK")
	if got := landed(t, e)[10]; got != "ds_1.t_order_0" {
		t.Errorf("after ROLLBACK order 10 is on %s", got)
	}
	for _, q := range []string{"BEGIN", "UPDATE t_order SET user_id = 6, status = 'committed' WHERE order_id = 10", "COMMIT"} {
		both(q)
	}
	same("moved and committed")
	if got := landed(t, e)[10]; got != "ds_0.t_order_0" {
		t.Errorf("after COMMIT order 10 is on %s", got)
	}

	// A move that fails (the new data node holds the primary key
	// already) undoes the whole statement; the connection stays usable.
	if _, err := e.backend(t, 1).Exec("INSERT INTO t_order_0 (order_id, user_id, status) VALUES (10, 7, 'stray copy')"); err != nil {
		t.Fatal(err)
	}
	_, err = c.ExecContext(context.Background(), "UPDATE t_order SET user_id = 7, status = 'dup' WHERE user_id = 6 AND order_id = 10")
	if errCode(err) != 1062 {
		t.Errorf("moving onto an existing key: %v, want 1062", err)
	}
	if _, err := e.backend(t, 1).Exec("DELETE FROM t_order_0 WHERE order_id = 10"); err != nil {
		t.Fatal(err)
	}
	same("after the failed move")
	if got := landed(t, e)[10]; got != "ds_0.t_order_0" {
		t.Errorf("after the failed move order 10 is on %s", got)
	}
}

// TestUpdateShardingColumnMoveOff: with server.moveUpdatedRows false an
// UPDATE whose row would move is refused with 1235 and changes nothing;
// one whose rows stay runs.
func TestUpdateShardingColumnMoveOff(t *testing.T) {
	e := startEnv(t, envOptions{server: "moveUpdatedRows: false"})
	createTables(t, e)
	c := e.conn(t)
	mustExec(t, c, "INSERT INTO t_order (order_id, user_id, status) VALUES (10, 1, 'new')")
	_, err := c.ExecContext(context.Background(), "UPDATE t_order SET user_id = 2, status = 'moved' WHERE order_id = 10")
	if errCode(err) != 1235 {
		t.Errorf("a move with moving off: %v, want 1235", err)
	}
	if got := queryStrings(t, c, "SELECT user_id, status FROM t_order"); !slices.Equal(got, []string{"1,new"}) {
		t.Errorf("after the refused move: %q", got)
	}
	mustExec(t, c, "UPDATE t_order SET user_id = 3, status = 'stays' WHERE order_id = 10")
	if got := queryStrings(t, c, "SELECT user_id, status FROM t_order"); !slices.Equal(got, []string{"3,stays"}) {
		t.Errorf("after the UPDATE that stays: %q", got)
	}
	if got := landed(t, e)[10]; got != "ds_1.t_order_0" {
		t.Errorf("order 10 is on %s", got)
	}
}

// affectedOrError runs q and returns its affected rows or error code.
func affectedOrError(c *sql.Conn, q string) string {
	res, err := c.ExecContext(context.Background(), q)
	if err != nil {
		return "error " + strconv.Itoa(int(errCode(err)))
	}
	n, _ := res.RowsAffected()
	return "affected " + strconv.FormatInt(n, 10)
}
