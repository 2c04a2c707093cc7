package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/shardflake/shardflake/config"
)

// deadlockEnv is the proxy over the two shared servers with t_order's
// rows of the deadlock tests, and one MariaDB (a database of its own on
// the first server) holding the same rows in one table: order 1 and 3
// of user 0 on ds_0, orders 2, 4 and 5 of user 1 on ds_1.
type deadlockEnv struct {
	*testEnv
	ref *sql.DB
}

const deadlockRows = "INSERT INTO t_order (order_id, user_id, status) VALUES (1, 0, 'a'), (3, 0, 'a'), (2, 1, 'a'), (4, 1, 'a'), (5, 1, 'a')"

func startDeadlockEnv(t *testing.T, server string) *deadlockEnv {
	t.Helper()
	return startDeadlockEnvWith(t, envOptions{server: server})
}

func startDeadlockEnvWith(t *testing.T, opts envOptions) *deadlockEnv {
	t.Helper()
	e := startEnv(t, opts)
	createTables(t, e)
	mustExec(t, e.conn(t), deadlockRows)
	e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS deadlock_ref", "CREATE DATABASE deadlock_ref",
		"CREATE TABLE deadlock_ref.t_order (order_id BIGINT NOT NULL, user_id INT NOT NULL, status VARCHAR(32), PRIMARY KEY (order_id))",
		"INSERT INTO deadlock_ref."+deadlockRows[len("INSERT INTO "):])
	ref := e.backends[0].Open(t, "deadlock_ref")
	return &deadlockEnv{testEnv: e, ref: ref}
}

// waitForLockWaits polls cond, which reads information_schema's lock
// tables, until it holds, failing the test after 10 s. It reads them
// every 200 ms: InnoDB refreshes them only when they were last read over
// 0.1 s ago, so polling them faster reads the same rows forever.
func waitForLockWaits(t *testing.T, cond func() bool) {
	t.Helper()
	waitEvery(t, 200*time.Millisecond, cond)
}

// lockWaitsOn counts the lock waits of backend i's server.
func (e *deadlockEnv) lockWaitsOn(t *testing.T, i int) int {
	t.Helper()
	var n int
	if err := e.backend(t, i).QueryRow("SELECT COUNT(*) FROM information_schema.INNODB_LOCK_WAITS").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// modifyingOne counts the transactions of backend i's server that have
// modified one row (and meet and, a condition on INNODB_TRX).
func (e *deadlockEnv) modifyingOne(t *testing.T, i int, and string) int {
	t.Helper()
	var n int
	if err := e.backend(t, i).QueryRow("SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_rows_modified = 1" + and).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// serverConnections sums the connections both servers have accepted
// (their Connections status, which counts this read's own too).
func (e *deadlockEnv) serverConnections(t *testing.T) int {
	t.Helper()
	n := 0
	for i := range 2 {
		var name string
		var v int
		if err := e.backend(t, i).QueryRow("SHOW GLOBAL STATUS LIKE 'Connections'").Scan(&name, &v); err != nil {
			t.Fatal(err)
		}
		n += v
	}
	return n
}

// refConn is a connection to the reference MariaDB.
func (e *deadlockEnv) refConn(t *testing.T) *sql.Conn {
	t.Helper()
	c, err := e.ref.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// refLockWaits counts the reference server's lock waits.
func (e *deadlockEnv) refLockWaits(t *testing.T) int {
	t.Helper()
	var n int
	if err := e.ref.QueryRow("SELECT COUNT(*) FROM information_schema.INNODB_LOCK_WAITS").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// timedExec runs q on c in the background; its answer arrives on the
// channel with how long it took.
type timedAnswer struct {
	err  error
	took time.Duration
}

func timedExec(c *sql.Conn, q string) <-chan timedAnswer {
	ch := make(chan timedAnswer, 1)
	start := time.Now()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		_, err := c.ExecContext(ctx, q)
		ch <- timedAnswer{err, time.Since(start)}
	}()
	return ch
}

// crossingTransactions runs, on a and b (connections to the proxy, or
// both to the reference MariaDB), two transactions that update orders 1
// and 2 in opposite orders: a takes 1, b takes 2, a waits for 2, and
// then b asks for 1, which closes the cycle. waits counts the lock waits
// where a's second update waits. It returns the answers of a's and b's
// second updates.
func crossingTransactions(t *testing.T, a, b *sql.Conn, waits func() int) (timedAnswer, timedAnswer) {
	t.Helper()
	for _, q := range []string{"BEGIN", "UPDATE t_order SET status = 'a1' WHERE user_id = 0 AND order_id = 1"} {
		mustExec(t, a, q)
	}
	for _, q := range []string{"BEGIN", "UPDATE t_order SET status = 'b2' WHERE user_id = 1 AND order_id = 2"} {
		mustExec(t, b, q)
	}
	aDone := timedExec(a, "UPDATE t_order SET status = 'a2' WHERE user_id = 1 AND order_id = 2")
	waitForLockWaits(t, func() bool { return waits() == 1 })
	bDone := timedExec(b, "UPDATE t_order SET status = 'b1' WHERE user_id = 0 AND order_id = 1")
	return <-aDone, <-bDone
}

// TestDeadlockAcrossDataSources: two transactions each update a row on
// ds_0 and one on ds_1 in opposite orders. No data source sees the
// cycle; on one MariaDB the second to wait gets 1213 at once (the
// victim of least weight, the one that closed the cycle among equals),
// its transaction is rolled back, and the other commits. Through the
// proxy both waited innodb_lock_wait_timeout and one got 1205 (30 s
// here; its writes stayed); the detector now ends b's statement within
// a second or two with 1213, rolls back its transaction, and a commits.
func TestDeadlockAcrossDataSources(t *testing.T) {
	e := startDeadlockEnv(t, "lockWaitTimeout: 30s")

	refA, refB := e.refConn(t), e.refConn(t)
	wantA, wantB := crossingTransactions(t, refA, refB, func() int { return e.refLockWaits(t) })
	if errCode(wantA.err) != 0 || errCode(wantB.err) != 1213 {
		t.Fatalf("MariaDB: a's second update %v, b's %v; the test expects a to go on and b to get 1213", wantA.err, wantB.err)
	}

	a, b := e.conn(t), e.conn(t)
	gotA, gotB := crossingTransactions(t, a, b, func() int { return e.lockWaitsOn(t, 1) })
	if gotA.err != nil {
		t.Errorf("a's second update: %v, want it to go on as on MariaDB", gotA.err)
	}
	if errCode(gotB.err) != 1213 || gotB.err.Error() != wantB.err.Error() {
		t.Errorf("b's second update: %v after %v, want MariaDB's %v", gotB.err, gotB.took, wantB.err)
	}
	if gotB.took > 10*time.Second {
		t.Errorf("b's deadlock ended after %v, want well under the lock wait timeout of 30s", gotB.took)
	}
	t.Logf("b got %v after %v", gotB.err, gotB.took)
	// b's transaction is gone, as on MariaDB: its first update is rolled
	// back and what it runs now runs in autocommit; the connection is
	// usable.
	for _, q := range []string{"SELECT @@in_transaction", "SELECT status FROM t_order WHERE user_id = 1 AND order_id = 2"} {
		want, got := queryOne(t, refB, q), queryOne(t, b, q)
		if got != want {
			t.Errorf("b, after the deadlock, %s: %s, MariaDB %s", q, got, want)
		}
	}
	mustExec(t, a, "COMMIT")
	mustExec(t, refA, "COMMIT")
	q := "SELECT order_id, status FROM t_order ORDER BY order_id"
	if got, want := fmt.Sprint(queryStrings(t, a, q)), fmt.Sprint(queryStrings(t, e.ref, q)); got != want {
		t.Errorf("rows after a committed: %s, MariaDB %s", got, want)
	}
	if n := e.srv.deadlocks.found.Load(); n != 1 {
		t.Errorf("deadlocks found: %d, want 1", n)
	}
}

// TestDeadlockAcrossDataSourcesAutocommit: two autocommit UPDATEs that
// each write rows on both data sources (each in the statement's own
// backend transactions there) meet in opposite orders: x holds order 1
// on ds_0 and waits for order 5 on ds_1, which y holds while it waits
// for order 1. (A transaction outside the proxy holding order 4 lets y
// take order 5 before x gets there.) One MariaDB would run one after the
// other; through the proxy both waited innodb_lock_wait_timeout. Now y,
// which modified fewer rows, fails with 1213 at once and leaves nothing
// behind, and x goes on: the rows are those of x alone on one MariaDB.
func TestDeadlockAcrossDataSourcesAutocommit(t *testing.T) {
	e := startDeadlockEnv(t, "lockWaitTimeout: 30s")
	x, y := e.conn(t), e.conn(t)
	holder, err := e.backend(t, 1).Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	// InnoDB's lock tables are a snapshot taken when read over 0.1 s
	// after the last one: the last test's waits and transactions would
	// satisfy the waits below at once, before x and y got there.
	time.Sleep(200 * time.Millisecond)
	mustExec(t, holder, "BEGIN")
	mustExec(t, holder, "SELECT * FROM t_order_0 WHERE order_id = 4 FOR UPDATE")
	xDone := timedExec(x, "UPDATE t_order SET status = 'x' WHERE order_id IN (1, 4, 5)")
	waitForLockWaits(t, func() bool { return e.lockWaitsOn(t, 1) == 1 })
	// x's part on ds_0 runs beside it: x holds order 1 once it has.
	waitForLockWaits(t, func() bool { return e.modifyingOne(t, 0, "") == 1 })
	yDone := timedExec(y, "UPDATE t_order SET status = 'y' WHERE order_id IN (1, 5)")
	// y holds order 5 and waits for order 1.
	waitForLockWaits(t, func() bool { return e.lockWaitsOn(t, 0) == 1 })
	waitForLockWaits(t, func() bool { return e.modifyingOne(t, 1, " AND trx_state = 'RUNNING'") == 1 })
	mustExec(t, holder, "COMMIT")
	gotX, gotY := <-xDone, <-yDone
	if gotX.err != nil {
		t.Errorf("x: %v, want it to go on", gotX.err)
	}
	if errCode(gotY.err) != 1213 || gotY.took > 12*time.Second {
		t.Errorf("y: %v after %v, want 1213 within seconds (the lock wait timeout is 30s)", gotY.err, gotY.took)
	}
	t.Logf("y got %v after %v", gotY.err, gotY.took)
	if _, err := e.ref.Exec("UPDATE t_order SET status = 'x' WHERE order_id IN (1, 4, 5)"); err != nil {
		t.Fatal(err)
	}
	q := "SELECT order_id, status FROM t_order ORDER BY order_id"
	if got, want := fmt.Sprint(queryStrings(t, y, q)), fmt.Sprint(queryStrings(t, e.ref, q)); got != want {
		t.Errorf("rows: %s, MariaDB after x alone %s", got, want)
	}
}

// TestDeadlockDetectionNoFalsePositive: a plain lock wait, without a
// cycle, lasts as long as the holder's transaction (3 s here, longer
// than the detection interval) and then goes on.
func TestDeadlockDetectionNoFalsePositive(t *testing.T) {
	e := startDeadlockEnv(t, "lockWaitTimeout: 30s\n  deadlockDetection: 200ms")
	a, b := e.conn(t), e.conn(t)
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "UPDATE t_order SET status = 'a' WHERE user_id = 0 AND order_id = 1")
	mustExec(t, a, "UPDATE t_order SET status = 'a' WHERE user_id = 1 AND order_id = 2")
	mustExec(t, b, "BEGIN")
	mustExec(t, b, "UPDATE t_order SET status = 'b' WHERE user_id = 1 AND order_id = 4")
	bDone := timedExec(b, "UPDATE t_order SET status = 'b' WHERE order_id IN (1, 2)")
	waitForLockWaits(t, func() bool { return e.lockWaitsOn(t, 0)+e.lockWaitsOn(t, 1) > 0 })
	before := e.serverConnections(t)
	time.Sleep(3 * time.Second) // the holder's transaction goes on
	// The detector looked about 15 times, and read the servers' lock
	// waits each time; it did so on one connection per server, where it
	// opened a new one each time (about 30 over both servers).
	if opened := e.serverConnections(t) - before; opened > 4 {
		t.Errorf("connections opened to the servers while b waited: %d, want at most 4 (the detector's own, kept)", opened)
	}
	mustExec(t, a, "COMMIT")
	got := <-bDone
	if got.err != nil {
		t.Fatalf("the waiting update: %v, want it to go on once the holder committed", got.err)
	}
	mustExec(t, b, "COMMIT")
	if got := fmt.Sprint(queryStrings(t, a, "SELECT order_id, status FROM t_order ORDER BY order_id")); got != "[1,b 2,b 3,a 4,b 5,a]" {
		t.Errorf("rows: %s", got)
	}
	if n := e.srv.deadlocks.found.Load(); n != 0 {
		t.Errorf("deadlocks found: %d, want 0", n)
	}
}

// TestDeadlockDetectionOff: deadlockDetection: off leaves a deadlock
// across data sources to the lock wait timeout, as before: one of the
// two gets 1205 after it.
func TestDeadlockDetectionOff(t *testing.T) {
	e := startDeadlockEnv(t, "lockWaitTimeout: 2s\n  deadlockDetection: off")
	a, b := e.conn(t), e.conn(t)
	gotA, gotB := crossingTransactions(t, a, b, func() int { return e.lockWaitsOn(t, 1) })
	codes := []uint16{errCode(gotA.err), errCode(gotB.err)}
	if fmt.Sprint(codes) != "[1205 0]" && fmt.Sprint(codes) != "[0 1205]" && fmt.Sprint(codes) != "[1205 1205]" {
		t.Errorf("second updates: a %v, b %v; want 1205 after the lock wait timeout", gotA.err, gotB.err)
	}
	for _, got := range []timedAnswer{gotA, gotB} {
		if errCode(got.err) == 1205 && got.took < 2*time.Second {
			t.Errorf("1205 after %v, before the lock wait timeout of 2s", got.took)
		}
	}
	mustExec(t, a, "ROLLBACK")
	mustExec(t, b, "ROLLBACK")
	if n := e.srv.deadlocks.found.Load(); n != 0 {
		t.Errorf("deadlocks found: %d, want 0", n)
	}
}

// TestDeadlockDetectionWithoutProcessPrivilege: when the proxy's account
// may not read a data source's lock waits (MariaDB wants the PROCESS
// privilege for INNODB_TRX), the proxy says so once per data source and
// a deadlock through it lasts until the lock wait timeout, as before.
func TestDeadlockDetectionWithoutProcessPrivilege(t *testing.T) {
	backends := sharedServers(t)
	for _, b := range backends {
		b.Exec(t, "", "DROP USER IF EXISTS sfnoprocess", "CREATE USER sfnoprocess IDENTIFIED BY 'pw'",
			"GRANT ALL ON ds_0.* TO sfnoprocess", "GRANT ALL ON ds_1.* TO sfnoprocess")
	}
	t.Cleanup(func() {
		for _, b := range backends {
			b.Exec(t, "", "DROP USER IF EXISTS sfnoprocess")
		}
	})
	text := rulesYAML(backends, "lockWaitTimeout: 3s\n  deadlockDetection: 200ms", "")
	text = strings.ReplaceAll(text, `username: root, password: ""`, `username: sfnoprocess, password: pw`)
	rules, err := config.Parse([]byte(text), "test-rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	e := startDeadlockEnvWith(t, envOptions{rulesFile: rules, logger: slog.New(slog.NewTextHandler(logs, nil))})
	a, b := e.conn(t), e.conn(t)
	gotA, gotB := crossingTransactions(t, a, b, func() int { return e.lockWaitsOn(t, 1) })
	if errCode(gotA.err) != 1205 || gotA.took < 3*time.Second {
		t.Errorf("a's second update: %v after %v, want 1205 after the lock wait timeout of 3s", gotA.err, gotA.took)
	}
	if code := errCode(gotB.err); code != 0 && code != 1205 {
		t.Errorf("b's second update: %v, want it to go on or 1205", gotB.err)
	}
	mustExec(t, a, "ROLLBACK")
	mustExec(t, b, "ROLLBACK")
	for _, ds := range []string{"ds_0", "ds_1"} {
		if n := strings.Count(logs.String(), "datasource="+ds+" err="); n != 1 {
			t.Errorf("warnings that %s's lock waits cannot be read: %d, want 1; logs:\n%s", ds, n, logs)
		}
	}
	if !strings.Contains(logs.String(), "PROCESS") {
		t.Errorf("the warning does not name the privilege MariaDB wants:\n%s", logs)
	}
}
