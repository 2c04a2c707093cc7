package proxy

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestScatterKillOneSlowLane: a scatter whose lanes are all sent
// before their heads are read in turn, where one data source answers at
// once (its rows wait unread on its connection) and the other sleeps:
// KILL QUERY answers 1317 promptly, stops the sleeping backend, gives
// both connections back in step, and the session goes on.
func TestScatterKillOneSlowLane(t *testing.T) {
	e := startEnv(t, envOptions{})
	seedSlow(t, e)
	ctx := context.Background()
	victim := e.conn(t)
	var id int64
	if err := victim.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	const q = "SELECT order_id, SLEEP(IF(user_id = 1, 29, 0)) FROM t_order"
	errc := make(chan error, 1)
	go func() {
		rows, err := victim.QueryContext(ctx, q)
		if err == nil {
			for rows.Next() {
			}
			err = rows.Err()
			rows.Close()
		}
		errc <- err
	}()
	waitFor(t, func() bool { return backendRunning(t, e, "29, 0") >= 1 })
	killer := e.conn(t)
	start := time.Now()
	if _, err := killer.ExecContext(ctx, fmt.Sprintf("KILL QUERY %d", id)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if errCode(err) != 1317 {
			t.Errorf("killed scatter: got %v, want 1317", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("KILL QUERY of the scatter not answered")
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("KILL QUERY took %s", took)
	}
	waitFor(t, func() bool { return backendRunning(t, e, "29, 0") == 0 })
	for _, ds := range []string{"ds_0", "ds_1"} {
		p := e.srv.current().pools[ds]
		waitFor(t, func() bool { return p.stats().InUse == 0 })
	}
	for range 3 {
		got := queryStrings(t, victim, "SELECT order_id, user_id FROM t_order ORDER BY order_id")
		if fmt.Sprint(got) != "[0,0 1,0 2,1 3,1]" {
			t.Fatalf("after the kill: %q", got)
		}
	}
}

// TestScatterPipelinedBeginRefused: in a transaction, a scatter
// read sends every lane with its START TRANSACTION ahead; when one data
// source refuses it, the statement fails with MariaDB's own error, the
// other lane's answer is not left on its connection, the refused part is
// given back, and the transaction goes on (its next read opens it).
func TestScatterPipelinedBeginRefused(t *testing.T) {
	e := startEnv(t, envOptions{})
	seedSlow(t, e)
	ctx := context.Background()
	c := e.conn(t)
	wantErr := idleXABeginError(ctx, t, e)
	cure := poisonIdle(t, e)
	if _, err := c.ExecContext(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	rows, err := c.QueryContext(ctx, "SELECT order_id, user_id FROM t_order")
	if err == nil {
		for rows.Next() {
		}
		err = rows.Err()
		rows.Close()
	}
	if errCode(err) != errCode(wantErr) {
		t.Errorf("scatter behind a refused START TRANSACTION: %v, want MariaDB's %v", err, wantErr)
	}
	if st := e.srv.current().pools["ds_0"].stats(); st.InUse != 0 {
		t.Errorf("ds_0 has %d connections in use after the refusal, want 0", st.InUse)
	}
	cure()
	if got := queryStrings(t, c, "SELECT order_id, user_id FROM t_order ORDER BY order_id"); fmt.Sprint(got) != "[0,0 1,0 2,1 3,1]" {
		t.Errorf("the transaction's next scatter: %q", got)
	}
	if _, err := c.ExecContext(ctx, "UPDATE t_order SET status = 'x' WHERE order_id = 0 AND user_id = 0"); err != nil {
		t.Fatal(err)
	}
	other := e.conn(t)
	if got := queryStrings(t, other, "SELECT COUNT(*) FROM t_order WHERE status = 'x'"); fmt.Sprint(got) != "[0]" {
		t.Errorf("another session sees the uncommitted update: %q", got)
	}
	if _, err := c.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if got := queryStrings(t, other, "SELECT COUNT(*) FROM t_order WHERE status = 'x'"); fmt.Sprint(got) != "[0]" {
		t.Errorf("after ROLLBACK: %q", got)
	}
}
