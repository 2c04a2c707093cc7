package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// routerDiffQueries are differential cases for routing decisions (which
// data nodes a statement may pair), run like diffQueries against the
// reference tables: the proxy must answer exactly as the reference or
// refuse with wantErr.
var routerDiffQueries = []diffCase{
	// Binding tables pair data node by data node only when the join
	// equates all their sharding columns; otherwise rows joining across
	// data nodes would be lost.
	{sql: "SELECT COUNT(*) FROM t_order o JOIN t_order_item i ON o.user_id = i.user_id", wantErr: 1235},
	{sql: "SELECT COUNT(*) FROM t_order o JOIN t_order_item i ON i.qty = o.user_id", wantErr: 1235},
	{sql: "SELECT COUNT(*) FROM t_order o, t_order_item i", wantErr: 1235},
	{sql: "SELECT COUNT(*) FROM t_order o LEFT JOIN t_order_item i ON o.user_id = i.user_id AND i.qty > 2", wantErr: 1235},
	{sql: "SELECT COUNT(*) FROM t_order o JOIN t_order_item i ON o.order_id = i.order_id", wantErr: 1235},
	{sql: "SELECT COUNT(*) FROM t_order JOIN t_order_item USING (user_id)", wantErr: 1235},
	{sql: "SELECT COUNT(*) FROM t_order a JOIN t_order b ON a.user_id = b.user_id", wantErr: 1235},
	{sql: "SELECT COUNT(*) FROM t_order o JOIN t_order_item i ON o.user_id = i.user_id AND o.order_id = i.order_id"},
	{sql: "SELECT o.order_id, i.item_id FROM t_order o LEFT JOIN t_order_item i ON o.user_id = i.user_id AND o.order_id = i.order_id AND i.qty > 2"},
	{sql: "SELECT o.order_id, i.item_id FROM t_order o RIGHT JOIN t_order_item i ON o.user_id = i.user_id AND o.order_id = i.order_id AND o.qty > 0"},
	{sql: "SELECT o.order_id, i.item_id FROM t_order o, t_order_item i WHERE o.user_id = i.user_id AND o.order_id = i.order_id AND o.user_id = 3"},
	{sql: "SELECT o.order_id, i.item_id FROM t_order o JOIN t_order_item i ON o.user_id = i.user_id WHERE o.order_id = i.order_id AND i.qty < 3"},
	{sql: "SELECT COUNT(*), SUM(i.price) FROM t_order NATURAL JOIN t_order_item i"},
	{sql: "SELECT COUNT(*) FROM t_order JOIN t_order_item USING (user_id, order_id)"},
	{sql: "SELECT COUNT(*) FROM t_order a JOIN t_order b ON a.user_id = b.user_id AND a.order_id = b.order_id"},
	{sql: "SELECT o.user_id, COUNT(i.item_id) FROM t_order o LEFT JOIN t_order_item i ON o.user_id = i.user_id AND o.order_id = i.order_id GROUP BY o.user_id ORDER BY o.user_id", ordered: true},
	{sql: "SELECT o.order_id FROM t_order o LEFT JOIN t_order_item i ON o.user_id = i.user_id AND o.order_id = i.order_id WHERE i.user_id <=> NULL"},
	// Unrelated data nodes of one data source: each side on one node.
	{sql: "SELECT o.order_id, i.item_id FROM t_order o JOIN t_order_item i ON o.user_id = i.user_id WHERE o.user_id = 3 AND o.order_id = 22 AND i.user_id = 3 AND i.order_id = 204"},
	{sql: "SELECT o.order_id, i.item_id FROM t_order o JOIN t_order_item i ON o.user_id = i.user_id WHERE o.user_id = 3 AND o.order_id = 22 AND i.user_id = 4 AND i.order_id = 57", wantErr: 1235},

	// A sharding value whose data source does not exist (ds_-1) matches
	// no row: MariaDB's empty answer, with its column metadata.
	{sql: "SELECT COUNT(*), SUM(amount), MAX(status) FROM t_order WHERE user_id = -5"},
	{sql: "SELECT * FROM t_order WHERE user_id = -5 AND order_id = 8"},
	{sql: "SELECT order_id FROM t_order WHERE user_id IN (-5, 3) ORDER BY order_id", ordered: true},
	{sql: "SELECT o.order_id, i.qty FROM t_order o JOIN t_order_item i ON o.user_id = i.user_id AND o.order_id = i.order_id WHERE o.user_id = -1"},
	{sql: "SELECT COUNT(*) FROM t_order WHERE user_id = 1 AND user_id = 2"},

	// ORM shapes over a row-wise inner block on several data nodes: each
	// route runs the whole statement, the merge combines the answers.
	{sql: "SELECT COUNT(*) FROM (SELECT order_id FROM t_order WHERE status = 'new') sub"},
	{sql: "SELECT COUNT(*) FROM (SELECT order_id FROM t_order WHERE qty > 0) AS sub"},
	{sql: "SELECT COUNT(*), SUM(sub.amount), MIN(sub.amount), MAX(sub.status), AVG(sub.qty) FROM (SELECT amount, status, qty FROM t_order WHERE flag = 0) sub", fold: map[int]string{3: gci}},
	{sql: "SELECT COUNT(*) FROM (SELECT o.order_id FROM t_order o JOIN t_order_item i ON o.user_id = i.user_id AND o.order_id = i.order_id WHERE i.qty > 1) t"},
	{sql: "SELECT sub.user_id, COUNT(*) FROM (SELECT user_id FROM t_order WHERE qty IS NOT NULL) sub GROUP BY sub.user_id ORDER BY sub.user_id", ordered: true},
	{sql: "SELECT COUNT(*) FROM (SELECT order_id FROM t_order WHERE user_id = 3) sub"},
	// A UNION of SELECTs of the same sharded table: every route runs the
	// whole UNION on one data node, the merge combines them.
	{sql: "SELECT order_id FROM t_order WHERE status = 'new' UNION ALL SELECT order_id FROM t_order WHERE qty > 3"},
	{sql: "SELECT order_id, qty FROM t_order WHERE qty < 2 UNION ALL SELECT order_id, qty FROM t_order WHERE qty > 2 ORDER BY qty DESC, order_id LIMIT 3, 7", ordered: true},
	{sql: "SELECT user_id FROM t_order WHERE qty < 2 UNION SELECT user_id FROM t_order WHERE amount > 5 ORDER BY user_id", ordered: true},
	{sql: "SELECT status AS s FROM t_order WHERE user_id = 3 UNION SELECT status FROM t_order WHERE qty > 1 ORDER BY s DESC LIMIT 4", ordered: true, fold: map[int]string{0: gci}},
	{sql: "SELECT amount, order_id FROM t_order WHERE user_id IN (2, 5) UNION ALL SELECT qty, order_id FROM t_order WHERE user_id = 4 ORDER BY 1, 2", ordered: true},
	{sql: "(SELECT order_id FROM t_order WHERE qty = 1) UNION DISTINCT (SELECT order_id FROM t_order WHERE qty = 1) UNION DISTINCT (SELECT order_id FROM t_order WHERE qty = 2) ORDER BY order_id LIMIT 5", ordered: true},
	{sql: "SELECT id, w FROM t_range WHERE grp = 1 UNION ALL SELECT id, w FROM t_range WHERE v IS NULL ORDER BY id, w", ordered: true},
	{sql: "SELECT id FROM t_range WHERE id < 0 UNION SELECT id FROM t_range WHERE id >= 5 ORDER BY id LIMIT 4", ordered: true},
	// Read as a derived table: a UNION ALL's rows are each data node's
	// rows together; a UNION's COUNT(*) is the proxy's (derivedcount.go).
	{sql: "SELECT COUNT(*) FROM (SELECT order_id FROM t_order WHERE qty = 1 UNION ALL SELECT order_id FROM t_order WHERE qty > 2) u"},
	{sql: "SELECT u.user_id, COUNT(*) FROM (SELECT user_id FROM t_order WHERE qty < 2 UNION ALL SELECT user_id FROM t_order WHERE status = 'paid') u GROUP BY u.user_id ORDER BY u.user_id", ordered: true},
	{sql: "SELECT * FROM ((SELECT order_id FROM t_order WHERE qty < 1) UNION ALL (SELECT order_id FROM t_order WHERE qty = 3)) AS u ORDER BY order_id LIMIT 5", ordered: true},
	{sql: "SELECT COUNT(*) FROM (SELECT user_id FROM t_order WHERE qty < 2 UNION SELECT user_id FROM t_order WHERE qty > 2) u"},
	{sql: "SELECT MAX(user_id) FROM (SELECT user_id FROM t_order WHERE qty < 2 UNION SELECT user_id FROM t_order WHERE qty > 2) u", wantErr: 1235},
	{sql: "SELECT COUNT(*) FROM (SELECT order_id FROM t_order UNION ALL SELECT order_id FROM t_order ORDER BY 1 LIMIT 3) u"},
	// Not one table's rows on each data node: another table, a join, a
	// grouped branch; each branch runs alone (setop.go).
	{sql: "SELECT order_id FROM t_order UNION ALL SELECT order_id FROM t_order_item"},
	{sql: "SELECT o.order_id FROM t_order o JOIN t_order_item i ON o.user_id = i.user_id AND o.order_id = i.order_id UNION ALL SELECT order_id FROM t_order"},
	{sql: "SELECT user_id FROM t_order GROUP BY user_id UNION ALL SELECT user_id FROM t_order WHERE qty = 1"},
	{sql: "SELECT order_id FROM t_order WHERE qty = 1 INTERSECT SELECT order_id FROM t_order WHERE qty < 3"},
	// A branch without the sharded table whose column MariaDB widens
	// (BIGINT and the INT of 7), mixed operators.
	{sql: "SELECT order_id FROM t_order WHERE qty = 1 UNION ALL SELECT 7", wantErr: 1235},
	{sql: "SELECT order_id FROM t_order WHERE qty = 1 UNION ALL SELECT order_id FROM t_order WHERE qty = 2 UNION SELECT order_id FROM t_order WHERE qty = 1", wantErr: 1235},
	{sql: "SELECT order_id FROM t_order WHERE qty = 1 UNION ALL SELECT order_id FROM t_order WHERE qty = 2 ORDER BY order_id + 1", wantErr: 1235},
	// The same read as a common table expression named once: a derived
	// table written first (SQLAlchemy's cte(), jOOQ, Laravel's WITH).
	{sql: "WITH sub AS (SELECT order_id FROM t_order WHERE status = 'new') SELECT COUNT(*) FROM sub"},
	{sql: "WITH sub AS (SELECT amount, status, qty FROM t_order WHERE flag = 0) SELECT COUNT(*), SUM(sub.amount), MIN(sub.amount), MAX(sub.status), AVG(sub.qty) FROM sub", fold: map[int]string{3: gci}},
	{sql: "WITH paid (id, amt) AS (SELECT order_id, amount FROM t_order WHERE status = 'paid') SELECT p.id, p.amt FROM paid AS p ORDER BY p.amt DESC, p.id LIMIT 5", ordered: true},
	{sql: "WITH t AS (SELECT o.order_id, i.qty FROM t_order o JOIN t_order_item i ON o.user_id = i.user_id AND o.order_id = i.order_id WHERE i.qty > 1) SELECT qty, COUNT(*) FROM t GROUP BY qty ORDER BY qty", ordered: true},
	{sql: "with Sub as (select user_id from t_order where qty is not null) select Sub.user_id, count(*) from Sub group by Sub.user_id order by 1", ordered: true},
	{sql: "WITH sub AS (SELECT order_id FROM t_order WHERE user_id = 3) SELECT * FROM sub ORDER BY order_id", ordered: true},
	// Read twice, grouped, or recursive: not a derived table read once.
	{sql: "WITH sub AS (SELECT order_id FROM t_order) SELECT COUNT(*) FROM sub WHERE order_id IN (SELECT order_id FROM sub)", wantErr: 1235},
	{sql: "WITH sub AS (SELECT user_id FROM t_order GROUP BY user_id) SELECT MAX(user_id) FROM sub", wantErr: 1235},
	{sql: "WITH sub AS (SELECT user_id FROM t_order GROUP BY user_id) SELECT COUNT(*) FROM sub"},
	{sql: "WITH sub AS (SELECT DISTINCT status FROM t_order) SELECT COUNT(*) AS n FROM sub AS s"},
	{sql: "WITH sub AS (SELECT order_id FROM t_order ORDER BY order_id LIMIT 10) SELECT COUNT(*) FROM sub"},
	{sql: "WITH a AS (SELECT user_id FROM t_order), sub AS (SELECT user_id FROM a GROUP BY user_id) SELECT COUNT(*) FROM sub", wantErr: 1235},
	{sql: "WITH RECURSIVE sub AS (SELECT order_id FROM t_order) SELECT COUNT(*) FROM sub", wantErr: 1235},
	// COUNT(*) alone over a derived table that groups or limits: the
	// proxy runs the derived table's query and counts its rows
	// (derivedcount.go). A derived table that limits rows of one table
	// is read first, and the statement runs over the rows it chose
	// (derivedlimit.go); any other use of one that groups reads it into a
	// temporary table and runs the statement there (derivedtmp.go).
	{sql: "SELECT COUNT(*) FROM (SELECT user_id FROM t_order GROUP BY user_id) sub"},
	{sql: "SELECT COUNT(*) FROM (SELECT order_id FROM t_order ORDER BY order_id LIMIT 10) sub"},
	{sql: "SELECT COUNT(*) + 1 FROM (SELECT order_id FROM t_order ORDER BY order_id LIMIT 10) sub"},
	{sql: "SELECT SUM(qty), MAX(status) FROM (SELECT order_id, qty, status FROM t_order ORDER BY order_id DESC LIMIT 7) sub"},
	{sql: "SELECT MAX(user_id) FROM (SELECT user_id FROM t_order GROUP BY user_id) sub"},
	{sql: "SELECT EXISTS(SELECT 1 FROM t_order WHERE status = 'paid')"},
	{sql: "SELECT EXISTS(SELECT 1 FROM t_order WHERE status = 'nope')"},
	{sql: "SELECT NOT EXISTS(SELECT 1 FROM t_order WHERE qty > 100)"},
	{sql: "SELECT NOT EXISTS(SELECT 1 FROM t_order WHERE qty > 5) AS none"},
	{sql: "SELECT EXISTS(SELECT 1 FROM t_order WHERE order_id = 8 LIMIT 1) AS found"},
	{sql: "SELECT EXISTS(SELECT 1 FROM t_order o JOIN t_order_item i ON o.user_id = i.user_id AND o.order_id = i.order_id WHERE i.qty = 5)"},
	{sql: "SELECT EXISTS(SELECT user_id FROM t_order GROUP BY user_id HAVING COUNT(*) > 8)", wantErr: 1235},
	// TypeORM's exists() and existsBy(): one constant row kept by WHERE
	// EXISTS; any route's row is the answer.
	{sql: "SELECT 1 AS `row_exists` FROM (SELECT 1 AS dummy_column) `dummy_table` WHERE EXISTS (SELECT 1 FROM `t_order` `Order` WHERE ((`Order`.`status` = 'paid'))) LIMIT 1"},
	{sql: "SELECT 1 AS `row_exists` FROM (SELECT 1 AS dummy_column) `dummy_table` WHERE EXISTS (SELECT 1 FROM `t_order` `Order` WHERE ((`Order`.`status` = 'nope'))) LIMIT 1"},
	{sql: "SELECT t.d, t.e + 1, 'x' FROM (SELECT 1 AS d, 2 AS e) t WHERE EXISTS (SELECT 1 FROM t_order WHERE qty > 1) ORDER BY t.d"},
	{sql: "SELECT 1 FROM DUAL WHERE EXISTS (SELECT 1 FROM t_order o JOIN t_order_item i ON o.user_id = i.user_id AND o.order_id = i.order_id WHERE i.qty = 5 LIMIT 1)"},
	{sql: "SELECT 'yes' FROM DUAL WHERE EXISTS (SELECT 1 FROM t_order WHERE qty > 1)"},
	{sql: "SELECT 'yes' WHERE EXISTS (SELECT 1 FROM t_order WHERE status = 'paid')"},
	{sql: "SELECT * FROM (SELECT 1 AS d) t WHERE EXISTS (SELECT 1 FROM t_order WHERE qty > 1) LIMIT 1 OFFSET 1"},
	{sql: "SELECT 1 FROM (SELECT 1 AS d) t WHERE NOT EXISTS (SELECT 1 FROM t_order WHERE qty > 100)"},
	{sql: "SELECT COUNT(*) FROM (SELECT 1 AS d) t WHERE EXISTS (SELECT 1 FROM t_order WHERE qty > 1)"},
	{sql: "SELECT 1 FROM (SELECT 1 AS d UNION ALL SELECT 2) t WHERE EXISTS (SELECT 1 FROM t_order WHERE qty > 1)"},
	{sql: "SELECT order_id FROM t_order WHERE user_id = 3 AND order_id IN (SELECT order_id FROM t_order WHERE user_id = 3 AND qty > 0) ORDER BY order_id", ordered: true},
	{sql: "SELECT o.order_id FROM t_order o WHERE o.user_id = 5 AND o.order_id IN (SELECT i.order_id FROM t_order_item i WHERE i.user_id = 5 AND i.qty > 1)"},
	{sql: "SELECT COUNT(*) FROM t_order o JOIN t_order_item i ON o.order_id = i.order_id WHERE o.user_id = 7 AND i.user_id = 7"},
	{sql: "SELECT order_id FROM t_order WHERE user_id = 3 AND order_id IN (SELECT order_id FROM t_order WHERE user_id = 4)"},

	// Share locks reach MariaDB as LOCK IN SHARE MODE, on one data node or
	// several (it refuses the parser's FOR SHARE with 1064).
	{sql: "SELECT order_id, status FROM t_order WHERE user_id = 3 AND order_id = 22 LOCK IN SHARE MODE"},
	{sql: "SELECT order_id FROM t_order WHERE user_id = 3 ORDER BY order_id LOCK IN SHARE MODE", ordered: true},
	{sql: "SELECT COUNT(*) FROM t_order LOCK IN SHARE MODE"},

	// Functions the parser names internally (INSERT_FUNC, CHAR_FUNC) reach
	// MariaDB by their SQL names; literals keep MariaDB's column names.
	{sql: "SELECT INSERT(status, 1, 1, 'X'), CHAR(65, 66), CHAR(0xe4 USING latin1), CHAR(255 USING utf8mb4) FROM t_order WHERE user_id = 3 AND order_id = 22"},
	{sql: "SELECT order_id, INSERT(status, 2, 0, '-') FROM t_order WHERE CHAR(65) = 'A' AND user_id = 3"},
	{sql: "SELECT true, False, null, 1 AS one FROM t_order WHERE user_id = 3 AND order_id = 22"},
	// MariaDB names a column in utf8mb3, a character beyond the BMP as ?,
	// and refuses that character in an alias (1300).
	{sql: "SELECT HEX('😀'), CONCAT(status, '😀é'), '😀' FROM t_order WHERE user_id = 3 AND order_id = 22"},
	{sql: "SELECT order_id, CHAR_LENGTH('a😀') FROM t_order WHERE user_id = 3 ORDER BY order_id", ordered: true},
	{sql: "SELECT order_id, CONCAT(status, '😀') FROM t_order ORDER BY CONCAT(status, '😀') DESC, order_id LIMIT 5", ordered: true},

	// Hexadecimal and bit literals keep MariaDB's meaning for 0x41 and
	// b'1000001': a number where one is wanted, else a binary string.
	{sql: "SELECT qty + 0x10, qty | 0x04, 0x41 = 'A', HEX(0x0041), b'1000001', b'101' + 0 FROM t_order WHERE user_id = 3 AND order_id = 22"},
	{sql: "SELECT order_id FROM t_order WHERE qty | 0x01 = qty AND user_id = 3 AND x'41' = 'A'"},
}

func TestRouterDifferential(t *testing.T) {
	e := diffEnvironment(t)
	for _, tc := range routerDiffQueries {
		e.check(t, tc)
	}
}

// writeCase is a write statement run on the proxy and on the reference
// tables; afterwards both must hold the same rows. wantErr: the proxy must
// refuse it (and the reference does not run it).
type writeCase struct {
	sql     string
	wantErr uint16
}

// TestRouterDifferentialWrites runs writes through the proxy and on the
// reference tables, compares affected rows, and after each compares every
// row of the tables.
func TestRouterDifferentialWrites(t *testing.T) {
	backends := sharedServers(t)
	e := newWriteDiffEnv(t, backends)
	cases := []writeCase{
		// Multi-table writes of binding tables joined on fewer than all
		// their sharding columns would miss (or wrongly pair) rows.
		{sql: "UPDATE t_order o JOIN t_order_item i ON o.user_id = i.user_id SET i.qty = o.qty WHERE o.status = 'paid'", wantErr: 1235},
		{sql: "DELETE i FROM t_order o, t_order_item i WHERE o.status = 'paid'", wantErr: 1235},
		{sql: "DELETE i FROM t_order o JOIN t_order_item i ON o.order_id = i.order_id WHERE o.status = 'shipped'", wantErr: 1235},
		{sql: "UPDATE t_order o JOIN t_order_item i ON o.user_id = i.user_id AND o.order_id = i.order_id SET i.qty = o.qty + 100 WHERE o.status = 'paid'"},
		{sql: "DELETE i FROM t_order o JOIN t_order_item i ON o.user_id = i.user_id AND o.order_id = i.order_id WHERE o.status = 'new'"},
		{sql: "UPDATE t_order o LEFT JOIN t_order_item i ON o.user_id = i.user_id AND o.order_id = i.order_id SET o.note = 'no items' WHERE i.item_id IS NULL"},
		// Assigning a sharding column its own value moves nothing.
		{sql: "UPDATE t_order SET user_id = user_id, qty = 7 WHERE order_id = 8"},
		// Assigning another value moves the rows whose data node changes.
		{sql: "UPDATE t_order SET user_id = 3 WHERE order_id = 8"},
		{sql: "UPDATE t_order SET user_id = user_id + 1, qty = qty + 1 WHERE status = 'paid'"},
		// No data source for the value: no row matches, nothing changes.
		{sql: "UPDATE t_order SET status = 'gone' WHERE user_id = -5"},
		{sql: "DELETE FROM t_order_item WHERE user_id = -3 AND order_id = 5"},
		{sql: "INSERT INTO t_order (order_id, user_id) VALUES (9999, -5)", wantErr: 1235},
		// 0x04 is the number 4 here, as in MariaDB (X'04' would be a string).
		{sql: "UPDATE t_order SET amount = amount + 0x04 WHERE user_id = 3"},
		{sql: "UPDATE t_order SET amount = amount - b'10', note = 0x41 WHERE status = 'paid'"},
	}
	for _, tc := range cases {
		e.checkWrite(t, tc)
	}
}

// writeDiffEnv is a proxy over its own copy of the differential tables
// (databases rw_0, rw_1 and rw_ref), for statements that change rows.
type writeDiffEnv struct {
	proxy, ref *sql.DB
}

func newWriteDiffEnv(t *testing.T, backends []*mariadbtest.Server) *writeDiffEnv {
	t.Helper()
	ctx := context.Background()
	schema := map[string]string{"t_order": diffSchema["t_order"], "t_order_item": diffSchema["t_order_item"]}
	setup := func(b *mariadbtest.Server, db string, tables func(logical string) []string) {
		t.Helper()
		createDatabase(t, b, db, schema, tables)
	}
	for i := range 2 {
		setup(backends[i], fmt.Sprintf("rw_%d", i), func(logical string) []string {
			var out []string
			for j := range 4 {
				out = append(out, fmt.Sprintf("%s_%d", logical, j))
			}
			return out
		})
	}
	setup(backends[0], "rw_ref", func(logical string) []string { return []string{logical} })
	proxy := startRulesProxy(t, strings.ReplaceAll(diffRules(backends, ""), "/mg_", "/rw_"))
	ref, err := backends[0].DB("rw_ref")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ref.Close() })
	data := diffData()
	for _, table := range []string{"t_order", "t_order_item"} {
		rows := data[table]
		for start := 0; start < len(rows); start += 16 {
			q := fmt.Sprintf("INSERT INTO %s VALUES %s", table, strings.Join(rows[start:min(start+16, len(rows))], ", "))
			if _, err := proxy.ExecContext(ctx, q); err != nil {
				t.Fatalf("through the proxy: %s: %v", q, err)
			}
			if _, err := ref.ExecContext(ctx, q); err != nil {
				t.Fatalf("reference: %s: %v", q, err)
			}
		}
	}
	return &writeDiffEnv{proxy: proxy, ref: ref}
}

// createDatabase makes database db on b afresh, with each logical table of
// schema (its definition) as the tables physical names, and drops it when
// t ends.
func createDatabase(t *testing.T, b *mariadbtest.Server, db string, schema map[string]string, physical func(logical string) []string) {
	t.Helper()
	d, err := b.DB("")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	stmts := []string{"DROP DATABASE IF EXISTS " + db, "CREATE DATABASE " + db}
	for logical, def := range schema {
		for _, name := range physical(logical) {
			stmts = append(stmts, fmt.Sprintf("CREATE TABLE %s.%s %s", db, name, def))
		}
	}
	for _, s := range stmts {
		if _, err := d.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	t.Cleanup(func() {
		if d, err := b.DB(""); err == nil {
			d.Exec("DROP DATABASE IF EXISTS " + db)
			d.Close()
		}
	})
}

// startRulesProxy serves rules on a loopback port for one test and returns
// a client of it in the logical database.
func startRulesProxy(t *testing.T, rules string) *sql.DB {
	t.Helper()
	srv, addr, err := startProxyOn(rules)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	db, err := sql.Open("mysql", diffDSN(addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// startProxyOn serves a rules file's text on a loopback port.
func startProxyOn(rulesText string) (*Server, string, error) {
	rules, err := config.Parse([]byte(rulesText), "router-diff-rules.yaml")
	if err != nil {
		return nil, "", err
	}
	srv, err := New(Config{Rules: rules, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, "", err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	go srv.Serve(l)
	return srv, l.Addr().String(), nil
}

func (e *writeDiffEnv) checkWrite(t *testing.T, tc writeCase) {
	t.Helper()
	ctx := context.Background()
	res, err := e.proxy.ExecContext(ctx, tc.sql)
	if tc.wantErr != 0 {
		if errCode(err) != tc.wantErr {
			t.Errorf("%s: error %v, want %d", tc.sql, err, tc.wantErr)
		}
	} else {
		want, refErr := e.ref.ExecContext(ctx, tc.sql)
		switch {
		case err != nil || refErr != nil:
			t.Errorf("%s: proxy %v, reference %v", tc.sql, err, refErr)
		default:
			got, _ := res.RowsAffected()
			exp, _ := want.RowsAffected()
			if got != exp {
				t.Errorf("%s: %d affected rows, reference %d", tc.sql, got, exp)
			}
		}
	}
	for _, q := range []string{
		"SELECT order_id, user_id, status, note, qty FROM t_order",
		"SELECT item_id, order_id, user_id, qty, price FROM t_order_item",
	} {
		got, want := tableRows(t, e.proxy, q), tableRows(t, e.ref, q)
		if !slices.Equal(got, want) {
			t.Errorf("after %s\n%s:\nproxy     %d rows\nreference %d rows\nfirst difference: %s", tc.sql, q, len(got), len(want), firstDifference(got, want))
		}
	}
}

// tableRows returns the rows of q as sorted strings.
func tableRows(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	out := queryStrings(t, db, q)
	slices.Sort(out)
	return out
}

func firstDifference(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("proxy %q, reference %q", got[i], want[i])
		}
	}
	return "one is a prefix of the other"
}
