package proxy

import (
	"context"
	"database/sql"
	"slices"
	"testing"
)

// TestSelectIntoUserVars: SELECT ... INTO @var, the clause after the
// select list or at the end, through the proxy and on one MariaDB, step
// by step: single-route and scatter aggregates (merged by the proxy),
// more than one row (1172), zero rows (warning 1329, variables
// unchanged), a column count other than the variables' (1222), SQL
// PREPARE and EXECUTE, prepared statements, each
// value type (integer, decimal, double, string, NULL). After each step
// the affected rows of the OK, SHOW WARNINGS, the variables' values and
// their types must be MariaDB's, and a later statement that uses a
// variable on a data source must return MariaDB's rows.
func TestSelectIntoUserVars(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	statusRefDB(t, e, "into_ref")
	proxy, ref := e.conn(t), refConn(t, e, "into_ref")
	ctx := context.Background()
	const insert = "INSERT INTO t_order (order_id, user_id, status) VALUES (1, 0, 'NEW'), (2, 1, 'PAID'), (3, 3, 'it''s'), (4, 3, NULL), (5, 2, 'NEW'), (6, 3, 'PAID')"
	for _, c := range []*sql.Conn{proxy, ref} {
		if _, err := c.ExecContext(ctx, insert); err != nil {
			t.Fatal(err)
		}
	}
	const vars = "SELECT @n, @hi, @lo, @s, @avg, @x, @st, @z, @f, @q"
	// AVG's value keeps more digits than its column shows (2.000000000
	// where the column says 2.0000), which no client sees: compare it at
	// the column's scale.
	const values = "SELECT @n, @hi, @lo, @s, ROUND(@avg, 4), @x, @st, @z, @f, @q"
	for _, step := range []string{
		"SELECT COUNT(*) INTO @n FROM t_order WHERE user_id = 3",
		"SELECT MAX(order_id), MIN(order_id) INTO @hi, @lo FROM t_order",
		"SELECT COUNT(*), SUM(user_id) FROM t_order INTO @n, @s",
		"SELECT AVG(user_id) INTO @avg FROM t_order",
		"SELECT SUM(user_id), MAX(status) INTO @s, @z FROM t_order WHERE user_id = 5", // NULLs, typed
		"SELECT COUNT(*), SUM(user_id) FROM t_order INTO @n, @s",
		"SELECT status INTO @st FROM t_order WHERE order_id = 3 AND user_id = 3",
		"SELECT status INTO @z FROM t_order WHERE order_id = 4",
		"SELECT 1.5e0, 'a\\'b' INTO @f, @q",
		// More than one row: 1172, on one data source and over several.
		"SELECT order_id INTO @x FROM t_order WHERE user_id = 3 ORDER BY order_id",
		"SELECT order_id INTO @x FROM t_order ORDER BY order_id DESC",
		// Zero rows: OK with warning 1329, the variables unchanged.
		"SELECT order_id, status INTO @x, @st FROM t_order WHERE order_id = 999",
		"SELECT COUNT(*) INTO @n FROM t_order WHERE user_id = 3 GROUP BY status HAVING COUNT(*) > 5",
		// Column count other than the variables'.
		"SELECT order_id, user_id INTO @x FROM t_order WHERE order_id = 1",
		"SELECT order_id INTO @x, @st FROM t_order WHERE order_id = 999",
		// At the end, deprecated (warning 1287), with zero and two rows.
		"SELECT order_id FROM t_order WHERE order_id = 999 INTO @x",
		"SELECT order_id FROM t_order ORDER BY order_id INTO @x",
		// In a transaction: its connections get the variables, and a
		// later statement there uses them.
		"BEGIN",
		"INSERT INTO t_order (order_id, user_id, status) VALUES (7, 1, 'NEW')",
		"SELECT MAX(order_id) INTO @hi FROM t_order",
		"SELECT COUNT(*), MIN(status) INTO @n, @st FROM t_order WHERE order_id = @hi AND user_id = 1",
		"ROLLBACK",
		// SQL-level PREPARE and EXECUTE (the mariadb client's).
		"PREPARE p FROM 'SELECT COUNT(*), MAX(status) INTO @n, @st FROM t_order WHERE user_id = ?'",
		"SET @u = 1",
		"EXECUTE p USING @u",
		"PREPARE p FROM 'SELECT COUNT(*) FROM t_order INTO @n'",
		"EXECUTE p",
		"SELECT MAX(order_id), MIN(order_id) INTO @hi, @lo FROM t_order",
		"SELECT COUNT(*) INTO @n FROM t_order WHERE user_id = 3",
	} {
		pres, perr := proxy.ExecContext(ctx, step)
		rres, rerr := ref.ExecContext(ctx, step)
		if errCode(perr) != errCode(rerr) || (perr == nil) != (rerr == nil) {
			t.Errorf("%s: proxy %v, MariaDB %v", step, perr, rerr)
		}
		if perr == nil && rerr == nil {
			pn, _ := pres.RowsAffected()
			rn, _ := rres.RowsAffected()
			if pn != rn {
				t.Errorf("%s: affected rows: proxy %d, MariaDB %d", step, pn, rn)
			}
		}
		for _, q := range []string{"SHOW WARNINGS", values} {
			if got, want := queryStrings(t, proxy, q), queryStrings(t, ref, q); !slices.Equal(got, want) {
				t.Errorf("after %s, %s:\nproxy   %q\nMariaDB %q", step, q, got, want)
			}
		}
		if got, want := varTypes(t, proxy, vars), varTypes(t, ref, vars); !slices.Equal(got, want) {
			t.Errorf("after %s, types:\nproxy   %q\nMariaDB %q", step, got, want)
		}
	}
	// The variables in later statements on the data sources.
	for _, q := range []string{
		"SELECT order_id, user_id, status FROM t_order WHERE order_id = @hi",
		"SELECT order_id FROM t_order WHERE order_id BETWEEN @lo AND @hi AND status = @st ORDER BY order_id",
		"SELECT COUNT(*) FROM t_order WHERE user_id = 3 AND order_id > @lo",
	} {
		if got, want := queryStrings(t, proxy, q), queryStrings(t, ref, q); !slices.Equal(got, want) || len(got) == 0 {
			t.Errorf("%s:\nproxy   %q\nMariaDB %q", q, got, want)
		}
	}
	// Prepared statements (COM_STMT_PREPARE, placeholders bound).
	for _, step := range []struct {
		sql  string
		args []any
	}{
		{"SELECT COUNT(*), MAX(order_id) INTO @pn, @pmax FROM t_order WHERE user_id = ?", []any{3}},
		{"SELECT COUNT(*), MAX(order_id) FROM t_order WHERE user_id IN (?, ?) INTO @pn, @pmax", []any{1, 2}},
		{"SELECT order_id, status INTO @pmax, @pst FROM t_order WHERE order_id = ?", []any{999}},
		{"SELECT order_id INTO @pmax FROM t_order WHERE user_id = ? ORDER BY order_id", []any{3}},
		{"SELECT status INTO @pst FROM t_order WHERE order_id = ? AND user_id = ?", []any{3, 3}},
	} {
		pres, perr := proxy.ExecContext(ctx, step.sql, step.args...)
		rres, rerr := ref.ExecContext(ctx, step.sql, step.args...)
		if errCode(perr) != errCode(rerr) || (perr == nil) != (rerr == nil) {
			t.Errorf("prepared %s: proxy %v, MariaDB %v", step.sql, perr, rerr)
		}
		if perr == nil && rerr == nil {
			pn, _ := pres.RowsAffected()
			rn, _ := rres.RowsAffected()
			if pn != rn {
				t.Errorf("prepared %s: affected rows: proxy %d, MariaDB %d", step.sql, pn, rn)
			}
		}
		for _, q := range []string{"SHOW WARNINGS", "SELECT @pn, @pmax, @pst"} {
			if got, want := queryStrings(t, proxy, q), queryStrings(t, ref, q); !slices.Equal(got, want) {
				t.Errorf("after prepared %s, %s:\nproxy   %q\nMariaDB %q", step.sql, q, got, want)
			}
		}
	}
	// A multi-statement query: each statement passes the door alone.
	multi := e.conn(t, "multiStatements=true")
	if _, err := multi.ExecContext(ctx, "SELECT COUNT(*) INTO @m FROM t_order WHERE user_id = 3; SELECT @m; SELECT MAX(order_id) FROM t_order INTO @mx"); err != nil {
		t.Fatalf("multi-statement SELECT INTO: %v", err)
	}
	got := queryStrings(t, multi, "SELECT @m, @mx")
	want := queryStrings(t, ref, "SELECT (SELECT COUNT(*) FROM t_order WHERE user_id = 3), (SELECT MAX(order_id) FROM t_order)")
	if !slices.Equal(got, want) {
		t.Errorf("after a multi-statement SELECT INTO: proxy %q, MariaDB %q", got, want)
	}
	// The connection stays usable, and OUTFILE is still refused.
	if _, err := proxy.ExecContext(ctx, "SELECT order_id INTO OUTFILE '/tmp/selinto_never' FROM t_order"); err == nil {
		t.Errorf("SELECT INTO OUTFILE through the proxy succeeded")
	}
	if got := queryStrings(t, proxy, "SELECT @n"); !slices.Equal(got, []string{"3"}) {
		t.Errorf("SELECT @n = %q, want 3", got)
	}
}

// varTypes returns the types of q's columns, as the server describes them.
func varTypes(t *testing.T, c *sql.Conn, q string) []string {
	t.Helper()
	rows, err := c.QueryContext(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ct := range cts {
		out = append(out, ct.DatabaseTypeName())
	}
	return out
}
