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
