package proxy

import (
	"context"
	"testing"
	"time"
)

// TestReloadKeepsOpenXATransaction: an XA transaction whose coordinator
// data source (the first it wrote to) a reload removes keeps working on
// its own snapshot: its second data source makes it an XA transaction
// coordinated by the removed one, and it commits on both. While the
// transaction holds the old snapshot, XA recovery still asks the removed
// data source; once it ended, no longer.
func TestReloadKeepsOpenXATransaction(t *testing.T) {
	e := startReloadEnv(t, "rlxa", true, envOptions{})
	e.backends[0].Exec(t, "rlxa_x", "DROP TABLE IF EXISTS t_extra", "CREATE TABLE t_extra (id BIGINT PRIMARY KEY, v VARCHAR(20))")
	e.createOrderTables(t)
	ctx := context.Background()
	tx := e.conn(t)
	execAll(t, tx, "SET shardflake_transaction_mode = 'xa'", "BEGIN", "INSERT INTO t_extra (id, v) VALUES (1, 'xa-across')")
	admin := e.conn(t)
	e.write(t, e.yaml("", ""))
	if _, err := admin.ExecContext(ctx, "RELOAD RULES"); err != nil {
		t.Fatalf("RELOAD RULES: %v", err)
	}
	if e.srv.current().pools["ds_x"] != nil {
		t.Fatal("the reload kept ds_x")
	}
	// The second data source: the transaction becomes XA, coordinated by
	// ds_x, which the rules in force no longer have.
	execAll(t, tx, "INSERT INTO t_order (order_id, user_id, status) VALUES (10, 0, 'xa-across')")
	if !recoveryAsks(e.srv, "ds_x") {
		t.Fatal("XA recovery does not ask ds_x while a transaction holds the snapshot that has it")
	}
	execAll(t, tx, "COMMIT")
	deadline := time.Now().Add(5 * time.Second)
	for recoveryAsks(e.srv, "ds_x") {
		if time.Now().After(deadline) {
			t.Fatal("XA recovery still asks ds_x after the last transaction on it ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
	var n int
	if err := e.backends[0].Open(t, "rlxa_x").QueryRow("SELECT COUNT(*) FROM t_extra WHERE v = 'xa-across'").Scan(&n); err != nil || n != 1 {
		t.Fatalf("the row on the removed data source: %d, %v", n, err)
	}
	if err := e.backends[0].Open(t, "rlxa_0").QueryRow("SELECT COUNT(*) FROM t_order_0 WHERE status = 'xa-across'").Scan(&n); err != nil || n != 1 {
		t.Fatalf("the row on ds_0: %d, %v", n, err)
	}
}

// recoveryAsks reports whether XA recovery's scan includes data source ds.
func recoveryAsks(srv *Server, ds string) bool {
	for _, d := range srv.dataSources() {
		if d.Name == ds {
			return true
		}
	}
	return false
}
