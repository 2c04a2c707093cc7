package proxy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
)

// Window functions across data nodes: a window whose PARTITION BY names
// every sharding column of the table it reads has each partition on one
// data node, so every route computes MariaDB's values and the merge is a
// plain SELECT's. These tests compare the proxy's answers with one
// MariaDB holding all the rows (they got 1235 before); windows whose
// partitions may span data nodes keep 1235.

// windowRules shards t_win by user_id over both data sources and over two
// tables on each (ds_${user_id % 2}.t_win_${user_id.intdiv(2) % 2}): its
// one sharding column picks the data node, as ShardingSphere users shard a
// table whose rows they read per user.
const windowRules = `  - !SHARDING
    tables:
      t_win:
        actualDataNodes: ds_${0..1}.t_win_${0..1}
        databaseStrategy: { standard: { shardingColumn: user_id, shardingAlgorithmName: win_db } }
        tableStrategy: { standard: { shardingColumn: user_id, shardingAlgorithmName: win_table } }
    shardingAlgorithms:
      win_db:    { type: INLINE, props: { algorithm-expression: "ds_${user_id % 2}" } }
      win_table: { type: INLINE, props: { algorithm-expression: "t_win_${user_id.intdiv(2) % 2}" } }
  - !BROADCAST
    tables: [t_dict]
`

const windowSchema = `CREATE TABLE t_win (
  id INT NOT NULL PRIMARY KEY,
  user_id INT NOT NULL,
  amount DECIMAL(10,2) NULL,
  qty INT NULL,
  status VARCHAR(20) NULL,
  created DATETIME NULL,
  score DOUBLE NULL
)`

// windowRows are t_win's rows: nine users over the four data nodes, ties
// and NULLs in every column a window orders by, strings equal under the
// collation ('new', 'NEW').
func windowRows() []string {
	amounts := []string{"10.00", "5.50", "10.00", "NULL", "-3.25", "5.50", "0.00"}
	statuses := []string{"'new'", "'NEW'", "'paid'", "'Paid '", "'shipped'", "NULL"}
	var rows []string
	for i := range 120 {
		qty := "NULL"
		if i%6 != 5 {
			qty = fmt.Sprint(i % 4)
		}
		created := fmt.Sprintf("'2024-%02d-%02d 10:%02d:00'", 1+i%12, 1+(i*7)%28, i%5)
		if i%13 == 12 {
			created = "NULL"
		}
		rows = append(rows, fmt.Sprintf("(%d, %d, %s, %s, %s, %s, %d.25)",
			i+1, i%9, amounts[i%len(amounts)], qty, statuses[i%len(statuses)], created, (i*37)%19-9))
	}
	return rows
}

// windowEnvironment serves windowRules on fresh databases with t_win
// loaded through the proxy, and the same rows in the differential tests'
// reference database: a diffEnv whose checks compare them.
func windowEnvironment(t *testing.T) *diffEnv {
	t.Helper()
	ref := diffEnvironment(t) // creates mg_ref, the reference database
	env := startEnv(t, envOptions{rules: windowRules, databases: "wn"})
	proxy := env.open(t)
	for _, q := range []string{"DROP TABLE IF EXISTS t_win", windowSchema} {
		if _, err := proxy.Exec(q); err != nil {
			t.Fatalf("proxy: %s: %v", q, err)
		}
		if _, err := ref.ref.Exec(q); err != nil {
			t.Fatalf("reference: %s: %v", q, err)
		}
	}
	rows := windowRows()
	for start := 0; start < len(rows); start += 20 {
		q := "INSERT INTO t_win VALUES " + strings.Join(rows[start:min(start+20, len(rows))], ", ")
		if _, err := proxy.Exec(q); err != nil {
			t.Fatalf("proxy: %s: %v", q, err)
		}
		if _, err := ref.ref.Exec(q); err != nil {
			t.Fatalf("reference: %s: %v", q, err)
		}
	}
	e := &diffEnv{srv: env.srv, addr: env.addr, backends: env.backends, proxy: proxy, ref: ref.ref}
	var err error
	if e.proxyRaw, err = client.Connect(env.addr, "app", "app-secret", diffLogicalDB); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.proxyRaw.Close() })
	if e.refRaw, err = client.Connect(env.backends[0].Addr(), "root", "", diffRefDB); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.refRaw.Close() })
	return e
}

// windowQueries run on t_win. Windows order by a total key where the
// function depends on the order of peers (ROW_NUMBER, LAG, ROWS frames),
// since MariaDB reads peers in storage order.
var windowQueries = []diffCase{
	{sql: "SELECT id, user_id, amount, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY amount DESC, id) AS rn FROM t_win"},
	{sql: "SELECT id, user_id, RANK() OVER (PARTITION BY user_id ORDER BY amount DESC) AS r, DENSE_RANK() OVER (PARTITION BY user_id ORDER BY amount DESC) AS d FROM t_win WHERE user_id IN (1, 2, 3, 4)"},
	{sql: "SELECT id, LAG(amount) OVER w AS prev, LEAD(amount, 2) OVER w AS next2 FROM t_win WINDOW w AS (PARTITION BY user_id ORDER BY created, id)"},
	{sql: "SELECT id, SUM(amount) OVER (PARTITION BY user_id ORDER BY id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS s3, SUM(qty) OVER (PARTITION BY user_id) AS total, AVG(amount) OVER (PARTITION BY user_id ORDER BY amount RANGE BETWEEN 5 PRECEDING AND 5 FOLLOWING) AS near FROM t_win"},
	{sql: "SELECT id, FIRST_VALUE(status) OVER (PARTITION BY user_id ORDER BY id) AS f, LAST_VALUE(id) OVER (PARTITION BY user_id ORDER BY id ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS l, COUNT(*) OVER (PARTITION BY user_id ORDER BY created) AS c FROM t_win"},
	{sql: "SELECT id, NTILE(3) OVER (PARTITION BY user_id ORDER BY id) AS t, PERCENT_RANK() OVER (PARTITION BY user_id ORDER BY qty) AS pr, CUME_DIST() OVER (PARTITION BY user_id ORDER BY qty) AS cd FROM t_win", approx: true},
	{sql: "SELECT id, MIN(score) OVER (PARTITION BY user_id ORDER BY id ROWS 1 PRECEDING) AS lo, MAX(status) OVER (PARTITION BY t_win.user_id) AS hi FROM t_win", fold: map[int]string{2: "utf8mb4_general_ci"}},
	// In ORDER BY, and with ORDER BY, LIMIT and OFFSET merged.
	{sql: "SELECT id, user_id FROM t_win ORDER BY ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY id DESC), id", ordered: true},
	{sql: "SELECT id, user_id, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY created DESC, id) AS rn FROM t_win ORDER BY rn, id LIMIT 7 OFFSET 3", ordered: true},
	{sql: "SELECT id, FIRST_VALUE(status) OVER (PARTITION BY user_id ORDER BY id) AS f FROM t_win ORDER BY f DESC, id LIMIT 20", ordered: true},
	// Top N per user: a derived table or a CTE filtered on the number.
	{sql: "SELECT * FROM (SELECT user_id, id, amount, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY created DESC, id) AS rn FROM t_win) x WHERE rn <= 3 ORDER BY user_id, rn", ordered: true},
	{sql: "SELECT user_id, COUNT(*), SUM(amount) FROM (SELECT user_id, amount, RANK() OVER (PARTITION BY user_id ORDER BY amount DESC) AS rk FROM t_win) x WHERE rk <= 2 GROUP BY user_id ORDER BY user_id", ordered: true},
	{sql: "WITH x AS (SELECT user_id, id, DENSE_RANK() OVER (PARTITION BY user_id ORDER BY qty) AS dr FROM t_win) SELECT user_id, id, dr FROM x WHERE dr <= 2 ORDER BY user_id, id", ordered: true},
	{sql: "SELECT id, SUM(amount) OVER (w ORDER BY id) AS running, COUNT(*) OVER w AS n FROM t_win WINDOW w AS (PARTITION BY user_id)"},
	// Partitions spanning data nodes, and windows over merged groups.
	{sql: "SELECT id, ROW_NUMBER() OVER (PARTITION BY status ORDER BY id) FROM t_win", wantErr: 1235},
	{sql: "SELECT id, SUM(amount) OVER () FROM t_win", wantErr: 1235},
	{sql: "SELECT id, ROW_NUMBER() OVER w FROM t_win WINDOW w AS (ORDER BY id)", wantErr: 1235},
	{sql: "SELECT user_id, RANK() OVER (PARTITION BY user_id ORDER BY COUNT(*)) FROM t_win GROUP BY user_id", wantErr: 1235},
	{sql: "SELECT * FROM (SELECT id, ROW_NUMBER() OVER (ORDER BY amount, id) AS rn FROM t_win) x WHERE rn <= 3", wantErr: 1235},
	// One data node: pushed down whatever the window.
	{sql: "SELECT id, ROW_NUMBER() OVER (ORDER BY amount, id) AS rn, SUM(qty) OVER () FROM t_win WHERE user_id = 4"},
}

// windowOrderQueries run on the differential tests' t_order (sharded by
// user_id and order_id) and t_order_item bound to it.
var windowOrderQueries = []diffCase{
	{sql: "SELECT order_id, ROW_NUMBER() OVER (PARTITION BY user_id, order_id ORDER BY order_id) AS rn FROM t_order"},
	{sql: "SELECT o.order_id, i.item_id, ROW_NUMBER() OVER (PARTITION BY o.user_id, o.order_id ORDER BY i.item_id) AS n, SUM(i.price) OVER (PARTITION BY o.user_id, o.order_id) AS total FROM t_order o JOIN t_order_item i ON o.user_id = i.user_id AND o.order_id = i.order_id"},
	{sql: "SELECT o.order_id, COUNT(i.item_id) OVER (PARTITION BY o.user_id, o.order_id) AS items FROM t_order o LEFT JOIN t_order_item i ON o.user_id = i.user_id AND o.order_id = i.order_id ORDER BY items DESC, o.order_id, i.item_id LIMIT 15", ordered: true},
	{sql: "SELECT order_id, item_id, RANK() OVER (PARTITION BY user_id, order_id ORDER BY t_order_item.qty) AS r FROM t_order_item JOIN t_order USING (user_id, order_id)"},
	{sql: "SELECT order_id, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY order_id) FROM t_order", wantErr: 1235},
	{sql: "SELECT o.order_id, ROW_NUMBER() OVER (PARTITION BY i.user_id, i.order_id ORDER BY i.item_id) FROM t_order o LEFT JOIN t_order_item i ON o.user_id = i.user_id AND o.order_id = i.order_id", wantErr: 1235},
}

// TestWindowDifferential: window functions across data nodes answer as
// one MariaDB does, in text and binary protocol (prepared statements run
// twice, the second time with the routes of a data source joined into one
// UNION ALL); refused windows leave the connection usable.
func TestWindowDifferential(t *testing.T) {
	e := windowEnvironment(t)
	joined := 0
	check := func(t *testing.T, e *diffEnv, tc diffCase) {
		t.Helper()
		e.check(t, tc)
		for run := range 2 {
			before := e.srv.current().joins.joined.Load()
			got, want := e.runPrepared(e.proxyRaw, tc.sql), e.runPrepared(e.refRaw, tc.sql)
			if e.srv.current().joins.joined.Load() > before {
				joined++
			}
			if d := compareResults(tc, got, want); d != "" {
				t.Errorf("%s (prepared, run %d)\n%s", tc.sql, run+1, d)
			}
			if tc.wantErr == 0 && len(want.rows) == 0 {
				t.Errorf("%s: the reference returned no rows to compare", tc.sql)
			}
		}
	}
	for _, tc := range windowQueries {
		check(t, e, tc)
	}
	orders := diffEnvironment(t)
	for _, tc := range windowOrderQueries {
		check(t, orders, tc)
	}
	if joined == 0 {
		t.Errorf("no prepared window query ran with its routes joined into one UNION ALL per data source")
	}
	t.Logf("%d prepared runs joined routes", joined)

	// Parameters: the partition's values, the filter on the number and
	// LIMIT.
	q := "SELECT * FROM (SELECT user_id, id, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY amount DESC, id) AS rn FROM t_win WHERE user_id IN (?, ?, ?)) x WHERE rn <= ? ORDER BY user_id DESC, rn LIMIT ?"
	for _, args := range [][]any{{1, 2, 7, 2, 5}, {0, 3, 8, 4, 100}} {
		got, want := e.runPrepared(e.proxyRaw, q, args...), e.runPrepared(e.refRaw, q, args...)
		if d := compareResults(diffCase{sql: q, ordered: true}, got, want); d != "" {
			t.Errorf("%s %v\n%s", q, args, d)
		}
		if len(want.rows) == 0 {
			t.Errorf("%s %v: no rows to compare", q, args)
		}
	}

	// A refused window leaves the connection usable.
	e.mu.Lock()
	_, err := e.proxyRaw.Execute("SELECT ROW_NUMBER() OVER () FROM t_win")
	r, err2 := e.proxyRaw.Execute("SELECT COUNT(*) FROM t_win")
	e.mu.Unlock()
	if err == nil || !strings.Contains(err.Error(), "PARTITION BY to name the sharding columns of t_win (user_id)") {
		t.Errorf("OVER () across data nodes: %v, want 1235 naming t_win's user_id", err)
	}
	if err2 != nil {
		t.Fatalf("after the refused window: %v", err2)
	}
	if n, _ := r.GetInt(0, 0); n != 120 {
		t.Errorf("after the refused window: COUNT(*) = %d, want 120", n)
	}
}
