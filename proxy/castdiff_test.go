package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
)

// MariaDB reads INT, INTEGER and INT4 as CAST and CONVERT types, short
// for SIGNED, which the SQL parser does not know (1064 through the proxy
// once): router.ParseStandIn reads them with stand-ins. These tests run
// each spelling in every place a statement carries one, through the proxy
// and on the reference database, as text and prepared, and compare
// values, column names and definitions.

// castPlainSchema is an unsharded table of the cast tests, on the
// default data source (ds_0, database mg_0) and in the reference
// database.
const castPlainSchema = `(
  id INT NOT NULL PRIMARY KEY,
  s VARCHAR(10) NULL,
  n INT NULL,
  u BIGINT UNSIGNED NULL
)`

// castDiffQueries are the SELECTs of TestMariaDBCastTypes; order 22 of
// user 3 is on one data node.
var castDiffQueries = []diffCase{
	// Every spelling, on no table.
	{sql: "SELECT CAST('5' AS INT), CAST('-5' AS INTEGER), CAST('5' AS int), cast('6' as Integer), CONVERT('7', INT), CONVERT('-7', INTEGER)"},
	{sql: "SELECT CAST('-5' AS UNSIGNED INT), CAST('5' AS UNSIGNED INTEGER), CAST('-5' AS SIGNED INT), CAST('5' AS SIGNED INTEGER), CONVERT('-5', UNSIGNED INT), CONVERT('5', SIGNED INTEGER)"},
	{sql: "SELECT CAST('5' AS INT4), CAST('-5' AS SIGNED INT4), CONVERT('5', UNSIGNED INT4), CAST(NULL AS INT), CAST(5.5 AS INTEGER), CAST(CAST('3' AS INT) AS CHAR)"},
	// An unsharded table: the client's text reaches the data node.
	{sql: "SELECT id, CAST(s AS INT), CONVERT(n, UNSIGNED INT), CAST(u AS INTEGER), CAST(n AS SIGNED INT) FROM t_cast_plain ORDER BY id", ordered: true},
	{sql: "SELECT id FROM t_cast_plain WHERE n = CAST('5' AS INT) OR CAST(s AS INTEGER) < 0 ORDER BY id", ordered: true},
	{sql: "SELECT /* CAST(n AS INT) */ 'CAST(1 AS INT)', CAST(n AS INT) AS `CAST(n AS INT)` FROM t_cast_plain WHERE id = 1 -- CAST(x AS INT)"},
	// A sharded table, one data node: the restored text goes there.
	{sql: "SELECT order_id, CAST(qty AS INT), CONVERT(flag, INTEGER), CAST(big AS SIGNED INT), CAST(qty AS UNSIGNED INT), CAST(amount AS INT) FROM t_order WHERE user_id = 3 AND order_id = 22"},
	{sql: "SELECT 'CAST(1 AS INT)', CAST(qty AS INT) q FROM t_order WHERE user_id = 3 AND order_id = 22 /* CAST(x AS INT) */"},
	// Every data node, merged: ORDER BY, aggregates and GROUP BY over a cast.
	{sql: "SELECT order_id, CAST(qty AS INT) AS q FROM t_order ORDER BY CAST(qty AS INTEGER) DESC, order_id LIMIT 12", ordered: true},
	{sql: "SELECT CAST(qty AS INT), order_id FROM t_order ORDER BY CAST(qty AS INT), order_id", ordered: true},
	{sql: "SELECT SUM(CAST(qty AS INT)), MAX(CONVERT(flag, INT)), MIN(CAST(amount AS INTEGER)), COUNT(CAST(qty AS INT)), AVG(CAST(qty AS UNSIGNED INT)) FROM t_order"},
	{sql: "SELECT CAST(flag AS INT) AS f, COUNT(*), SUM(CAST(qty AS INTEGER)) FROM t_order GROUP BY CAST(flag AS INT) ORDER BY f", ordered: true},
	{sql: "SELECT CONVERT(flag, INT), MAX(CAST(qty AS INT)) FROM t_order GROUP BY CONVERT(flag, INT) ORDER BY CONVERT(flag, INT)", ordered: true},
	// WHERE, on sharding columns too.
	{sql: "SELECT order_id, status FROM t_order WHERE order_id = CAST('22' AS INT)"},
	{sql: "SELECT order_id FROM t_order WHERE user_id = CAST('3' AS INTEGER) AND order_id = CONVERT('22', INT)"},
	{sql: "SELECT order_id FROM t_order WHERE user_id IN (CAST('3' AS INT), CAST('4' AS INT)) AND CAST(qty AS INT) > 0 ORDER BY order_id", ordered: true},
	{sql: "SELECT id, CAST(w AS INT) FROM t_range WHERE id BETWEEN CAST('-3' AS INT) AND CAST('3' AS INTEGER) ORDER BY id", ordered: true},
}

// castInserts are INSERTs with the spellings, text ([0]) and prepared
// ([1]), on the unsharded table and on t_order, whose sharding values
// are casts too; castInserted reads their rows back.
var castInserts = [2][]string{{
	"INSERT INTO t_cast_plain (id, s, n, u) VALUES (CAST('10' AS INT), 'x', CONVERT('-3', INTEGER), CAST('9' AS UNSIGNED INT))",
	"INSERT INTO t_order (order_id, user_id, qty, flag, big) VALUES (CAST('900002' AS INT), CAST(3 AS INTEGER), CAST('42' AS INT), CONVERT('1', INTEGER), CAST('-1' AS UNSIGNED INT))",
}, {
	"INSERT INTO t_cast_plain (id, s, n, u) VALUES (CAST('11' AS INTEGER), 'y', CAST(' 4' AS INT), CONVERT('8', UNSIGNED INTEGER))",
	"INSERT INTO t_order (order_id, user_id, qty, flag) VALUES (CONVERT('900006', UNSIGNED INT), CONVERT('+4', INT), CAST('-42' AS INTEGER), CONVERT('0', INT))",
}}

var castInserted = []diffCase{
	{sql: "SELECT * FROM t_cast_plain WHERE id >= 10 ORDER BY id", ordered: true},
	{sql: "SELECT order_id, user_id, qty, flag, big FROM t_order WHERE order_id IN (900002, 900006) ORDER BY order_id", ordered: true},
}

// castTables creates t_cast_plain through the proxy and in the reference
// database, and removes it and the rows castInserts adds to t_order when
// the test ends.
func castTables(t *testing.T, e *diffEnv) {
	t.Helper()
	ctx := context.Background()
	rows := "(1, '5', 5, 5), (2, '-7', -7, 7), (3, '12abc', NULL, 18446744073709551615), (4, NULL, 0, 0)"
	for _, db := range []struct {
		name string
		exec func(string) error
	}{
		{"proxy", func(q string) error { _, err := e.proxy.ExecContext(ctx, q); return err }},
		{"reference", func(q string) error { _, err := e.ref.ExecContext(ctx, q); return err }},
	} {
		for _, q := range []string{
			"DROP TABLE IF EXISTS t_cast_plain",
			"CREATE TABLE t_cast_plain " + castPlainSchema,
			"INSERT INTO t_cast_plain VALUES " + rows,
		} {
			if err := db.exec(q); err != nil {
				t.Fatalf("%s: %s: %v", db.name, q, err)
			}
		}
		t.Cleanup(func() {
			for _, q := range []string{"DROP TABLE IF EXISTS t_cast_plain", "DELETE FROM t_order WHERE order_id IN (900002, 900006)"} {
				if err := db.exec(q); err != nil {
					t.Errorf("%s: %s: %v", db.name, q, err)
				}
			}
		})
	}
}

// TestMariaDBCastTypes: CAST and CONVERT to INT, INTEGER and INT4 (and
// SIGNED or UNSIGNED INT) through the proxy answer as MariaDB does, on an
// unsharded table, on one and on every data node of a sharded table, in
// select lists, ORDER BY, aggregates, GROUP BY, WHERE (on sharding
// columns too) and INSERT values; as text and prepared, the prepare's
// column definitions included.
func TestMariaDBCastTypes(t *testing.T) {
	e := diffEnvironment(t)
	castTables(t, e)
	proxy, ref := colMetaConn{e.proxyRaw, diffLogicalDB}, colMetaConn{e.refRaw, diffRefDB}
	for _, tc := range castDiffQueries {
		t.Run(tc.sql, func(t *testing.T) {
			e.check(t, tc)
			got, want := e.runPrepared(e.proxyRaw, tc.sql), e.runPrepared(e.refRaw, tc.sql)
			if d := compareResults(tc, got, want); d != "" {
				t.Errorf("prepared:\n%s", d)
			}
			e.mu.Lock()
			defer e.mu.Unlock()
			wantPrepare, _, err := ref.fields(t, colMetaCase{sql: tc.sql}, true)
			if err != nil {
				t.Fatalf("MariaDB: %v", err)
			}
			gotPrepare, _, err := proxy.fields(t, colMetaCase{sql: tc.sql}, true)
			if err != nil {
				t.Fatalf("proxy: %v", err)
			}
			for _, d := range compareColumnDefs(gotPrepare, wantPrepare, proxy.db, ref.db) {
				t.Errorf("prepare %s", d)
			}
		})
	}
	t.Run("prepared with arguments", func(t *testing.T) {
		for _, c := range []struct {
			sql  string
			args []any
		}{
			{"SELECT order_id, CAST(qty AS INT) FROM t_order WHERE user_id = CAST(? AS INTEGER) AND order_id = CONVERT(?, INT)", []any{"3", "22"}},
			{"SELECT order_id, CAST(qty AS INT) FROM t_order WHERE order_id IN (CAST(? AS INT), ?) ORDER BY order_id", []any{"22", 1}},
			{"SELECT id, CAST(? AS INT), CONVERT(?, UNSIGNED INT) FROM t_cast_plain WHERE id = CAST(? AS INTEGER)", []any{"7", "-7", "2"}},
		} {
			got, want := e.runPrepared(e.proxyRaw, c.sql, c.args...), e.runPrepared(e.refRaw, c.sql, c.args...)
			if d := compareResults(diffCase{sql: c.sql, ordered: true}, got, want); d != "" {
				t.Errorf("%s\n%s", c.sql, d)
			}
			if len(got.rows) == 0 {
				t.Errorf("%s: no rows", c.sql)
			}
		}
	})
	t.Run("several statements", func(t *testing.T) {
		// Each statement runs as its own text, the client's.
		q := "SELECT CAST('1' AS INT); SELECT order_id, CONVERT(qty, INTEGER) FROM t_order WHERE user_id = 3 AND order_id = 22;" +
			" SELECT id, CAST(n AS INT) FROM t_cast_plain WHERE id = 2"
		all := func(dsn string) string {
			db, err := sql.Open("mysql", dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			return allResultSets(t, db, q)
		}
		got := all(diffDSN(e.addr) + "&multiStatements=true")
		want := all(e.backends[0].DSN(diffRefDB) + "&multiStatements=true")
		if got != want || !strings.Contains(want, "CONVERT(qty, INTEGER)") {
			t.Errorf("%s:\nproxy:\n%s\nMariaDB:\n%s", q, got, want)
		}
	})
	t.Run("INSERT", func(t *testing.T) {
		for i, inserts := range castInserts {
			for _, q := range inserts {
				var gotErr, wantErr error
				if i == 0 {
					e.mu.Lock()
					_, gotErr = e.proxyRaw.Execute(q)
					_, wantErr = e.refRaw.Execute(q)
					e.mu.Unlock()
				} else {
					gotErr, wantErr = e.runPrepared(e.proxyRaw, q).err, e.runPrepared(e.refRaw, q).err
				}
				if gotErr != nil || wantErr != nil {
					t.Fatalf("%s: proxy %v, reference %v", q, gotErr, wantErr)
				}
			}
		}
		for _, tc := range castInserted {
			e.check(t, tc)
		}
		// The rows are on their data nodes: user 3's order 900002 on
		// ds_1.t_order_2, user 4's order 900006 on ds_0.t_order_2.
		for _, want := range []struct {
			backend int
			table   string
			order   int
		}{{1, "mg_1.t_order_2", 900002}, {0, "mg_0.t_order_2", 900006}} {
			db, err := e.backends[want.backend].DB("")
			if err != nil {
				t.Fatal(err)
			}
			var n int
			q := fmt.Sprintf("SELECT COUNT(*) FROM %s WHERE order_id = %d", want.table, want.order)
			err = db.QueryRow(q).Scan(&n)
			db.Close()
			if err != nil || n != 1 {
				t.Errorf("%s: %d rows (%v), want 1", q, n, err)
			}
		}
	})
}
