package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/router"
)

// poolSource is the connSource of a statement outside a transaction.
type testSource struct {
	pools map[string]*pool
}

func (s testSource) acquire(ctx context.Context, ds string, n int) ([]*backendConn, error) {
	return s.pools[ds].get(ctx, n)
}

func (s testSource) release(bc *backendConn) { bc.pool.put(bc) }

// newTestPools starts pools on the shared servers' ds_0 and ds_1, with
// tables t_0..t_9 (id BIGINT PRIMARY KEY, v VARCHAR) in both.
func newTestPools(t *testing.T) testSource {
	t.Helper()
	servers := sharedServers(t)
	src := testSource{pools: map[string]*pool{}}
	for i, s := range servers {
		name := fmt.Sprintf("ds_%d", i)
		stmts := []string{}
		for j := range 10 {
			stmts = append(stmts, fmt.Sprintf("DROP TABLE IF EXISTS x_%d", j),
				fmt.Sprintf("CREATE TABLE x_%d (id BIGINT PRIMARY KEY, v VARCHAR(20))", j))
		}
		s.Exec(t, name, stmts...)
		t.Cleanup(func() {
			var drop []string
			for j := range 10 {
				drop = append(drop, fmt.Sprintf("DROP TABLE IF EXISTS x_%d", j))
			}
			s.Exec(t, name, drop...)
		})
		p := newPool(config.DataSource{Name: name, Host: s.Host(), Port: s.Port(), Database: name, User: s.User(), MaxPoolSize: 20}, false, slog.New(slog.DiscardHandler))
		t.Cleanup(p.close)
		src.pools[name] = p
	}
	return src
}

func collect(t *testing.T, rows RowStream) []string {
	t.Helper()
	defer rows.Close()
	var out []string
	for {
		row, err := rows.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		parts := make([]string, len(row))
		for i, v := range row {
			if v == nil {
				parts[i] = "NULL"
			} else {
				parts[i] = string(v)
			}
		}
		out = append(out, strings.Join(parts, ","))
	}
}

func route(ds, sql string, args ...any) router.Route {
	return router.Route{DataSource: ds, SQL: sql, Args: args}
}

func TestRunPlanWritesAndReads(t *testing.T) {
	src := newTestPools(t)
	ctx := context.Background()

	write := &router.Plan{Kind: router.KindInsert, Routes: []router.Route{
		route("ds_0", "INSERT INTO x_0 VALUES (?, ?), (?, ?)", int64(0), "a", int64(2), "it's"),
		route("ds_1", "INSERT INTO x_1 VALUES (1, 'b')"),
		route("ds_1", "INSERT INTO x_3 VALUES (3, NULL)"),
	}, Keys: &router.GeneratedKeys{Column: "id", First: 7, Count: 4}}
	res, err := runPlan(ctx, write, src, ConcatMerger{}, 1<<20, nopObserver{})
	if err != nil {
		t.Fatal(err)
	}
	if res.rows != nil || res.ok.AffectedRows != 4 || res.ok.InsertID != 7 {
		t.Fatalf("write: got %+v, want 4 affected rows and insert id 7", res)
	}

	read := &router.Plan{Kind: router.KindSelect, Routes: []router.Route{
		route("ds_0", "SELECT id, v FROM x_0 ORDER BY id"),
		route("ds_1", "SELECT id, v FROM x_1"),
		route("ds_1", "SELECT id, v FROM x_3"),
	}}
	res, err = runPlan(ctx, read, src, ConcatMerger{}, 1<<20, nopObserver{})
	if err != nil {
		t.Fatal(err)
	}
	if cols := res.rows.Columns(); len(cols) != 2 || string(cols[0].Name) != "id" || cols[0].Type != mysql.MYSQL_TYPE_LONGLONG {
		t.Errorf("columns: got %d, first %q type %d", len(cols), cols[0].Name, cols[0].Type)
	}
	got := collect(t, res.rows)
	want := []string{"0,a", "2,it's", "1,b", "3,NULL"}
	if !slices.Equal(got, want) {
		t.Errorf("rows: got %q, want %q", got, want)
	}

	// A single route streams its own result; a hidden column is stripped
	// by the merge of a multi-route plan.
	single := &router.Plan{Kind: router.KindSelect, Routes: []router.Route{route("ds_0", "SELECT v FROM x_0 WHERE id = ?", int64(2))}}
	res, err = runPlan(ctx, single, src, ConcatMerger{}, 1<<20, nopObserver{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.rows.(*routeStream); !ok {
		t.Errorf("single route: got %T, want the route's own stream", res.rows)
	}
	if got := collect(t, res.rows); !slices.Equal(got, []string{"it's"}) {
		t.Errorf("single route: got %q", got)
	}
	hidden := &router.Plan{Kind: router.KindSelect, Merge: &router.Merge{Hidden: 1}, Routes: []router.Route{
		route("ds_0", "SELECT v, id FROM x_0 ORDER BY id"), route("ds_1", "SELECT v, id FROM x_1"),
	}}
	res, err = runPlan(ctx, hidden, src, ConcatMerger{}, 1<<20, nopObserver{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.rows.Columns()); n != 1 {
		t.Errorf("hidden column: got %d columns, want 1", n)
	}
	if got := collect(t, res.rows); !slices.Equal(got, []string{"a", "it's", "b"}) {
		t.Errorf("hidden column: got %q", got)
	}
}

func TestRunPlanRejectsMergesItCannotDo(t *testing.T) {
	src := newTestPools(t)
	plan := &router.Plan{Kind: router.KindSelect, Merge: &router.Merge{Sort: []router.OrderKey{{Column: 0}}}, Routes: []router.Route{
		route("ds_0", "SELECT id FROM x_0 ORDER BY id"), route("ds_1", "SELECT id FROM x_1 ORDER BY id"),
	}}
	_, err := runPlan(context.Background(), plan, src, ConcatMerger{}, 1<<20, nopObserver{})
	if got := mysqlError(err); got.Code != mysql.ER_NOT_SUPPORTED_YET {
		t.Fatalf("got %v, want 1235", err)
	}
	for name, p := range src.pools {
		if st := p.stats(); st.InUse != 0 {
			t.Errorf("%s: %d connections still in use", name, st.InUse)
		}
	}
}

func TestRunPlanSharesConnectionsBeyondTheLimit(t *testing.T) {
	src := newTestPools(t)
	ctx := context.Background()
	var writes, reads []router.Route
	for j := range 10 {
		writes = append(writes, route("ds_0", fmt.Sprintf("INSERT INTO x_%d VALUES (%d, 'r%d'), (%d, 'r%d')", j, j, j, j+100, j)))
		reads = append(reads, route("ds_0", fmt.Sprintf("SELECT id FROM x_%d ORDER BY id", j)))
	}
	res, err := runPlan(ctx, &router.Plan{Kind: router.KindInsert, Routes: writes}, src, ConcatMerger{}, 1<<20, nopObserver{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ok.AffectedRows != 20 {
		t.Fatalf("got %d affected rows, want 20", res.ok.AffectedRows)
	}

	// Read the streams backwards, as a merge may: routes queued behind
	// others on a shared connection force their predecessors to buffer.
	ex := &execution{ctx: ctx, plan: &router.Plan{Kind: router.KindSelect, Routes: reads}, conns: src, budget: 1 << 20, obs: nopObserver{}}
	if err := ex.assign(); err != nil {
		t.Fatal(err)
	}
	if len(ex.lanes) != maxConnsPerDataSource {
		t.Fatalf("got %d lanes, want %d", len(ex.lanes), maxConnsPerDataSource)
	}
	ex.start()
	streams := make([]RowStream, len(ex.routes))
	for i, r := range ex.routes {
		streams[i] = r.rowStream()
	}
	for j := len(streams) - 1; j >= 0; j-- {
		got := collect(t, streams[j])
		want := []string{fmt.Sprint(j), fmt.Sprint(j + 100)}
		if !slices.Equal(got, want) {
			t.Errorf("route %d: got %q, want %q", j, got, want)
		}
	}
	if st := src.pools["ds_0"].stats(); st.InUse != 0 {
		t.Errorf("%d connections still in use", st.InUse)
	}

	// Without budget for the buffering, the statement fails clearly.
	ex = &execution{ctx: ctx, plan: &router.Plan{Kind: router.KindSelect, Routes: reads}, conns: src, budget: 10, obs: nopObserver{}}
	if err := ex.assign(); err != nil {
		t.Fatal(err)
	}
	ex.start()
	last := ex.routes[len(ex.routes)-1].rowStream()
	if _, err := last.Next(); mysqlError(err).Code != mysql.ER_NOT_SUPPORTED_YET {
		t.Errorf("over budget: got %v, want 1235", err)
	}
	ex.abort()
	if st := src.pools["ds_0"].stats(); st.InUse != 0 {
		t.Errorf("after abort: %d connections still in use", st.InUse)
	}
}

func TestRunPlanCancelStopsTheBackendQuery(t *testing.T) {
	src := newTestPools(t)
	tests := []struct {
		name string
		sql  string
	}{
		{"sleep", "SELECT SLEEP(30)"},
		{"busy", "SELECT BENCHMARK(10000000000, MD5('x'))"},
		{"write", "DO SLEEP(30)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeoutCause(context.Background(), 300*time.Millisecond, ErrStatementTimeout)
			defer cancel()
			plan := &router.Plan{Kind: router.KindSelect, Routes: []router.Route{route("ds_0", tt.sql), route("ds_1", tt.sql)}}
			start := time.Now()
			res, err := runPlan(ctx, plan, src, ConcatMerger{}, 1<<20, nopObserver{})
			if err == nil && res.rows != nil {
				for err == nil {
					_, err = res.rows.Next()
				}
				res.rows.Close()
			}
			if !errors.Is(err, ErrStatementTimeout) {
				t.Errorf("got %v, want ErrStatementTimeout", err)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("cancel took %s", took)
			}
			for name, p := range src.pools {
				if st := p.stats(); st.InUse != 0 {
					t.Errorf("%s: %d connections in use after cancel", name, st.InUse)
				}
				conns, err := p.get(context.Background(), 1)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if _, err := conns[0].exec("SELECT 1"); err != nil {
					t.Errorf("%s: connection after cancel: %v", name, err)
				}
				p.put(conns...)
			}
		})
	}
}

func TestPoolFailsFastWhileDown(t *testing.T) {
	// A port nothing listens on.
	p := newPool(config.DataSource{Name: "ds_gone", Host: "127.0.0.1", Port: 1, Database: "x", User: "root", MaxPoolSize: 2}, false, slog.New(slog.DiscardHandler))
	defer p.close()
	_, err := p.get(context.Background(), 1)
	var dse *DataSourceError
	if !errors.As(err, &dse) || dse.DataSource != "ds_gone" {
		t.Fatalf("got %v, want a DataSourceError naming ds_gone", err)
	}
	if m := mysqlError(err); m.Code != mysql.ER_UNKNOWN_ERROR || !strings.Contains(m.Message, "ds_gone") {
		t.Errorf("client sees %v", m)
	}
	start := time.Now()
	for range 100 {
		if _, err := p.get(context.Background(), 1); err == nil {
			t.Fatal("got a connection to a data source that is down")
		}
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("100 requests to a down data source took %s", took)
	}
	if p.stats().Down == nil {
		t.Error("stats do not say the data source is down")
	}
}
