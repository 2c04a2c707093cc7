package proxy

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"testing"
)

// inSubquerySchema: binding tables t_order and t_order_item
// (bindingTestRules) with a nullable integer and a decimal to test IN
// with NULLs and decimal values.
var inSubquerySchema = []string{
	"DROP TABLE IF EXISTS t_order_item",
	"DROP TABLE IF EXISTS t_order",
	"CREATE TABLE t_order (order_id BIGINT NOT NULL PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(16), amount DECIMAL(10,2), ref BIGINT NULL)",
	"CREATE TABLE t_order_item (item_id BIGINT NOT NULL PRIMARY KEY, order_id BIGINT NOT NULL, user_id INT NOT NULL, qty INT NULL, price DECIMAL(10,2))",
	"INSERT INTO t_order (order_id, user_id, status, amount, ref) VALUES (10, 3, 'new', 1.50, 5), (11, 3, 'paid', 2.00, NULL), (12, 4, 'new', 3.25, 7), (13, 1, 'shipped', 4.00, 1), (14, 2, 'paid', 5.00, 100), (15, 4, 'paid', 0.00, NULL)",
	"INSERT INTO t_order_item (item_id, order_id, user_id, qty, price) VALUES (100, 10, 3, 1, 1.50), (101, 10, 3, 5, 2.00), (102, 11, 3, NULL, 9.99), (103, 12, 4, 7, 3.25), (104, 13, 1, 7, 1.50), (105, 14, 2, 2, 0.10), (106, 14, 2, 9, 4.00), (107, 15, 4, NULL, NULL)",
}

// inSubqueryEnv starts a proxy over bindingTestRules and makes the
// reference database refDB; both hold inSubquerySchema's rows.
func inSubqueryEnv(t *testing.T, refDB string) (e *testEnv, db, ref *sql.DB) {
	t.Helper()
	e = startEnv(t, envOptions{rules: bindingTestRules})
	db = e.open(t)
	t.Cleanup(func() { db.Exec("DROP TABLE IF EXISTS t_order_item") })
	e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS "+refDB, "CREATE DATABASE "+refDB)
	ref = e.backends[0].Open(t, refDB)
	execBoth(t, db, ref, inSubquerySchema...)
	return e, db, ref
}

// TestInSubqueryFirst runs UPDATE and DELETE with `IN (SELECT ...)` over
// binding tables (the statements Django writes for
// filter(related__x=...).update() and an aggregate-filtered delete())
// through the proxy, which evaluates the subquery first, and on one
// MariaDB holding the same rows: each step's affected rows and the
// tables afterwards must be the same. Also: the derived-table form, an
// empty subquery, NULLs in the list, decimal values, an explicit
// transaction rolled back and one committed, a subquery the proxy cannot
// evaluate (1235, nothing changed) and the cap on the list's size.
func TestInSubqueryFirst(t *testing.T) {
	e, db, ref := inSubqueryEnv(t, "insub_ref")
	contents := func(c *sql.DB) []string {
		t.Helper()
		return append(queryStrings(t, c, "SELECT order_id, user_id, status, amount, COALESCE(ref, 'null') FROM t_order ORDER BY order_id"),
			queryStrings(t, c, "SELECT item_id, order_id, user_id, COALESCE(qty, 'null'), COALESCE(price, 'null') FROM t_order_item ORDER BY item_id")...)
	}
	same := func(step string) {
		t.Helper()
		if got, want := contents(db), contents(ref); !slices.Equal(got, want) {
			t.Errorf("%s: the tables through the proxy\n%q\ndirectly\n%q", step, got, want)
		}
	}
	affected := func(c interface {
		ExecContext(context.Context, string, ...any) (sql.Result, error)
	}, q string) (int64, error) {
		res, err := c.ExecContext(context.Background(), q)
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	}

	steps := []struct {
		name, query string
		none        bool // MariaDB changes no row (else some)
	}{
		{"django update", "UPDATE `t_order` SET `status` = 'big' WHERE `t_order`.`order_id` IN (SELECT U0.`order_id` FROM `t_order` U0 INNER JOIN `t_order_item` U1 ON (U0.`order_id` = U1.`order_id`) WHERE U1.`qty` >= 5)", false},
		{"empty", "UPDATE t_order SET status = 'none' WHERE order_id IN (SELECT U0.order_id FROM t_order U0 INNER JOIN t_order_item U1 ON U0.order_id = U1.order_id WHERE U1.qty > 1000)", true},
		{"not in empty", "UPDATE t_order SET amount = amount + 1 WHERE order_id NOT IN (SELECT U0.order_id FROM t_order U0 INNER JOIN t_order_item U1 ON U0.order_id = U1.order_id WHERE U1.qty > 1000)", false},
		{"nulls in", "UPDATE t_order SET status = 'ref' WHERE ref IN (SELECT U1.qty FROM t_order U0 INNER JOIN t_order_item U1 ON U0.order_id = U1.order_id)", false},
		{"nulls not in", "UPDATE t_order SET status = 'notin' WHERE ref NOT IN (SELECT U1.qty FROM t_order U0 INNER JOIN t_order_item U1 ON U0.order_id = U1.order_id)", true},
		{"null on the sharding column", "UPDATE t_order_item SET qty = 0 WHERE order_id IN (SELECT U0.ref + 9 FROM t_order U0 INNER JOIN t_order_item U1 ON U0.order_id = U1.order_id WHERE U1.qty IS NULL OR U1.qty = 1)", false},
		{"decimals", "UPDATE t_order SET status = 'priced' WHERE amount IN (SELECT U1.price + 1 FROM t_order U0 INNER JOIN t_order_item U1 ON U0.order_id = U1.order_id)", false},
		{"strings", "UPDATE t_order SET amount = 0 WHERE status IN (SELECT U0.status FROM t_order U0 INNER JOIN t_order_item U1 ON U0.order_id = U1.order_id WHERE U1.qty = 7)", false},
		{"django delete by aggregate", "DELETE FROM `t_order_item` WHERE `t_order_item`.`item_id` IN (SELECT U0.`item_id` FROM `t_order_item` U0 INNER JOIN `t_order` U1 ON (U0.`order_id` = U1.`order_id`) LEFT OUTER JOIN `t_order_item` U2 ON (U1.`order_id` = U2.`order_id`) WHERE U0.`qty` >= 2 GROUP BY U0.`item_id` HAVING COUNT(U2.`item_id`) >= 2 ORDER BY NULL)", false},
		{"derived table", "DELETE FROM t_order_item WHERE item_id IN (SELECT * FROM (SELECT U0.item_id FROM t_order_item U0 INNER JOIN t_order U1 ON U0.order_id = U1.order_id WHERE U1.status = 'paid') subquery)", false},
		{"delete parents", "DELETE FROM t_order WHERE order_id IN (SELECT U0.order_id FROM t_order U0 LEFT JOIN t_order_item U1 ON U0.order_id = U1.order_id WHERE U1.item_id IS NULL)", false},
	}
	for _, st := range steps {
		want, err := affected(ref, st.query)
		if err != nil {
			t.Fatalf("%s directly: %v", st.name, err)
		}
		if (want == 0) != st.none {
			t.Fatalf("%s directly: %d rows: the reference is not what this test assumes", st.name, want)
		}
		got, err := affected(db, st.query)
		if err != nil {
			t.Errorf("%s through the proxy: %v", st.name, err)
		} else if got != want {
			t.Errorf("%s: %d rows through the proxy, %d directly", st.name, got, want)
		}
		same(st.name)
	}

	// Prepared on the server (the driver prepares a statement with
	// arguments): each execute writes them in and runs the subquery first.
	for _, pt := range []struct {
		query string
		args  []any
	}{
		{"UPDATE t_order SET status = ? WHERE order_id IN (SELECT U0.order_id FROM t_order U0 INNER JOIN t_order_item U1 ON U0.order_id = U1.order_id WHERE U1.qty >= ?)", []any{"prep", 1}},
		{"UPDATE t_order SET status = ? WHERE order_id IN (SELECT U0.order_id FROM t_order U0 INNER JOIN t_order_item U1 ON U0.order_id = U1.order_id WHERE U1.qty >= ?)", []any{"prep2", 1000}},
		{"UPDATE t_order SET status = ? WHERE order_id IN (SELECT U0.order_id FROM t_order U0 INNER JOIN t_order_item U1 ON U0.order_id = U1.order_id WHERE U1.qty >= 7)", []any{"prep3"}},
	} {
		var rows [2]int64
		for i, c := range []*sql.DB{db, ref} {
			res, err := c.Exec(pt.query, pt.args...)
			if err != nil {
				t.Fatalf("prepared %s %v, %d: %v", pt.query, pt.args, i, err)
			}
			rows[i], _ = res.RowsAffected()
		}
		if rows[0] != rows[1] {
			t.Errorf("prepared %s %v: %d rows through the proxy, %d directly", pt.query, pt.args, rows[0], rows[1])
		}
		same("prepared")
	}
	// Prepared without placeholders: planned whole at COM_STMT_PREPARE.
	var prepRows [2]int64
	for i, c := range []*sql.DB{db, ref} {
		ps, err := c.Prepare("DELETE FROM t_order_item WHERE order_id IN (SELECT U0.order_id FROM t_order U0 INNER JOIN t_order_item U1 ON U0.order_id = U1.order_id WHERE U0.status = 'prep3')")
		if err != nil {
			t.Fatalf("prepare without placeholders, %d: %v", i, err)
		}
		res, err := ps.Exec()
		if err != nil {
			t.Fatalf("execute without placeholders, %d: %v", i, err)
		}
		prepRows[i], _ = res.RowsAffected()
		ps.Close()
	}
	if prepRows[0] != prepRows[1] || prepRows[1] == 0 {
		t.Errorf("prepared without placeholders: %d rows through the proxy, %d directly", prepRows[0], prepRows[1])
	}
	same("prepared without placeholders")

	// In an explicit transaction: the change is seen inside it and undone
	// by ROLLBACK; another one commits.
	for _, end := range []string{"ROLLBACK", "COMMIT"} {
		q := "UPDATE t_order SET status = '" + strings.ToLower(end) + "' WHERE order_id IN (SELECT U0.order_id FROM t_order U0 INNER JOIN t_order_item U1 ON U0.order_id = U1.order_id WHERE U1.qty >= 0)"
		var rows [2]int64
		var inside [2][]string
		for i, c := range []*sql.DB{db, ref} {
			tx, err := c.Begin()
			if err != nil {
				t.Fatal(err)
			}
			if rows[i], err = affected(tx, q); err != nil {
				t.Fatalf("%s (then %s), %d: %v", q, end, i, err)
			}
			inside[i] = queryStrings(t, tx, "SELECT order_id, status FROM t_order ORDER BY order_id")
			if end == "ROLLBACK" {
				err = tx.Rollback()
			} else {
				err = tx.Commit()
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if rows[0] != rows[1] || rows[1] == 0 || !slices.Equal(inside[0], inside[1]) {
			t.Errorf("in a transaction (then %s): %d rows through the proxy, %d directly; inside it the proxy showed %q, MariaDB %q", end, rows[0], rows[1], inside[0], inside[1])
		}
		same("transaction then " + end)
	}

	// Assigning a sharding column: the rows the list matches move to
	// their new data node (keymove.go), in the same atomic write. (Their
	// items stay where they were: the last step that joins them.)
	move := "UPDATE t_order SET user_id = user_id + 1 WHERE order_id IN (SELECT U0.order_id FROM t_order U0 INNER JOIN t_order_item U1 ON U0.order_id = U1.order_id WHERE U1.qty >= 0)"
	want, err := affected(ref, move)
	if err != nil || want == 0 {
		t.Fatalf("%s directly: %d rows, %v", move, want, err)
	}
	if got, err := affected(db, move); err != nil || got != want {
		t.Errorf("moving rows: %d rows through the proxy, %v; %d directly", got, err, want)
	}
	same("moving rows")

	// A subquery the proxy cannot evaluate either: a join of binding
	// tables on user_id alone over every data node.
	before := contents(db)
	_, err = db.Exec("UPDATE t_order SET status = 'x' WHERE order_id IN (SELECT o.order_id FROM t_order o INNER JOIN t_order_item i ON o.user_id = i.user_id)")
	if errCode(err) != 1235 || !strings.Contains(err.Error(), "cannot evaluate this one") || !strings.Contains(err.Error(), "joining binding tables") {
		t.Errorf("a subquery the proxy cannot plan: %v, want 1235 naming why", err)
	}
	if got := contents(db); !slices.Equal(got, before) {
		t.Errorf("a refused statement changed the tables: %q, was %q", got, before)
	}

	// Correlated through a column without a table name: the subquery
	// cannot run alone (MariaDB finds status in the outer t_order).
	_, err = db.Exec("UPDATE t_order SET amount = 9 WHERE user_id IN (SELECT U1.user_id FROM t_order_item U1 WHERE status = 'priced')")
	if errCode(err) != 1235 || !strings.Contains(err.Error(), "Unknown column") {
		t.Errorf("a subquery correlated by an unqualified column: %v, want 1235 naming why", err)
	}
	if got := contents(db); !slices.Equal(got, before) {
		t.Errorf("a refused statement changed the tables: %q, was %q", got, before)
	}

	// More values than the proxy writes into a statement: 1235, nothing
	// changed. The rows go straight to one data node (user_id 0, even
	// order_id: ds_0.t_order_item_0).
	e.backends[0].Exec(t, "ds_0", "INSERT INTO t_order_item_0 (item_id, order_id, user_id, qty) SELECT 1000000 + seq, 2 * seq, 0, -1 FROM seq_1_to_100001")
	t.Cleanup(func() { e.backends[0].Exec(t, "ds_0", "DELETE FROM t_order_item_0 WHERE qty = -1") })
	before = contents(db)
	_, err = db.Exec("UPDATE t_order SET status = 'many' WHERE order_id IN (SELECT U1.item_id FROM t_order U0 RIGHT JOIN t_order_item U1 ON U0.order_id = U1.order_id WHERE U1.qty = -1 OR U1.qty > 0)")
	if errCode(err) != 1235 || !strings.Contains(err.Error(), "more than 100000 distinct values") {
		t.Errorf("a subquery of 100001 values: %v, want 1235 naming the bound", err)
	}
	if got := contents(db); !slices.Equal(got, before) {
		t.Errorf("a refused statement changed the tables")
	}

	// The subquery's rows are read with FOR UPDATE: locked until the
	// transaction ends. Item 200 (user 3, order 20) is on
	// ds_1.t_order_item_0.
	for _, q := range []string{"INSERT INTO t_order (order_id, user_id, status) VALUES (20, 3, 'lock')", "INSERT INTO t_order_item (item_id, order_id, user_id, qty) VALUES (200, 20, 3, 77)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if n, err := affected(tx, "UPDATE t_order SET status = 'locked' WHERE order_id IN (SELECT U0.order_id FROM t_order U0 INNER JOIN t_order_item U1 ON U0.order_id = U1.order_id WHERE U1.qty = 77)"); err != nil || n != 1 {
		t.Fatalf("the update in a transaction: %d rows, %v", n, err)
	}
	direct := e.backends[1].Open(t, "ds_1")
	const probe = "SELECT item_id FROM t_order_item_0 WHERE item_id = 200 FOR UPDATE NOWAIT"
	if _, err := direct.Exec(probe); errCode(err) != 1205 {
		t.Errorf("the subquery's row while the transaction is open: %v, want 1205 (locked)", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if _, err := direct.Exec(probe); err != nil {
		t.Errorf("the subquery's row after ROLLBACK: %v", err)
	}
	if got := queryOne(t, db, "SELECT status FROM t_order WHERE order_id = 20"); got != "lock" {
		t.Errorf("after ROLLBACK order 20's status is %q", got)
	}
}
