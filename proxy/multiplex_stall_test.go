package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestMultiplexSlowReadDoesNotBlock: one session's plain read runs for
// as long as the test likes on the one shared connection of ds_0 (it
// waits for a table lock held directly on the backend: a slow read as the
// proxy sees it, without depending on the machine's speed), while other
// sessions run point selects on ds_0, as text and prepared. Those queued
// behind the slow read when it began leave the shared connection after
// multiplexMaxWait and run on pooled connections; later ones do not join
// it while its oldest command is that old. All are answered while the
// slow read still waits; the slow read then gets its own answer, and the
// shared connection serves every session in order again (the responses of
// the statements that left were read and dropped).
func TestMultiplexSlowReadDoesNotBlock(t *testing.T) {
	const maxWait = 2 * time.Second
	e := startEnv(t, envOptions{server: fmt.Sprintf("multiplex: on\nmultiplexConnections: 1\nmultiplexMaxWait: %s", maxWait)})
	createTables(t, e)
	ctx := context.Background()
	db := e.open(t)
	if _, err := db.Exec("INSERT INTO t_plain (id, v) VALUES (1, 'v1')"); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 20; i++ {
		// user_id 0: every row on ds_0.
		if _, err := db.Exec("INSERT INTO t_order (order_id, user_id, status) VALUES (?, 0, ?)", i, fmt.Sprintf("s%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if got := answerOf(ctx, db, "SELECT v FROM t_plain WHERE id = 1"); got != "[v]|v1," {
		t.Fatalf("warm-up read: %s", got)
	}
	_, shared := muxQueue(e, "ds_0")
	if shared == nil {
		t.Fatal("no shared connection after a plain read")
	}

	// Point selects of four sessions, logged in before the slow read
	// begins: two send text, two prepared statements (a prepare on the
	// shared connection first).
	const sessions, rounds = 4, 10
	conns := make([]*sql.Conn, sessions)
	for g := range conns {
		params := []string{"interpolateParams=true"}
		if g%2 == 1 {
			params = nil
		}
		conns[g] = e.conn(t, params...)
	}

	lock := lockDirectly(ctx, t, e)
	slow := startQueuedRead(ctx, t, e, "SELECT v, 'slow' AS tag FROM t_plain WHERE id = 1")
	waitFor(t, func() bool { return backendRunning(t, e, "slow") == 1 })
	began := time.Now()
	type result struct {
		first, rest time.Duration // the first statement's time, the worst of the others
		err         string
	}
	results := make(chan result, sessions)
	var wg sync.WaitGroup
	for g, c := range conns {
		wg.Go(func() {
			var r result
			for i := range rounds {
				id := (g*rounds+i)%20 + 1
				start := time.Now()
				var status string
				err := c.QueryRowContext(ctx, "SELECT status FROM t_order WHERE order_id = ? AND user_id = 0", id).Scan(&status)
				took := time.Since(start)
				if err != nil || status != fmt.Sprintf("s%d", id) {
					r.err = fmt.Sprintf("session %d, order %d: %q, %v", g, id, status, err)
					break
				}
				if i == 0 {
					r.first = took
				} else {
					r.rest = max(r.rest, took)
				}
			}
			results <- r
		})
	}
	// On failure, the lock goes before the sessions waiting for it are
	// closed (cleanups run last first).
	t.Cleanup(func() { lock.ExecContext(ctx, "UNLOCK TABLES") })
	// The first statements of all four sessions join the shared
	// connection behind the slow read (its oldest command is younger than
	// maxWait).
	waitFor(t, func() bool { n, _ := muxQueue(e, "ds_0"); return n == 1+sessions })
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(maxWait + 15*time.Second):
		t.Fatalf("point selects still waiting %s after the slow read began", time.Since(began).Round(time.Millisecond))
	}
	close(results)
	for r := range results {
		if r.err != "" {
			t.Error(r.err)
			continue
		}
		t.Logf("first point select %s, the worst of the others %s", r.first.Round(time.Millisecond), r.rest.Round(time.Millisecond))
		if r.rest >= maxWait {
			t.Errorf("a point select after the first took %s: it joined the stalled connection", r.rest)
		}
	}
	m := e.srv.current().pools["ds_0"].mux
	if left, bypassed := m.left.Load(), m.bypassed.Load(); left != sessions || bypassed < sessions*(rounds-1) {
		t.Errorf("%d statements left the stalled connection and %d bypassed it; want %d and at least %d", left, bypassed, sessions, sessions*(rounds-1))
	}
	select {
	case got := <-slow.got:
		t.Fatalf("the slow read answered while the lock is held: %s", got)
	default:
	}
	unlockSlowRead(ctx, t, lock, slow)
	// The shared connection is in step: every session's reads, each with
	// its own answer, run on it again.
	waitFor(t, func() bool { n, _ := muxQueue(e, "ds_0"); return n == 0 })
	if _, c := muxQueue(e, "ds_0"); c != shared {
		t.Error("the shared connection was replaced")
	}
	n := muxAnswered(e, "ds_0")
	var after sync.WaitGroup
	errs := make(chan string, sessions)
	for g := range sessions {
		after.Go(func() {
			for i := range rounds {
				id := (g*rounds+i)%20 + 1
				q := fmt.Sprintf("SELECT status, %d AS session FROM t_order WHERE order_id = %d AND user_id = 0", g, id)
				if got, want := answerOf(ctx, db, q), fmt.Sprintf("[status session]|s%d,%d,", id, g); got != want {
					errs <- fmt.Sprintf("%s: got %s, want %s", q, got, want)
					return
				}
			}
		})
	}
	after.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if got := muxAnswered(e, "ds_0") - n; got != sessions*rounds {
		t.Errorf("the shared connection answered %d of the %d reads after the slow one", got, sessions*rounds)
	}
}

// TestMultiplexFullQueuePassesBy: behind a read that waits (a table lock
// held directly on the backend), the one shared connection of ds_0 takes
// commands until it holds maxMuxQueue of them; more sessions' point
// selects pass it by and are answered on pooled connections at once,
// where with no bound they would all wait for the one backend thread.
// Once the lock goes, every statement queued gets its own answer.
func TestMultiplexFullQueuePassesBy(t *testing.T) {
	e := startEnv(t, envOptions{server: "multiplex: on\nmultiplexConnections: 1" + muxUnbounded})
	createTables(t, e)
	ctx := context.Background()
	db := e.open(t)
	if _, err := db.Exec("INSERT INTO t_plain (id, v) VALUES (1, 'v1')"); err != nil {
		t.Fatal(err)
	}
	const extra = 3
	sessions := maxMuxQueue - 1 + extra
	for i := 1; i <= sessions; i++ {
		// user_id 0: every row on ds_0.
		if _, err := db.Exec("INSERT INTO t_order (order_id, user_id, status) VALUES (?, 0, ?)", i, fmt.Sprintf("s%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if got := answerOf(ctx, db, "SELECT v FROM t_plain WHERE id = 1"); got != "[v]|v1," {
		t.Fatalf("warm-up read: %s", got)
	}
	conns := make([]*sql.Conn, sessions)
	for g := range conns {
		conns[g] = e.conn(t)
	}
	m := e.srv.current().pools["ds_0"].mux
	lock := lockDirectly(ctx, t, e)
	slow := startQueuedRead(ctx, t, e, "SELECT v, 'slow' AS tag FROM t_plain WHERE id = 1")
	waitFor(t, func() bool { return backendRunning(t, e, "slow") == 1 })

	answers := make(chan string, sessions)
	for g, c := range conns {
		go func() {
			q := fmt.Sprintf("SELECT status FROM t_order WHERE order_id = %d AND user_id = 0", g+1)
			answers <- fmt.Sprintf("%d:%s", g+1, answerOf(ctx, c, q))
		}()
	}
	t.Cleanup(func() { lock.ExecContext(ctx, "UNLOCK TABLES") })
	check := func(a string) {
		t.Helper()
		var id int
		var rest string
		if _, err := fmt.Sscanf(a, "%d:%s", &id, &rest); err != nil || rest != fmt.Sprintf("[status]|s%d,", id) {
			t.Errorf("point select answered %q", a)
		}
	}
	// extra sessions find the connection full and are answered while the
	// lock is held; the others wait on it behind the slow read.
	for range extra {
		select {
		case a := <-answers:
			check(a)
		case <-time.After(30 * time.Second):
			n, _ := muxQueue(e, "ds_0")
			t.Fatalf("point selects past a full shared connection not answered; %d commands queued, %d passed it by", n, m.full.Load())
		}
	}
	if n, _ := muxQueue(e, "ds_0"); n != maxMuxQueue || m.full.Load() != extra {
		t.Fatalf("%d commands on the shared connection and %d statements passed it by; want %d and %d", n, m.full.Load(), maxMuxQueue, extra)
	}
	select {
	case a := <-answers:
		t.Fatalf("a statement queued behind the lock answered: %s", a)
	case got := <-slow.got:
		t.Fatalf("the slow read answered while the lock is held: %s", got)
	default:
	}
	unlockSlowRead(ctx, t, lock, slow)
	for range sessions - extra {
		check(<-answers)
	}
}

// unlockSlowRead releases the table lock the slow read of the stall
// tests waits for, and checks the slow read's own answer.
func unlockSlowRead(ctx context.Context, t *testing.T, lock *sql.Conn, slow *queuedSession) {
	t.Helper()
	if _, err := lock.ExecContext(ctx, "UNLOCK TABLES"); err != nil {
		t.Fatal(err)
	}
	if got := <-slow.got; got != "[v tag]|v1,slow," {
		t.Errorf("the slow read: got %s", got)
	}
}
