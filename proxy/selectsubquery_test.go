package proxy

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
)

// selectSubqueryRows are rows besides inSubquerySchema's for text
// compared under the column's collation (utf8mb4_general_ci: 'new',
// 'NEW' and 'new ' are equal).
var selectSubqueryRows = []string{
	"INSERT INTO t_order (order_id, user_id, status, amount, ref) VALUES (16, 2, 'NEW', 2.50, 2), (17, 1, 'new ', 7.75, NULL), (18, 2, 'Paid', 1.00, 9)",
}

// subqueryAnswer is a query's column names and rows, one string a row,
// or its error as the driver prints it (number, SQLSTATE and message).
func subqueryAnswer(c any, q string, args ...any) string {
	var rows *sql.Rows
	var err error
	switch c := c.(type) {
	case *sql.Stmt:
		rows, err = c.Query(args...)
	case interface {
		QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	}:
		rows, err = c.QueryContext(context.Background(), q, args...)
	}
	if err != nil {
		return "error: " + err.Error()
	}
	cols, err := rows.Columns()
	if err != nil {
		return "error: " + err.Error()
	}
	out, err := rowStrings(rows, ",")
	if err != nil {
		return "error: " + err.Error()
	}
	return strings.Join(cols, ",") + ": " + strings.Join(out, "; ")
}

// TestSelectSubqueryFirst runs SELECTs whose uncorrelated subqueries
// over sharded tables the router cannot keep with the outer statement
// (IN, NOT IN, scalar, EXISTS, in WHERE and HAVING) through the proxy,
// which evaluates them first and routes the SELECT with their values, and
// on one MariaDB holding the same rows, as text and prepared: the rows,
// and the errors MariaDB gives (1242, 1241), must be the same.
func TestSelectSubqueryFirst(t *testing.T) {
	e, db, ref := inSubqueryEnv(t, "selsub_ref")
	execBoth(t, db, ref, selectSubqueryRows...)
	same := func(q string, args ...any) string {
		t.Helper()
		got, want := subqueryAnswer(db, q, args...), subqueryAnswer(ref, q, args...)
		if got != want {
			t.Errorf("%s %v\nthrough the proxy: %s\ndirectly:          %s", q, args, got, want)
		}
		return want
	}

	for _, q := range []string{
		// Scalar: a DECIMAL average, in WHERE and HAVING.
		"SELECT order_id FROM t_order WHERE amount > (SELECT AVG(price) FROM t_order_item) ORDER BY order_id",
		"SELECT user_id, SUM(amount) FROM t_order GROUP BY user_id HAVING SUM(amount) > (SELECT AVG(price) FROM t_order_item) ORDER BY user_id",
		"SELECT COUNT(*) FROM t_order WHERE ref = (SELECT MAX(qty) FROM t_order_item)",
		"SELECT order_id FROM t_order WHERE (SELECT MIN(qty) FROM t_order_item) < ref ORDER BY order_id",
		// Scalar: one NULL row, no row at all (NULL).
		"SELECT COUNT(*) FROM t_order WHERE ref = (SELECT MAX(qty) FROM t_order_item WHERE qty > 1000)",
		"SELECT order_id FROM t_order WHERE ref <=> (SELECT qty FROM t_order_item WHERE qty > 1000) ORDER BY order_id",
		// IN and NOT IN, NULLs in the list, an empty list.
		"SELECT COUNT(*) FROM t_order WHERE order_id NOT IN (SELECT order_id FROM t_order_item WHERE qty < 5)",
		"SELECT order_id FROM t_order WHERE ref IN (SELECT qty FROM t_order_item) ORDER BY order_id",
		"SELECT order_id FROM t_order WHERE ref NOT IN (SELECT qty FROM t_order_item) ORDER BY order_id",
		"SELECT order_id FROM t_order WHERE ref NOT IN (SELECT qty FROM t_order_item WHERE qty > 1000) ORDER BY order_id",
		"SELECT order_id FROM t_order WHERE ref IN (SELECT qty FROM t_order_item WHERE qty > 1000) ORDER BY order_id",
		"SELECT COUNT(*) FROM t_order WHERE NULL NOT IN (SELECT qty FROM t_order_item WHERE qty > 1000)",
		"SELECT COUNT(*) FROM t_order WHERE NULL IN (SELECT qty FROM t_order_item WHERE qty > 1000) IS NULL",
		"SELECT order_id FROM t_order WHERE amount IN (SELECT price FROM t_order_item) ORDER BY order_id",
		"SELECT * FROM t_order WHERE order_id IN (SELECT * FROM (SELECT order_id FROM t_order_item WHERE qty >= 7) subquery) ORDER BY order_id",
		// EXISTS and NOT EXISTS.
		"SELECT order_id FROM t_order WHERE EXISTS (SELECT 1 FROM t_order_item WHERE qty > 8) ORDER BY order_id",
		"SELECT order_id FROM t_order WHERE EXISTS (SELECT * FROM t_order_item WHERE qty > 1000) ORDER BY order_id",
		"SELECT order_id FROM t_order WHERE NOT EXISTS (SELECT item_id, qty FROM t_order_item WHERE qty > 1000) AND amount > 2 ORDER BY order_id",
		"SELECT order_id FROM t_order WHERE NOT EXISTS (SELECT 1 FROM t_order_item WHERE qty > 8) ORDER BY order_id",
		// Text compared with a column: its collation decides ('new',
		// 'NEW', 'new ' are equal), as against the subquery.
		"SELECT order_id FROM t_order WHERE status = (SELECT MAX(status) FROM t_order WHERE user_id = 2) ORDER BY order_id",
		"SELECT order_id FROM t_order WHERE status IN (SELECT status FROM t_order WHERE user_id = 2) ORDER BY order_id",
		"SELECT order_id FROM t_order WHERE status NOT IN (SELECT status FROM t_order WHERE user_id = 1) ORDER BY order_id",
		"SELECT order_id FROM t_order WHERE status = (SELECT status FROM t_order WHERE user_id = 1 AND order_id = 17) ORDER BY order_id",
		// Two subqueries, one of them beside a sharding column.
		"SELECT order_id FROM t_order WHERE user_id IN (SELECT user_id FROM t_order_item WHERE qty = 7) AND amount < (SELECT MAX(price) FROM t_order_item) ORDER BY order_id",
	} {
		same(q)
	}

	// MariaDB's errors, as MariaDB words them; the connection goes on.
	for _, q := range []string{
		"SELECT order_id FROM t_order WHERE ref = (SELECT qty FROM t_order_item)",
		"SELECT order_id FROM t_order WHERE ref IN (SELECT qty, price FROM t_order_item)",
	} {
		if want := same(q); !strings.HasPrefix(want, "error: Error 124") {
			t.Errorf("%s directly: %s; the reference is not what this test assumes", q, want)
		}
		same("SELECT COUNT(*) FROM t_order")
	}

	// Prepared with ? in the outer statement and in the subquery.
	for _, pt := range []struct {
		query string
		args  []any
	}{
		{"SELECT order_id FROM t_order WHERE amount > (SELECT AVG(price) FROM t_order_item WHERE qty >= ?) AND user_id <> ? ORDER BY order_id", []any{2, 4}},
		{"SELECT order_id FROM t_order WHERE ref NOT IN (SELECT qty FROM t_order_item WHERE qty > ?) ORDER BY order_id", []any{1000}},
		{"SELECT order_id FROM t_order WHERE status IN (SELECT status FROM t_order WHERE user_id = ?) ORDER BY order_id", []any{2}},
		{"SELECT order_id FROM t_order WHERE EXISTS (SELECT 1 FROM t_order_item WHERE qty > ?) AND amount > ? ORDER BY order_id", []any{8, 2}},
		{"SELECT order_id FROM t_order WHERE ref = (SELECT qty FROM t_order_item WHERE qty > ?)", []any{1}},
	} {
		same(pt.query, pt.args...)
		// The same statement prepared once, executed twice.
		var ps [2]*sql.Stmt
		for i, c := range []*sql.DB{db, ref} {
			var err error
			if ps[i], err = c.Prepare(pt.query); err != nil {
				t.Fatalf("prepare %s, %d: %v", pt.query, i, err)
			}
			defer ps[i].Close()
		}
		for range 2 {
			if got, want := subqueryAnswer(ps[0], "", pt.args...), subqueryAnswer(ps[1], "", pt.args...); got != want {
				t.Errorf("prepared once: %s %v\nthrough the proxy: %s\ndirectly:          %s", pt.query, pt.args, got, want)
			}
		}
	}

	// COM_STMT_PREPARE describes the SELECT's columns and parameters as
	// MariaDB does, before any execute.
	raw := [2]*client.Conn{}
	for i, addr := range []string{e.addr, e.backends[0].Addr()} {
		user, pass, schema := "app", "app-secret", "sharding_db"
		if i == 1 {
			user, pass, schema = "root", "", "selsub_ref"
		}
		c, err := client.Connect(addr, user, pass, schema)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		raw[i] = c
	}
	for _, q := range []string{
		"SELECT order_id, COUNT(*), SUM(amount) FROM t_order WHERE amount > (SELECT AVG(price) FROM t_order_item WHERE qty >= ?) AND user_id <> ? GROUP BY order_id",
		"SELECT * FROM t_order WHERE status IN (SELECT status FROM t_order WHERE user_id = ?)",
	} {
		var got [2][2]int
		for i, c := range raw {
			st, err := c.Prepare(q)
			if err != nil {
				t.Fatalf("prepare %s, %d: %v", q, i, err)
			}
			got[i] = [2]int{st.ColumnNum(), st.ParamNum()}
			st.Close()
		}
		if got[0] != got[1] {
			t.Errorf("prepare %s: columns and parameters %v through the proxy, %v directly", q, got[0], got[1])
		}
	}

	// Inside a transaction the subquery reads the transaction's rows.
	var txs [2]*sql.Tx
	for i, c := range []*sql.DB{db, ref} {
		var err error
		if txs[i], err = c.Begin(); err != nil {
			t.Fatal(err)
		}
		if _, err := txs[i].Exec("INSERT INTO t_order_item (item_id, order_id, user_id, qty, price) VALUES (300, 18, 2, 50, 6.00)"); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{
		"SELECT order_id FROM t_order WHERE order_id IN (SELECT order_id FROM t_order_item WHERE qty = 50)",
		"SELECT order_id FROM t_order WHERE amount < (SELECT MAX(price) FROM t_order_item) ORDER BY order_id",
	} {
		got, want := subqueryAnswer(txs[0], q), subqueryAnswer(txs[1], q)
		if got != want || strings.HasSuffix(want, ": ") {
			t.Errorf("in a transaction: %s\nthrough the proxy: %s\ndirectly:          %s", q, got, want)
		}
	}
	for _, tx := range txs {
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
	}

	// The SELECT with the values in reaches only the data nodes they
	// name: with ds_1's t_order tables away, a SELECT whose subquery
	// names only even users (ds_0) still answers.
	routed := []string{
		"SELECT order_id, status FROM t_order WHERE user_id IN (SELECT user_id FROM t_order_item WHERE qty = 2 OR qty = 9) ORDER BY order_id",
		"SELECT order_id, status FROM t_order WHERE user_id = (SELECT MAX(user_id) FROM t_order_item) ORDER BY order_id",
	}
	for _, q := range routed {
		same(q)
	}
	e.backends[1].Exec(t, "ds_1", "RENAME TABLE t_order_0 TO away_t_order_0, t_order_1 TO away_t_order_1")
	away := true
	t.Cleanup(func() {
		if away {
			e.backends[1].Exec(t, "ds_1", "RENAME TABLE away_t_order_0 TO t_order_0, away_t_order_1 TO t_order_1")
		}
	})
	if got := subqueryAnswer(db, "SELECT COUNT(*) FROM t_order"); !strings.Contains(got, "1146") {
		t.Errorf("a scatter read with ds_1's tables away: %s, want 1146", got)
	}
	for _, q := range routed {
		same(q)
	}
	e.backends[1].Exec(t, "ds_1", "RENAME TABLE away_t_order_0 TO t_order_0, away_t_order_1 TO t_order_1")
	away = false

	// A text value compared with no column, a floating-point value: the
	// literal would not compare as the subquery does, 1235 naming why. A
	// scalar subquery of two columns (a row; MariaDB's error depends on
	// where it stands) and one in the select list stay as they were.
	for _, tt := range []struct{ query, reason string }{
		{"SELECT order_id FROM t_order WHERE ref = (SELECT qty, price FROM t_order_item WHERE qty > 1000)", "must reach the same single data node"},
		{"SELECT order_id, ref NOT IN (SELECT qty FROM t_order_item) FROM t_order", "must reach the same single data node"},
		{"SELECT COUNT(*) FROM t_order WHERE 'NEW' = (SELECT MAX(status) FROM t_order WHERE user_id = 2)", "collation"},
		{"SELECT COUNT(*) FROM t_order WHERE amount > (SELECT AVG(price) * 1e0 FROM t_order_item)", "DOUBLE"},
	} {
		_, err := db.Exec(tt.query)
		if errCode(err) != 1235 || !strings.Contains(err.Error(), tt.reason) {
			t.Errorf("%s: %v, want 1235 naming %s", tt.query, err, tt.reason)
		}
		same("SELECT COUNT(*) FROM t_order")
	}

	// More values than the proxy writes into a statement: 1235 naming the
	// bound. The rows go straight to one data node (user_id 0, even
	// order_id: ds_0.t_order_item_0).
	e.backends[0].Exec(t, "ds_0", "INSERT INTO t_order_item_0 (item_id, order_id, user_id, qty) SELECT 1000000 + seq, 2 * seq, 0, -1 FROM seq_1_to_100001")
	t.Cleanup(func() { e.backends[0].Exec(t, "ds_0", "DELETE FROM t_order_item_0 WHERE qty = -1") })
	_, err := db.Exec("SELECT COUNT(*) FROM t_order WHERE order_id IN (SELECT item_id FROM t_order_item WHERE qty = -1 OR qty > 0)")
	if errCode(err) != 1235 || !strings.Contains(err.Error(), "more than 100000 distinct values") {
		t.Errorf("a subquery of 100001 values: %v, want 1235 naming the bound", err)
	}
	same("SELECT COUNT(*) FROM t_order WHERE order_id IN (SELECT item_id FROM t_order_item WHERE qty > 0)")
}
