package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/shardflake/shardflake/internal/mariadbtest"
	"github.com/shardflake/shardflake/proxy/metrics"
)

// orderRow is one t_order row of the known traffic.
type orderRow struct{ order, user int }

// node is the data node of a t_order row under the ops rules.
func (r orderRow) node() (ds, table string) {
	return fmt.Sprintf("ds_%d", r.user%2), fmt.Sprintf("t_order_%d", r.order%2)
}

// knownOrders spread over all four data nodes, unevenly, so that a
// swapped label would show.
var knownOrders = []orderRow{{0, 0}, {1, 0}, {2, 1}, {3, 1}, {4, 3}, {5, 4}, {6, 4}, {8, 2}, {9, 7}}

// runKnownTraffic sends a known mix through one connection: an INSERT
// and a point SELECT per known order, one scatter SELECT, one failing
// point SELECT, one broadcast INSERT. It ends with a ping on the same
// connection: the session reports a statement before it reads the next
// command, so every statement is counted when the ping returns. It
// returns knownTrafficWant.
func runKnownTraffic(t *testing.T, e *opsEnv) map[string]float64 {
	t.Helper()
	c := e.conn(t)
	for _, r := range knownOrders {
		execAll(t, c, fmt.Sprintf("INSERT INTO t_order (order_id, user_id, status) VALUES (%d, %d, 'new')", r.order, r.user))
	}
	for _, r := range knownOrders {
		if n := queryAll(t, c, fmt.Sprintf("SELECT status FROM t_order WHERE user_id = %d AND order_id = %d", r.user, r.order)); n != 1 {
			t.Fatalf("point select of %+v: %d rows", r, n)
		}
	}
	if n := queryAll(t, c, "SELECT order_id, user_id FROM t_order"); n != len(knownOrders) {
		t.Fatalf("scatter select: %d rows, want %d", n, len(knownOrders))
	}
	if _, err := c.QueryContext(context.Background(), "SELECT no_such_column FROM t_order WHERE user_id = 1 AND order_id = 3"); errCode(err) != 1054 {
		t.Fatalf("select of an unknown column: got %v, want error 1054", err)
	}
	execAll(t, c, "INSERT INTO t_dict (code, label) VALUES ('a', 'A')")
	if err := c.PingContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	return knownTrafficWant()
}

// knownTrafficWant is what runKnownTraffic adds to each series.
func knownTrafficWant() map[string]float64 {
	n := float64(len(knownOrders))
	want := map[string]float64{
		series("shardflake_statements_total", "kind", "insert", "route", "single", "result", "ok"):           n,
		series("shardflake_statements_total", "kind", "select", "route", "single", "result", "ok"):           n,
		series("shardflake_statements_total", "kind", "select", "route", "all", "result", "ok"):              1,
		series("shardflake_statements_total", "kind", "select", "route", "single", "result", "error"):        1,
		series("shardflake_statements_total", "kind", "insert", "route", "broadcast", "result", "ok"):        1,
		series("shardflake_statements_total", "kind", "update", "route", "single", "result", "ok"):           0,
		series("shardflake_statement_duration_seconds_count", "kind", "select", "route", "single"):           n + 1,
		series("shardflake_statement_fanout_data_nodes_count", "kind", "select", "route", "all"):             1,
		series("shardflake_statement_fanout_data_nodes_sum", "kind", "select", "route", "all"):               4,
		series("shardflake_statement_fanout_data_nodes_sum", "kind", "insert", "route", "broadcast"):         2,
		series("shardflake_statement_fanout_data_nodes_bucket", "kind", "select", "route", "all", "le", "2"): 0,
		series("shardflake_statement_fanout_data_nodes_bucket", "kind", "select", "route", "all", "le", "4"): 1,
		series("shardflake_errors_total", "code", "1054"):                                                    1,
		series("shardflake_data_node_hits_total", "datasource", "ds_0", "table", "_other"):                   0,
	}
	hit := func(ds, table string) {
		want[series("shardflake_data_node_hits_total", "datasource", ds, "table", table)]++
	}
	for _, r := range knownOrders {
		ds, table := r.node()
		hit(ds, table) // INSERT
		hit(ds, table) // point SELECT
	}
	for _, ds := range []string{"ds_0", "ds_1"} {
		hit(ds, "t_order_0") // scatter SELECT
		hit(ds, "t_order_1")
		hit(ds, "t_dict") // broadcast INSERT
	}
	hit("ds_1", "t_order_1") // the failing SELECT
	return want
}

func TestMetricsCountRoutedStatements(t *testing.T) {
	e := startOpsEnv(t, opsOptions{})
	e.createOrders(t)
	before := e.scrape(t)
	want := runKnownTraffic(t, e)
	after := e.scrape(t)
	for s, w := range want {
		a, ok := after[s]
		if !ok {
			t.Errorf("%s: missing from /metrics", s)
			continue
		}
		if got := a - before[s]; got != w {
			t.Errorf("%s moved by %v, want %v", s, got, w)
		}
	}
	// The route latency saw every route: 2n single routes, 4 scatter
	// routes, the failing one and two broadcast routes.
	routes := after[series("shardflake_datasource_duration_seconds_count", "datasource", "ds_0")] +
		after[series("shardflake_datasource_duration_seconds_count", "datasource", "ds_1")] -
		before[series("shardflake_datasource_duration_seconds_count", "datasource", "ds_0")] -
		before[series("shardflake_datasource_duration_seconds_count", "datasource", "ds_1")]
	if wantRoutes := float64(2*len(knownOrders) + 4 + 1 + 2); routes != wantRoutes {
		t.Errorf("data source latency observed %v routes, want %v", routes, wantRoutes)
	}
	if got := after[series("shardflake_datasource_errors_total", "datasource", "ds_1")] - before[series("shardflake_datasource_errors_total", "datasource", "ds_1")]; got != 1 {
		t.Errorf("ds_1 errors moved by %v, want 1", got)
	}
}

func TestMetricsScrapeTimeCollectors(t *testing.T) {
	e := startOpsEnv(t, opsOptions{})
	e.createOrders(t)
	c := e.conn(t)
	execAll(t, c, "INSERT INTO t_order (user_id, status) VALUES (1, 'a'), (2, 'b'), (3, 'c')")
	m := e.scrape(t)
	tests := []struct {
		give string
		want float64
	}{
		{series("shardflake_keygen_ids_generated_total", "generator", "snowflake"), 3},
		{series("shardflake_keygen_worker_id", "generator", "snowflake"), 3},
		{series("shardflake_keygen_datacenter_id", "generator", "snowflake"), 1},
		{series("shardflake_keygen_lease_state", "generator", "snowflake", "state", "none"), 1},
		{series("shardflake_keygen_lease_state", "generator", "snowflake", "state", "held"), 0},
		{series("shardflake_keygen_clock_back_steps_total", "generator", "snowflake"), 0},
		{series("shardflake_client_connections"), 1},
		{series("shardflake_datasource_up", "datasource", "ds_0"), 1},
		{series("shardflake_pool_max_connections", "datasource", "ds_1", "pool", "default"), 20},
		{series("shardflake_pool_in_use_connections", "datasource", "ds_0", "pool", "default"), 0},
		{series("shardflake_rules_data_nodes", "logical_table", "t_order"), 4},
		{series("shardflake_rate_limited_statements_total"), 0},
	}
	for _, tt := range tests {
		if got, ok := m[tt.give]; !ok || got != tt.want {
			t.Errorf("%s = %v (present %v), want %v", tt.give, got, ok, tt.want)
		}
	}
	if open := m[series("shardflake_pool_open_connections", "datasource", "ds_0", "pool", "default")]; open < 1 {
		t.Errorf("ds_0 pool open connections = %v after an insert there", open)
	}
	found := false
	for s := range m {
		if strings.HasPrefix(s, "shardflake_rules_info{") && strings.Contains(s, `database="sharding_db"`) {
			found = !strings.Contains(s, `digest="unknown"`)
		}
	}
	if !found {
		t.Error("shardflake_rules_info with the rules digest is missing")
	}
	for _, name := range []string{"go_goroutines", "process_open_fds"} {
		if _, ok := m[name]; !ok {
			t.Errorf("%s (runtime and process collectors) missing", name)
		}
	}
}

// TestMetricsLabelsStayBounded sends statements naming many tables the
// rules do not know: no table name may become a label value.
func TestMetricsLabelsStayBounded(t *testing.T) {
	e := startOpsEnv(t, opsOptions{})
	e.createOrders(t)
	before := e.scrape(t)
	c := e.conn(t)
	for i := range 30 {
		q := fmt.Sprintf("SELECT * FROM t_unknown_%d WHERE secret = 'hunter%d'", i, i)
		if _, err := c.QueryContext(context.Background(), q); errCode(err) != 1146 {
			t.Fatalf("%s: got %v, want 1146", q, err)
		}
	}
	if err := c.PingContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	after := e.scrape(t)
	for s := range after {
		if strings.Contains(s, "t_unknown") || strings.Contains(s, "hunter") {
			t.Errorf("SQL leaked into a label: %s", s)
		}
		if _, ok := before[s]; !ok && !strings.HasPrefix(s, "shardflake_errors_total{") && strings.HasPrefix(s, "shardflake_") {
			t.Errorf("new series %s", s)
		}
	}
	if got := after[series("shardflake_data_node_hits_total", "datasource", "ds_0", "table", "_other")] - before[series("shardflake_data_node_hits_total", "datasource", "ds_0", "table", "_other")]; got != 30 {
		t.Errorf("hits on tables without rules moved by %v, want 30", got)
	}
}

func TestPromtoolCheckMetrics(t *testing.T) {
	promtool := mariadbtest.RequireBinary(t, "promtool")
	e := startOpsEnv(t, opsOptions{})
	e.createOrders(t)
	runKnownTraffic(t, e)
	_, body := e.get(t, "/metrics")
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(body)
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}

func TestHealthz(t *testing.T) {
	e := startOpsEnv(t, opsOptions{})
	code, body := e.get(t, "/healthz")
	var h healthStatus
	if err := json.Unmarshal(body, &h); err != nil || code != 200 || h.Status != "alive" {
		t.Fatalf("/healthz: %d %s (%v)", code, body, err)
	}
	if code, _ := e.get(t, "/nothing"); code != 404 {
		t.Errorf("/nothing: %d, want 404", code)
	}
}

// TestReadyzFollowsTheBackends stops a backend: /readyz turns 503 and
// names the data source, then 200 again once the backend is back.
func TestReadyzFollowsTheBackends(t *testing.T) {
	backends := mariadbtest.StartN(t, 2, mariadbtest.Options{})
	e := startOpsEnv(t, opsOptions{backends: backends})
	readiness := func() (int, Readiness) {
		code, body := e.get(t, "/readyz")
		var r Readiness
		if err := json.Unmarshal(body, &r); err != nil {
			t.Fatalf("/readyz body %s: %v", body, err)
		}
		return code, r
	}
	code, r := readiness()
	if code != 200 || !r.Ready || len(r.DataSources) != 2 || len(r.KeyGenerators) != 1 || !r.KeyGenerators[0].OK {
		t.Fatalf("/readyz with both backends up: %d %+v", code, r)
	}
	if err := backends[1].Stop(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		code, r = readiness()
		return code == 503
	})
	if r.Ready || len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "data source ds_1") {
		t.Errorf("unready answer: %+v", r)
	}
	if !r.DataSources[0].Up || r.DataSources[1].Up || r.DataSources[1].Error == "" {
		t.Errorf("data sources: %+v", r.DataSources)
	}
	if err := backends[1].Restart(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		code, r = readiness()
		return code == 200
	})
	if !r.Ready || len(r.Problems) != 0 {
		t.Errorf("ready again: %+v", r)
	}
}

func TestReadyzDuringShutdown(t *testing.T) {
	e := startOpsEnv(t, opsOptions{})
	if code, _ := e.get(t, "/readyz"); code != 200 {
		t.Fatalf("/readyz: %d", code)
	}
	e.srv.shutdown.Store(true)
	defer e.srv.shutdown.Store(false)
	code, body := e.get(t, "/readyz")
	if code != 503 || !strings.Contains(string(body), "shutting down") {
		t.Errorf("/readyz while shutting down: %d %s", code, body)
	}
}

// TestSlowStatementLog checks the slow-statement record: fingerprint,
// kind, route type, fan-out, duration, connection id, and no literal.
func TestSlowStatementLog(t *testing.T) {
	e := startOpsEnv(t, opsOptions{server: "slowStatementThreshold: 200ms"})
	e.createOrders(t)
	c := e.conn(t)
	execAll(t, c, "INSERT INTO t_order (order_id, user_id, status) VALUES (1, 1, 'hunter2')")
	queryAll(t, c, "SELECT status FROM t_order WHERE user_id = 1 AND order_id = 1 AND status = 'hunter2'")
	queryAll(t, c, "SELECT status, SLEEP(0.3) FROM t_order WHERE status IN ('hunter2', 'x', 'y') AND order_id = 1")
	var connID int64
	if err := c.QueryRowContext(context.Background(), "SELECT CONNECTION_ID()").Scan(&connID); err != nil {
		t.Fatal(err)
	}
	var records []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(e.logs.String()), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if r["msg"] == "slow statement" {
			records = append(records, r)
		}
	}
	if len(records) != 1 {
		t.Fatalf("slow statement records: %v, want exactly the SLEEP one\nlog:\n%s", records, e.logs.String())
	}
	r := records[0]
	want := map[string]any{
		"kind":        "select",
		"route":       "multi",
		"fanout":      float64(2),
		"conn":        float64(connID),
		"fingerprint": "select status , `sleep` ( ? ) from `t_order` where status in ( ... ) and `order_id` = ?",
	}
	for k, v := range want {
		if r[k] != v {
			t.Errorf("record %s = %v, want %v", k, r[k], v)
		}
	}
	// The record's duration is the statement's, measured by the proxy: at
	// least the threshold that made it slow. Not the SLEEP's 300 ms: by
	// the proxy's clock MariaDB's SLEEP(0.3) once came back after 299.48 ms.
	if d, ok := r["duration"].(float64); !ok || time.Duration(d) < 200*time.Millisecond {
		t.Errorf("record duration %v, want >= 200ms (the threshold)", r["duration"])
	}
	// The digest names the statement's shape: other literals, same digest.
	if _, digest := metrics.Fingerprint("select status, sleep(2) from t_order where status in ('a', 'b') and order_id = 7"); r["digest"] != digest {
		t.Errorf("record digest %v, want %s", r["digest"], digest)
	}
	if strings.Contains(e.logs.String(), "hunter2") {
		t.Errorf("a literal reached the log:\n%s", e.logs.String())
	}
	m := e.scrape(t)
	if got := m[series("shardflake_slow_statements_total", "kind", "select", "route", "multi")]; got != 1 {
		t.Errorf("slow statements counted %v, want 1", got)
	}
}
