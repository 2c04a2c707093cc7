package proxy

import (
	"context"
	"database/sql"
	"testing"
)

// queryOne returns the first column of the first row, "NULL" for NULL.
func queryOne(t *testing.T, c interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, q string) string {
	t.Helper()
	var v sql.NullString
	if err := c.QueryRowContext(context.Background(), q).Scan(&v); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if !v.Valid {
		return "NULL"
	}
	return v.String
}

func inUse(e *testEnv) int {
	n := 0
	for _, st := range e.srv.PoolStats() {
		n += st.InUse
	}
	return n
}

// TestSessionStateStaysWithItsSession: temporary tables, named locks and
// variables assigned inside statements live on one backend connection;
// the session that made them keeps that connection, no other session sees
// them, and the connection is reset before it serves anyone else.
func TestSessionStateStaysWithItsSession(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	ctx := context.Background()

	t.Run("temporary table", func(t *testing.T) {
		a, b := e.conn(t), e.conn(t)
		mustExec(t, a, "CREATE TEMPORARY TABLE tmp_leak (id INT PRIMARY KEY, v VARCHAR(8))")
		mustExec(t, a, "INSERT INTO tmp_leak VALUES (1, 'mine')")
		for range 3 { // several statements, several chances to change connection
			if got := queryOne(t, a, "SELECT v FROM tmp_leak WHERE id = 1"); got != "mine" {
				t.Fatalf("the session reads %q from its own temporary table", got)
			}
		}
		_, err := b.ExecContext(ctx, "SELECT * FROM tmp_leak")
		if errCode(err) != 1146 {
			t.Errorf("another session reading the temporary table: got %v, want 1146", err)
		}
		// The other session can have its own under the same name.
		mustExec(t, b, "CREATE TEMPORARY TABLE tmp_leak (id INT PRIMARY KEY, v VARCHAR(8))")
		mustExec(t, b, "INSERT INTO tmp_leak VALUES (1, 'theirs')")
		if got := queryOne(t, a, "SELECT v FROM tmp_leak WHERE id = 1"); got != "mine" {
			t.Errorf("after the other session made its own: %q", got)
		}
		// Dropping the last temporary table gives the connection back.
		mustExec(t, b, "DROP TEMPORARY TABLE tmp_leak")
		mustExec(t, a, "DROP TABLE tmp_leak")
		if n := inUse(e); n != 0 {
			t.Errorf("%d backend connections still in use after the temporary tables were dropped", n)
		}
		_, err = a.ExecContext(ctx, "SELECT * FROM tmp_leak")
		if errCode(err) != 1146 {
			t.Errorf("after DROP: got %v, want 1146", err)
		}
	})

	t.Run("temporary table inside a transaction does not commit it", func(t *testing.T) {
		a := e.conn(t)
		mustExec(t, a, "BEGIN")
		mustExec(t, a, "INSERT INTO t_order (order_id, user_id) VALUES (700, 0)")
		mustExec(t, a, "CREATE TEMPORARY TABLE tmp_tx (id INT)")
		mustExec(t, a, "INSERT INTO tmp_tx VALUES (1)")
		mustExec(t, a, "ROLLBACK")
		if n := countOrders(t, e, 700); n != 0 {
			t.Error("CREATE TEMPORARY TABLE committed the transaction")
		}
		if got := queryOne(t, a, "SELECT COUNT(*) FROM tmp_tx"); got != "0" {
			t.Errorf("the temporary table holds %s rows after ROLLBACK, want 0", got)
		}
	})

	t.Run("temporary table with a sharded or broadcast name", func(t *testing.T) {
		a := e.conn(t)
		for _, q := range []string{
			"CREATE TEMPORARY TABLE t_order (id INT)",
			"CREATE TEMPORARY TABLE t_dict (id INT)",
			"CREATE TEMPORARY TABLE t_order_0 (id INT)",
		} {
			if _, err := a.ExecContext(ctx, q); errCode(err) != 1235 {
				t.Errorf("%s: got %v, want 1235", q, err)
			}
		}
	})

	t.Run("named lock", func(t *testing.T) {
		db := e.open(t)
		a, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		b := e.conn(t)
		if got := queryOne(t, a, "SELECT GET_LOCK('shardflake_x', 0)"); got != "1" {
			t.Fatalf("GET_LOCK in the first session: %s", got)
		}
		if got := queryOne(t, b, "SELECT GET_LOCK('shardflake_x', 0)"); got != "0" {
			t.Errorf("GET_LOCK of a lock another session holds: %s, want 0", got)
		}
		if got := queryOne(t, a, "SELECT RELEASE_LOCK('shardflake_x')"); got != "1" {
			t.Errorf("RELEASE_LOCK by its holder: %s, want 1", got)
		}
		// Taken again, then the session ends: the lock goes with it.
		queryOne(t, a, "SELECT GET_LOCK('shardflake_x', 0)")
		a.Raw(func(dc any) error { return dc.(interface{ Close() error }).Close() })
		a.Close()
		waitFor(t, func() bool { return inUse(e) <= 1 })
		if got := queryOne(t, e.backend(t, 0), "SELECT IS_FREE_LOCK('shardflake_x')"); got != "1" {
			t.Errorf("the lock of a session that ended is still held (IS_FREE_LOCK %s)", got)
		}
		if got := queryOne(t, b, "SELECT GET_LOCK('shardflake_x', 0)"); got != "1" {
			t.Errorf("GET_LOCK after the holder left: %s, want 1", got)
		}
		queryOne(t, b, "SELECT RELEASE_ALL_LOCKS()")
		if n := inUse(e); n != 0 {
			t.Errorf("%d backend connections in use after RELEASE_ALL_LOCKS", n)
		}
	})

	t.Run("variable assigned in a statement", func(t *testing.T) {
		a, b := e.conn(t), e.conn(t)
		queryOne(t, a, "SELECT @shardflake_v := 7")
		if got := queryOne(t, a, "SELECT @shardflake_v"); got != "7" {
			t.Errorf("the session reads its variable as %s", got)
		}
		if got := queryOne(t, b, "SELECT @shardflake_v"); got != "NULL" {
			t.Errorf("another session reads %s, want NULL", got)
		}
	})

	t.Run("a reset connection has no state left", func(t *testing.T) {
		// Every session above has ended or will; new sessions on every
		// pooled connection find none of it.
		db := e.open(t)
		db.SetMaxIdleConns(0)
		for range 8 {
			c, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.ExecContext(ctx, "SELECT * FROM tmp_leak"); errCode(err) != 1146 {
				t.Errorf("a new session reads another's temporary table: %v", err)
			}
			if got := queryOne(t, c, "SELECT @shardflake_v"); got != "NULL" {
				t.Errorf("a new session reads another's variable: %s", got)
			}
			c.Close()
		}
	})
}
