package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
)

// TestFoundRowsFunction runs statements one after another on one connection
// through the proxy and on one to MariaDB's reference tables, and
// compares what each returns: FOUND_ROWS() after a SELECT over every data
// node (was one data node's count, from whichever pooled connection the
// proxy took), with and
// without LIMIT, and SQL_CALC_FOUND_ROWS over several data nodes (was
// 1235) with ORDER BY and an offset, GROUP BY, DISTINCT, HAVING, an
// aggregate, no rows, on one data node (twice: the second finds the plan
// cache), in a transaction, after an error, and statements that leave
// FOUND_ROWS() as it was.
func TestFoundRowsFunction(t *testing.T) {
	e := diffEnvironment(t)
	ctx := context.Background()
	proxy, ref := oneConn(t, e.proxy), oneConn(t, e.ref)
	const found = "SELECT FOUND_ROWS()"
	steps := []string{
		"SELECT order_id FROM t_order ORDER BY order_id", found,
		"SELECT order_id FROM t_order ORDER BY order_id LIMIT 3", found,
		"SELECT SQL_CALC_FOUND_ROWS order_id, status FROM t_order ORDER BY order_id LIMIT 2, 3", found,
		"SELECT FOUND_ROWS() AS again, FOUND_ROWS() + 1", found,
		"SELECT SQL_CALC_FOUND_ROWS user_id, COUNT(*) FROM t_order GROUP BY user_id ORDER BY user_id LIMIT 1", found,
		"SELECT SQL_CALC_FOUND_ROWS DISTINCT qty FROM t_order ORDER BY qty LIMIT 1", found,
		"SELECT SQL_CALC_FOUND_ROWS user_id FROM t_order GROUP BY user_id HAVING COUNT(*) > 7 ORDER BY user_id LIMIT 1", found,
		"SELECT SQL_CALC_FOUND_ROWS COUNT(*), SUM(qty) FROM t_order LIMIT 0", found,
		"SELECT SQL_CALC_FOUND_ROWS order_id FROM t_order WHERE 1 = 0 LIMIT 1", found,
		"SELECT sql_calc_found_rows order_id FROM t_order WHERE user_id = 3 ORDER BY order_id DESC LIMIT 2", found,
		"SELECT sql_calc_found_rows order_id FROM t_order WHERE user_id = 3 ORDER BY order_id DESC LIMIT 2", found,
		"SELECT SQL_CALC_FOUND_ROWS order_id FROM t_order WHERE user_id = 3 AND order_id = 22", found,
		"SELECT SQL_CALC_FOUND_ROWS order_id FROM t_order WHERE user_id = 3 AND order_id = 22", found,
		"SELECT order_id FROM t_order WHERE status = 'paid' ORDER BY order_id LIMIT 2",
		"UPDATE t_order SET status = status WHERE order_id = -1", found,
		"SELECT SQL_CALC_FOUND_ROWS order_id FROM t_order ORDER BY order_id LIMIT 1",
		"SET @x = 1", "DO 1", found,
		"SELECT SQL_CALC_FOUND_ROWS order_id FROM t_order WHERE nope = 1 LIMIT 1", found,
		"BEGIN",
		"SELECT SQL_CALC_FOUND_ROWS order_id FROM t_order WHERE user_id IN (1, 2, 4) ORDER BY order_id LIMIT 1 FOR UPDATE", found,
		"COMMIT", found,
	}
	var b strings.Builder
	for _, q := range steps {
		got, want := connResult(t, proxy, q), connResult(t, ref, q)
		if got != want {
			t.Errorf("%s\nproxy:\n%sMariaDB:\n%s", q, got, want)
		}
		b.WriteString(want)
	}
	// The premise: MariaDB's counts are not the rows its LIMITs sent.
	for _, want := range []string{"columns [\"FOUND_ROWS()\"]\n\"96\" \n", "\n\"13\" \n", "\n\"1\" \n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("MariaDB never answered %s:\n%s", want, b.String())
		}
	}

	t.Run("prepared", func(t *testing.T) {
		// Each execute runs as text with its arguments written in.
		for _, c := range []struct {
			sql  string
			args []any
		}{
			{"SELECT SQL_CALC_FOUND_ROWS order_id FROM t_order WHERE qty > ? ORDER BY order_id LIMIT ?, ?", []any{2, 1, 2}},
			{"SELECT SQL_CALC_FOUND_ROWS order_id FROM t_order WHERE user_id = ? AND order_id = ?", []any{3, 22}},
		} {
			var got, want string
			for _, side := range []struct {
				c   *sql.Conn
				out *string
			}{{proxy, &got}, {ref, &want}} {
				stmt, err := side.c.PrepareContext(ctx, c.sql)
				if err != nil {
					*side.out = "prepare: " + err.Error()
					continue
				}
				rows, err := stmt.QueryContext(ctx, c.args...)
				if err != nil {
					*side.out = "execute: " + err.Error()
					stmt.Close()
					continue
				}
				var ids []string
				for rows.Next() {
					var id string
					if err := rows.Scan(&id); err != nil {
						t.Fatal(err)
					}
					ids = append(ids, id)
				}
				rows.Close()
				stmt.Close()
				*side.out = fmt.Sprintf("%q ", ids) + connResult(t, side.c, found)
			}
			if got != want {
				t.Errorf("%s %v:\nproxy:   %s\nMariaDB: %s", c.sql, c.args, got, want)
			}
		}
	})

	t.Run("several statements", func(t *testing.T) {
		q := "SELECT SQL_CALC_FOUND_ROWS order_id FROM t_order ORDER BY order_id LIMIT 1; SELECT FOUND_ROWS()"
		got := allResultSets(t, openDB(t, diffDSN(e.addr)+"&multiStatements=true"), q)
		want := allResultSets(t, openDB(t, e.backends[0].DSN(diffRefDB)+"&multiStatements=true"), q)
		if got != want {
			t.Errorf("%s:\nproxy:\n%s\nMariaDB:\n%s", q, got, want)
		}
	})
}

// connResult runs q on c and writes what the client sees: the result
// set's columns and rows (writeResultSet; an OK has no columns), or the
// error.
func connResult(t *testing.T, c *sql.Conn, q string) string {
	t.Helper()
	rows, err := c.QueryContext(context.Background(), q)
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	defer rows.Close()
	var b strings.Builder
	writeResultSet(t, &b, rows)
	if err := rows.Err(); err != nil {
		fmt.Fprintf(&b, "error: %v\n", err)
	}
	return b.String()
}

// openDB opens a database handle closed when t ends.
func openDB(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
