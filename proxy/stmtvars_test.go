package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
)

// stmtVarsQueries are SELECTs over the sharded t_order (two data sources,
// two tables each) whose answers a row limit changes: a plain k-way merge,
// merges that fold rows (GROUP BY, DISTINCT, an aggregate, an order the
// merge sorts itself), a statement with its own LIMIT (which wins), one
// route, and a scan without ORDER BY (only its row count is compared).
var stmtVarsQueries = []string{
	"SELECT order_id, status FROM t_order ORDER BY order_id",
	"SELECT order_id FROM t_order ORDER BY order_id DESC",
	"SELECT status, COUNT(*) FROM t_order GROUP BY status ORDER BY COUNT(*) DESC, status",
	"SELECT user_id, COUNT(*), MAX(order_id) FROM t_order GROUP BY user_id ORDER BY user_id",
	"SELECT DISTINCT status FROM t_order ORDER BY status",
	"SELECT COUNT(*), SUM(order_id) FROM t_order",
	"SELECT order_id FROM t_order ORDER BY order_id LIMIT 5",
	"SELECT order_id FROM t_order WHERE user_id = 3 AND order_id = 10",
	"SELECT order_id, user_id FROM t_order WHERE user_id = 3 ORDER BY order_id",
	"SELECT COUNT(*) FROM (SELECT order_id FROM t_order) AS sub",
	"SELECT order_id FROM t_order",
}

// TestStatementVarsMatchMariaDB runs SELECTs under sql_select_limit
// (Connector/J's setMaxRows sends SET @@SQL_SELECT_LIMIT=N before the
// query) and SET STATEMENT ... FOR (its setQueryTimeout sends SET
// STATEMENT max_statement_time=N FOR ...) through the proxy and on one
// MariaDB holding the same rows: the same rows come back, text and
// prepared, in and out of a transaction. The proxy once returned up to N
// rows per route, and a merge that folds rows lost some of each route's
// (wrong counts); SET STATEMENT was a syntax error.
func TestStatementVarsMatchMariaDB(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	statusRefDB(t, e, "sv_ref")
	ctx := context.Background()
	ref := e.backends[0].Open(t, "sv_ref")
	var values []string
	for i := 1; i <= 40; i++ {
		values = append(values, fmt.Sprintf("(%d, %d, 's%d')", i, i%7, i%5))
	}
	insert := "INSERT INTO t_order (order_id, user_id, status) VALUES " + strings.Join(values, ", ")
	for _, db := range []*sql.DB{e.open(t), ref} {
		if _, err := db.ExecContext(ctx, insert); err != nil {
			t.Fatal(err)
		}
	}
	proxy := e.conn(t)
	direct, err := ref.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	both := func(q string, args ...any) {
		t.Helper()
		for _, c := range []*sql.Conn{proxy, direct} {
			if _, err := c.ExecContext(ctx, q, args...); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	compare := func(what, q string, prepared bool) {
		t.Helper()
		got, gerr := limitRows(ctx, proxy, q, prepared)
		want, werr := limitRows(ctx, direct, q, prepared)
		if !strings.Contains(q, "ORDER BY") && !strings.Contains(q, "COUNT") && !strings.Contains(q, "order_id = 10") {
			got, want = []string{fmt.Sprint(len(got), " rows")}, []string{fmt.Sprint(len(want), " rows")}
		}
		if g, w := fmt.Sprint(got, errCode(gerr)), fmt.Sprint(want, errCode(werr)); g != w {
			t.Errorf("%s, prepared %v: %s\nproxy:   %s %v\nMariaDB: %s %v", what, prepared, q, g, gerr, w, werr)
		}
	}
	for _, limit := range []string{"3", "1", "0", "DEFAULT"} {
		for _, txn := range []bool{false, true} {
			both("SET @@SQL_SELECT_LIMIT=" + limit)
			if txn {
				both("BEGIN")
			}
			for _, q := range stmtVarsQueries {
				for _, prepared := range []bool{false, true} {
					compare(fmt.Sprintf("sql_select_limit=%s, transaction %v", limit, txn), q, prepared)
				}
			}
			if txn {
				both("COMMIT")
			}
		}
	}
	both("SET @@SQL_SELECT_LIMIT=4")
	for _, q := range []string{
		"SET STATEMENT sql_select_limit=2 FOR SELECT status, COUNT(*) FROM t_order GROUP BY status ORDER BY COUNT(*) DESC, status",
		"SET STATEMENT sql_select_limit=2 FOR SELECT order_id FROM t_order ORDER BY order_id",
		"SET STATEMENT max_statement_time=20, sql_select_limit=DEFAULT FOR SELECT user_id, COUNT(*) FROM t_order GROUP BY user_id ORDER BY user_id",
		"SET STATEMENT max_statement_time=20 FOR SELECT order_id FROM t_order ORDER BY order_id",
		"set statement max_statement_time = 0.2 for SELECT SLEEP(2) FROM t_order WHERE user_id = 3 AND order_id = 10",
		"SET STATEMENT max_statement_time=0.2 FOR SELECT COUNT(*), SUM(SLEEP(0.3)) FROM t_order",
		"/* app */ SET STATEMENT max_statement_time=5 FOR UPDATE t_order SET status = 'u' WHERE order_id IN (3, 4)",
		"SET STATEMENT max_statement_time=5 FOR SELECT order_id, status FROM t_order WHERE status = 'u' ORDER BY order_id",
		"SET STATEMENT max_statement_time=5 FOR SELECT order_id FROM t_order WHERE user_id = 3 ORDER BY order_id",
		"SET STATEMENT no_such_variable=1 FOR SELECT order_id FROM t_order ORDER BY order_id",
		"SET STATEMENT max_statement_time=1 SELECT 1",
	} {
		compare("SET STATEMENT under sql_select_limit=4", q, false)
	}
	// The statement's variables end with it.
	compare("after SET STATEMENT", "SELECT order_id FROM t_order ORDER BY order_id", false)
	compare("after SET STATEMENT", "SELECT @@max_statement_time, @@sql_select_limit", false)

	// Variables the proxy keeps itself or rewrites statements for.
	for _, q := range []string{
		"SET STATEMENT sql_mode='ANSI_QUOTES' FOR SELECT COUNT(*) FROM t_order",
		"SET STATEMENT character_set_client=latin1 FOR SELECT COUNT(*) FROM t_order",
		"SET STATEMENT max_statement_time=@x FOR SELECT COUNT(*) FROM t_order",
		"SET STATEMENT max_statement_time=1 FOR SELECT 1; SELECT 2",
	} {
		_, err := proxy.ExecContext(ctx, q)
		if code := errCode(err); code != 1235 && code != 1064 {
			t.Errorf("%s: %v, want 1235", q, err)
		}
	}
	if got, err := limitRows(ctx, proxy, "SELECT COUNT(*) FROM t_order", false); err != nil || fmt.Sprint(got) != "[40]" {
		t.Errorf("after the refused statements: %v %v", got, err)
	}
}

// limitRows returns a query's rows, each as its values joined by commas.
func limitRows(ctx context.Context, c *sql.Conn, q string, prepared bool) ([]string, error) {
	var rows *sql.Rows
	var err error
	if prepared {
		var st *sql.Stmt
		if st, err = c.PrepareContext(ctx, q); err != nil {
			return nil, err
		}
		defer st.Close()
		rows, err = st.QueryContext(ctx)
	} else {
		rows, err = c.QueryContext(ctx, q)
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]sql.RawBytes, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		s := make([]string, len(vals))
		for i, v := range vals {
			s[i] = string(v)
		}
		out = append(out, strings.Join(s, ","))
	}
	return out, rows.Err()
}
