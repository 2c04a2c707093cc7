package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
)

// TestCountOverDerivedTable compares with MariaDB the counts ORMs write
// over a derived table whose query the data nodes cannot answer alone (a
// LIMIT, DISTINCT, GROUP BY with HAVING, an offset): all were 1235
// over several data nodes. ActiveRecord's relation.limit(n).count and
// Django's qs[:n].count() and distinct().count() write these. The column
// is typed as MariaDB types it; an aggregate other than COUNT over such a
// table stays 1235.
func TestCountOverDerivedTable(t *testing.T) {
	e := diffEnvironment(t)
	ctx := context.Background()
	proxy, ref := oneConn(t, e.proxy), oneConn(t, e.ref)
	for _, q := range []string{
		"SELECT COUNT(*) FROM (SELECT 1 AS one FROM t_order LIMIT 10) subquery_for_count",
		"SELECT COUNT(*) FROM (SELECT 1 AS one FROM t_order WHERE qty > 2 LIMIT 1000 OFFSET 5) subquery_for_count",
		"SELECT COUNT(*) AS `__count` FROM (SELECT DISTINCT t_order.status AS col1 FROM t_order) subquery",
		"SELECT count(1) FROM (SELECT user_id, COUNT(*) AS n FROM t_order GROUP BY user_id HAVING n > 7) s",
		"SELECT COUNT(*) AS c FROM (SELECT order_id FROM t_order ORDER BY order_id DESC LIMIT 3, 20) AS x",
		"SELECT COUNT(*) FROM (SELECT order_id FROM t_order WHERE user_id IN (3, 4) ORDER BY qty LIMIT 4) x",
		"SELECT COUNT(*) FROM (SELECT order_id FROM t_order WHERE 1 = 0 LIMIT 5) empty",
		"BEGIN",
		"SELECT COUNT(*) FROM (SELECT DISTINCT qty FROM t_order) q",
		"COMMIT",
		"SELECT FOUND_ROWS()",
	} {
		got, want := connResult(t, proxy, q), connResult(t, ref, q)
		if got != want {
			t.Errorf("%s\nproxy:\n%sMariaDB:\n%s", q, got, want)
		}
	}
	q := "SELECT COUNT(*) FROM (SELECT 1 AS one FROM t_order LIMIT 10) subquery_for_count"
	types := func(c *sql.Conn) string {
		rows, err := c.QueryContext(ctx, q)
		if err != nil {
			return err.Error()
		}
		defer rows.Close()
		cts, err := rows.ColumnTypes()
		if err != nil {
			return err.Error()
		}
		nullable, _ := cts[0].Nullable()
		return fmt.Sprintf("%s %s nullable=%v", cts[0].Name(), cts[0].DatabaseTypeName(), nullable)
	}
	if got, want := types(proxy), types(ref); got != want {
		t.Errorf("%s: column %s, MariaDB's %s", q, got, want)
	}
	// Prepared: the router refuses at prepare (DISTINCT) or when the
	// arguments are bound (LIMIT ?); each execute runs as text.
	for _, c := range []struct {
		sql  string
		args []any
	}{
		{"SELECT COUNT(*) FROM (SELECT 1 AS one FROM t_order WHERE qty > ? LIMIT ?) subquery_for_count", []any{1, 7}},
		{"SELECT COUNT(*) FROM (SELECT DISTINCT status FROM t_order WHERE qty > ?) subquery", []any{2}},
	} {
		count := func(c2 *sql.Conn) string {
			var n int64
			if err := c2.QueryRowContext(ctx, c.sql, c.args...).Scan(&n); err != nil {
				return err.Error()
			}
			return fmt.Sprint(n)
		}
		if got, want := count(proxy), count(ref); got != want {
			t.Errorf("prepared %s %v: %s, MariaDB %s", c.sql, c.args, got, want)
		}
	}
	// Another aggregate over it reads the derived table into a temporary
	// table (derivedtmp.go).
	q = "SELECT SUM(n) FROM (SELECT status, COUNT(*) AS n FROM t_order GROUP BY status) s"
	if got, want := connResult(t, proxy, q), connResult(t, ref, q); got != want {
		t.Errorf("%s: %s, MariaDB %s", q, got, want)
	}
}
