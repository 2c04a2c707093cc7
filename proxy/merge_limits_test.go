package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/router"
)

// queryErr runs q on db, reads its rows and returns the error number (0
// for none) and the row count.
func queryErr(t *testing.T, db *sql.DB, q string, args ...any) (uint16, int) {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), q, args...)
	if err != nil {
		return errCode(err), 0
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	return errCode(rows.Err()), n
}

func TestMergeScatterCapThroughTheProxy(t *testing.T) {
	e := diffEnvironment(t)
	db := diffProxy(t, "maxScatterRows: 50")
	db.SetMaxOpenConns(1) // one session: an error must leave it usable
	tests := []struct {
		sql      string
		wantCode uint16
	}{
		{"SELECT * FROM t_order", mysql.ER_TOO_BIG_SELECT},                               // 96 rows
		{"SELECT * FROM t_order ORDER BY order_id LIMIT 60, 5", mysql.ER_TOO_BIG_SELECT}, // reads 65
		{"SELECT * FROM t_order ORDER BY order_id LIMIT 10", 0},                          // stops after 10
		{"SELECT COUNT(*) FROM t_order", 0},                                              // one row per data node
		{"SELECT * FROM t_order WHERE user_id = 3", 0},                                   // one data source
		{"SELECT * FROM t_order WHERE qty > 3", 0},
	}
	for _, tt := range tests {
		code, n := queryErr(t, db, tt.sql)
		if code != tt.wantCode {
			t.Errorf("%s: error %d, want %d", tt.sql, code, tt.wantCode)
			continue
		}
		if code == 0 {
			if _, want := queryErr(t, e.ref, tt.sql); n != want {
				t.Errorf("%s: %d rows, reference %d", tt.sql, n, want)
			}
		}
	}
}

func TestMergeMemoryBudgetThroughTheProxy(t *testing.T) {
	db := diffProxy(t, "mergeMemoryBytes: 4KiB")
	db.SetMaxOpenConns(1)
	tests := []struct {
		sql      string
		wantCode uint16
	}{
		// Hashed DISTINCT over 96 rows of notes and ids (sorted on the
		// note alone, so duplicates need not be neighbours): over 4 KiB.
		{"SELECT DISTINCT order_id, note FROM t_order ORDER BY note", mysql.ER_OUT_OF_SORTMEMORY},
		// Ordered by an aggregate, the groups are hashed: all 96 held.
		{"SELECT order_id, COUNT(*) c FROM t_order GROUP BY order_id ORDER BY c, order_id LIMIT 5", mysql.ER_OUT_OF_SORTMEMORY},
		// Streamed grouping holds one group; the k-way merge one row per
		// route.
		{"SELECT order_id, COUNT(*) FROM t_order GROUP BY order_id", 0},
		{"SELECT * FROM t_order ORDER BY order_id LIMIT 50, 5", 0},
		{"SELECT DISTINCT user_id FROM t_order", 0},
		// Without ORDER BY the routes are sorted on every column:
		// duplicates arrive side by side and only the last row is kept.
		{"SELECT DISTINCT order_id, note FROM t_order", 0},
	}
	for _, tt := range tests {
		if code, _ := queryErr(t, db, tt.sql); code != tt.wantCode {
			t.Errorf("%s: error %d, want %d", tt.sql, code, tt.wantCode)
		}
	}
}

// TestMergePreparedStatements runs merged queries as server-side prepared
// statements (binary protocol, LIMIT and HAVING bound at execution) and
// compares with the reference.
func TestMergePreparedStatements(t *testing.T) {
	e := diffEnvironment(t)
	tests := []struct {
		sql     string
		args    []any
		ordered bool
	}{
		{"SELECT order_id, amount, created, score FROM t_order WHERE qty > ? ORDER BY amount DESC, order_id LIMIT ?", []any{0, 7}, true},
		{"SELECT order_id FROM t_order ORDER BY order_id LIMIT ?, ?", []any{20, 5}, true},
		{"SELECT user_id, SUM(amount), AVG(qty) FROM t_order GROUP BY user_id HAVING COUNT(*) > ?", []any{7}, true},
		{"SELECT user_id, COUNT(*) FROM t_order WHERE status = ? GROUP BY user_id", []any{"new"}, true},
		{"SELECT COUNT(DISTINCT user_id), MIN(day), MAX(big) FROM t_order WHERE amount < ?", []any{"3.33"}, false},
		// Computed columns with a parameter: in the describing route and
		// in the merge's expression, bound per execution.
		{"SELECT user_id, SUM(amount) * ? AS s, ROUND(AVG(qty), ?) FROM t_order GROUP BY user_id HAVING SUM(amount) / COUNT(*) > ?", []any{2, 1, "10"}, true},
		{"SELECT COUNT(*) + ?, MAX(score) / ? FROM t_order WHERE user_id IN (?, ?)", []any{1, 3, 2, 5}, true},
	}
	scan := func(db *sql.DB, q string, args []any) ([]string, error) {
		rows, err := db.Query(q, args...)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		var out []string
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				return nil, err
			}
			var parts []string
			for _, v := range vals {
				parts = append(parts, fmt.Sprintf("%v:%s", v.Valid, v.String))
			}
			out = append(out, strings.Join(parts, "|"))
		}
		return out, rows.Err()
	}
	for _, tt := range tests {
		got, err := scan(e.proxy, tt.sql, tt.args)
		if err != nil {
			t.Errorf("%s: %v", tt.sql, err)
			continue
		}
		want, err := scan(e.ref, tt.sql, tt.args)
		if err != nil {
			t.Fatalf("reference: %s: %v", tt.sql, err)
		}
		if !tt.ordered {
			slices.Sort(got)
			slices.Sort(want)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s %v:\nproxy     %q\nreference %q", tt.sql, tt.args, got, want)
		}
	}
}

// TestRouteProbeCollations checks that the probe reports the collations
// MariaDB compares with, expressions and aggregates included, where the
// column definitions of a result only name the connection's.
func TestRouteProbeCollations(t *testing.T) {
	e := diffEnvironment(t)
	probe := newRouteProbe(e.srv.current())
	ctx := context.Background()
	route := router.Route{DataSource: "ds_1", SQL: "SELECT note, MAX(city), CONCAT(code, 'x'), amount, status, " +
		"status COLLATE utf8mb4_unicode_520_ci FROM t_order_2 WHERE qty > ? GROUP BY note"}
	got, err := probe.RouteCollations(ctx, route)
	if err != nil {
		t.Fatal(err)
	}
	want := []uint16{224, 8, 46, 0, 45, 246}
	if !slices.Equal(got, want) {
		t.Errorf("collations %v, want %v", got, want)
	}
	// The result is kept: the same SQL is not prepared again, even on a
	// data source that is not there.
	route.DataSource = "no_such_source"
	if again, err := probe.RouteCollations(ctx, route); err != nil || !slices.Equal(again, want) {
		t.Errorf("kept result: %v, %v", again, err)
	}
	probe.forget()
	if _, err := probe.RouteCollations(ctx, route); err == nil {
		t.Error("after forget: probed a data source that does not exist without error")
	}
	// A route the data source rejects fails with its error.
	_, err = probe.RouteCollations(ctx, router.Route{DataSource: "ds_0", SQL: "SELECT no_such_column FROM t_order_0"})
	if got := mysqlCode(err); got != mysql.ER_BAD_FIELD_ERROR {
		t.Errorf("bad route: %v (code %d), want 1054", err, got)
	}
	// The connection the probe used is usable and back at the baseline.
	var cs string
	if err := e.proxy.QueryRow("SELECT order_id FROM t_order WHERE user_id = 0 AND order_id = 1").Scan(&cs); err != nil {
		t.Errorf("after probes: %v", err)
	}
}

// TestRouteProbeKeysByShape checks that statements differing only in
// literals share one probe.
func TestRouteProbeKeysByShape(t *testing.T) {
	e := diffEnvironment(t)
	probe := newRouteProbe(e.srv.current())
	ctx := context.Background()
	first := router.Route{DataSource: "ds_0", SQL: "SELECT note FROM t_order_0 WHERE user_id = 4 ORDER BY note"}
	if _, err := probe.RouteCollations(ctx, first); err != nil {
		t.Fatal(err)
	}
	// Same shape, other literal: kept, so even a missing data source
	// answers.
	other := router.Route{DataSource: "no_such_source", SQL: "SELECT note FROM t_order_0 WHERE user_id = 12 ORDER BY note"}
	if got, err := probe.RouteCollations(ctx, other); err != nil || !slices.Equal(got, []uint16{224}) {
		t.Errorf("same shape: %v, %v", got, err)
	}
	// Another shape is probed.
	other.SQL = "SELECT city FROM t_order_0 WHERE user_id = 12 ORDER BY city"
	if _, err := probe.RouteCollations(ctx, other); err == nil {
		t.Error("another shape did not probe")
	}
}
