package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"
)

// cancelOutcome is what a client sees of a statement cancelled inside a
// transaction, and of the transaction afterwards.
type cancelOutcome struct {
	code          uint16 // the cancelled statement's error number
	inTransaction string // @@in_transaction after it
	visible       string // the transaction's earlier writes it still sees
	err           string // the cancelled statement's error, not compared
}

func (o cancelOutcome) String() string {
	return fmt.Sprintf("error %d, @@in_transaction %s, earlier writes seen %s (%s)", o.code, o.inTransaction, o.visible, o.err)
}

// cancelInTxn runs slow on c inside the transaction it has open, cancels
// it (kill, when not nil, runs once running reports the statement
// started; else a timeout is expected to end it), runs ended once it
// failed, and reads what is left of the transaction with seen.
func cancelInTxn(t *testing.T, c *sql.Conn, slow string, running func() bool, kill, ended func(), seen string) cancelOutcome {
	t.Helper()
	ctx := context.Background()
	errc := make(chan error, 1)
	go func() {
		rows, err := c.QueryContext(ctx, slow)
		if err == nil {
			for rows.Next() {
			}
			err = rows.Err()
			rows.Close()
		}
		errc <- err
	}()
	if kill != nil {
		waitFor(t, running)
		kill()
	}
	var o cancelOutcome
	var err error
	select {
	case err = <-errc:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: not cancelled within 20s", slow)
	}
	ended()
	o.code = errCode(err)
	if err != nil {
		o.err = err.Error()
	}
	if err := c.QueryRowContext(ctx, "SELECT @@in_transaction").Scan(&o.inTransaction); err != nil {
		o.inTransaction = "(" + err.Error() + ")"
	}
	if err := c.QueryRowContext(ctx, seen).Scan(&o.visible); err != nil {
		o.visible = "(" + err.Error() + ")"
	}
	return o
}

// TestCancelInTransactionKeepsIt: KILL QUERY of a statement, or its
// statement timeout, inside a transaction ends the statement (1317,
// 1969) and leaves the transaction open with its earlier writes, on
// MariaDB, also while the statement waits for a table lock. Through the
// proxy, a scatter SELECT cancelled while it runs on the transaction's
// connections of both data sources does the same (also when one data
// source had not begun its result: it waited for a lock another session
// holds, while the other streamed rows), and COMMIT afterwards commits
// the earlier writes on both.
func TestCancelInTransactionKeepsIt(t *testing.T) {
	tests := []struct {
		name    string
		server  string // the proxy's server: settings
		direct  string // the session setting for MariaDB directly
		killing bool
		// blocked: the statement waits for a LOCK TABLES ... WRITE of
		// another session (on ds_1 through the proxy).
		blocked bool
	}{
		{name: "KILL QUERY", killing: true},
		{name: "KILL QUERY waiting for a lock", killing: true, blocked: true},
		{name: "statement timeout", server: "statementTimeout: 500ms", direct: "SET SESSION max_statement_time = 0.5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := startEnv(t, envOptions{server: tt.server})
			seedSlow(t, e)
			ctx := context.Background()
			lockTable := func(db *sql.DB, table string) func() {
				t.Helper()
				lc, err := db.Conn(ctx)
				if err != nil {
					t.Fatal(err)
				}
				mustExec(t, lc, "LOCK TABLES "+table+" WRITE")
				return func() { lc.ExecContext(ctx, "UNLOCK TABLES"); lc.Close() }
			}

			// MariaDB directly.
			d := e.backend(t, 0)
			for _, q := range []string{"DROP TABLE IF EXISTS cancel_ref, cancel_blk", "CREATE TABLE cancel_ref (id INT PRIMARY KEY) ENGINE=InnoDB",
				"CREATE TABLE cancel_blk (id INT PRIMARY KEY) ENGINE=InnoDB", "INSERT INTO cancel_ref VALUES (1), (2)"} {
				if _, err := d.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			t.Cleanup(func() { d.Exec("DROP TABLE IF EXISTS cancel_ref, cancel_blk") })
			ref, err := d.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer ref.Close()
			var refID int64
			ref.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&refID)
			mustExec(t, ref, "BEGIN")
			mustExec(t, ref, "INSERT INTO cancel_ref VALUES (10)")
			if tt.direct != "" {
				mustExec(t, ref, tt.direct)
			}
			var kill func()
			if tt.killing {
				kill = func() {
					if _, err := d.Exec(fmt.Sprintf("KILL QUERY %d", refID)); err != nil {
						t.Fatal(err)
					}
				}
			}
			slow, marker := "SELECT id, SLEEP(30) FROM cancel_ref", "SLEEP(30) FROM cancel_ref"
			unlock := func() {}
			if tt.blocked {
				unlock = lockTable(d, "cancel_blk")
				slow, marker = "SELECT COUNT(*), 'lockwait' FROM cancel_blk", "'lockwait'"
			}
			want := cancelInTxn(t, ref, slow, func() bool { return backendRunning(t, e, marker) == 1 }, kill, unlock,
				"SELECT COUNT(*) = 1 FROM cancel_ref WHERE id = 10")
			mustExec(t, ref, "ROLLBACK")
			if want.code == 0 || want.inTransaction != "1" || want.visible != "1" {
				t.Fatalf("MariaDB: %s; the test expects the statement to fail and the transaction to stay", want)
			}

			// Through the proxy: the transaction has written on both data
			// sources when the scatter is cancelled on both.
			c := e.conn(t)
			var id int64
			c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id)
			mustExec(t, c, "BEGIN")
			mustExec(t, c, "INSERT INTO t_order (order_id, user_id) VALUES (10, 0), (11, 1)")
			if kill != nil {
				kill = func() {
					if _, err := e.conn(t).ExecContext(ctx, fmt.Sprintf("KILL QUERY %d", id)); err != nil {
						t.Fatal(err)
					}
				}
			}
			unlock = func() {}
			if tt.blocked {
				// ds_1 runs t_order_0 first: its result waits for the lock.
				unlock = lockTable(e.backend(t, 1), "t_order_0")
			}
			got := cancelInTxn(t, c, slowScatter, func() bool { return backendRunning(t, e, "SLEEP(30)") >= 2 }, kill, unlock,
				"SELECT COUNT(*) = 2 FROM t_order WHERE order_id IN (10, 11)")
			if got.code != want.code || got.inTransaction != want.inTransaction || got.visible != want.visible {
				t.Errorf("cancelled scatter in a transaction:\n  proxy   %s\n  MariaDB %s", got, want)
			}
			waitFor(t, func() bool { return backendRunning(t, e, "SLEEP(30)") == 0 })
			if _, err := c.ExecContext(ctx, "COMMIT"); err != nil {
				t.Fatalf("COMMIT after the cancelled statement: %v", err)
			}
			for i, oid := range []int{10, 11} {
				var n int
				if err := e.backend(t, i).QueryRow(fmt.Sprintf("SELECT COUNT(*) FROM t_order_%d WHERE order_id = %d", oid%2, oid)).Scan(&n); err != nil || n != 1 {
					t.Errorf("order %d on ds_%d after COMMIT: %d rows, %v; want 1", oid, i, n, err)
				}
			}
		})
	}
}
