package proxy

import (
	"context"
	"database/sql"
	"strings"
	"testing"
)

// TestDrainComputeNode: DRAIN COMPUTE NODE makes /readyz answer 503 (a
// balancer stops sending connections) while the sessions already here,
// and a transaction open across it, go on; RESUME COMPUTE NODE makes it
// ready again. Only a rulesAdmin user may drain.
func TestDrainComputeNode(t *testing.T) {
	e := startOpsEnv(t, opsOptions{server: reloadUsers, prefix: "drain"})
	e.createOrders(t)
	ctx := context.Background()
	if code, body := e.get(t, "/readyz"); code != 200 {
		t.Fatalf("/readyz before the drain: %d %s", code, body)
	}
	tx := e.conn(t)
	execAll(t, tx, "BEGIN", "INSERT INTO t_order (order_id, user_id, status) VALUES (11, 1, 'drain')")
	admin := e.conn(t)
	execAll(t, admin, "DRAIN COMPUTE NODE")
	code, body := e.get(t, "/readyz")
	if code != 503 || !strings.Contains(string(body), "draining") {
		t.Fatalf("/readyz while draining: %d %s", code, body)
	}
	execAll(t, tx, "COMMIT")
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM t_order WHERE user_id = 1 AND status = 'drain'").Scan(&n); err != nil || n != 1 {
		t.Fatalf("the transaction across the drain: %d rows, %v", n, err)
	}
	// A new connection is still served: the balancer decides.
	if err := e.conn(t).PingContext(ctx); err != nil {
		t.Fatalf("a new connection while draining: %v", err)
	}
	execAll(t, admin, "RESUME COMPUTE NODE")
	if code, body := e.get(t, "/readyz"); code != 200 {
		t.Fatalf("/readyz after RESUME: %d %s", code, body)
	}
	other, err := e.open(t).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	// Without rulesAdmin: 1227.
	db, err := sql.Open("mysql", e.dsn("other", "other-secret"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "DRAIN COMPUTE NODE"); errCode(err) != 1227 {
		t.Fatalf("DRAIN COMPUTE NODE without rulesAdmin: %v, want 1227", err)
	}
}
