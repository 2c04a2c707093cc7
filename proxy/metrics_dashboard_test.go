package proxy

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// dashboardPath is the Grafana dashboard docker-compose.yml provisions.
var dashboardPath = filepath.Join("..", "deploy", "grafana", "shardflake.json")

// dashboardExprs returns every PromQL expression of the dashboard: panel
// targets and templating queries.
func dashboardExprs(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%s: %v", dashboardPath, err)
	}
	var exprs []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				if s, ok := c.(string); ok && (k == "expr" || k == "definition") {
					exprs = append(exprs, s)
				}
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(doc)
	if len(exprs) < 20 {
		t.Fatalf("%s: only %d expressions", dashboardPath, len(exprs))
	}
	return exprs
}

// grafanaVars replaces the dashboard's variables with values Prometheus
// accepts, so that the expressions can be checked and run.
var grafanaVars = strings.NewReplacer(
	"$__rate_interval", "1m",
	"$__range", "1h",
	"$instance", ".*",
)

var metricName = regexp.MustCompile(`\b(?:shardflake|go|process)_[a-z0-9_]+\b`)

// etcdOnly are metrics a proxy exposes only with the etcd worker-id
// source; the test proxy has a static pair, so they are checked against
// the collector's descriptions instead.
var etcdOnly = map[string]bool{
	"shardflake_keygen_lease_remaining_seconds": true,
	"shardflake_keygen_lease_ttl_seconds":       true,
}

// readwriteOnly reports metrics a proxy exposes only with read/write
// groups; the test proxy has none, so they are checked against the
// collector's descriptions instead.
func readwriteOnly(name string) bool {
	return strings.HasPrefix(name, "shardflake_replica_") || strings.HasPrefix(name, "shardflake_readwrite_")
}

// TestDashboardMetricsExist checks that every metric the Grafana
// dashboard queries is on a live proxy's /metrics (a histogram's
// _bucket, _sum and _count by its family).
func TestDashboardMetricsExist(t *testing.T) {
	exprs := dashboardExprs(t)
	// A traffic rule that limits nothing, so its per-rule series exist.
	e := startOpsEnv(t, opsOptions{server: "traffic:\n- {name: everything, limit: {type: TOKEN_BUCKET, rate: 1000000}}"})
	e.createOrders(t)
	runKnownTraffic(t, e)
	_, body := e.get(t, "/metrics")
	families := metricNames(body)
	described := map[string]bool{}
	ch := make(chan *prometheus.Desc, 64)
	go func() {
		newKeygenCollector(e.srv.keys).Describe(ch)
		newReadwriteCollector(nil).Describe(ch)
		close(ch)
	}()
	for d := range ch {
		if m := regexp.MustCompile(`fqName: "([^"]+)"`).FindStringSubmatch(d.String()); m != nil {
			described[m[1]] = true
		}
	}
	used := map[string]bool{}
	for _, expr := range exprs {
		for _, name := range metricName.FindAllString(expr, -1) {
			used[name] = true
		}
	}
	var names []string
	for n := range used {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		if _, ok := families[name]; ok {
			continue
		}
		base := name
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			base = strings.TrimSuffix(base, suffix)
		}
		if typ := families[base]; base != name && typ == "histogram" {
			continue
		}
		if (etcdOnly[name] || readwriteOnly(name)) && described[name] {
			continue
		}
		t.Errorf("the dashboard queries %s, which the proxy does not expose", name)
	}
	for _, want := range []string{"shardflake_statements_total", "shardflake_data_node_hits_total", "shardflake_statement_fanout_data_nodes_bucket",
		"shardflake_datasource_duration_seconds_bucket", "shardflake_pool_in_use_connections", "shardflake_keygen_ids_generated_total", "shardflake_keygen_lease_state",
		"shardflake_traffic_admitted_total", "shardflake_traffic_rejected_total", "shardflake_traffic_wait_seconds_bucket",
		"shardflake_replica_lag_seconds", "shardflake_replica_reads_total", "shardflake_readwrite_primary_reads_total"} {
		if !used[want] {
			t.Errorf("the dashboard does not show %s", want)
		}
	}
}

// TestDashboardQueriesParse runs every dashboard expression through
// promtool check rules, which parses PromQL as Prometheus does.
func TestDashboardQueriesParse(t *testing.T) {
	promtool := mariadbtest.RequireBinary(t, "promtool")
	var b strings.Builder
	b.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	for i, expr := range dashboardExprs(t) {
		if strings.HasPrefix(expr, "label_values(") {
			continue // a Grafana function, not PromQL
		}
		q, _ := json.Marshal(grafanaVars.Replace(expr))
		fmt.Fprintf(&b, "      - record: dashboard:expr%d\n        expr: %s\n", i, q)
	}
	path := filepath.Join(t.TempDir(), "dashboard-rules.yml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(promtool, "check", "rules", path).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check rules: %v\n%s\n%s", err, out, b.String())
	}
}

// TestDashboardLayout checks what Grafana needs to load the dashboard as
// provisioned: unique panel ids, panels inside the 24-column grid, every
// query on the datasource variable.
func TestDashboardLayout(t *testing.T) {
	raw, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		UID        string `json:"uid"`
		Templating struct {
			List []struct {
				Name, Type string
			} `json:"list"`
		} `json:"templating"`
		Panels []struct {
			ID      int    `json:"id"`
			Type    string `json:"type"`
			Title   string `json:"title"`
			GridPos struct{ X, Y, W, H int }
			Targets []struct {
				Datasource struct{ Type, UID string } `json:"datasource"`
				Expr       string                     `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	if d.UID != "shardflake" {
		t.Errorf("uid %q", d.UID)
	}
	hasDS := false
	for _, v := range d.Templating.List {
		hasDS = hasDS || v.Name == "datasource" && v.Type == "datasource"
	}
	if !hasDS {
		t.Error("no datasource variable")
	}
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d twice", p.ID)
		}
		ids[p.ID] = true
		if p.GridPos.X < 0 || p.GridPos.W <= 0 || p.GridPos.X+p.GridPos.W > 24 || p.GridPos.H <= 0 {
			t.Errorf("panel %q outside the grid: %+v", p.Title, p.GridPos)
		}
		if p.Type != "row" && len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			if tg.Datasource.UID != "${datasource}" || tg.Datasource.Type != "prometheus" || tg.Expr == "" {
				t.Errorf("panel %q target %+v", p.Title, tg)
			}
		}
	}
}
