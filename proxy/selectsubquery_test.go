package proxy

import (
	"context"
	"database/sql"
	"math/big"
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

// subqueryDiff compares statements through the proxy (db) and on the
// reference database (ref) holding the same rows.
type subqueryDiff struct {
	t       *testing.T
	db, ref *sql.DB
}

// same compares q's answers (subqueryAnswer) and returns the
// reference's.
func (d subqueryDiff) same(q string, args ...any) string {
	d.t.Helper()
	got, want := subqueryAnswer(d.db, q, args...), subqueryAnswer(d.ref, q, args...)
	if got != want {
		d.t.Errorf("%s %v\nthrough the proxy: %s\ndirectly:          %s", q, args, got, want)
	}
	return want
}

// errors compares queries that MariaDB answers with 1241 or 1242; the
// connection goes on.
func (d subqueryDiff) errors(queries ...string) {
	d.t.Helper()
	for _, q := range queries {
		if want := d.same(q); !strings.HasPrefix(want, "error: Error 124") {
			d.t.Errorf("%s directly: %s; the reference is not what this test assumes", q, want)
		}
		d.same("SELECT COUNT(*) FROM t_order")
	}
}

// preparedTwice compares q prepared once and executed twice with args.
func (d subqueryDiff) preparedTwice(q string, args ...any) {
	d.t.Helper()
	var ps [2]*sql.Stmt
	for i, c := range []*sql.DB{d.db, d.ref} {
		var err error
		if ps[i], err = c.Prepare(q); err != nil {
			d.t.Fatalf("prepare %s, %d: %v", q, i, err)
		}
		defer ps[i].Close()
	}
	for range 2 {
		if got, want := subqueryAnswer(ps[0], "", args...), subqueryAnswer(ps[1], "", args...); got != want {
			d.t.Errorf("prepared once: %s %v\nthrough the proxy: %s\ndirectly:          %s", q, args, got, want)
		}
	}
}

// inTransaction compares queries inside a transaction that has added
// an item of qty 50 to order 18, then rolls it back.
func (d subqueryDiff) inTransaction(queries ...string) {
	d.t.Helper()
	var txs [2]*sql.Tx
	for i, c := range []*sql.DB{d.db, d.ref} {
		var err error
		if txs[i], err = c.Begin(); err != nil {
			d.t.Fatal(err)
		}
		if _, err := txs[i].Exec("INSERT INTO t_order_item (item_id, order_id, user_id, qty, price) VALUES (300, 18, 2, 50, 6.00)"); err != nil {
			d.t.Fatal(err)
		}
	}
	for _, q := range queries {
		got, want := subqueryAnswer(txs[0], q), subqueryAnswer(txs[1], q)
		if got != want || strings.HasSuffix(want, ": ") || strings.HasPrefix(want, "error") {
			d.t.Errorf("in a transaction: %s\nthrough the proxy: %s\ndirectly:          %s", q, got, want)
		}
	}
	for _, tx := range txs {
		if err := tx.Rollback(); err != nil {
			d.t.Fatal(err)
		}
	}
}

// refused checks that each query gets 1235 naming its reason, and that
// the connection goes on.
func (d subqueryDiff) refused(tests []struct{ query, reason string }) {
	d.t.Helper()
	for _, tt := range tests {
		_, err := d.db.Exec(tt.query)
		if errCode(err) != 1235 || !strings.Contains(err.Error(), tt.reason) {
			d.t.Errorf("%s: %v, want 1235 naming %s", tt.query, err, tt.reason)
		}
		d.same("SELECT COUNT(*) FROM t_order")
	}
}

// subqueryConns are raw connections through the proxy and to the
// reference database refDB.
func subqueryConns(t *testing.T, e *testEnv, refDB string) [2]*client.Conn {
	t.Helper()
	var raw [2]*client.Conn
	for i, addr := range []string{e.addr, e.backends[0].Addr()} {
		user, pass, schema := "app", "app-secret", "sharding_db"
		if i == 1 {
			user, pass, schema = "root", "", refDB
		}
		c, err := client.Connect(addr, user, pass, schema)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		raw[i] = c
	}
	return raw
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
	d := subqueryDiff{t: t, db: db, ref: ref}
	same := d.same

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
		// MikroORM's page of parents with their children (populate with
		// limit): the IN subquery reads the one column of a derived table
		// that holds the LIMIT, which MariaDB refuses in the IN subquery
		// itself (1235).
		"SELECT o.order_id, o.status, i.qty FROM t_order AS o LEFT JOIN t_order_item AS i ON o.order_id = i.order_id WHERE o.order_id IN (SELECT o.order_id FROM (SELECT o.order_id FROM t_order AS o LEFT JOIN t_order_item AS i ON o.order_id = i.order_id GROUP BY o.order_id ORDER BY MIN(o.amount) DESC LIMIT 3 OFFSET 1) AS o) ORDER BY o.amount DESC, i.qty",
		"SELECT order_id FROM t_order WHERE order_id IN (SELECT order_id FROM (SELECT order_id AS order_id FROM t_order ORDER BY amount LIMIT 2) x) ORDER BY order_id",
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
		// Qualified columns are named by their names (o.order_id is
		// order_id).
		"SELECT o.order_id, o.status FROM t_order o WHERE o.amount < (SELECT MAX(price) FROM t_order_item) ORDER BY o.order_id",
		// Two subqueries, one of them beside a sharding column.
		"SELECT order_id FROM t_order WHERE user_id IN (SELECT user_id FROM t_order_item WHERE qty = 7) AND amount < (SELECT MAX(price) FROM t_order_item) ORDER BY order_id",
	} {
		same(q)
	}

	// MariaDB's errors, as MariaDB words them; the connection goes on.
	d.errors(
		"SELECT order_id FROM t_order WHERE ref = (SELECT qty FROM t_order_item)",
		"SELECT order_id FROM t_order WHERE ref IN (SELECT qty, price FROM t_order_item)",
	)

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
		d.preparedTwice(pt.query, pt.args...)
	}

	// COM_STMT_PREPARE describes the SELECT's columns and parameters as
	// MariaDB does, before any execute.
	raw := subqueryConns(t, e, "selsub_ref")
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
	d.inTransaction(
		"SELECT order_id FROM t_order WHERE order_id IN (SELECT order_id FROM t_order_item WHERE qty = 50)",
		"SELECT order_id FROM t_order WHERE amount < (SELECT MAX(price) FROM t_order_item) ORDER BY order_id",
	)

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
	d.refused([]struct{ query, reason string }{
		{"SELECT order_id FROM t_order WHERE ref = (SELECT qty, price FROM t_order_item WHERE qty > 1000)", "must reach the same single data node"},
		{"SELECT order_id, ref NOT IN (SELECT qty FROM t_order_item) FROM t_order", "must reach the same single data node"},
		{"SELECT COUNT(*) FROM t_order WHERE 'NEW' = (SELECT MAX(status) FROM t_order WHERE user_id = 2)", "collation"},
		{"SELECT COUNT(*) FROM t_order WHERE amount > (SELECT AVG(price) * 1e0 FROM t_order_item)", "DOUBLE"},
	})

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

// TestSubqueryAverageFullPrecision: MariaDB shows an AVG with 4 more
// decimals than its argument but compares with the value it computed,
// which holds more (3.191428571 where it shows 3.191429). A subquery's
// AVG the proxy evaluates first must compare so too: a constant between
// the shown and the computed value is on the same side of it, and the
// shown value is not IN a list of such averages.
func TestSubqueryAverageFullPrecision(t *testing.T) {
	_, db, ref := inSubqueryEnv(t, "subavg_ref")
	execBoth(t, db, ref, selectSubqueryRows...)
	d := subqueryDiff{t: t, db: db, ref: ref}
	var shown, sum string
	var count int64
	if err := ref.QueryRow("SELECT AVG(price), SUM(price), COUNT(price) FROM t_order_item").Scan(&shown, &sum, &count); err != nil {
		t.Fatal(err)
	}
	s, ok1 := new(big.Rat).SetString(sum)
	r, ok2 := new(big.Rat).SetString(shown)
	if !ok1 || !ok2 {
		t.Fatalf("AVG %s, SUM %s", shown, sum)
	}
	exact := s.Quo(s, big.NewRat(count, 1))
	if exact.Cmp(r) == 0 {
		t.Fatalf("AVG(price) %s is exact (SUM %s over %d rows): the test cannot tell", shown, sum, count)
	}
	// Halfway between the computed and the shown value.
	between := new(big.Rat).Add(exact, r)
	between.Quo(between, big.NewRat(2, 1))
	mid := between.FloatString(12)
	for _, q := range []string{
		"SELECT COUNT(*) FROM t_order WHERE " + mid + " > (SELECT AVG(price) FROM t_order_item)",
		"SELECT COUNT(*) FROM t_order WHERE " + mid + " < (SELECT AVG(price) FROM t_order_item)",
		"SELECT COUNT(*) FROM t_order WHERE " + mid + "e0 > (SELECT AVG(price) FROM t_order_item)",
		"SELECT COUNT(*) FROM t_order WHERE " + shown + " = (SELECT AVG(price) FROM t_order_item)",
		"SELECT COUNT(*) FROM t_order WHERE " + shown + " IN (SELECT AVG(DISTINCT price) FROM t_order_item GROUP BY user_id)",
		"SELECT COUNT(*) FROM t_order WHERE " + shown + " NOT IN (SELECT AVG(price) FROM t_order_item GROUP BY user_id)",
		"SELECT COUNT(*) FROM t_order WHERE " + shown + " IN (SELECT AVG(price) FROM t_order_item GROUP BY user_id)",
		"SELECT COUNT(*) FROM t_order WHERE (SELECT AVG(qty) FROM t_order_item) > ref",
		"SELECT COUNT(*) FROM t_order WHERE ref > (SELECT AVG(qty) FROM t_order_item WHERE qty > 1000)",
	} {
		d.same(q)
	}
	d.same("SELECT COUNT(*) FROM t_order WHERE ? > (SELECT AVG(price) FROM t_order_item WHERE qty >= ?)", mid, 0)
}
