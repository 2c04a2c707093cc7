package config

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shardflake/shardflake/algorithm"
)

func load(t testing.TB, path string) *Rules {
	t.Helper()
	r, err := Load(path)
	if err != nil {
		t.Fatalf("Load(%s): %v", path, err)
	}
	return r
}

// routeRow routes one row (column -> value) and returns its data nodes.
func routeRow(t *testing.T, tr *TableRule, row map[string]algorithm.Value) []string {
	t.Helper()
	conds := map[string]algorithm.ColumnCondition{}
	for c, v := range row {
		conds[c] = algorithm.ColumnCondition{Column: c, Values: []algorithm.Value{v}}
	}
	nodes, err := tr.Route(conds)
	if err != nil {
		t.Fatalf("route %s %v: %v", tr.Name, row, err)
	}
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.String()
	}
	return out
}

func hasWarning(r *Rules, substr string) bool {
	for _, w := range r.Warnings {
		if strings.Contains(w.Message, substr) {
			return true
		}
	}
	return false
}

// TestExampleRules loads rules.example.yaml, the documented reference the
// demo serves: it must load and validate without warnings.
func TestExampleRules(t *testing.T) {
	r := load(t, "../rules.example.yaml")
	if len(r.Warnings) != 0 {
		t.Errorf("warnings: %v", r.Warnings)
	}
	if r.DatabaseName != "sharding_db" || r.Server.Listen != "127.0.0.1:3307" || r.Server.MetricsListen != "127.0.0.1:9307" {
		t.Errorf("database %q, listen %q, metrics %q", r.DatabaseName, r.Server.Listen, r.Server.MetricsListen)
	}
	if !reflect.DeepEqual(r.Server.Users, []User{appUser("app", "app-secret", "sharding_db")}) {
		t.Errorf("users = %v", r.Server.Users)
	}
	if err := r.CheckServe(); err != nil {
		t.Errorf("CheckServe: %v", err)
	}
	if got := r.DataSourceNames(); !slices.Equal(got, []string{"ds_0", "ds_1"}) {
		t.Errorf("data sources = %q", got)
	}
	for _, name := range []string{"ds_0", "ds_1"} {
		ds := r.DataSource(name)
		if ds == nil || ds.Host != "127.0.0.1" || ds.Port != 3306 || ds.Database != name || ds.User != "root" {
			t.Errorf("data source %s = %+v", name, ds)
		}
	}
	order, item := r.Table("t_order"), r.Table("T_Order_Item")
	if order == nil || item == nil {
		t.Fatalf("tables: %v", r.Tables)
	}
	if len(order.DataNodes) != 8 || order.KeyColumn != "order_id" || order.KeyGenerator != "snowflake" || item.KeyColumn != "item_id" {
		t.Errorf("t_order %v key %s/%s; t_order_item key %s", order.DataNodes, order.KeyColumn, order.KeyGenerator, item.KeyColumn)
	}
	if got := routeRow(t, order, map[string]algorithm.Value{"user_id": int64(3), "order_id": int64(6)}); !slices.Equal(got, []string{"ds_1.t_order_2"}) {
		t.Errorf("t_order user 3 order 6 -> %q", got)
	}
	if g := r.BindingGroup("t_order_item"); !slices.Equal(g, []string{"t_order", "t_order_item"}) {
		t.Errorf("binding group = %q", g)
	}
	if !r.IsBroadcast("T_DICT") || r.IsBroadcast("t_order") {
		t.Errorf("IsBroadcast wrong")
	}
	if kg := r.KeyGenerators["snowflake"]; kg.Type != "SNOWFLAKE" || kg.Props["worker-id"] != "1" {
		t.Errorf("key generator = %+v", kg)
	}
}

func TestLoadShardingSphereProxyExample(t *testing.T) {
	r := load(t, "testdata/rules/ss_proxy_inline.yaml")
	if r.DatabaseName != "sharding_db" || len(r.DataSources) != 2 {
		t.Fatalf("database %q, %d data sources", r.DatabaseName, len(r.DataSources))
	}
	ds := r.DataSources[0]
	want := DataSource{Name: "ds_0", Host: "127.0.0.1", Port: 3306, Database: "demo_ds_0", User: "root",
		MaxPoolSize: 50, MinPoolSize: 1, ConnectionTimeout: 30 * time.Second, IdleTimeout: time.Minute, MaxLifetime: 30 * time.Minute}
	if ds.Name != want.Name || ds.Host != want.Host || ds.Port != want.Port || ds.Database != want.Database || ds.User != want.User ||
		ds.Password != "" || ds.MaxPoolSize != want.MaxPoolSize || ds.MinPoolSize != want.MinPoolSize ||
		ds.ConnectionTimeout != want.ConnectionTimeout || ds.IdleTimeout != want.IdleTimeout || ds.MaxLifetime != want.MaxLifetime ||
		ds.Params["useSSL"] != "false" {
		t.Errorf("ds_0 = %+v", ds)
	}
	order := r.Table("t_order")
	if order.DatabaseStrategy == nil || order.DatabaseStrategy.AlgorithmName != "database_inline" || order.DatabaseStrategy.Columns[0] != "user_id" {
		t.Errorf("t_order database strategy (from defaultDatabaseStrategy) = %+v", order.DatabaseStrategy)
	}
	if got := routeRow(t, order, map[string]algorithm.Value{"user_id": int64(3), "order_id": int64(4)}); !slices.Equal(got, []string{"ds_1.t_order_0"}) {
		t.Errorf("t_order user 3 order 4 -> %q", got)
	}
	if !r.IsBroadcast("t_address") || r.Table("t_order_item").KeyColumn != "order_item_id" {
		t.Errorf("broadcast or key column wrong")
	}
	if !hasWarning(r, "auditStrategy is accepted and ignored") || !hasWarning(r, "no server: section") {
		t.Errorf("warnings = %v", r.Warnings)
	}
}

func TestLoadAutoTables(t *testing.T) {
	r := load(t, "testdata/rules/ss_auto_tables.yaml")
	order := r.Table("t_order")
	if !order.Auto || order.DatabaseStrategy != nil {
		t.Errorf("t_order: auto %v, database strategy %v", order.Auto, order.DatabaseStrategy)
	}
	wantNodes := []DataNode{{"ds_0", "t_order_0"}, {"ds_1", "t_order_1"}, {"ds_0", "t_order_2"}, {"ds_1", "t_order_3"}}
	if !slices.Equal(order.DataNodes, wantNodes) {
		t.Errorf("t_order data nodes = %v, want %v", order.DataNodes, wantNodes)
	}
	if !slices.Equal(order.Tables("ds_1"), []string{"t_order_1", "t_order_3"}) || !order.Node("ds_0", "t_order_2") || order.Node("ds_0", "t_order_1") {
		t.Errorf("t_order Tables/Node wrong")
	}
	tests := []struct {
		table string
		row   map[string]algorithm.Value
		want  string
	}{
		{"t_order", map[string]algorithm.Value{"order_id": int64(5)}, "ds_1.t_order_1"},
		{"t_order", map[string]algorithm.Value{"order_id": int64(6)}, "ds_0.t_order_2"},
		{"t_order_item", map[string]algorithm.Value{"order_id": int64(7)}, "ds_1.t_order_item_3"},
		{"t_user", map[string]algorithm.Value{"user_name": "abc"}, "ds_0.t_user_0"}, // 96354 % 6
		{"t_user", map[string]algorithm.Value{"user_name": "b"}, "ds_0.t_user_2"},   // 98 % 6
		{"t_account", map[string]algorithm.Value{"account_id": int64(5)}, "ds_0.t_account_0"},
		{"t_account", map[string]algorithm.Value{"account_id": int64(31)}, "ds_1.t_account_3"},
		{"t_account", map[string]algorithm.Value{"account_id": int64(45)}, "ds_1.t_account_5"},
		{"t_ledger", map[string]algorithm.Value{"ledger_id": int64(20)}, "ds_0.t_ledger_2"},
		{"t_event", map[string]algorithm.Value{"created_at": "2024-01-01 00:00:15"}, "ds_0.t_event_2"},
		{"t_event", map[string]algorithm.Value{"created_at": "2025-01-01 00:00:00"}, "ds_1.t_event_5"},
	}
	for _, tt := range tests {
		if got := routeRow(t, r.Table(tt.table), tt.row); !slices.Equal(got, []string{tt.want}) {
			t.Errorf("%s %v -> %q, want %s", tt.table, tt.row, got, tt.want)
		}
	}
	if len(r.Table("t_event").DataNodes) != 6 || len(r.Table("t_ledger").DataNodes) != 5 {
		t.Errorf("auto table sizes: t_event %d, t_ledger %d", len(r.Table("t_event").DataNodes), len(r.Table("t_ledger").DataNodes))
	}
	nodes, err := order.Route(map[string]algorithm.ColumnCondition{"order_id": {Range: &algorithm.Range{Low: int64(2), High: int64(3), LowInclusive: true, HighInclusive: true}}})
	if err != nil || len(nodes) != 2 || nodes[0] != (DataNode{"ds_0", "t_order_2"}) || nodes[1] != (DataNode{"ds_1", "t_order_3"}) {
		t.Errorf("t_order order_id BETWEEN 2 AND 3 -> %v, %v", nodes, err)
	}
}

// TestSimulateSpreadsRangeAlgorithms: random values for range and interval
// algorithms fall around their boundaries, so every partition gets rows.
func TestSimulateSpreadsRangeAlgorithms(t *testing.T) {
	r := load(t, "testdata/rules/ss_auto_tables.yaml")
	for _, name := range []string{"t_ledger", "t_account", "t_event"} {
		tr := r.Table(name)
		d, err := tr.Simulate(5000, nil, rand.New(rand.NewPCG(3, 4)))
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range d.Counts {
			if share := 5000 / len(d.Counts); c < share/3 || c > 2*share {
				t.Errorf("%s: %s got %d of 5000 rows (share %d)", name, tr.DataNodes[i], c, share)
			}
		}
	}
}

func TestLoadInterval(t *testing.T) {
	r := load(t, "testdata/rules/ss_interval.yaml")
	if ds := r.DataSource("ds_1"); ds.User != "logger" || ds.Password != "pw" || ds.Port != 3307 || ds.Database != "logs_1" {
		t.Errorf("ds_1 from mysql:// url = %+v", ds)
	}
	if got := routeRow(t, r.Table("t_log"), map[string]algorithm.Value{"created_at": "2024-09-30 23:59:59"}); !slices.Equal(got, []string{"ds_0.t_log_202409"}) {
		t.Errorf("t_log -> %q", got)
	}
	if got := routeRow(t, r.Table("t_metric"), map[string]algorithm.Value{"host_id": int64(7), "taken_at": "2024-03-02 12:00:00"}); !slices.Equal(got, []string{"ds_1.t_metric_20240302"}) {
		t.Errorf("t_metric -> %q", got)
	}
	if len(r.Warnings) != 1 { // only the missing server: section
		t.Errorf("warnings = %v", r.Warnings)
	}
}

func TestLoadComplexHint(t *testing.T) {
	r := load(t, "testdata/rules/ss_complex_hint.yaml")
	cart := r.Table("t_cart")
	if cart.DatabaseStrategy.Kind != algorithm.StrategyComplex || !slices.Equal(cart.DatabaseStrategy.Columns, []string{"user_id", "shop_id"}) {
		t.Errorf("t_cart database strategy = %+v", cart.DatabaseStrategy)
	}
	// (1 + 2) % 2 = 1; Math.abs("C-9".hashCode()) % 4
	var h int32 // Java's String.hashCode of the ASCII "C-9"
	for _, c := range "C-9" {
		h = 31*h + int32(c)
	}
	if h < 0 {
		h = -h
	}
	want := "ds_1.t_cart_" + string(rune('0'+h%4))
	if got := routeRow(t, cart, map[string]algorithm.Value{"user_id": int64(1), "shop_id": int64(2), "cart_id": "C-9"}); !slices.Equal(got, []string{want}) {
		t.Errorf("t_cart -> %q, want %s", got, want)
	}
	audit := r.Table("t_audit")
	if audit.KeyColumn != "id" || audit.KeyGenerator != "snowflake" {
		t.Errorf("t_audit key from defaultKeyGenerateStrategy = %s/%s", audit.KeyColumn, audit.KeyGenerator)
	}
	nodes, err := audit.RouteHint([]algorithm.Value{int64(3)}, []algorithm.Value{int64(0)})
	if err != nil || !slices.Equal(nodes, []DataNode{{"ds_1", "t_audit_0"}}) {
		t.Errorf("t_audit hint ds 3, table 0 -> %v, %v", nodes, err)
	}
	nodes, err = audit.Route(map[string]algorithm.ColumnCondition{"id": {Values: []algorithm.Value{int64(1)}}})
	if err != nil || len(nodes) != 4 {
		t.Errorf("t_audit without hint -> %v, %v; want all 4 data nodes", nodes, err)
	}
	if !slices.Equal(r.BroadcastTables, []string{"t_currency", "t_country"}) {
		t.Errorf("broadcastTables (5.3 form) = %q", r.BroadcastTables)
	}
	if r.DataSource("ds_1").Port != 3306 || r.DataSource("ds_0").MaxPoolSize != 32 {
		t.Errorf("data sources = %+v", r.DataSources)
	}
	if !hasWarning(r, "t_audit: data nodes not analysed: a hint strategy") {
		t.Errorf("warnings = %v", r.Warnings)
	}
}

func TestLoadSkewed(t *testing.T) {
	r := load(t, "testdata/rules/skewed.yaml")
	if !hasWarning(r, "24 of 32 data nodes are reached by no sampled value of order_id") {
		t.Errorf("warnings = %v", r.Warnings)
	}
	d, err := r.Table("t_order").Simulate(8000, nil, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	reached := 0
	for _, c := range d.Counts {
		if c > 0 {
			reached++
		}
	}
	if reached != 8 || !slices.Equal(d.RandomColumns, []string{"order_id"}) {
		t.Errorf("simulation reached %d data nodes (want 8), random columns %q", reached, d.RandomColumns)
	}
}

func TestSimulateWithKeys(t *testing.T) {
	r := load(t, "../rules.example.yaml")
	next := int64(0)
	d, err := r.Table("t_order").Simulate(800, func() (int64, error) { next++; return next, nil }, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if d.KeyColumn != "order_id" || !slices.Equal(d.RandomColumns, []string{"user_id"}) || next != 800 {
		t.Fatalf("key column %q, random %q, keys drawn %d", d.KeyColumn, d.RandomColumns, next)
	}
	// Consecutive keys spread over the four tables exactly.
	perTable := map[string]int{}
	for i, n := range r.Table("t_order").DataNodes {
		perTable[n.Table] += d.Counts[i]
	}
	for tb, c := range perTable {
		if c != 200 {
			t.Errorf("%s got %d of 800 consecutive keys, want 200", tb, c)
		}
	}
}

// BenchmarkTableRoute routes a point query of rules.example.yaml's t_order
// (both strategies), as the planner does for WHERE user_id = ? AND
// order_id = ?.
func BenchmarkTableRoute(b *testing.B) {
	r := load(b, "../rules.example.yaml")
	tr := r.Table("t_order")
	conds := map[string]algorithm.ColumnCondition{
		"user_id":  {Column: "user_id", Values: []algorithm.Value{int64(42)}},
		"order_id": {Column: "order_id", Values: []algorithm.Value{int64(1234567)}},
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tr.Route(conds); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadExample is the cost of loading and validating (sampling)
// rules.example.yaml, paid once per start or reload.
func BenchmarkLoadExample(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		load(b, "../rules.example.yaml")
	}
}
