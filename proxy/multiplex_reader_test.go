package proxy

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMultiplexErrorMidStream: on one shared connection, a
// statement whose error comes after some of its rows (a subquery of more
// than one row, found at the second row) and plain reads queued around
// it each get MariaDB's own answer, whichever session reads.
func TestMultiplexErrorMidStream(t *testing.T) {
	e := startEnv(t, envOptions{server: "multiplex: on\nmultiplexConnections: 1"})
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
	want[0] = "error:" + want[0][strings.LastIndex(want[0], "error:")+len("error:"):]
	var wg sync.WaitGroup
	var mu sync.Mutex
	bad := 0
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := db.Conn(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			for i := range 30 {
				k := (g + i) % len(queries)
				got := answerOf(ctx, c, queries[k])
				if k == 0 {
					// The shared connection's response is read whole
					// before it is answered: the rows ahead of the
					// error are dropped (as before this session's
					// changes); the error is MariaDB's.
					got = "error:" + got[strings.LastIndex(got, "error:")+len("error:"):]
				}
				if got != want[k] {
					mu.Lock()
					if bad++; bad < 5 {
						t.Errorf("%s: proxy %s, MariaDB %s", queries[k], got, want[k])
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
}

// TestMultiplexReaderKilledConnection: KILL CONNECTION of the
// session reading a shared connection for others ends it, and the
// statement queued behind it gets its own answer.
func TestMultiplexReaderKilledConnection(t *testing.T) {
	e := startEnv(t, envOptions{server: "multiplex: on\nmultiplexConnections: 1"})
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
