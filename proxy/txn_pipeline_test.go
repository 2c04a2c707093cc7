package proxy

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-sql-driver/mysql"
)

// poisonIdle leaves the connection ds_0's pool hands out next inside an
// idle XA transaction, where MariaDB refuses START TRANSACTION (1399
// XAER_RMFAIL); the returned function ends it on whichever connection
// holds it.
func poisonIdle(t *testing.T, e *testEnv) (cure func()) {
	t.Helper()
	p := e.srv.current().pools["ds_0"]
	ctx := context.Background()
	bcs, err := p.get(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	bc := bcs[0]
	for _, q := range []string{"XA START 'poison'", "XA END 'poison'"} {
		if _, err := bc.exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// MariaDB flags the idle XA transaction as a transaction, and the
	// pool would drop the connection: the test puts it back as if it
	// had not looked.
	bc.status &^= gomysql.SERVER_STATUS_IN_TRANS
	p.put(bc)
	return func() {
		t.Helper()
		bcs, err := p.get(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		if bcs[0] != bc {
			t.Fatal("the pool no longer hands out the poisoned connection first")
		}
		if _, err := bc.exec("XA ROLLBACK 'poison'"); err != nil {
			t.Fatal(err)
		}
		bc.status &^= gomysql.SERVER_STATUS_IN_TRANS
		p.put(bc)
	}
}

// idleXABeginError is what MariaDB answers START TRANSACTION with inside
// an idle XA transaction (1399), asked on ds_0's database directly.
func idleXABeginError(ctx context.Context, t *testing.T, e *testEnv) error {
	t.Helper()
	ref := refConn(t, e, "ds_0")
	for _, q := range []string{"XA START 'ref'", "XA END 'ref'"} {
		if _, err := ref.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	_, err := ref.ExecContext(ctx, "START TRANSACTION")
	ref.ExecContext(ctx, "XA ROLLBACK 'ref'")
	if errCode(err) != 1399 {
		t.Fatalf("MariaDB answered START TRANSACTION in an idle XA transaction with %v", err)
	}
	return err
}

// TestTransactionPipelinedBegin: a transaction's first read on a data
// source carries its START TRANSACTION in the same write; what the client
// sees is what it saw when START TRANSACTION was a round trip of its own,
// with MariaDB's own errors, and a write never runs behind a START
// TRANSACTION whose answer is not known.
func TestTransactionPipelinedBegin(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	ctx := context.Background()
	c := e.conn(t)
	exec := func(c *sql.Conn, q string, args ...any) {
		t.Helper()
		if _, err := c.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(c, "INSERT INTO t_order (order_id, user_id, status) VALUES (1, 0, 'a'), (2, 1, 'b'), (3, 0, 'c')")
	p0 := e.srv.current().pools["ds_0"]
	wantErr := idleXABeginError(ctx, t, e)
	sameErr := func(what string, got error) {
		t.Helper()
		var g, w *mysql.MySQLError
		if !errors.As(got, &g) || !errors.As(wantErr, &w) || g.Number != w.Number || g.Message != w.Message || g.SQLState != w.SQLState {
			t.Errorf("%s: proxy %v, want MariaDB's %v", what, got, wantErr)
		}
	}

	t.Run("refused before a read", func(t *testing.T) {
		cure := poisonIdle(t, e)
		exec(c, "BEGIN")
		rows, err := c.QueryContext(ctx, "SELECT status FROM t_order WHERE order_id = 1 AND user_id = 0")
		if err == nil {
			rows.Close()
		}
		sameErr("the read behind a refused START TRANSACTION", err)
		if st := p0.stats(); st.InUse != 0 {
			t.Errorf("after the refusal ds_0 has %d connections in use, want 0 (given back)", st.InUse)
		}
		cure()
		// The same transaction goes on on a connection that opens it.
		if got := queryStrings(t, c, "SELECT status FROM t_order WHERE order_id = 1 AND user_id = 0"); len(got) != 1 || got[0] != "a" {
			t.Errorf("the read after the refusal returned %q", got)
		}
		exec(c, "UPDATE t_order SET status = 'a2' WHERE order_id = 1 AND user_id = 0")
		other := e.conn(t)
		if got := queryStrings(t, other, "SELECT status FROM t_order WHERE order_id = 1 AND user_id = 0"); len(got) != 1 || got[0] != "a" {
			t.Errorf("another session sees %q before COMMIT: the update ran outside a transaction", got)
		}
		exec(c, "COMMIT")
		if got := queryStrings(t, other, "SELECT status FROM t_order WHERE order_id = 1 AND user_id = 0"); len(got) != 1 || got[0] != "a2" {
			t.Errorf("after COMMIT another session sees %q, want a2", got)
		}
	})

	t.Run("refused before a write", func(t *testing.T) {
		cure := poisonIdle(t, e)
		exec(c, "BEGIN")
		_, err := c.ExecContext(ctx, "UPDATE t_order SET status = 'w' WHERE order_id = 3 AND user_id = 0")
		sameErr("a write behind a refused START TRANSACTION", err)
		cure()
		exec(c, "ROLLBACK")
		var got string
		if err := e.backend(t, 0).QueryRow("SELECT status FROM t_order_1 WHERE order_id = 3").Scan(&got); err != nil || got != "c" {
			t.Errorf("the write refused with its START TRANSACTION changed the row: status %q (%v), want c", got, err)
		}
	})

	t.Run("statement error after a pipelined START TRANSACTION", func(t *testing.T) {
		exec(c, "BEGIN")
		_, err := c.ExecContext(ctx, "SELECT no_such_column FROM t_order WHERE order_id = 1 AND user_id = 0")
		_, refErr := refConn(t, e, "ds_0").ExecContext(ctx, "SELECT no_such_column FROM t_order_1 WHERE order_id = 1")
		if errCode(err) == 0 || errCode(err) != errCode(refErr) {
			t.Errorf("proxy %v, MariaDB %v", err, refErr)
		}
		// The part is open: its snapshot holds against a later commit.
		if got := queryStrings(t, c, "SELECT status FROM t_order WHERE order_id = 3 AND user_id = 0"); len(got) != 1 || got[0] != "c" {
			t.Fatalf("read after the error: %q", got)
		}
		exec(e.conn(t), "UPDATE t_order SET status = 'c2' WHERE order_id = 3 AND user_id = 0")
		if got := queryStrings(t, c, "SELECT status FROM t_order WHERE order_id = 3 AND user_id = 0"); len(got) != 1 || got[0] != "c" {
			t.Errorf("inside the transaction a later commit shows: %q, want c (its snapshot)", got)
		}
		exec(c, "COMMIT")
		if st := p0.stats(); st.InUse != 0 {
			t.Errorf("after COMMIT ds_0 has %d connections in use", st.InUse)
		}
	})

	t.Run("prepared read opens the transaction", func(t *testing.T) {
		db := e.open(t, "interpolateParams=false")
		db.SetMaxOpenConns(1)
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var status string
		if err := tx.QueryRowContext(ctx, "SELECT status FROM t_order WHERE order_id = ? AND user_id = ?", 2, 1).Scan(&status); err != nil || status != "b" {
			t.Fatalf("prepared read: %q, %v", status, err)
		}
		var inTxn int
		if err := tx.QueryRowContext(ctx, "SELECT @@in_transaction FROM t_order WHERE order_id = ? AND user_id = ?", 2, 1).Scan(&inTxn); err != nil || inTxn != 1 {
			t.Errorf("ds_1's @@in_transaction = %d (%v), want 1", inTxn, err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestTransactionCommitOrder: the COMMITs of parts that only read go out
// together with the part before them, never before a part that wrote
// commits, so a failed commit leaves what committing one after the other
// left.
func TestTransactionCommitOrder(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	ctx := context.Background()
	c := e.conn(t)
	exec := func(c *sql.Conn, q string, args ...any) {
		t.Helper()
		if _, err := c.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(c, "INSERT INTO t_order (order_id, user_id, status) VALUES (1, 0, 'a'), (2, 1, 'b')")
	killPart := func(user int) {
		t.Helper()
		var id int64
		if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID() FROM t_order WHERE order_id = ? AND user_id = ?", user+1, user).Scan(&id); err != nil {
			t.Fatal(err)
		}
		if _, err := e.backend(t, user).Exec(fmt.Sprintf("KILL %d", id)); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("read-only over two data sources", func(t *testing.T) {
		exec(c, "BEGIN")
		queryStrings(t, c, "SELECT status FROM t_order WHERE order_id = 1 AND user_id = 0")
		queryStrings(t, c, "SELECT status FROM t_order WHERE order_id = 2 AND user_id = 1")
		exec(c, "COMMIT")
		for _, ds := range []string{"ds_0", "ds_1"} {
			if st := e.srv.current().pools[ds].stats(); st.InUse != 0 {
				t.Errorf("after COMMIT %s has %d connections in use", ds, st.InUse)
			}
		}
	})

	t.Run("a read-only part that fails to commit before a part that wrote", func(t *testing.T) {
		exec(c, "BEGIN")
		queryStrings(t, c, "SELECT status FROM t_order WHERE order_id = 1 AND user_id = 0") // ds_0 joins first, reads
		exec(c, "INSERT INTO t_order (order_id, user_id) VALUES (11, 1)")                   // ds_1 writes
		killPart(0)
		if _, err := c.ExecContext(ctx, "COMMIT"); err == nil {
			t.Fatal("COMMIT succeeded with ds_0's connection killed")
		}
		if n := countOrders(t, e, 11); n != 0 {
			t.Error("ds_1's write committed although ds_0, before it, failed to commit")
		}
	})

	t.Run("a read-only part that fails to commit after a part that wrote", func(t *testing.T) {
		c = e.conn(t)
		exec(c, "BEGIN")
		exec(c, "INSERT INTO t_order (order_id, user_id) VALUES (12, 0)")                   // ds_0 writes first
		queryStrings(t, c, "SELECT status FROM t_order WHERE order_id = 2 AND user_id = 1") // ds_1 reads
		killPart(1)
		_, err := c.ExecContext(ctx, "COMMIT")
		if err == nil {
			t.Fatal("COMMIT succeeded with ds_1's connection killed")
		}
		if n := countOrders(t, e, 12); n != 1 {
			t.Errorf("ds_0's write: %d rows, want 1 (it committed before ds_1 failed; the error says so: %v)", n, err)
		}
	})
}
