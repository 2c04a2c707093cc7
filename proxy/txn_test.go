package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
)

// countOrders counts t_order rows as the backends hold them, committed.
func countOrders(t *testing.T, e *testEnv, ids ...int64) int {
	t.Helper()
	return len(filterIDs(landed(t, e), ids))
}

func filterIDs(where map[int64]string, ids []int64) []int64 {
	var out []int64
	for _, id := range ids {
		if _, ok := where[id]; ok {
			out = append(out, id)
		}
	}
	return out
}

func TestTransactions(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	ctx := context.Background()
	c := e.conn(t)
	other := e.conn(t)
	exec := func(c *sql.Conn, q string, args ...any) {
		t.Helper()
		if _, err := c.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	t.Run("commit over two data sources, own writes visible", func(t *testing.T) {
		exec(c, "BEGIN")
		exec(c, "INSERT INTO t_order (order_id, user_id) VALUES (1, 0), (2, 1)") // ds_0 and ds_1
		if n := len(queryInts(t, c, "SELECT order_id FROM t_order WHERE order_id IN (1, 2)")); n != 2 {
			t.Errorf("inside the transaction: %d of its rows visible, want 2", n)
		}
		if n := len(queryInts(t, other, "SELECT order_id FROM t_order WHERE order_id IN (1, 2)")); n != 0 {
			t.Errorf("another connection sees %d uncommitted rows", n)
		}
		if n := countOrders(t, e, 1, 2); n != 0 {
			t.Errorf("backends hold %d uncommitted rows", n)
		}
		exec(c, "COMMIT")
		if n := countOrders(t, e, 1, 2); n != 2 {
			t.Errorf("after COMMIT the backends hold %d rows, want 2", n)
		}
	})

	t.Run("rollback", func(t *testing.T) {
		exec(c, "START TRANSACTION")
		exec(c, "INSERT INTO t_order (order_id, user_id) VALUES (3, 0), (4, 1)")
		exec(c, "UPDATE t_order SET status = 'changed' WHERE order_id IN (1, 2)")
		exec(c, "ROLLBACK")
		if n := countOrders(t, e, 3, 4); n != 0 {
			t.Errorf("after ROLLBACK %d rows remain", n)
		}
		if got := queryStrings(t, other, "SELECT status FROM t_order WHERE order_id = 1 AND user_id = 0"); len(got) != 1 || got[0] != "NULL" {
			t.Errorf("after ROLLBACK the update stayed: %q", got)
		}
	})

	t.Run("autocommit=0", func(t *testing.T) {
		exec(c, "SET autocommit = 0")
		var ac int
		c.QueryRowContext(ctx, "SELECT @@autocommit").Scan(&ac)
		if ac != 0 {
			t.Errorf("@@autocommit = %d after SET autocommit = 0", ac)
		}
		exec(c, "INSERT INTO t_order (order_id, user_id) VALUES (5, 0)")
		if n := countOrders(t, e, 5); n != 0 {
			t.Error("autocommit=0: row committed without COMMIT")
		}
		exec(c, "COMMIT")
		if n := countOrders(t, e, 5); n != 1 {
			t.Error("autocommit=0: COMMIT did not commit")
		}
		exec(c, "INSERT INTO t_order (order_id, user_id) VALUES (6, 1)")
		exec(c, "SET autocommit = 1") // commits, as in MySQL
		if n := countOrders(t, e, 6); n != 1 {
			t.Error("SET autocommit = 1 did not commit the open transaction")
		}
	})

	t.Run("DDL commits first", func(t *testing.T) {
		exec(c, "BEGIN")
		exec(c, "INSERT INTO t_order (order_id, user_id) VALUES (7, 0)")
		exec(c, "CREATE TABLE IF NOT EXISTS t_plain (id INT PRIMARY KEY)")
		if n := countOrders(t, e, 7); n != 1 {
			t.Error("DDL inside a transaction did not commit it")
		}
	})

	// CREATE DATABASE of the logical schema, which the proxy answers
	// itself (1007, a note with IF NOT EXISTS), commits first as MariaDB's
	// does, whether or not it then fails: compared with the same
	// statements on a data source's server directly.
	t.Run("CREATE DATABASE of the logical schema commits first", func(t *testing.T) {
		var db string
		if err := c.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&db); err != nil {
			t.Fatal(err)
		}
		b := e.backend(t, 0)
		d, err := b.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		exec(d, "CREATE TABLE IF NOT EXISTS implicit_ref (id INT PRIMARY KEY)")
		var refDB string
		if err := d.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&refDB); err != nil {
			t.Fatal(err)
		}
		for i, stmt := range []string{"CREATE DATABASE IF NOT EXISTS %s", "CREATE DATABASE %s"} {
			id := int64(20 + i)
			exec(d, "BEGIN")
			exec(d, "INSERT INTO implicit_ref VALUES (?)", id)
			_, refErr := d.ExecContext(ctx, fmt.Sprintf(stmt, refDB))
			exec(d, "ROLLBACK")
			var want int
			if err := d.QueryRowContext(ctx, "SELECT COUNT(*) FROM implicit_ref WHERE id = ?", id).Scan(&want); err != nil {
				t.Fatal(err)
			}

			exec(c, "BEGIN")
			exec(c, "INSERT INTO t_order (order_id, user_id) VALUES (?, 0)", id)
			_, err := c.ExecContext(ctx, fmt.Sprintf(stmt, db))
			exec(c, "ROLLBACK")
			if errCode(err) != errCode(refErr) {
				t.Errorf("%s: proxy %v, MariaDB %v", stmt, err, refErr)
			}
			if got := countOrders(t, e, id); got != want {
				t.Errorf("%s inside a transaction, then ROLLBACK: %d rows kept, MariaDB keeps %d", stmt, got, want)
			}
		}
	})

	t.Run("a lost backend connection ends the transaction and the client connection", func(t *testing.T) {
		c3, err := e.open(t).Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c3.Close()
		exec(c3, "BEGIN")
		exec(c3, "INSERT INTO t_order (order_id, user_id) VALUES (10, 0), (11, 1)") // ds_0 and ds_1
		// ds_1's server drops the connection that holds the transaction.
		b := e.backend(t, 1)
		var tid int64
		if err := b.QueryRowContext(ctx, "SELECT trx_mysql_thread_id FROM information_schema.INNODB_TRX").Scan(&tid); err != nil {
			t.Fatalf("the transaction on ds_1: %v", err)
		}
		if _, err := b.ExecContext(ctx, fmt.Sprintf("KILL %d", tid)); err != nil {
			t.Fatal(err)
		}
		if _, err := c3.ExecContext(ctx, "UPDATE t_order SET status = 'lost' WHERE order_id = 11 AND user_id = 1"); err == nil {
			t.Fatal("a statement on the lost connection succeeded")
		}
		// Told OK here, an application would believe both rows committed.
		if _, err := c3.ExecContext(ctx, "COMMIT"); err == nil {
			t.Error("COMMIT after the lost connection answered OK")
		}
		if n := countOrders(t, e, 10, 11); n != 0 {
			t.Errorf("%d rows of the broken transaction committed (ds_0's part must be rolled back)", n)
		}
		// A new connection works.
		if got := queryInts(t, e.conn(t), "SELECT COUNT(*) FROM t_order WHERE order_id IN (10, 11)"); len(got) != 1 || got[0] != 0 {
			t.Errorf("a new connection counts %v rows, want 0", got)
		}
	})

	t.Run("connection close rolls back", func(t *testing.T) {
		c2, err := e.open(t).Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		exec(c2, "BEGIN")
		exec(c2, "INSERT INTO t_order (order_id, user_id) VALUES (8, 0), (9, 1)")
		c2.Raw(func(dc any) error { return dc.(interface{ Close() error }).Close() })
		c2.Close()
		waitFor(t, func() bool {
			for _, st := range e.srv.PoolStats() {
				if st.InUse != 0 {
					return false
				}
			}
			return true
		})
		if n := countOrders(t, e, 8, 9); n != 0 {
			t.Errorf("%d rows of an abandoned transaction committed", n)
		}
	})
}

func TestRejectMultiSourceTransactions(t *testing.T) {
	e := startEnv(t, envOptions{server: "multiSourceTransactions: reject"})
	createTables(t, e)
	ctx := context.Background()
	c := e.conn(t)
	if _, err := c.ExecContext(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ExecContext(ctx, "INSERT INTO t_order (order_id, user_id) VALUES (1, 0)"); err != nil {
		t.Fatal(err)
	}
	_, err := c.ExecContext(ctx, "INSERT INTO t_order (order_id, user_id) VALUES (2, 1)")
	if errCode(err) != 1235 {
		t.Fatalf("write to a second data source: got %v, want 1235", err)
	}
	// The transaction goes on on its data source.
	if _, err := c.ExecContext(ctx, "INSERT INTO t_order (order_id, user_id) VALUES (3, 2)"); err != nil {
		t.Fatalf("same data source after the refusal: %v", err)
	}
	if _, err := c.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	if got := countOrders(t, e, 1, 2, 3); got != 2 {
		t.Errorf("%d rows committed, want 2 (orders 1 and 3)", got)
	}
	// A statement that alone would write to both is refused before it runs.
	c.ExecContext(ctx, "BEGIN")
	_, err = c.ExecContext(ctx, "INSERT INTO t_order (order_id, user_id) VALUES (4, 0), (5, 1)")
	if errCode(err) != 1235 {
		t.Errorf("one statement over two data sources: got %v, want 1235", err)
	}
	c.ExecContext(ctx, "COMMIT")
	if got := countOrders(t, e, 4, 5); got != 0 {
		t.Errorf("the refused statement stored %d rows", got)
	}
	// Outside a transaction nothing is refused.
	if _, err := c.ExecContext(ctx, "INSERT INTO t_order (order_id, user_id) VALUES (6, 0), (7, 1)"); err != nil {
		t.Errorf("autocommit write to two data sources: %v", err)
	}
}
