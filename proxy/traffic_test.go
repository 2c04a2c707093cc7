package proxy

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// trafficEnv starts a proxy with server.traffic rules and the test
// tables, created as user other (rules in these tests limit app).
func trafficEnv(t *testing.T, traffic string) (*testEnv, *sql.DB) {
	t.Helper()
	return trafficEnvUsers(t, "", traffic)
}

// trafficEnvUsers is trafficEnv with its own server.users entries.
func trafficEnvUsers(t *testing.T, users, traffic string) (*testEnv, *sql.DB) {
	t.Helper()
	server := "traffic:\n" + traffic
	if users != "" {
		server = "users:\n" + users + "\n" + server
	}
	e := startEnv(t, envOptions{server: server})
	other, err := sql.Open("mysql", e.dsn("other", "other-secret"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	for _, q := range []string{
		"DROP TABLE IF EXISTS t_order",
		"CREATE TABLE t_order (order_id BIGINT NOT NULL, user_id INT NOT NULL, status VARCHAR(32), PRIMARY KEY (order_id))",
		"INSERT INTO t_order (order_id, user_id, status) VALUES (1, 0, 'a'), (2, 1, 'b'), (3, 0, 'c'), (4, 1, 'd')",
	} {
		if _, err := other.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return e, other
}

// comCounts sums Com_<name> over the backends, for each name.
func (e *testEnv) comCounts(t *testing.T, names ...string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for i := range e.backends {
		for _, n := range names {
			out[n] += globalStatus(t, e.backend(t, i), "Com_"+n)
		}
	}
	return out
}

// wantLimitError checks err is MariaDB's error code/42000 naming rule.
func wantLimitError(t *testing.T, err error, code uint16, rule string) {
	t.Helper()
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != code || string(me.SQLState[:]) != "42000" || !strings.Contains(me.Message, "'"+rule+"'") {
		t.Fatalf("error %v, want %d (42000) naming '%s'", err, code, rule)
	}
}

func TestTrafficRejectedStatementReachesNoDataSource(t *testing.T) {
	e, other := trafficEnv(t, `- {name: app_quota, match: {users: [app], tables: [t_order]}, limit: {type: FIXED_WINDOW, permits: 3, window: 1h}}`)
	db := e.open(t)
	cached := e.srv.current().cache.len()
	for i := range 3 {
		if _, err := db.Exec("SELECT status FROM t_order WHERE user_id = 0 AND order_id = 1"); err != nil {
			t.Fatalf("statement %d: %v", i, err)
		}
	}
	// (A prepare is not limited, only its executions: the proxy may
	// prepare on a data source to learn the result's columns.)
	before := e.comCounts(t, "select", "insert", "update", "stmt_execute")
	// The repeated statement's shape is in the plan cache: the cached
	// path is limited too.
	if e.srv.current().cache.len() <= cached {
		t.Fatal("no plan cached after three identical statements")
	}
	c := e.conn(t)
	// Text, prepared, a write and a scatter: all refused, none sent.
	_, err := c.ExecContext(context.Background(), "SELECT status FROM t_order WHERE user_id = 0 AND order_id = 1")
	wantLimitError(t, err, 1226, "app_quota")
	if !strings.Contains(err.Error(), "User 'app' has exceeded the 'app_quota' resource") {
		t.Errorf("message %q", err)
	}
	_, err = c.ExecContext(context.Background(), "SELECT status FROM t_order WHERE user_id = ? AND order_id = ?", 1, 2)
	wantLimitError(t, err, 1226, "app_quota")
	_, err = c.ExecContext(context.Background(), "UPDATE t_order SET status = 'x' WHERE user_id = 1")
	wantLimitError(t, err, 1226, "app_quota")
	_, err = c.ExecContext(context.Background(), "INSERT INTO t_order (order_id, user_id) VALUES (9, 1)")
	wantLimitError(t, err, 1226, "app_quota")
	_, err = c.QueryContext(context.Background(), "SELECT * FROM t_order ORDER BY order_id")
	wantLimitError(t, err, 1226, "app_quota")
	// The connection stays usable for what the rule does not match.
	var one int
	if err := c.QueryRowContext(context.Background(), "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1 after the refusals: %v", err)
	}
	after := e.comCounts(t, "select", "insert", "update", "stmt_execute")
	// SELECT 1 went to the default data source.
	before["select"]++
	for k, v := range before {
		if after[k] != v {
			t.Errorf("Com_%s went from %d to %d: a refused statement reached a data source", k, v, after[k])
		}
	}
	// Another user's statements are not limited, and nothing was written.
	var status string
	if err := other.QueryRow("SELECT status FROM t_order WHERE user_id = 1 AND order_id = 2").Scan(&status); err != nil || status != "b" {
		t.Fatalf("other user: %q, %v", status, err)
	}
	var n int
	if err := other.QueryRow("SELECT COUNT(*) FROM t_order").Scan(&n); err != nil || n != 4 {
		t.Fatalf("rows %d, %v; want 4", n, err)
	}
}

func TestTrafficTransactionIsNeverCutInHalf(t *testing.T) {
	e, _ := trafficEnv(t, `- {name: app_quota, match: {users: [app]}, limit: {type: FIXED_WINDOW, permits: 2, window: 1h}}`)
	ctx := context.Background()
	c := e.conn(t)
	mustExec(t, c, "BEGIN")
	mustExec(t, c, "UPDATE t_order SET status = 'tx' WHERE user_id = 0 AND order_id = 1") // admitted: 1 permit
	// Another connection takes the last permit; the one after is refused.
	c2 := e.conn(t)
	mustExec(t, c2, "UPDATE t_order SET status = 'c2' WHERE user_id = 1 AND order_id = 2")
	_, err := c2.ExecContext(ctx, "UPDATE t_order SET status = 'c2' WHERE user_id = 1 AND order_id = 4")
	wantLimitError(t, err, 1226, "app_quota")
	// The transaction goes on over the limit, scatter and all, and commits.
	mustExec(t, c, "UPDATE t_order SET status = 'tx' WHERE user_id = 0 AND order_id = 3")
	mustExec(t, c, "INSERT INTO t_order (order_id, user_id, status) VALUES (5, 0, 'tx')")
	var n int
	if err := c.QueryRowContext(ctx, "SELECT COUNT(*) FROM t_order WHERE status = 'tx'").Scan(&n); err != nil || n != 3 {
		t.Fatalf("scatter inside the transaction: %d, %v", n, err)
	}
	mustExec(t, c, "COMMIT")
	// The next transaction's first statement is limited again.
	mustExec(t, c, "BEGIN")
	_, err = c.ExecContext(ctx, "UPDATE t_order SET status = 'late' WHERE user_id = 0 AND order_id = 1")
	wantLimitError(t, err, 1226, "app_quota")
	mustExec(t, c, "ROLLBACK")
	// autocommit=0: the first statement opens the transaction and is the
	// one limited.
	mustExec(t, c, "SET autocommit = 0")
	_, err = c.ExecContext(ctx, "SELECT status FROM t_order WHERE user_id = 0 AND order_id = 1")
	wantLimitError(t, err, 1226, "app_quota")
	mustExec(t, c, "SET autocommit = 1")
	direct := e.backend(t, 0)
	var status string
	if err := direct.QueryRow("SELECT status FROM t_order_1 WHERE order_id = 3").Scan(&status); err != nil || status != "tx" {
		t.Fatalf("committed row: %q, %v", status, err)
	}
}

func TestTrafficDataSourceRuleCountsFanOut(t *testing.T) {
	e, _ := trafficEnv(t, `- {name: ds_1_budget, match: {users: [app], dataSources: [ds_1]}, limit: {type: FIXED_WINDOW, permits: 5, window: 1h}}`)
	db := e.open(t)
	ctx := context.Background()
	count := func() error {
		var n int
		return db.QueryRowContext(ctx, "SELECT COUNT(*) FROM t_order").Scan(&n)
	}
	// A scatter sends two routes to ds_1 (t_order_0 and t_order_1): 2
	// permits each.
	for i := range 2 {
		if err := count(); err != nil {
			t.Fatalf("scatter %d: %v", i, err)
		}
	}
	if err := count(); err == nil {
		t.Fatal("third scatter admitted: 6 permits on ds_1 over a budget of 5")
	} else {
		wantLimitError(t, err, 1226, "ds_1_budget")
	}
	// ds_0 is not limited; one more point query on ds_1 fits, then none.
	var s string
	for i := range 3 {
		if err := db.QueryRowContext(ctx, "SELECT status FROM t_order WHERE user_id = 0 AND order_id = 1").Scan(&s); err != nil {
			t.Fatalf("ds_0 query %d: %v", i, err)
		}
	}
	if err := db.QueryRowContext(ctx, "SELECT status FROM t_order WHERE user_id = 1 AND order_id = 2").Scan(&s); err != nil {
		t.Fatalf("the fifth permit: %v", err)
	}
	err := db.QueryRowContext(ctx, "SELECT status FROM t_order WHERE user_id = 1 AND order_id = 2").Scan(&s)
	wantLimitError(t, err, 1226, "ds_1_budget")
}

func TestTrafficConcurrencyQueue(t *testing.T) {
	e, _ := trafficEnv(t, `- {name: one_at_a_time, match: {users: [app], kinds: [select]}, limit: {type: CONCURRENCY, maxInFlight: 1, queue: 1, queueTimeout: 200ms}}`)
	ctx := context.Background()
	// SLEEP holds the one slot for 2s: the second waits its 200ms in the
	// queue and times out; while it waits, the queue is full for a third.
	busy := make(chan error, 1)
	go func() {
		_, err := e.open(t).ExecContext(ctx, "SELECT SLEEP(2) FROM t_order WHERE user_id = 0 AND order_id = 1")
		busy <- err
	}()
	db := e.open(t)
	waitFor(t, func() bool { return e.srv.traffic.States()[0].InFlight == 1 })
	queued := make(chan error, 1)
	go func() {
		_, err := db.ExecContext(ctx, "SELECT status FROM t_order WHERE user_id = 0 AND order_id = 3")
		queued <- err
	}()
	waitFor(t, func() bool { return e.srv.traffic.States()[0].Queued == 1 })
	_, err := db.ExecContext(ctx, "SELECT status FROM t_order WHERE user_id = 1 AND order_id = 2")
	wantLimitError(t, err, 1203, "one_at_a_time")
	if !strings.Contains(err.Error(), "queue is full") {
		t.Errorf("message %q", err)
	}
	err = <-queued
	wantLimitError(t, err, 1203, "one_at_a_time")
	if !strings.Contains(err.Error(), "timed out") {
		t.Errorf("message %q", err)
	}
	if err := <-busy; err != nil {
		t.Fatal(err)
	}
	// The slot is free again.
	if _, err := db.ExecContext(ctx, "SELECT status FROM t_order WHERE user_id = 1 AND order_id = 2"); err != nil {
		t.Fatal(err)
	}
	if st := e.srv.traffic.States()[0]; st.InFlight != 0 || st.Rejected != 2 || st.Admitted != 2 {
		t.Errorf("state %+v", st)
	}
}

func TestTrafficWaitStopsAtTheStatementTimeout(t *testing.T) {
	e := startEnv(t, envOptions{server: "statementTimeout: 800ms\ntraffic:\n" +
		"- {name: slow_lane, match: {users: [app], kinds: [select]}, limit: {type: LEAKY_BUCKET, rate: 2}, onLimit: wait, maxWait: 5s}"})
	db := e.open(t)
	q := func() error {
		var one int
		return db.QueryRow("SELECT 1 FROM dual WHERE 1 = ?", 1).Scan(&one)
	}
	// Slots every 500ms: the second statement waits for its slot, within
	// the 800ms of the statement timeout, and has 300ms left to run (a
	// loaded machine took more than the 50ms that 250ms of 300 left).
	start := time.Now()
	for i := range 2 {
		if err := q(); err != nil {
			t.Fatalf("statement %d: %v", i, err)
		}
	}
	if took := time.Since(start); took < 400*time.Millisecond {
		t.Errorf("two statements at 2/s took %v, want the second to wait about 500ms", took)
	}
	// Three more at once: the first waits about 500ms; the next slots are
	// 1s and 1.5s away, past the statement timeout though within maxWait,
	// so they are refused at once.
	errs := make(chan error, 3)
	for range 3 {
		go func() { errs <- q() }()
	}
	refused := 0
	for range 3 {
		if err := <-errs; err != nil {
			wantLimitError(t, err, 1226, "slow_lane")
			refused++
		}
	}
	if refused == 0 {
		t.Error("no statement refused: the wait went past the statement timeout")
	}
	if st := e.srv.traffic.States()[0]; st.Delayed == 0 || st.Rejected != uint64(refused) {
		t.Errorf("state %+v, want delayed statements and %d rejected", st, refused)
	}
}

func TestTrafficKillQueryEndsTheWait(t *testing.T) {
	e, _ := trafficEnv(t, `- {name: one_at_a_time, match: {users: [app], kinds: [select]}, limit: {type: CONCURRENCY, maxInFlight: 1, queue: 4, queueTimeout: 30s}}`)
	ctx := context.Background()
	busy := make(chan error, 1)
	go func() {
		_, err := e.open(t).ExecContext(ctx, "SELECT SLEEP(2) FROM t_order WHERE user_id = 0 AND order_id = 1")
		busy <- err
	}()
	waitFor(t, func() bool { return e.srv.traffic.States()[0].InFlight == 1 })
	victim := e.conn(t)
	var id int64
	if err := victim.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	waiting := make(chan error, 1)
	go func() {
		_, err := victim.ExecContext(ctx, "SELECT status FROM t_order WHERE user_id = 1 AND order_id = 2")
		waiting <- err
	}()
	waitFor(t, func() bool { return e.srv.traffic.States()[0].Queued == 1 })
	if _, err := e.conn(t).ExecContext(ctx, fmt.Sprintf("KILL QUERY %d", id)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err := <-waiting
	if code := errCode(err); code != 1317 {
		t.Fatalf("killed while queued: %v, want 1317", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("the wait ended %v after KILL QUERY", took)
	}
	if st := e.srv.traffic.States()[0]; st.Queued != 0 || st.InFlight != 1 {
		t.Errorf("state after the kill: %+v, want the queue empty and the sleeper's slot held", st)
	}
	if err := <-busy; err != nil {
		t.Fatal(err)
	}
	// The killed connection still works and the slot is free again.
	var s string
	if err := victim.QueryRowContext(ctx, "SELECT status FROM t_order WHERE user_id = 1 AND order_id = 2").Scan(&s); err != nil || s != "b" {
		t.Fatalf("after KILL QUERY: %q, %v", s, err)
	}
}
