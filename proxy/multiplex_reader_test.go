package proxy

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMultiplexErrorMidStream: on one shared connection, a statement
// whose error comes after some of its rows (a subquery of more than one
// row, found at the second row), one whose error comes right after its
// column definitions (found at the first row), and plain reads queued
// around them each get MariaDB's own answer: the rows it sent, then the
// error, exactly as with the switch off.
func TestMultiplexErrorMidStream(t *testing.T) {
	e := startEnv(t, envOptions{server: "multiplex: on\nmultiplexConnections: 1" + muxUnbounded})
	createTables(t, e)
	ctx := context.Background()
	db := e.open(t)
	for i := 1; i <= 6; i++ {
		if _, err := db.Exec(fmt.Sprintf("INSERT INTO t_plain (id, v) VALUES (%d, 'v%d')", i, i)); err != nil {
			t.Fatal(err)
		}
	}
	queries := []string{
		"SELECT id, (SELECT v FROM t_plain t2 WHERE t2.id <= t_plain.id) FROM t_plain ORDER BY id",
		"SELECT id, v FROM t_plain WHERE id BETWEEN 2 AND 5 ORDER BY id",
		"SELECT id, (SELECT v FROM t_plain t2 WHERE t2.id <= t_plain.id + 1) AS w FROM t_plain ORDER BY id",
		"SELECT v FROM t_plain WHERE id = 3",
	}
	ref := refConn(t, e, "ds_0")
	want := make([]string, len(queries))
	for i, q := range queries {
		want[i] = answerOf(ctx, ref, q)
	}
	if !strings.Contains(want[0], "1242") || !strings.Contains(want[0], "|1,v1,") {
		t.Fatalf("MariaDB's answer is not rows then an error: %s", want[0])
	}
	if !strings.HasPrefix(want[2], "[id w] error:") || !strings.Contains(want[2], "1242") {
		t.Fatalf("MariaDB's answer is not columns then an error: %s", want[2])
	}
	before := muxAnswered(e, "ds_0")
	var wg sync.WaitGroup
	var mu sync.Mutex
	bad := 0
	const sessions, rounds = 6, 30
	for g := range sessions {
		wg.Go(func() {
			c, err := db.Conn(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			for i := range rounds {
				k := (g + i) % len(queries)
				if got := answerOf(ctx, c, queries[k]); got != want[k] {
					mu.Lock()
					if bad++; bad < 5 {
						t.Errorf("%s: proxy %s, MariaDB %s", queries[k], got, want[k])
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if got := muxAnswered(e, "ds_0") - before; got < sessions*rounds {
		t.Errorf("the shared connection answered %d statements, want %d", got, sessions*rounds)
	}
	// The same as prepared statements (binary rows).
	for _, q := range []string{queries[0], queries[2]} {
		q += " LIMIT ?"
		rows, err := ref.QueryContext(ctx, q, 10)
		want := rowsAnswer(rows, err)
		n := muxAnswered(e, "ds_0")
		rows, err = db.QueryContext(ctx, q, 10)
		if got := rowsAnswer(rows, err); got != want || !strings.Contains(got, "1242") {
			t.Errorf("%s (prepared): proxy %s, MariaDB %s", q, got, want)
		}
		if muxAnswered(e, "ds_0") == n {
			t.Errorf("%s (prepared) did not run on the shared connection", q)
		}
	}
}

// TestMultiplexReaderKilledConnection: KILL CONNECTION of the
// session reading a shared connection for others ends it, and the
// statement queued behind it gets its own answer.
func TestMultiplexReaderKilledConnection(t *testing.T) {
	e := startEnv(t, envOptions{server: "multiplex: on\nmultiplexConnections: 1" + muxUnbounded})
	createTables(t, e)
	ctx := context.Background()
	db := e.open(t)
	for i := 1; i <= 3; i++ {
		if _, err := db.Exec(fmt.Sprintf("INSERT INTO t_plain (id, v) VALUES (%d, 'v%d')", i, i)); err != nil {
			t.Fatal(err)
		}
	}
	q := func(i int, tag string) string {
		return fmt.Sprintf("SELECT v, '%s' AS tag FROM t_plain WHERE id = %d", tag, i)
	}
	if got := answerOf(ctx, db, q(1, "warm")); got != "[v tag]|v1,warm," {
		t.Fatalf("warm up: %s", got)
	}
	// A write lock held directly on the backend: the reads wait for it.
	lock := lockDirectly(ctx, t, e)
	start := func(i int, tag string) *queuedSession { return startQueuedRead(ctx, t, e, q(i, tag)) }
	reader := start(1, "reader")
	waitFor(t, func() bool { return backendRunning(t, e, "reader") == 1 })
	behind := start(2, "behind")
	waitFor(t, func() bool { n, _ := muxQueue(e, "ds_0"); return n == 2 })
	killer := e.conn(t)
	if _, err := killer.ExecContext(ctx, fmt.Sprintf("KILL CONNECTION %d", reader.id)); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-reader.got:
		if !strings.Contains(got, "error") {
			t.Errorf("the killed session's statement answered %s", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("KILL CONNECTION of the reader not answered")
	}
	if _, err := lock.ExecContext(ctx, "UNLOCK TABLES"); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-behind.got:
		if got != "[v tag]|v2,behind," {
			t.Errorf("the statement behind the killed reader: %s", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the statement behind the killed reader never answered")
	}
	if got := answerOf(ctx, db, q(3, "after")); got != "[v tag]|v3,after," {
		t.Errorf("after: %s", got)
	}
}
