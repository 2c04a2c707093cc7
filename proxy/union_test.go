package proxy

import (
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/proxy/metrics"
	"github.com/shardflake/shardflake/router"
)

// unionRules shard ut by id like the sysbench layout: 2 data sources × 4
// tables.
const unionRules = `  - !SHARDING
    tables:
      ut:
        actualDataNodes: ds_${0..1}.ut_${0..3}
        databaseStrategy:
          standard: { shardingColumn: id, shardingAlgorithmName: ut_db }
        tableStrategy:
          standard: { shardingColumn: id, shardingAlgorithmName: ut_table }
    shardingAlgorithms:
      ut_db:    { type: INLINE, props: { algorithm-expression: "ds_${id % 2}", allow-range-query-with-inline-sharding: true } }
      ut_table: { type: INLINE, props: { algorithm-expression: "ut_${id.intdiv(2) % 4}", allow-range-query-with-inline-sharding: true } }
`

const (
	unionTable = "(id INT PRIMARY KEY, k INT NOT NULL, c VARCHAR(20) NULL, g INT NOT NULL)"
	unionRefDB = "union_ref"
)

// unionRows are the test rows: c NULL every seventh row, repeated
// values of c and g across tables.
func unionRows() []string {
	var rows []string
	for id := 1; id <= 60; id++ {
		c := fmt.Sprintf("'c%02d'", (id*7)%13)
		if id%7 == 0 {
			c = "NULL"
		}
		rows = append(rows, fmt.Sprintf("(%d, %d, %s, %d)", id, (id*31)%17, c, id%5))
	}
	return rows
}

// unionSetup creates the physical tables on both backends and the
// reference table (all rows in one table) on backend 0, and fills them.
func unionSetup(t *testing.T, e *testEnv) *sql.DB {
	t.Helper()
	for i := range 2 {
		db := e.backend(t, i)
		for j := range 4 {
			unionExec(t, db, fmt.Sprintf("DROP TABLE IF EXISTS ut_%d", j))
			unionExec(t, db, fmt.Sprintf("CREATE TABLE ut_%d %s", j, unionTable))
		}
	}
	ref := e.backend(t, 0)
	unionExec(t, ref, "DROP DATABASE IF EXISTS "+unionRefDB)
	unionExec(t, ref, "CREATE DATABASE "+unionRefDB)
	unionExec(t, ref, "CREATE TABLE "+unionRefDB+".ut "+unionTable)
	values := strings.Join(unionRows(), ", ")
	unionExec(t, ref, "INSERT INTO "+unionRefDB+".ut VALUES "+values)
	p := e.open(t)
	unionExec(t, p, "INSERT INTO ut (id, k, c, g) VALUES "+values)
	t.Cleanup(func() {
		for i := range 2 {
			for j := range 4 {
				e.backend(t, i).Exec(fmt.Sprintf("DROP TABLE IF EXISTS ut_%d", j))
			}
		}
		ref.Exec("DROP DATABASE IF EXISTS " + unionRefDB)
	})
	return ref
}

func unionExec(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// queryRows returns q's rows as text, NULL as "NULL", and its column
// names and database types.
func queryRows(t *testing.T, db *sql.DB, q string, args ...any) (cols []string, rows []string) {
	t.Helper()
	rs, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	types, err := rs.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	for _, ct := range types {
		n, _ := ct.Nullable()
		cols = append(cols, fmt.Sprintf("%s %s null=%v", ct.Name(), ct.DatabaseTypeName(), n))
	}
	rows = scanStrings(t, rs, q, "|")
	return cols, rows
}

// comSelect returns the sum of Com_select over the backends.
func comSelect(t *testing.T, e *testEnv) int {
	t.Helper()
	total := 0
	for i := range 2 {
		var name string
		var n int
		if err := e.backend(t, i).QueryRow("SHOW GLOBAL STATUS LIKE 'Com_select'").Scan(&name, &n); err != nil {
			t.Fatal(err)
		}
		total += n
	}
	return total
}

// nodeHits returns shardflake_data_node_hits_total of every ut table.
func nodeHits(t *testing.T, m *metrics.Metrics) map[string]float64 {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "shardflake_data_node_hits_total" {
			continue
		}
		for _, mt := range mf.GetMetric() {
			var ds, table string
			for _, l := range mt.GetLabel() {
				switch l.GetName() {
				case "datasource":
					ds = l.GetValue()
				case "table":
					table = l.GetValue()
				}
			}
			if strings.HasPrefix(table, "ut_") {
				out[ds+"."+table] = mt.GetCounter().GetValue()
			}
		}
	}
	return out
}

// unionCase is one query, with the backend statements it takes joined.
type unionCase struct {
	name    string
	sql     string
	args    []any
	ordered bool // rows compared in order
	joined  int  // backend statements with unionRoutes on (8 with it off)
}

var unionCases = []unionCase{
	{name: "range", sql: "SELECT c FROM ut WHERE id BETWEEN ? AND ?", args: []any{5, 44}, joined: 2},
	{name: "range text", sql: "SELECT c FROM ut WHERE id BETWEEN 5 AND 44", joined: 2},
	{name: "range order", sql: "SELECT c FROM ut WHERE id BETWEEN ? AND ? ORDER BY c", args: []any{3, 50}, ordered: true, joined: 2},
	{name: "order two keys", sql: "SELECT id, c FROM ut ORDER BY c, id", ordered: true, joined: 2},
	{name: "order desc nulls", sql: "SELECT c, id FROM ut ORDER BY c DESC, id DESC", ordered: true, joined: 2},
	{name: "order limit", sql: "SELECT id, k FROM ut ORDER BY k, id LIMIT 7", ordered: true, joined: 2},
	{name: "order limit offset", sql: "SELECT id, k FROM ut ORDER BY k DESC, id LIMIT 4 OFFSET 9", ordered: true, joined: 2},
	{name: "order limit args", sql: "SELECT id, c FROM ut WHERE id > ? ORDER BY c DESC, id LIMIT ?, ?", args: []any{2, 3, 6}, ordered: true, joined: 2},
	{name: "limit unordered", sql: "SELECT k FROM ut WHERE k = 3 LIMIT 2", joined: 2},
	{name: "distinct ordered", sql: "SELECT DISTINCT c FROM ut WHERE id BETWEEN ? AND ? ORDER BY c", args: []any{1, 60}, ordered: true, joined: 2},
	{name: "distinct limit", sql: "SELECT DISTINCT g FROM ut ORDER BY g LIMIT 3", ordered: true, joined: 2},
	{name: "distinct unordered", sql: "SELECT DISTINCT g FROM ut", joined: 2},
	{name: "aggregates", sql: "SELECT SUM(k), COUNT(*), COUNT(c), AVG(k), MIN(c), MAX(k) FROM ut WHERE id BETWEEN ? AND ?", args: []any{4, 57}, joined: 2},
	{name: "aggregates none", sql: "SELECT SUM(k), COUNT(*), AVG(k) FROM ut WHERE id > 1000", joined: 2},
	{name: "group", sql: "SELECT g, SUM(k), COUNT(*), COUNT(c), AVG(k) FROM ut GROUP BY g", ordered: true, joined: 2},
	{name: "group desc", sql: "SELECT g, SUM(k), AVG(k) FROM ut WHERE id BETWEEN 2 AND 59 GROUP BY g ORDER BY g DESC", ordered: true, joined: 2},
	{name: "group having", sql: "SELECT g, COUNT(*) FROM ut GROUP BY g HAVING SUM(k) > 90 ORDER BY g", ordered: true, joined: 2},
	{name: "group limit", sql: "SELECT c, COUNT(*) FROM ut GROUP BY c ORDER BY c LIMIT 4", ordered: true, joined: 2},
	{name: "locking read apart", sql: "SELECT id FROM ut WHERE id < 20 ORDER BY id FOR UPDATE", ordered: true, joined: 8},
	{name: "hidden order key apart", sql: "SELECT id FROM ut ORDER BY k, id", ordered: true, joined: 8},
	{name: "wildcard", sql: "SELECT * FROM ut WHERE id BETWEEN ? AND ?", args: []any{10, 30}, joined: 2},
	// After a wildcard the sort key is repeated as a hidden column,
	// counted from the end: its position is not known.
	{name: "wildcard order apart", sql: "SELECT * FROM ut WHERE id BETWEEN ? AND ? ORDER BY id", args: []any{10, 30}, ordered: true, joined: 8},
}

// TestUnionBackendStatements runs each case through a proxy joining
// routes and one that does not, from a client using prepared statements
// (COM_STMT_EXECUTE) and one sending text, compares both with the reference table,
// and counts the statements the backends ran (Com_select): two (one per
// data source) joined, eight apart.
func TestUnionBackendStatements(t *testing.T) {
	for _, mode := range []struct {
		name   string
		server string
		on     bool
	}{{"on", "", true}, {"off", "unionRoutes: false", false}} {
		t.Run(mode.name, func(t *testing.T) {
			backends := sharedServers(t)
			rules, err := config.Parse([]byte(rulesYAML(backends, mode.server, unionRules)), "union.yaml")
			if err != nil {
				t.Fatal(err)
			}
			m := metrics.New(rules, metrics.Options{})
			e := startEnv(t, envOptions{server: mode.server, rules: unionRules, observer: m})
			if e.rules.Server.UnionRoutes != mode.on {
				t.Fatalf("UnionRoutes = %v, want %v", e.rules.Server.UnionRoutes, mode.on)
			}
			unionSetup(t, e)
			refDB := e.backends[0].Open(t, unionRefDB)
			for _, client := range []struct {
				name  string
				param string
			}{{"prepared", ""}, {"text", "interpolateParams=true"}} {
				var p *sql.DB
				if client.param == "" {
					p = e.open(t)
				} else {
					p = e.open(t, client.param)
				}
				for _, tc := range unionCases {
					t.Run(client.name+" "+tc.name, func(t *testing.T) {
						wantCols, want := queryRows(t, refDB, tc.sql, tc.args...)
						// The first run of a shape runs apart and learns its
						// columns; the second joins.
						queryRows(t, p, tc.sql, tc.args...)
						hits := nodeHits(t, m)
						before := comSelect(t, e)
						gotCols, got := queryRows(t, p, tc.sql, tc.args...)
						sent := comSelect(t, e) - before
						after := nodeHits(t, m)
						if !slices.Equal(gotCols, wantCols) {
							// Names, types and nullability; the raw column
							// definitions are compared by TestUnionDifferential.
							t.Errorf("columns:\n got %q\nwant %q", gotCols, wantCols)
						}
						if !tc.ordered {
							slices.Sort(got)
							slices.Sort(want)
						}
						if !slices.Equal(got, want) {
							t.Errorf("rows:\n got %q\nwant %q", got, want)
						}
						wantSent := 8
						if mode.on && tc.joined != 0 {
							wantSent = tc.joined
						}
						if sent != wantSent {
							t.Errorf("backends ran %d SELECTs, want %d", sent, wantSent)
						}
						{
							for ds := range 2 {
								for tb := range 4 {
									n := fmt.Sprintf("ds_%d.ut_%d", ds, tb)
									if d := after[n] - hits[n]; d != 1 {
										t.Errorf("hits of %s moved by %v, want 1", n, d)
									}
								}
							}
						}
					})
				}
			}
		})
	}
}

// TestUnionInTransaction joins the routes of a SELECT inside a
// transaction too: one pinned connection per data source runs one
// statement, and the SELECT sees the transaction's own writes.
func TestUnionInTransaction(t *testing.T) {
	e := startEnv(t, envOptions{rules: unionRules})
	unionSetup(t, e)
	p := e.open(t)
	tx, err := p.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec("UPDATE ut SET k = k + 100 WHERE id IN (3, 8)"); err != nil {
		t.Fatal(err)
	}
	q := "SELECT id, k FROM ut WHERE id BETWEEN ? AND ? ORDER BY k DESC, id LIMIT 3"
	sum := func() string {
		t.Helper()
		rows, err := tx.Query(q, 1, 60)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var id, k int
			if err := rows.Scan(&id, &k); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%d:%d", id, k))
		}
		return strings.Join(out, ",")
	}
	first := sum()
	before := comSelect(t, e)
	got := sum()
	if sent := comSelect(t, e) - before; sent != 2 {
		t.Errorf("backends ran %d SELECTs in the transaction, want 2", sent)
	}
	// k = (id*31)%17: id 3 -> 8+100, id 8 -> 10+100, then the largest
	// untouched k is 16 (id 6: 186%17=16).
	if want := "8:110,3:108,6:16"; got != want || first != want {
		t.Errorf("rows apart %q, joined %q, want %q", first, got, want)
	}
}

// TestJoinRoutes checks the statement each data source is sent and the
// plans left apart.
func TestJoinRoutes(t *testing.T) {
	route := func(ds, table, tail string, args ...any) router.Route {
		return router.Route{DataSource: ds, Nodes: []config.DataNode{{DataSource: ds, Table: table}},
			SQL: "SELECT `c`, `k` FROM `" + table + "`" + tail, Args: args}
	}
	four := func(tail string, args ...any) []router.Route {
		return []router.Route{route("ds_0", "t_0", tail, args...), route("ds_1", "t_0", tail, args...),
			route("ds_0", "t_1", tail, args...), route("ds_1", "t_1", tail, args...)}
	}
	distinctFour := func(tail string, args ...any) []router.Route {
		rs := four(tail, args...)
		for i := range rs {
			rs[i].SQL = "SELECT DISTINCT " + strings.TrimPrefix(rs[i].SQL, "SELECT ")
		}
		return rs
	}
	plan := func(m *router.Merge, routes []router.Route) *router.Plan {
		return &router.Plan{Kind: router.KindSelect, Type: router.RouteAll, Routes: routes, Merge: m, Unionable: true}
	}
	// apart is a plan whose routes the router found unfit to be UNION
	// branches (router.TestPlanUnionable: FOR UPDATE, a ? in the select
	// list, a subquery, ...).
	apart := func(tail string) *router.Plan {
		p := plan(&router.Merge{}, four(tail))
		p.Unionable = false
		return p
	}
	tests := []struct {
		name string
		give *router.Plan
		want []string // SQL per data source; nil: not joined
	}{
		{"plain", plan(&router.Merge{}, four(" WHERE `id` BETWEEN ? AND ?", 1, 9)), []string{
			"(SELECT `c`, `k` FROM `t_0` WHERE `id` BETWEEN ? AND ?) UNION ALL (SELECT `c`, `k` FROM `t_1` WHERE `id` BETWEEN ? AND ?)",
			"(SELECT `c`, `k` FROM `t_0` WHERE `id` BETWEEN ? AND ?) UNION ALL (SELECT `c`, `k` FROM `t_1` WHERE `id` BETWEEN ? AND ?)"}},
		{"sorted with limit", plan(&router.Merge{Sort: []router.OrderKey{{Column: 0}, {Column: 1, Desc: true}}, Limit: &router.Limit{Offset: 2, Count: 3, Pushed: true}},
			four(" ORDER BY `c`, `k` DESC LIMIT 5")), []string{
			"(SELECT `c`, `k` FROM `t_0` ORDER BY `c`, `k` DESC LIMIT 5) UNION ALL (SELECT `c`, `k` FROM `t_1` ORDER BY `c`, `k` DESC LIMIT 5) ORDER BY 1, 2 DESC LIMIT 5",
			"(SELECT `c`, `k` FROM `t_0` ORDER BY `c`, `k` DESC LIMIT 5) UNION ALL (SELECT `c`, `k` FROM `t_1` ORDER BY `c`, `k` DESC LIMIT 5) ORDER BY 1, 2 DESC LIMIT 5"}},
		{"distinct keeps every row of the union", plan(&router.Merge{Sort: []router.OrderKey{{Column: 0}}, Distinct: true, Limit: &router.Limit{Count: 3, Pushed: true}},
			four(" ORDER BY `c` LIMIT 3")), []string{
			"(SELECT `c`, `k` FROM `t_0` ORDER BY `c` LIMIT 3) UNION ALL (SELECT `c`, `k` FROM `t_1` ORDER BY `c` LIMIT 3) ORDER BY 1",
			"(SELECT `c`, `k` FROM `t_0` ORDER BY `c` LIMIT 3) UNION ALL (SELECT `c`, `k` FROM `t_1` ORDER BY `c` LIMIT 3) ORDER BY 1"}},
		{"distinct without limit: one UNION dedups", plan(&router.Merge{Sort: []router.OrderKey{{Column: 0}, {Column: 1}}, Distinct: true},
			distinctFour(" WHERE `id` BETWEEN ? AND ? ORDER BY `c`, `k`", 1, 9)), []string{
			"(SELECT `c`, `k` FROM `t_0` WHERE `id` BETWEEN ? AND ? ORDER BY `c`, `k`) UNION (SELECT `c`, `k` FROM `t_1` WHERE `id` BETWEEN ? AND ? ORDER BY `c`, `k`) ORDER BY 1, 2",
			"(SELECT `c`, `k` FROM `t_0` WHERE `id` BETWEEN ? AND ? ORDER BY `c`, `k`) UNION (SELECT `c`, `k` FROM `t_1` WHERE `id` BETWEEN ? AND ? ORDER BY `c`, `k`) ORDER BY 1, 2"}},
		{"distinct with limit keeps each DISTINCT", plan(&router.Merge{Sort: []router.OrderKey{{Column: 0}, {Column: 1}}, Distinct: true, Limit: &router.Limit{Count: 3}},
			distinctFour(" ORDER BY `c`, `k` LIMIT 3")), []string{
			"(SELECT DISTINCT `c`, `k` FROM `t_0` ORDER BY `c`, `k` LIMIT 3) UNION ALL (SELECT DISTINCT `c`, `k` FROM `t_1` ORDER BY `c`, `k` LIMIT 3) ORDER BY 1, 2",
			"(SELECT DISTINCT `c`, `k` FROM `t_0` ORDER BY `c`, `k` LIMIT 3) UNION ALL (SELECT DISTINCT `c`, `k` FROM `t_1` ORDER BY `c`, `k` LIMIT 3) ORDER BY 1, 2"}},
		{"distinct over groups keeps each DISTINCT", plan(&router.Merge{Distinct: true, Group: &router.Group{}}, distinctFour("")), []string{
			"(SELECT DISTINCT `c`, `k` FROM `t_0`) UNION ALL (SELECT DISTINCT `c`, `k` FROM `t_1`)",
			"(SELECT DISTINCT `c`, `k` FROM `t_0`) UNION ALL (SELECT DISTINCT `c`, `k` FROM `t_1`)"}},
		{"route not limited", plan(&router.Merge{Limit: &router.Limit{Count: 3}, Group: &router.Group{}}, four("")), []string{
			"(SELECT `c`, `k` FROM `t_0`) UNION ALL (SELECT `c`, `k` FROM `t_1`)",
			"(SELECT `c`, `k` FROM `t_0`) UNION ALL (SELECT `c`, `k` FROM `t_1`)"}},
		{"one data source keeps its single route", plan(&router.Merge{}, four("")[:3]), []string{
			"(SELECT `c`, `k` FROM `t_0`) UNION ALL (SELECT `c`, `k` FROM `t_1`)",
			"SELECT `c`, `k` FROM `t_0`"}},
		{"one route per data source", plan(&router.Merge{}, four("")[:2]), nil},
		{"describe", plan(&router.Merge{Describe: true}, four("")), nil},
		{"no merge", plan(nil, four("")), nil},
		{"sort key from the end", plan(&router.Merge{Sort: []router.OrderKey{{Column: -1}}}, four(" ORDER BY `k`")), nil},
		{"a LIMIT the router did not push stays off the union", plan(&router.Merge{Sort: []router.OrderKey{{Column: 0}}, Limit: &router.Limit{Count: 3}},
			four(" ORDER BY `c` LIMIT 3")), []string{
			"(SELECT `c`, `k` FROM `t_0` ORDER BY `c` LIMIT 3) UNION ALL (SELECT `c`, `k` FROM `t_1` ORDER BY `c` LIMIT 3) ORDER BY 1",
			"(SELECT `c`, `k` FROM `t_0` ORDER BY `c` LIMIT 3) UNION ALL (SELECT `c`, `k` FROM `t_1` ORDER BY `c` LIMIT 3) ORDER BY 1"}},
		{"for update", apart(" FOR UPDATE"), nil},
		{"lock in share mode", apart(" LOCK IN SHARE MODE"), nil},
		{"subquery", apart(" WHERE `k` IN (SELECT 1)"), nil},
		{"not a select", &router.Plan{Kind: router.KindUpdate, Routes: four("")}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jp := joinRoutes(tt.give)
			if tt.want == nil {
				if jp != nil {
					t.Fatalf("joined: %+v", jp.plan.Routes)
				}
				return
			}
			if jp == nil {
				t.Fatal("not joined")
			}
			var got []string
			for _, r := range jp.plan.Routes {
				got = append(got, r.SQL)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("SQL:\n got %q\nwant %q", got, tt.want)
			}
			r := jp.plan.Routes[0]
			if len(r.Nodes) != 2 || r.Nodes[1].Table != "t_1" {
				t.Errorf("nodes %v, want both tables of ds_0", r.Nodes)
			}
			if tt.give.Routes[0].Args != nil && len(r.Args) != 2*len(tt.give.Routes[0].Args) {
				t.Errorf("args %v, want both routes'", r.Args)
			}
			if jp.plan.Merge != tt.give.Merge {
				t.Error("the joined plan must keep the merge")
			}
		})
	}
}

// TestUnionSessionSettings: column definitions depend on the session's
// settings (div_precision_increment sets AVG's decimals), so a shape
// learnt by one session is not shown to a session with other settings.
func TestUnionSessionSettings(t *testing.T) {
	e := startEnv(t, envOptions{rules: unionRules})
	unionSetup(t, e)
	ctx := t.Context()
	refDB := e.backends[0].Open(t, unionRefDB)
	p := e.open(t)
	q := "SELECT g, AVG(k) FROM ut GROUP BY g"
	for _, prec := range []int{4, 9, 2} {
		conn, err := p.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := refDB.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []*sql.Conn{conn, ref} {
			if _, err := c.ExecContext(ctx, fmt.Sprintf("SET div_precision_increment = %d", prec)); err != nil {
				t.Fatal(err)
			}
		}
		run := func(c *sql.Conn) (int64, []string) {
			t.Helper()
			rs, err := c.QueryContext(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			defer rs.Close()
			types, err := rs.ColumnTypes()
			if err != nil {
				t.Fatal(err)
			}
			_, scale, _ := types[1].DecimalSize()
			var rows []string
			for rs.Next() {
				var g, avg string
				if err := rs.Scan(&g, &avg); err != nil {
					t.Fatal(err)
				}
				rows = append(rows, g+"|"+avg)
			}
			slices.Sort(rows)
			return scale, rows
		}
		wantScale, want := run(ref)
		run(conn)
		before := e.srv.current().joins.joined.Load()
		scale, got := run(conn)
		if e.srv.current().joins.joined.Load() != before+1 {
			t.Errorf("div_precision_increment %d: the second run did not join", prec)
		}
		if scale != wantScale || !slices.Equal(got, want) {
			t.Errorf("div_precision_increment %d: scale %d rows %q, want scale %d rows %q", prec, scale, got, wantScale, want)
		}
		conn.Close()
		ref.Close()
	}
}

// TestUnionLargeResultsRunApart: a statement shape whose run returned
// more rows than the join cache's limit runs apart from then on (a
// materialised UNION would cost more than the round trips it saves),
// one that returned fewer joins.
func TestUnionLargeResultsRunApart(t *testing.T) {
	e := startEnv(t, envOptions{rules: unionRules})
	unionSetup(t, e)
	e.srv.current().joins.rowLimit = 20
	p := e.open(t)
	for _, tc := range []struct {
		name string
		sql  string
		rows int
		want []int // backend SELECTs of the second, third run
	}{
		{"10 rows join", "SELECT id FROM ut WHERE id BETWEEN 1 AND 10 ORDER BY id", 10, []int{2, 2}},
		{"60 rows stay apart", "SELECT id, k FROM ut ORDER BY id", 60, []int{8, 8}},
		{"60 rows, no order, stay apart", "SELECT id, c FROM ut", 60, []int{8, 8}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, rows := queryRows(t, p, tc.sql); len(rows) != tc.rows {
				t.Fatalf("first run: %d rows, want %d", len(rows), tc.rows)
			}
			for i, want := range tc.want {
				before := comSelect(t, e)
				_, rows := queryRows(t, p, tc.sql)
				if sent := comSelect(t, e) - before; sent != want {
					t.Errorf("run %d: backends ran %d SELECTs, want %d", i+2, sent, want)
				}
				if len(rows) != tc.rows {
					t.Errorf("run %d: %d rows, want %d", i+2, len(rows), tc.rows)
				}
			}
		})
	}
}

// TestJoinTemplate: a plan of the shape a template was made from is
// joined as joinRoutes joins it, with its own arguments; a plan of
// another shape (other routes, another LIMIT) is not.
func TestJoinTemplate(t *testing.T) {
	route := func(ds, table string, args ...any) router.Route {
		return router.Route{DataSource: ds, Nodes: []config.DataNode{{DataSource: ds, Table: table}},
			SQL: "SELECT `c` FROM `" + table + "` WHERE `id` BETWEEN ? AND ? ORDER BY `c` LIMIT 7", Args: args}
	}
	plan := func(count int64, args ...any) *router.Plan {
		return &router.Plan{Kind: router.KindSelect, Type: router.RouteAll, Unionable: true,
			Merge:  &router.Merge{Sort: []router.OrderKey{{Column: 0}}, Limit: &router.Limit{Count: count, Pushed: true}},
			Routes: []router.Route{route("ds_0", "t_0", args...), route("ds_1", "t_0", args...), route("ds_0", "t_1", args...)}}
	}
	first := plan(7, 1, 9)
	tmpl := newJoinTemplate(first, joinRoutes(first))
	next := plan(7, 20, 30)
	got, want := tmpl.apply(next), joinRoutes(next)
	if got == nil {
		t.Fatal("a plan of the same shape was not joined")
	}
	if len(got.plan.Routes) != len(want.plan.Routes) || !slices.Equal(got.joined, want.joined) {
		t.Fatalf("routes %+v, want %+v", got.plan.Routes, want.plan.Routes)
	}
	for i := range want.plan.Routes {
		g, w := got.plan.Routes[i], want.plan.Routes[i]
		if g.SQL != w.SQL || g.DataSource != w.DataSource || !slices.Equal(g.Args, w.Args) || !slices.Equal(g.Nodes, w.Nodes) {
			t.Errorf("route %d: %+v, want %+v", i, g, w)
		}
	}
	if a := got.plan.Routes[0].Args; !slices.Equal(a, []any{20, 30, 20, 30}) {
		t.Errorf("args %v, want the new plan's", a)
	}
	if tmpl.apply(plan(8, 20, 30)) != nil {
		t.Error("applied to a plan with another LIMIT")
	}
	other := plan(7, 20, 30)
	other.Routes = other.Routes[:2]
	if tmpl.apply(other) != nil {
		t.Error("applied to a plan with other routes")
	}
	other = plan(7, 20, 30)
	other.Routes[2].SQL += " "
	if tmpl.apply(other) != nil {
		t.Error("applied to a plan with another route SQL")
	}
}
