package proxy

import (
	"context"
	"database/sql"
	"slices"
	"testing"
)

// refConn is a dedicated connection to database db on the environment's
// first backend: the plain MariaDB a test compares the proxy with.
func refConn(t *testing.T, e *testEnv, db string) *sql.Conn {
	t.Helper()
	c, err := e.backends[0].Open(t, db).Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// diffStep runs one statement through the proxy and on the reference,
// and compares the error numbers (0 for success) and then what q, run on
// each connection, returns.
func diffStep(t *testing.T, proxy, ref *sql.Conn, stmt, q string) {
	t.Helper()
	ctx := context.Background()
	_, perr := proxy.ExecContext(ctx, stmt)
	_, rerr := ref.ExecContext(ctx, stmt)
	if errCode(perr) != errCode(rerr) || (perr == nil) != (rerr == nil) {
		t.Errorf("%s: proxy %v, MariaDB %v", stmt, perr, rerr)
	}
	if q == "" {
		return
	}
	got, want := queryStrings(t, proxy, q), queryStrings(t, ref, q)
	if !slices.Equal(got, want) {
		t.Errorf("after %s:\nproxy   %q\nMariaDB %q", stmt, got, want)
	}
}

// diffQuery runs q through the proxy and on the reference and compares
// the error numbers, and the rows when both succeed.
func diffQuery(t *testing.T, who string, proxy, ref *sql.Conn, q string) {
	t.Helper()
	ctx := context.Background()
	read := func(c *sql.Conn) ([]string, error) {
		rows, err := c.QueryContext(ctx, q)
		if err != nil {
			return nil, err
		}
		out := scanStrings(t, rows, q, ",")
		return out, rows.Err()
	}
	got, perr := read(proxy)
	want, rerr := read(ref)
	if errCode(perr) != errCode(rerr) || (perr == nil) != (rerr == nil) {
		t.Errorf("%s: %s: proxy %v, MariaDB %v", who, q, perr, rerr)
		return
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s: %s:\nproxy   %q\nMariaDB %q", who, q, got, want)
	}
}

// TestSavepointMatrix nests savepoints three deep around writes to one
// and to both data sources, with a data source first touched inside the
// savepoints, rolls back to the middle one and to the outer one, releases,
// reuses a name in another case, and names unknown savepoints (1305):
// every step's error and rows compared with one plain MariaDB.
func TestSavepointMatrix(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	statusRefDB(t, e, "sp_ref")
	proxy, ref := e.conn(t), refConn(t, e, "sp_ref")
	const rows = "SELECT order_id, user_id, COALESCE(status, '-') FROM t_order ORDER BY order_id"
	steps := []string{
		"SAVEPOINT outside",             // outside a transaction: accepted, kept nowhere
		"ROLLBACK TO SAVEPOINT outside", // 1305
		"BEGIN",                         //
		"INSERT INTO t_order (order_id, user_id) VALUES (1, 0)", // ds_0
		"SAVEPOINT a",
		"INSERT INTO t_order (order_id, user_id) VALUES (2, 0)", // ds_0
		"SAVEPOINT b",
		"INSERT INTO t_order (order_id, user_id) VALUES (3, 1)", // ds_1 joins inside a and b
		"UPDATE t_order SET status = 'x' WHERE order_id = 1",
		"SAVEPOINT c",
		"INSERT INTO t_order (order_id, user_id) VALUES (4, 1), (5, 0)", // both, one atomic write
		"UPDATE t_order SET status = 'y'",                               // every data node
		"ROLLBACK TO SAVEPOINT b",                                       // the middle one
		"ROLLBACK TO SAVEPOINT c",                                       // gone with it: 1305
		"INSERT INTO t_order (order_id, user_id) VALUES (6, 1)",
		"SAVEPOINT b", // b again, now after 6
		"INSERT INTO t_order (order_id, user_id) VALUES (7, 0), (8, 1)",
		"RELEASE SAVEPOINT b",
		"ROLLBACK TO b", // released: 1305
		"RELEASE SAVEPOINT b",
		"ROLLBACK TO a", // the outer one: undoes ds_1's work, which all came after it
		"SAVEPOINT A",   // replaces a
		"INSERT INTO t_order (order_id, user_id) VALUES (9, 1)",
		"INSERT INTO t_order (order_id, user_id) VALUES (20, 1), (1, 0)", // fails as a whole: 1062
		"ROLLBACK WORK TO SAVEPOINT a",
		"ROLLBACK TO SAVEPOINT nosuch",
		"INSERT INTO t_order (order_id, user_id) VALUES (1, 0)", // duplicate key inside the savepoint
		"INSERT INTO t_order (order_id, user_id) VALUES (10, 1)",
		"COMMIT WORK",
		"ROLLBACK TO a", // the transaction ended: 1305
		"SELECT 1",
		// autocommit=0: a savepoint before the transaction touched any
		// data source.
		"BEGIN WORK",
		"INSERT INTO t_order (order_id, user_id) VALUES (30, 0), (31, 1)",
		"ROLLBACK WORK",
		"SET autocommit = 0",
		"SAVEPOINT s1",
		"INSERT INTO t_order (order_id, user_id) VALUES (11, 0), (12, 1)",
		"SAVEPOINT s2",
		"DELETE FROM t_order WHERE order_id IN (1, 10)",
		"ROLLBACK TO s2",
		"INSERT INTO t_order (order_id, user_id) VALUES (13, 1)",
		"ROLLBACK TO s1",
		"INSERT INTO t_order (order_id, user_id) VALUES (14, 0)",
		"COMMIT",
		"SET autocommit = 1",
	}
	for _, st := range steps {
		diffStep(t, proxy, ref, st, rows)
	}
	other, otherRef := e.conn(t), refConn(t, e, "sp_ref")
	if got, want := queryStrings(t, other, rows), queryStrings(t, otherRef, rows); !slices.Equal(got, want) {
		t.Errorf("committed:\nproxy   %q\nMariaDB %q", got, want)
	}
}
