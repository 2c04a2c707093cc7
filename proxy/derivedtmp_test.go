package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
)

// derivedTempColumns adds to inSubquerySchema's t_order a DATETIME, a
// utf8mb4 text in a collation of its own, a binary string and an ENUM,
// with values in some rows.
var derivedTempColumns = []string{
	"ALTER TABLE t_order ADD COLUMN created DATETIME(3) NULL, ADD COLUMN label VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci NULL, ADD COLUMN raw VARBINARY(8) NULL, ADD COLUMN kind ENUM('a','b') NULL, ADD COLUMN ratio FLOAT NULL",
	"UPDATE t_order SET created = '2026-01-02 03:04:05.678', label = 'Émile', raw = X'00FF10', kind = 'a', ratio = 1.2345678 WHERE order_id = 10",
	"UPDATE t_order SET created = '2025-12-31 23:59:59.999', label = 'emile', raw = X'', kind = 'b' WHERE order_id = 13",
	"UPDATE t_order SET created = '2026-01-02 03:04:05.678', label = 'zoë', raw = X'7F' WHERE order_id = 16",
	"UPDATE t_order SET label = 'ÿ' WHERE order_id = 17",
}

// TestDerivedTempTable runs SELECTs whose only table is a derived table
// grouping, DISTINCT or ordered and limited over t_order across data
// nodes, read by a statement the router cannot merge (an ORDER BY and
// LIMIT of an aggregate, an aggregate of an aggregate, WHERE, HAVING,
// window functions, an aggregate of a DISTINCT), through the proxy,
// which reads the derived table first into a temporary table on one data
// source and runs the statement there, and on one MariaDB holding the
// same rows: the rows and the column definitions, text and prepared,
// must be MariaDB's; NULLs, DECIMAL, DATETIME(3), utf8mb4 text in its
// own collation and binary strings round-trip. Inside a transaction the
// derived table sees the transaction's new row, and after a ROLLBACK it
// does not; sql_select_limit cuts the statement's rows, not the derived
// table's. Two columns of one name get MariaDB's 1060; a derived table
// of more than 100,000 rows or 4 MiB, an ENUM or a FLOAT column (whose
// text has 6 digits), a column name longer than 64 characters and a
// READ ONLY transaction get 1235 naming why; the connection goes on, and
// no temporary table is left on the backend connection. All of them got
// 1235 before.
func TestDerivedTempTable(t *testing.T) {
	e, db, ref := inSubqueryEnv(t, "dtemp_ref")
	execBoth(t, db, ref, selectSubqueryRows...)
	execBoth(t, db, ref, derivedTempColumns...)
	d := subqueryDiff{t: t, db: db, ref: ref}
	meta := columnsDiffWith(t, e, "dtemp_ref", columnsCheck{rows: true})
	answered := func(queries ...string) {
		t.Helper()
		for _, q := range queries {
			if want := d.same(q); strings.HasPrefix(want, "error") || strings.HasSuffix(want, ": ") {
				t.Errorf("%s directly: %s; the reference is not what this test assumes", q, want)
			}
			meta(q)
			d.preparedTwice(q)
		}
	}
	answered(
		// The brief's own two shapes.
		"SELECT * FROM (SELECT user_id, COUNT(*) n FROM t_order GROUP BY user_id) t ORDER BY n DESC, user_id LIMIT 3",
		"SELECT t.user_id, AVG(t.cnt), SUM(t.cnt) FROM (SELECT user_id, status, COUNT(*) cnt FROM t_order GROUP BY user_id, status) t GROUP BY t.user_id ORDER BY t.user_id",
		// WHERE, HAVING, ORDER BY and LIMIT over the derived columns.
		"SELECT user_id, total FROM (SELECT user_id, SUM(amount) total FROM t_order GROUP BY user_id) AS t WHERE total > 1 ORDER BY total DESC LIMIT 2",
		"SELECT n, COUNT(*) AS users FROM (SELECT user_id, COUNT(*) n FROM t_order GROUP BY user_id) t GROUP BY n HAVING users >= 1 ORDER BY n",
		"SELECT status, amount FROM (SELECT status, amount FROM t_order GROUP BY order_id ORDER BY amount DESC LIMIT 3) t ORDER BY amount",
		// Expressions longer than 512 characters are TEXT there.
		"SELECT LENGTH(c), c2, CHAR_LENGTH(g) FROM (SELECT CONCAT(status, REPEAT('x', 1000)) c, CAST(status AS CHAR(600)) c2, GROUP_CONCAT(label ORDER BY label) g FROM t_order GROUP BY user_id) t ORDER BY 1, 2, 3",
		// Window functions over the derived table.
		"SELECT user_id, n, RANK() OVER (ORDER BY n DESC) r, SUM(n) OVER () s FROM (SELECT user_id, COUNT(*) n FROM t_order GROUP BY user_id) t ORDER BY user_id",
		// An aggregate of a DISTINCT, with NULLs.
		"SELECT COUNT(*), COUNT(ref), SUM(ref), MIN(ref), MAX(ref) FROM (SELECT DISTINCT ref FROM t_order) d",
		"SELECT * FROM (SELECT DISTINCT ref FROM t_order) d ORDER BY ref",
		// DECIMAL, DATETIME(3), utf8mb4 in its own collation, binary.
		"SELECT * FROM (SELECT DISTINCT amount, created, label, raw FROM t_order) t ORDER BY label, amount",
		"SELECT label, COUNT(*) FROM (SELECT label, created FROM t_order GROUP BY label, created) t GROUP BY label ORDER BY label",
		"SELECT MAX(created), MIN(raw), HEX(MAX(raw)) FROM (SELECT DISTINCT created, raw FROM t_order) t",
		"SELECT x.a, x.c FROM (SELECT amount * 2 AS a, CONCAT(status, '!') c FROM t_order GROUP BY order_id) x ORDER BY x.a",
		// A column's alias is its original name there; MIN and MAX of a
		// column are of its table.
		"SELECT * FROM (SELECT o.user_id AS u, MAX(o.label) ml, MIN(amount), MAX(amount + 0) m0, MIN(o.raw) AS r FROM t_order AS o GROUP BY o.user_id) x ORDER BY u",
		"SELECT x.u AS uu, x.ml FROM (SELECT user_id AS u, MAX(label) ml FROM t_order GROUP BY user_id) x ORDER BY uu",
	)
	withArgs := "SELECT * FROM (SELECT user_id, COUNT(*) n, MAX(label) l FROM t_order WHERE amount > ? GROUP BY user_id) t WHERE n >= ? ORDER BY n DESC, user_id LIMIT ?"
	d.preparedTwice(withArgs, 1, 1, 2)
	meta(withArgs, 1, 1, 2)
	meta(withArgs, 100, 1, 2)
	// SQLAlchemy's and Django's aggregate of an aggregate, grouped by a
	// text column whose collation makes 'new', 'NEW' and 'new ' one
	// group, in no order: the same rows.
	statusAvg := "SELECT t.status, AVG(t.cnt) FROM (SELECT user_id, status, COUNT(*) cnt FROM t_order GROUP BY user_id, status) t GROUP BY t.status"
	sameMultiset(t, db, ref, statusAvg)
	meta(statusAvg + " LIMIT 0")

	// sql_select_limit cuts the statement's rows, not the derived
	// table's.
	var limited [2]string
	for i, c := range []*sql.DB{db, ref} {
		conn, err := c.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.ExecContext(context.Background(), "SET sql_select_limit = 2"); err != nil {
			t.Fatal(err)
		}
		limited[i] = subqueryAnswer(conn, "SELECT * FROM (SELECT user_id, COUNT(*) n FROM t_order GROUP BY user_id) t ORDER BY n DESC, user_id")
		conn.ExecContext(context.Background(), "SET sql_select_limit = DEFAULT")
		conn.Close()
	}
	if limited[0] != limited[1] || strings.Count(limited[1], ";") != 1 {
		t.Errorf("under sql_select_limit = 2\nthrough the proxy: %s\ndirectly:          %s", limited[0], limited[1])
	}

	// Inside a transaction the derived table sees its new row; after the
	// ROLLBACK it does not.
	inTxn := "SELECT * FROM (SELECT user_id, COUNT(*) n, SUM(amount) s FROM t_order GROUP BY user_id) t ORDER BY n DESC, user_id LIMIT 3"
	var txs [2]*sql.Tx
	for i, c := range []*sql.DB{db, ref} {
		var err error
		if txs[i], err = c.Begin(); err != nil {
			t.Fatal(err)
		}
		if _, err := txs[i].Exec("INSERT INTO t_order (order_id, user_id, status, amount) VALUES (19, 3, 'txn', 9.50)"); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := subqueryAnswer(txs[0], inTxn), subqueryAnswer(txs[1], inTxn); got != want || !strings.Contains(want, "3,3,13.00") {
		t.Errorf("in a transaction: %s\nthrough the proxy: %s\ndirectly:          %s", inTxn, got, want)
	}
	// On the transaction's connection no temporary table is left.
	if _, err := txs[0].Exec("SELECT 1 FROM _shardflake_derived"); errCode(err) != 1146 {
		t.Errorf("the temporary table after the statement: %v, want 1146", err)
	}
	for _, tx := range txs {
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
	}
	if got := d.same(inTxn); strings.Contains(got, "13.00") {
		t.Errorf("after the ROLLBACK: %s", got)
	}

	// MariaDB's own error for two columns of one name.
	if want := d.same("SELECT * FROM (SELECT user_id, user_id FROM t_order GROUP BY user_id) t ORDER BY 1"); !strings.Contains(want, "1060") {
		t.Errorf("directly: %s; want 1060", want)
	}
	d.refused([]struct{ query, reason string }{
		{"SELECT MAX(LENGTH(big)) FROM (SELECT order_id, REPEAT('x', 500000) big FROM t_order GROUP BY order_id) t", "more than 100000 rows or 4 MiB"},
		{"SELECT * FROM (SELECT DISTINCT kind FROM t_order) t ORDER BY kind", "column kind is of type ENUM"},
		{"SELECT MAX(ratio) FROM (SELECT DISTINCT ratio FROM t_order) t", "column ratio is of type FLOAT"},
		{"SELECT * FROM (SELECT user_id AS " + strings.Repeat("u", 65) + ", COUNT(*) FROM t_order GROUP BY user_id) t ORDER BY 1", "is longer than 64 characters"},
	})
	// In a READ ONLY transaction MariaDB creates no temporary table:
	// 1235, and the transaction goes on.
	conn0, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"START TRANSACTION READ ONLY", "SELECT * FROM (SELECT user_id, COUNT(*) n FROM t_order GROUP BY user_id) t ORDER BY n DESC, user_id LIMIT 3", "SELECT COUNT(*) FROM t_order", "COMMIT"} {
		_, err := conn0.ExecContext(context.Background(), q)
		if strings.HasPrefix(q, "SELECT *") {
			if errCode(err) != 1235 || !strings.Contains(err.Error(), "READ ONLY transaction") {
				t.Errorf("%s in a READ ONLY transaction: %v, want 1235", q, err)
			}
		} else if err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
	conn0.Close()
	// More than 100,000 rows (100,008 items, read in two INSERT ...
	// SELECTs from MariaDB's sequence engine on the default data source).
	for _, q := range []string{
		"INSERT INTO t_order_item (item_id, order_id, user_id) SELECT seq + 1000, seq, seq FROM seq_1_to_50000",
		"INSERT INTO t_order_item (item_id, order_id, user_id) SELECT seq + 51000, seq, seq FROM seq_1_to_50000",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	d.refused([]struct{ query, reason string }{
		{"SELECT MAX(n) FROM (SELECT item_id, COUNT(*) n FROM t_order_item GROUP BY item_id) t", "more than 100000 rows or 4 MiB"},
	})
	// What the proxy answers for the session (VERSION(), DATABASE(),
	// CONNECTION_ID()) is never a data source's answer: the statement
	// answers the proxy's value, or is refused (1235).
	for _, fn := range []string{"VERSION()", "DATABASE()", "CONNECTION_ID()"} {
		var own string
		if err := db.QueryRow("SELECT " + fn).Scan(&own); err != nil {
			t.Fatal(err)
		}
		q := "SELECT " + fn + ", n FROM (SELECT user_id, COUNT(*) n FROM t_order GROUP BY user_id) t ORDER BY n DESC LIMIT 1"
		var got string
		var n int
		err := db.QueryRow(q).Scan(&got, &n)
		if (err == nil && got != own) || (err != nil && errCode(err) != 1235) {
			t.Errorf("%s: %q, %v; want the proxy's %q or 1235", q, got, err, own)
		}
	}
	// The statement goes on being answered.
	d.same("SELECT * FROM (SELECT user_id, COUNT(*) n FROM t_order GROUP BY user_id) t ORDER BY n DESC, user_id LIMIT 3")
}

// TestDerivedTempTableKilled: KILL QUERY of a statement running over a
// derived table the proxy read into a temporary table, inside a
// transaction, ends the statement with MariaDB's 1317 and leaves the
// transaction open with its earlier write, as on MariaDB; the temporary
// table is dropped all the same, and COMMIT commits the write.
func TestDerivedTempTableKilled(t *testing.T) {
	e, db, _ := inSubqueryEnv(t, "dtempkill_ref")
	ctx := context.Background()
	c := e.conn(t)
	var id int64
	if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	mustExec(t, c, "BEGIN")
	mustExec(t, c, "INSERT INTO t_order (order_id, user_id, status, amount) VALUES (19, 3, 'txn', 9.50)")
	kill := func() {
		if _, err := e.conn(t).ExecContext(ctx, fmt.Sprintf("KILL QUERY %d", id)); err != nil {
			t.Fatal(err)
		}
	}
	got := cancelInTxn(t, c, "SELECT user_id, SLEEP(30) FROM (SELECT user_id, COUNT(*) n FROM t_order GROUP BY user_id) t",
		func() bool { return backendRunning(t, e, "SLEEP(30)") == 1 }, kill, func() {}, "SELECT COUNT(*) = 1 FROM t_order WHERE order_id = 19")
	if got.code != 1317 || got.inTransaction != "1" || got.visible != "1" {
		t.Errorf("killed over a derived table in a transaction: %s; want 1317, the transaction open with its write", got)
	}
	if _, err := c.ExecContext(ctx, "SELECT 1 FROM _shardflake_derived"); errCode(err) != 1146 {
		t.Errorf("the temporary table after the killed statement: %v, want 1146", err)
	}
	mustExec(t, c, "COMMIT")
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM t_order WHERE order_id = 19").Scan(&n); err != nil || n != 1 {
		t.Errorf("after COMMIT: %d rows of order 19, %v", n, err)
	}
}
