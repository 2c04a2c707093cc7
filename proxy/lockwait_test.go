package proxy

import (
	"context"
	"testing"
	"time"
)

// TestLockWaitTimeoutSetting: server.lockWaitTimeout is every backend
// session's innodb_lock_wait_timeout, so a lock wait (and a deadlock
// across data sources, which no server detects) ends after it rather
// than after MariaDB's 50 s.
func TestLockWaitTimeoutSetting(t *testing.T) {
	e := startEnv(t, envOptions{server: "lockWaitTimeout: 1s"})
	createTables(t, e)
	a, b := e.conn(t), e.conn(t)
	mustExec(t, a, "INSERT INTO t_order (order_id, user_id, status) VALUES (1, 1, 'a'), (2, 0, 'a')")
	if got := queryOne(t, a, "SELECT @@innodb_lock_wait_timeout FROM t_order WHERE user_id = 1 AND order_id = 1"); got != "1" {
		t.Errorf("a data node's innodb_lock_wait_timeout = %s, want 1", got)
	}
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "UPDATE t_order SET status = 'locked' WHERE user_id = 1 AND order_id = 1")
	// Well below MariaDB's default of 50 s.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := b.ExecContext(ctx, "UPDATE t_order SET status = 'waits' WHERE user_id = 1 AND order_id = 1")
	if errCode(err) != 1205 {
		t.Errorf("a write waiting for a lock: got %v, want 1205 (Lock wait timeout exceeded)", err)
	}
	mustExec(t, a, "ROLLBACK")
	// A session's own SET still wins; a reset connection gets the
	// setting back.
	mustExec(t, b, "SET SESSION innodb_lock_wait_timeout = 7")
	if got := queryOne(t, b, "SELECT @@innodb_lock_wait_timeout FROM t_order WHERE user_id = 0 AND order_id = 2"); got != "7" {
		t.Errorf("after SET: %s, want 7", got)
	}
	c := e.conn(t)
	for range 3 {
		if got := queryOne(t, c, "SELECT @@innodb_lock_wait_timeout FROM t_order WHERE user_id = 0 AND order_id = 2"); got != "1" {
			t.Errorf("another session after a reset: %s, want 1", got)
		}
	}
}

// TestLockTablesDoesNotDeadlockAWriter: mariadb-dump's LOCK TABLES ...
// READ against a proxy taking writes. A transaction has written to
// t_order on ds_1 and then writes on ds_0; LOCK TABLES t_order READ
// locks ds_0's tables first and waits for ds_1's. On one MariaDB the
// LOCK waits for the transaction, whose write goes on at once; through
// the proxy the write waited for the LOCK on ds_0 and the LOCK for the
// transaction on ds_1, a deadlock neither server sees, until
// lock_wait_timeout (a day by default). Now the LOCK lets go of ds_0
// after a second and tries again: the write goes on, the transaction
// ends, and the LOCK then takes every table.
func TestLockTablesDoesNotDeadlockAWriter(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	ctx := context.Background()
	app, dump := e.conn(t), e.conn(t)
	// The write's own wait is bounded so that the old behaviour fails
	// in seconds, not in a day.
	mustExec(t, app, "SET SESSION lock_wait_timeout = 15")
	mustExec(t, app, "BEGIN")
	// On a failure, the transaction ends so that a waiting LOCK does too.
	t.Cleanup(func() { app.ExecContext(ctx, "ROLLBACK") })
	mustExec(t, app, "INSERT INTO t_order (order_id, user_id, status) VALUES (1, 1, 'ds_1')")
	locked := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := dump.ExecContext(ctx, "LOCK TABLES t_order READ")
		locked <- err
	}()
	// The LOCK holds ds_0's tables and waits for ds_1's.
	ds1 := e.backend(t, 1)
	waitFor(t, func() bool {
		var n int
		err := ds1.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE STATE = 'Waiting for table metadata lock'").Scan(&n)
		return err == nil && n > 0
	})
	_, err := app.ExecContext(ctx, "INSERT INTO t_order (order_id, user_id, status) VALUES (2, 0, 'ds_0')")
	if err != nil {
		t.Fatalf("the transaction's write on ds_0 while LOCK TABLES waits (after %v): %v", time.Since(start).Round(time.Millisecond), err)
	}
	select {
	case err := <-locked:
		t.Fatalf("LOCK TABLES ended while the transaction holds ds_1's table: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	mustExec(t, app, "COMMIT")
	select {
	case err := <-locked:
		if err != nil {
			t.Fatalf("LOCK TABLES after the transaction ended: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("LOCK TABLES still waits 20 s after the transaction ended")
	}
	if got := queryOne(t, dump, "SELECT COUNT(*) FROM t_order"); got != "2" {
		t.Errorf("under the lock: %s rows, want 2", got)
	}
	// A READ lock refuses the session's own write, as on MariaDB.
	if _, err := dump.ExecContext(ctx, "INSERT INTO t_order (order_id, user_id) VALUES (3, 0)"); errCode(err) != 1099 {
		t.Errorf("a write under READ locks: %v, want 1099", err)
	}
	mustExec(t, dump, "UNLOCK TABLES")
	mustExec(t, app, "INSERT INTO t_order (order_id, user_id) VALUES (3, 0)")

	// A lock another session keeps past the LOCK's lock_wait_timeout:
	// 1205, as on MariaDB, and nothing stays locked.
	mustExec(t, app, "BEGIN")
	mustExec(t, app, "INSERT INTO t_order (order_id, user_id) VALUES (5, 1)")
	mustExec(t, dump, "SET SESSION lock_wait_timeout = 3")
	start = time.Now()
	if _, err := dump.ExecContext(ctx, "LOCK TABLES t_order WRITE"); errCode(err) != 1205 {
		t.Errorf("LOCK TABLES behind a transaction that does not end: %v, want 1205", err)
	}
	if d := time.Since(start); d < 3*time.Second {
		t.Errorf("LOCK TABLES gave up after %v, before its lock_wait_timeout of 3 s", d)
	}
	mustExec(t, app, "INSERT INTO t_order (order_id, user_id) VALUES (6, 0)")
	mustExec(t, app, "COMMIT")
}
