package proxy

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// TestShardingHints checks SHARDINGSPHERE_HINT end to end: the hint's
// values replace the WHERE clause's sharding values, DATA_SOURCE_NAME
// reaches statements the proxy answers without the router, and unknown
// keys, tables or data sources are errors.
func TestShardingHints(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	c := e.conn(t)
	ctx := context.Background()
	// A row on a data node its sharding values do not route to (user 2
	// belongs on ds_0): only a hint that replaces the WHERE clause's
	// user_id reads it.
	if _, err := e.backend(t, 1).Exec("INSERT INTO t_order_1 (order_id, user_id, status) VALUES (11, 2, 'hinted')"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ExecContext(ctx, "INSERT INTO t_order (order_id, user_id, status) VALUES (11, 2, 'routed')"); err != nil {
		t.Fatal(err)
	}
	statusOf := func(q string) (string, error) {
		var s string
		err := c.QueryRowContext(ctx, q).Scan(&s)
		return s, err
	}
	tests := []struct {
		give string
		want string
	}{
		{"SELECT status FROM t_order WHERE user_id = 2 AND order_id = 11", "routed"},
		{"/* SHARDINGSPHERE_HINT: t_order.SHARDING_DATABASE_VALUE=1 */ SELECT status FROM t_order WHERE user_id = 2 AND order_id = 11", "hinted"},
		{"/* SHARDINGSPHERE_HINT: SHARDING_DATABASE_VALUE=1, SHARDING_TABLE_VALUE=1 */ SELECT status FROM t_order WHERE user_id = 2", "hinted"},
		{"/* SHARDINGSPHERE_HINT: t_order.SHARDING_DATABASE_VALUE=0 */ SELECT status FROM t_order WHERE user_id = 2 AND order_id = 11", "routed"},
	}
	for _, tt := range tests {
		got, err := statusOf(tt.give)
		if err != nil || got != tt.want {
			t.Errorf("%s: %q, %v; want %q", tt.give, got, err, tt.want)
		}
	}

	// DATA_SOURCE_NAME on a statement without tables runs it there.
	var db string
	var port int
	q := "/* SHARDINGSPHERE_HINT: DATA_SOURCE_NAME=ds_1 */ SELECT DATABASE(), @@port"
	if err := c.QueryRowContext(ctx, q).Scan(&db, &port); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if db != "ds_1" || port != e.backends[1].Port() {
		t.Errorf("%s: %s, %d; want ds_1, %d", q, db, port, e.backends[1].Port())
	}
	if err := c.QueryRowContext(ctx, "SELECT @@port").Scan(&port); err != nil || port != e.backends[0].Port() {
		t.Errorf("SELECT @@port without a hint: %d, %v; want the default data source's %d", port, err, e.backends[0].Port())
	}

	bad := []struct {
		give string
		want uint16
	}{
		{"/* SHARDINGSPHERE_HINT: DATA_SOURCE_NAME=ds_9 */ SELECT @@port", 1235},
		{"/* SHARDINGSPHERE_HINT: DATASOURCE_NAME=ds_1 */ SELECT @@port", 1064},
		{"/* SHARDINGSPHERE_HINT: DATA_SOURCE_NAME=ds_9 */ DO 1", 1235},
		{"/* SHARDINGSPHERE_HINT: t_ordr.SHARDING_DATABASE_VALUE=1 */ SELECT status FROM t_order WHERE user_id = 2", 1235},
		{"/* SHARDINGSPHERE_HINT: DATASOURCE_NAME=ds_1 */ SELECT status FROM t_order WHERE user_id = 2", 1064},
		{"/* SHARDINGSPHERE_HINT: t_order.SHARDING_DATABASE_VALUE=1 */ INSERT INTO t_order (order_id, user_id) VALUES (13, 2)", 1235},
	}
	for _, tt := range bad {
		_, err := statusOf(tt.give)
		if errors.Is(err, sql.ErrNoRows) || errCode(err) != tt.want {
			t.Errorf("%s: %v, want error %d", tt.give, err, tt.want)
		}
	}
	if n := countRows(t, c, "SELECT order_id FROM t_order WHERE order_id = 13"); n != 0 {
		t.Errorf("the refused INSERT stored %d rows", n)
	}
}

func countRows(t *testing.T, c *sql.Conn, q string) int {
	t.Helper()
	return len(queryInts(t, c, q))
}

// TestPhysicalTablesAreNotLogical checks that the name of a sharded
// table's physical table does not reach that table as if it had no rules
// (bypassing routing), except through DATA_SOURCE_NAME.
func TestPhysicalTablesAreNotLogical(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	c := e.conn(t)
	ctx := context.Background()
	if _, err := c.ExecContext(ctx, "INSERT INTO t_order (order_id, user_id, status) VALUES (10, 2, 'a'), (12, 4, 'b'), (21, 3, 'c')"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"SELECT * FROM t_order_0",
		"SELECT COUNT(*) FROM sharding_db.t_order_1",
		"UPDATE t_order_0 SET status = 'x'",
		"DELETE FROM t_order_1",
		"INSERT INTO t_order_0 (order_id, user_id) VALUES (30, 2)",
		"SHOW COLUMNS FROM t_order_0",
	} {
		_, err := c.ExecContext(ctx, q)
		var me *mysql.MySQLError
		if !asMySQL(err, &me) || me.Number != 1146 || !strings.Contains(me.Message, "sharding_db.t_order_") {
			t.Errorf("%s: %v, want 1146 Table 'sharding_db.t_order_N' doesn't exist", q, err)
		}
	}
	if got := queryInts(t, c, "SELECT order_id FROM t_order ORDER BY order_id"); !slices.Equal(got, []int64{10, 12, 21}) {
		t.Errorf("rows after the refused statements: %v, want [10 12 21]", got)
	}
	// The operator's escape hatch: the physical table on a named data
	// source.
	if got := queryInts(t, c, "/* SHARDINGSPHERE_HINT: DATA_SOURCE_NAME=ds_0 */ SELECT order_id FROM t_order_0 ORDER BY order_id"); !slices.Equal(got, []int64{10, 12}) {
		t.Errorf("ds_0.t_order_0 through DATA_SOURCE_NAME: %v, want [10 12]", got)
	}
}
