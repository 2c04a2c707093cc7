package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
)

// TestExplainRoutes runs EXPLAIN through the proxy (it was 1235) and
// compares it with what the data sources say of the routes PREVIEW lists:
// the rows of each route's EXPLAIN, in the routes' order, under the
// columns MariaDB's EXPLAIN has for the reference table. A write is
// explained, not run; FORMAT=JSON answers one route's document and is
// refused over several routes, with the connection usable after.
// MariaDB's EXPLAIN PARTITIONS (pt-visual-explain's EXPLAIN /*!50115
// PARTITIONS*/, 1064 from the parser before) and EXPLAIN EXTENDED (1064
// before too) answer the same way, with MariaDB's partitions or filtered
// column.
func TestExplainRoutes(t *testing.T) {
	e := diffEnvironment(t)
	proxy := oneConn(t, e.proxy)
	direct := []*connPair{{db: "mg_0"}, {db: "mg_1"}}
	for i, d := range direct {
		db, err := e.backends[i].DB(d.db)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		d.conn = oneConn(t, db)
	}
	for _, explain := range []struct{ give, routes string }{
		{"EXPLAIN ", "EXPLAIN "},
		{"EXPLAIN PARTITIONS ", "EXPLAIN PARTITIONS "},
		{"explain /*!50115 PARTITIONS*/ ", "EXPLAIN PARTITIONS "},
		{"EXPLAIN EXTENDED ", "EXPLAIN EXTENDED "},
		{"describe extended ", "EXPLAIN EXTENDED "},
	} {
		refCols := connResult(t, oneConn(t, e.ref), explain.give+"SELECT * FROM t_order WHERE user_id = 3")
		refCols = refCols[:strings.IndexByte(refCols, '\n')+1]
		for _, q := range []string{
			"SELECT * FROM t_order WHERE user_id = 3",
			"SELECT * FROM t_order WHERE user_id = 3 AND order_id = 22",
			"SELECT status, COUNT(*) FROM t_order GROUP BY status ORDER BY status LIMIT 2",
			"SELECT o.order_id, i.item_id FROM t_order o JOIN t_order_item i ON o.order_id = i.order_id AND o.user_id = i.user_id WHERE o.user_id = 4",
			"UPDATE t_order SET status = 'explained' WHERE user_id = 3",
			"DELETE FROM t_order WHERE order_id = 22",
		} {
			var want strings.Builder
			want.WriteString(refCols)
			routes := previewRoutes(t, proxy, q)
			for _, r := range routes {
				var ds int
				if _, err := fmt.Sscanf(r.dataSource, "ds_%d", &ds); err != nil {
					t.Fatalf("PREVIEW %s: data source %q", q, r.dataSource)
				}
				_, rows, _ := strings.Cut(connResult(t, direct[ds].conn, explain.routes+r.sql), "\n")
				want.WriteString(rows)
			}
			got := connResult(t, proxy, explain.give+q)
			if got != want.String() {
				t.Errorf("%s%s (%d routes):\nproxy:\n%sdata sources:\n%s", explain.give, q, len(routes), got, want.String())
			}
			if strings.Count(got, "\n") < len(routes)+1 {
				t.Errorf("%s%s: %d routes but\n%s", explain.give, q, len(routes), got)
			}
			if strings.HasPrefix(q, "SELECT * FROM t_order") && strings.Count(got, `"SIMPLE" "t_order"`) != len(routes) {
				t.Errorf("%s%s: the table column is not the logical table's name:\n%s", explain.give, q, got)
			}
		}
	}
	if got := connResult(t, proxy, "SELECT COUNT(*) FROM t_order WHERE status = 'explained'"); !strings.Contains(got, "\n\"0\" \n") {
		t.Errorf("EXPLAIN UPDATE changed rows: %s", got)
	}
	got := connResult(t, proxy, "EXPLAIN FORMAT=JSON SELECT * FROM t_order WHERE user_id = 3 AND order_id = 22")
	if !strings.Contains(got, "query_block") || strings.Count(got, "\n") != 2 {
		t.Errorf("EXPLAIN FORMAT=JSON of one route: %s", got)
	}
	got = connResult(t, proxy, "EXPLAIN FORMAT=JSON SELECT * FROM t_order WHERE user_id = 3")
	if !strings.Contains(got, "Error 1235") {
		t.Errorf("EXPLAIN FORMAT=JSON of several routes: %s", got)
	}
	if got := connResult(t, proxy, "SELECT 1"); got != "columns [\"1\"]\n\"1\" \n" {
		t.Errorf("after the refusal: %s", got)
	}
}

// connPair is a connection to a data source's database.
type connPair struct {
	db   string
	conn *sql.Conn
}

// previewRoute is a row of PREVIEW.
type previewRoute struct{ dataSource, sql string }

// previewRoutes returns the routes PREVIEW lists for q.
func previewRoutes(t *testing.T, c *sql.Conn, q string) []previewRoute {
	t.Helper()
	rows, err := c.QueryContext(context.Background(), "PREVIEW "+q)
	if err != nil {
		t.Fatalf("PREVIEW %s: %v", q, err)
	}
	defer rows.Close()
	var routes []previewRoute
	for rows.Next() {
		var r previewRoute
		if err := rows.Scan(&r.dataSource, &r.sql); err != nil {
			t.Fatalf("PREVIEW %s: %v", q, err)
		}
		routes = append(routes, r)
	}
	if err := rows.Err(); err != nil || len(routes) == 0 {
		t.Fatalf("PREVIEW %s: %d routes, %v", q, len(routes), err)
	}
	return routes
}
