package proxy

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// multiplexFromEnv says the suite runs with server.multiplex on
// (SHARDFLAKE_TEST_MULTIPLEX=on; CI runs the proxy's tests once so).
func multiplexFromEnv() bool { return os.Getenv("SHARDFLAKE_TEST_MULTIPLEX") == "on" }

// muxUnbounded is a multiplexMaxWait for tests that count the statements
// the shared connections answered: long enough that none leaves for a
// pooled connection on a loaded machine (TestMultiplexSlowReadDoesNotBlock
// tests the bound).
const muxUnbounded = "\nmultiplexMaxWait: 1h"

// muxAnswered is how many statements data source ds's shared connections
// answered.
func muxAnswered(e *testEnv, ds string) int64 {
	p := e.srv.current().pools[ds]
	p.mu.Lock()
	m := p.mux
	p.mu.Unlock()
	if m == nil {
		return 0
	}
	return m.answered.Load()
}

// answerOf runs q and returns its rows, or its error's number and text,
// as one comparable string.
func answerOf(ctx context.Context, c interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, q string) string {
	rows, err := c.QueryContext(ctx, q)
	return rowsAnswer(rows, err)
}

// rowsAnswer is answerOf for a query already run.
func rowsAnswer(rows *sql.Rows, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	out := fmt.Sprint(cols)
	for rows.Next() {
		vals := make([]sql.RawBytes, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return "scan: " + err.Error()
		}
		out += "|"
		for _, v := range vals {
			if v == nil {
				out += "NULL,"
			} else {
				out += string(v) + ","
			}
		}
	}
	if err := rows.Err(); err != nil {
		out += " error: " + err.Error()
	}
	return out
}

// TestMultiplexAnswersAsPooled runs many sessions' plain reads on the
// shared connections at once and checks each answer (rows, or the
// backend's error for that statement alone) against MariaDB's own; that
// statements under session state (a transaction, SET) do not use them;
// and that a read with warnings still lets SHOW WARNINGS list them.
func TestMultiplexAnswersAsPooled(t *testing.T) {
	e := startEnv(t, envOptions{server: "multiplex: on\nmultiplexConnections: 2" + muxUnbounded})
	createTables(t, e)
	ctx := context.Background()
	db := e.open(t)
	db.SetMaxOpenConns(32)
	for i := 1; i <= 40; i++ {
		if _, err := db.Exec(fmt.Sprintf("INSERT INTO t_plain (id, v) VALUES (%d, 'v%d')", i, i)); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(fmt.Sprintf("INSERT INTO t_order (order_id, user_id, status) VALUES (%d, %d, 's%d')", i, i%3, i)); err != nil {
			t.Fatal(err)
		}
	}
	direct := e.backend(t, 0)
	queries := func(i int) []string {
		id := i%40 + 1
		return []string{
			fmt.Sprintf("SELECT id, v FROM t_plain WHERE id = %d", id),
			fmt.Sprintf("SELECT id, nosuch FROM t_plain WHERE id = %d", id), // 1054, for this statement only
			fmt.Sprintf("SELECT v, id * 2 FROM t_plain WHERE id BETWEEN %d AND %d ORDER BY id", id, id+3),
			fmt.Sprintf("SELECT id FROM t_plain WHERE v = 'none%d'", id), // no rows
		}
	}
	want := map[string]string{}
	for i := range 40 {
		for _, q := range queries(i) {
			want[q] = answerOf(ctx, direct, q)
		}
	}
	before := muxAnswered(e, "ds_0")
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	const sessions, rounds = 16, 40
	for g := range sessions {
		wg.Go(func() {
			c, err := db.Conn(ctx)
			if err != nil {
				errs <- err.Error()
				return
			}
			defer c.Close()
			for i := range rounds {
				for _, q := range queries(g*rounds + i) {
					if got := answerOf(ctx, c, q); got != want[q] {
						errs <- fmt.Sprintf("%s:\n got %s\nwant %s", q, got, want[q])
						return
					}
				}
				// A sharded point read: the row inserted for it.
				id := (g+i)%40 + 1
				q := fmt.Sprintf("SELECT order_id, user_id, status FROM t_order WHERE order_id = %d AND user_id = %d", id, id%3)
				if got, w := answerOf(ctx, c, q), fmt.Sprintf("[order_id user_id status]|%d,%d,s%d,", id, id%3, id); got != w {
					errs <- fmt.Sprintf("%s:\n got %s\nwant %s", q, got, w)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if got, min := muxAnswered(e, "ds_0")-before, int64(sessions*rounds*4); got < min {
		t.Errorf("shared connections of ds_0 answered %d statements, want at least %d", got, min)
	}
	m := e.srv.current().pools["ds_0"].mux
	t.Logf("ds_0: %d statements in %d writes", m.answered.Load(), m.writes.Load())

	t.Run("prepared", func(t *testing.T) {
		// go-sql-driver sends a query with arguments as COM_STMT_PREPARE
		// and COM_STMT_EXECUTE: binary rows.
		queries := []string{
			"SELECT id, v, id / 3, CAST(id AS DOUBLE) * 1.5, DATE('2024-01-01') + INTERVAL id DAY FROM t_plain WHERE id = ?",
			"SELECT id, v FROM t_plain WHERE id BETWEEN ? AND ? + 3 ORDER BY id",
			"SELECT order_id, user_id, status FROM t_order WHERE order_id = ? AND user_id = ?",
		}
		want := map[string]string{}
		key := func(q string, id int) string { return fmt.Sprint(q, id) }
		for id := 1; id <= 40; id++ {
			for i, q := range queries {
				if i == 2 {
					want[key(q, id)] = fmt.Sprintf("[order_id user_id status]|%d,%d,s%d,", id, id%3, id)
					continue
				}
				rows, err := direct.QueryContext(ctx, q, id, id)
				if i == 0 {
					rows, err = direct.QueryContext(ctx, q, id)
				}
				want[key(q, id)] = rowsAnswer(rows, err)
			}
		}
		n := muxAnswered(e, "ds_0") + muxAnswered(e, "ds_1")
		var wg sync.WaitGroup
		errs := make(chan string, 64)
		for g := range 12 {
			wg.Go(func() {
				for i := range 30 {
					id := (g*30+i)%40 + 1
					for j, q := range queries {
						args := []any{id, id}
						switch j {
						case 0:
							args = args[:1]
						case 2:
							args[1] = id % 3
						}
						rows, err := db.QueryContext(ctx, q, args...)
						if got := rowsAnswer(rows, err); got != want[key(q, id)] {
							errs <- fmt.Sprintf("%s (%d):\n got %s\nwant %s", q, id, got, want[key(q, id)])
							return
						}
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
		if got := muxAnswered(e, "ds_0") + muxAnswered(e, "ds_1") - n; got < 12*30*3 {
			t.Errorf("shared connections answered %d prepared statements, want at least %d", got, 12*30*3)
		}
	})
	t.Run("transaction", func(t *testing.T) {
		c := e.conn(t)
		if _, err := c.ExecContext(ctx, "BEGIN"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ExecContext(ctx, "INSERT INTO t_plain (id, v) VALUES (100, 'mine')"); err != nil {
			t.Fatal(err)
		}
		n := muxAnswered(e, "ds_0")
		// Only the transaction's own connection sees its row.
		if got := answerOf(ctx, c, "SELECT v FROM t_plain WHERE id = 100"); got != "[v]|mine," {
			t.Errorf("inside the transaction: %s, want its own row", got)
		}
		if _, err := c.ExecContext(ctx, "ROLLBACK"); err != nil {
			t.Fatal(err)
		}
		if got := muxAnswered(e, "ds_0"); got != n {
			t.Errorf("a statement inside a transaction ran on a shared connection")
		}
	})
	t.Run("session settings", func(t *testing.T) {
		c := e.conn(t)
		if _, err := c.ExecContext(ctx, "SET SESSION sql_mode = 'ANSI_QUOTES'"); err != nil {
			t.Fatal(err)
		}
		n := muxAnswered(e, "ds_0")
		// Under ANSI_QUOTES "v" is the column, not a string.
		if got := answerOf(ctx, c, `SELECT "v" FROM t_plain WHERE id = 1`); got != "[v]|v1," {
			t.Errorf("under the session's sql_mode: %s, want the column's value", got)
		}
		if got := muxAnswered(e, "ds_0"); got != n {
			t.Errorf("a session with its own settings ran on a shared connection")
		}
	})
	t.Run("session reads", func(t *testing.T) {
		c := e.conn(t)
		n := muxAnswered(e, "ds_0")
		for _, q := range []string{
			"SELECT SQL_CALC_FOUND_ROWS id FROM t_plain ORDER BY id LIMIT 2", // leaves FOUND_ROWS() behind
			"SELECT id, CONNECTION_ID() > 0 FROM t_plain WHERE id = 1",
			"SELECT id, @@sql_mode FROM t_plain WHERE id = 1",
			"SELECT id FROM t_plain WHERE id = 1 FOR UPDATE",
		} {
			if got := answerOf(ctx, c, q); len(got) > 5 && got[:6] == "error:" {
				t.Errorf("%s: %s", q, got)
			}
		}
		if got := muxAnswered(e, "ds_0"); got != n {
			t.Errorf("%d statements that read or leave session state ran on a shared connection", got-n)
		}
	})
	t.Run("connection lost", func(t *testing.T) {
		// The backend ends the shared connections (a restart, wait_timeout):
		// the statements on them run again on pooled connections, and
		// the clients see no error.
		m := e.srv.current().pools["ds_0"].multiplexed(&e.srv.current().rules.Server)
		m.mu.Lock()
		var ids []uint32
		for _, c := range m.conns[""] {
			ids = append(ids, c.bc.id)
		}
		m.mu.Unlock()
		if len(ids) == 0 {
			t.Fatal("no shared connection to end")
		}
		for _, id := range ids {
			if _, err := direct.ExecContext(ctx, fmt.Sprintf("KILL CONNECTION %d", id)); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		errs := make(chan string, 16)
		for g := range 8 {
			wg.Go(func() {
				for i := range 10 {
					q := queries(g*10 + i)[0]
					if got := answerOf(ctx, db, q); got != want[q] {
						errs <- fmt.Sprintf("%s after the shared connections were lost:\n got %s\nwant %s", q, got, want[q])
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
		n := muxAnswered(e, "ds_0")
		if got := answerOf(ctx, db, queries(0)[0]); got != want[queries(0)[0]] {
			t.Errorf("got %s", got)
		}
		if muxAnswered(e, "ds_0") == n {
			t.Error("no new shared connection answered after the old ones were lost")
		}
	})
	t.Run("warnings", func(t *testing.T) {
		c := e.conn(t)
		q := "SELECT CAST(v AS SIGNED) AS n FROM t_plain WHERE id = 1"
		if got, w := answerOf(ctx, c, q), answerOf(ctx, direct, q); got != w {
			t.Errorf("%s: got %s, want %s", q, got, w)
		}
		dc, err := direct.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer dc.Close()
		answerOf(ctx, dc, q)
		if got, w := answerOf(ctx, c, "SHOW WARNINGS"), answerOf(ctx, dc, "SHOW WARNINGS"); got != w || w == "[Level Code Message]" {
			t.Errorf("SHOW WARNINGS after a read with warnings: got %s, want %s", got, w)
		}
	})
}

// muxQueue is the length of ds's one shared connection's queue, and
// whether that connection is the one given (nil: any).
func muxQueue(e *testEnv, ds string) (n int, c *muxConn) {
	m := e.srv.current().pools[ds].multiplexed(&e.srv.current().rules.Server)
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.conns[""]) == 0 {
		return 0, nil
	}
	c = m.conns[""][0]
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.queue), c
}

// TestMultiplexSessionsLeave has sessions leave (KILL QUERY) while their
// statements wait on the one shared connection, behind a write lock: the
// one whose statement the backend runs, and one queued behind it. Each is
// answered at once; the statement queued behind both gets its own answer
// when the backend answers; the connection stays in use, and so do the
// sessions.
func TestMultiplexSessionsLeave(t *testing.T) {
	e := startEnv(t, envOptions{server: "multiplex: on\nmultiplexConnections: 1" + muxUnbounded})
	createTables(t, e)
	ctx := context.Background()
	db := e.open(t)
	for i := 1; i <= 4; i++ {
		if _, err := db.Exec(fmt.Sprintf("INSERT INTO t_plain (id, v) VALUES (%d, 'v%d')", i, i)); err != nil {
			t.Fatal(err)
		}
	}
	q := func(i int, tag string) string {
		return fmt.Sprintf("SELECT v, '%s' AS tag FROM t_plain WHERE id = %d", tag, i)
	}
	want := func(i int, tag string) string { return fmt.Sprintf("[v tag]|v%d,%s,", i, tag) }
	// Warm up: the shared connection exists.
	if got := answerOf(ctx, db, q(1, "warm")); got != want(1, "warm") {
		t.Fatalf("got %s", got)
	}
	_, shared := muxQueue(e, "ds_0")
	if shared == nil {
		t.Fatal("no shared connection after a plain read")
	}

	// A write lock held directly on the backend: the reads wait for it.
	lock := lockDirectly(ctx, t, e)
	start := func(i int, tag string) *queuedSession { return startQueuedRead(ctx, t, e, q(i, tag)) }
	reader := start(1, "reader")
	waitFor(t, func() bool { return backendRunning(t, e, "reader") == 1 })
	waiter := start(2, "waiter") // leaves while waiting
	waitFor(t, func() bool { n, _ := muxQueue(e, "ds_0"); return n == 2 })
	behind := start(3, "behind") // stays
	waitFor(t, func() bool { n, _ := muxQueue(e, "ds_0"); return n == 3 })

	killer := e.conn(t)
	for _, s := range []*queuedSession{waiter, reader} {
		begun := time.Now()
		if _, err := killer.ExecContext(ctx, fmt.Sprintf("KILL QUERY %d", s.id)); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-s.got:
			if !strings.Contains(got, "1317") {
				t.Errorf("killed statement: %s, want error 1317", got)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("KILL QUERY not answered after %s", time.Since(begun))
		}
	}
	select {
	case got := <-behind.got:
		t.Fatalf("the statement behind answered while the lock is held: %s", got)
	default:
	}
	if _, err := lock.ExecContext(ctx, "UNLOCK TABLES"); err != nil {
		t.Fatal(err)
	}
	if got := <-behind.got; got != want(3, "behind") {
		t.Errorf("the statement queued behind the ones that left: got %s, want %s", got, want(3, "behind"))
	}
	// The sessions that left, and the connection, go on.
	n := muxAnswered(e, "ds_0")
	for _, s := range []*queuedSession{reader, waiter, behind} {
		if got := answerOf(ctx, s.c, q(4, "after")); got != want(4, "after") {
			t.Errorf("after KILL QUERY: got %s, want %s", got, want(4, "after"))
		}
	}
	if got := muxAnswered(e, "ds_0") - n; got != 3 {
		t.Errorf("the shared connection answered %d of the 3 statements after", got)
	}
	if _, c := muxQueue(e, "ds_0"); c != shared {
		t.Error("the shared connection was replaced")
	}
}

// queuedSession is a client session whose one read runs in the
// background; got receives its answer (answerOf).
type queuedSession struct {
	c   *sql.Conn
	id  int64
	got chan string
}

// startQueuedRead opens a session on e, learns its connection id and runs
// query on it in the background.
func startQueuedRead(ctx context.Context, t *testing.T, e *testEnv, query string) *queuedSession {
	t.Helper()
	s := &queuedSession{c: e.conn(t), got: make(chan string, 1)}
	if err := s.c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&s.id); err != nil {
		t.Fatal(err)
	}
	go func() { s.got <- answerOf(ctx, s.c, query) }()
	return s
}

// lockDirectly takes a WRITE lock on t_plain on backend 0, on a connection
// of its own, so that the reads multiplexed after it wait; the returned
// connection unlocks and closes when the test ends.
func lockDirectly(ctx context.Context, t *testing.T, e *testEnv) *sql.Conn {
	t.Helper()
	lock, err := e.backend(t, 0).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Not back to the pool with the lock held, if the test fails.
		lock.ExecContext(ctx, "UNLOCK TABLES")
		lock.Close()
	})
	if _, err := lock.ExecContext(ctx, "LOCK TABLES t_plain WRITE"); err != nil {
		t.Fatal(err)
	}
	return lock
}

// TestMultiplexUnpreparable: a shared connection remembers the SQL its
// backend refused to prepare for good, 1390 (more than 65,535
// placeholders) as 1295, as a pooled connection does (cannotPrepare):
// the backend is asked once, and every later execution runs the
// statement as text without asking again. No client's statement reaches
// 1390 through the proxy today (a text query that long is not turned
// into placeholders, a client's own prepare holds at most 65,535), so
// the shared connection is asked directly.
func TestMultiplexUnpreparable(t *testing.T) {
	e := startEnv(t, envOptions{server: "multiplex: on\nmultiplexConnections: 1" + muxUnbounded})
	createTables(t, e)
	// A read through the proxy opens the shared connection.
	if got := answerOf(t.Context(), e.open(t), "SELECT COUNT(*) FROM t_order WHERE user_id = 0 AND order_id = 2"); got != "[COUNT(*)]|0," {
		t.Fatalf("got %s", got)
	}
	_, c := muxQueue(e, "ds_0")
	if c == nil {
		t.Fatal("no shared connection to ds_0")
	}
	tests := []struct {
		name string
		sql  string
	}{
		{"1390", "SELECT COUNT(*) FROM t_order_0 WHERE order_id IN (" + strings.TrimSuffix(strings.Repeat("?,", 65536), ",") + ")"},
		{"1295", "PREPARE never FROM 'SELECT 1'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prepares := globalStatus(t, e.backend(t, 0), "Com_stmt_prepare") - globalStatus(t, e.backend(t, 0), "Com_prepare_sql")
			var timer *time.Timer
			for run := range 3 {
				if st, err := c.stmt(t.Context(), tt.sql, &timer); !errors.Is(err, errMuxNoStmt) {
					t.Fatalf("run %d: statement %+v, error %v; want errMuxNoStmt", run+1, st, err)
				}
			}
			got := globalStatus(t, e.backend(t, 0), "Com_stmt_prepare") - globalStatus(t, e.backend(t, 0), "Com_prepare_sql") - prepares
			if got != 1 {
				t.Errorf("the backend was asked to prepare it %d times in 3 runs, want once", got)
			}
		})
	}
}

// TestMultiplexStoredFunctionRunsOnce: a plain read that calls a
// function by name may call a stored function that writes, and a
// multiplexed read runs twice when its answer carries warnings (once on
// the shared connection, again on a pooled one for SHOW WARNINGS). Such
// a read runs on a pooled connection only, so the function's INSERT is
// done once, as on MariaDB; a read without a call still runs on the
// shared connection.
func TestMultiplexStoredFunctionRunsOnce(t *testing.T) {
	e := startEnv(t, envOptions{server: "multiplex: on\nmultiplexConnections: 1" + muxUnbounded})
	createTables(t, e)
	ctx := context.Background()
	db := e.open(t)
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("INSERT INTO t_plain (id, v) VALUES (1, 'v1')"); err != nil {
		t.Fatal(err)
	}
	b := e.backend(t, 0)
	for _, q := range []string{
		"DROP FUNCTION IF EXISTS bump", "DROP TABLE IF EXISTS calls", "CREATE TABLE calls (n INT)",
		"CREATE FUNCTION bump(x INT) RETURNS INT MODIFIES SQL DATA BEGIN INSERT INTO calls VALUES (x); RETURN x; END",
	} {
		if _, err := b.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { b.Exec("DROP FUNCTION IF EXISTS bump"); b.Exec("DROP TABLE IF EXISTS calls") })
	if got := answerOf(ctx, db, "SELECT v FROM t_plain WHERE id = 1"); got != "[v]|v1," {
		t.Fatalf("plain read: %s", got)
	}
	before := muxAnswered(e, "ds_0")
	if before == 0 {
		t.Fatal("a plain read did not run on the shared connection")
	}
	// CAST('1x' AS SIGNED) leaves warning 1292 on the answer.
	if got := answerOf(ctx, db, "SELECT bump(7), CAST('1x' AS SIGNED) FROM t_plain WHERE id = 1"); got != "[bump(7) CAST('1x' AS SIGNED)]|7,1," {
		t.Fatalf("read calling a stored function: %s", got)
	}
	var code int
	var level, msg string
	if err := db.QueryRow("SHOW WARNINGS").Scan(&level, &code, &msg); err != nil || code != 1292 {
		t.Fatalf("SHOW WARNINGS: %d %q, %v; want 1292", code, msg, err)
	}
	var calls int
	if err := b.QueryRow("SELECT COUNT(*) FROM calls WHERE n = 7").Scan(&calls); err != nil || calls != 1 {
		t.Fatalf("the stored function ran %d times, %v; want once", calls, err)
	}
	if n := muxAnswered(e, "ds_0"); n != before {
		t.Errorf("the shared connection answered %d statements more; a read calling a function must not run there", n-before)
	}
}
