package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// manyNodesRules shard t_order over 10 tables on each data source: more
// data nodes than the proxy opens connections to one data source for a
// statement (maxConnsPerDataSource), so some connections run several.
var manyNodesRules = strings.NewReplacer("t_order_${0..1}", "t_order_${0..9}", "t_order_${order_id % 2}", "t_order_${order_id % 10}").Replace(defaultTestRules)

// TestSplitInsertRowNumbers: a multi-row INSERT whose rows the proxy
// splits over several data nodes names the client's row in "at row N" of
// its error and of its warnings, as MariaDB holding every row does, not
// the row's position in the statement one data node got; and SHOW
// WARNINGS lists the warnings of every data node's statement, also when
// one backend connection ran several.
func TestSplitInsertRowNumbers(t *testing.T) {
	e := startEnv(t, envOptions{databases: "insrow", rules: manyNodesRules})
	createTables(t, e)
	ref := refOrders(t, e, "insrow_ref")
	long := "'" + fmt.Sprintf("%040d", 7) + "'"
	// Rows on every data node, the long ones at client rows whose
	// position differs on their data node.
	values := "INSERT INTO t_order (order_id, user_id, status) VALUES (1, 1, 'a'), (2, 2, 'b'), (3, 3, %s), (4, 0, 'c'), (5, 1, 'd'), (6, 2, %s), (7, 3, 'e'), (8, 4, %s)"
	run := func(db *sql.DB, mode, insert string) []string {
		t.Helper()
		ctx := context.Background()
		c := oneConn(t, db)
		for _, q := range []string{"DELETE FROM t_order", "SET SESSION sql_mode = '" + mode + "'"} {
			if _, err := c.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		var out []string
		if _, err := c.ExecContext(ctx, insert); err != nil {
			out = append(out, err.Error())
		}
		return append(out, sortedWarnings(t, ctx, c)...)
	}
	var onOneSource []string
	for i := range 25 {
		onOneSource = append(onOneSource, fmt.Sprintf("(%d, 2, %s)", 100+i, long))
	}
	for _, tt := range []struct{ mode, insert string }{
		{"STRICT_TRANS_TABLES", fmt.Sprintf(values, "'c'", long, "'f'")},
		{"", fmt.Sprintf(values, long, long, long)},
		{"", "INSERT INTO t_order (order_id, user_id, status) VALUES " + strings.Join(onOneSource, ", ")},
	} {
		if got, want := run(e.open(t), tt.mode, tt.insert), run(ref, tt.mode, tt.insert); !slices.Equal(got, want) {
			t.Errorf("sql_mode '%s':\nproxy   %q\nMariaDB %q", tt.mode, got, want)
		}
	}
}

// TestScatterSelectWarnings: a SELECT over every data node, run one
// statement per data node (unionRoutes off) where a data source has more
// data nodes than the proxy opens connections to it for a statement, so
// that a connection runs several of them, tells the warnings of every
// data node's statement: @@warning_count and SHOW WARNINGS as from
// MariaDB holding every row (each row that fails the comparison warns
// once).
func TestScatterSelectWarnings(t *testing.T) {
	e := startEnv(t, envOptions{databases: "selwarn", rules: manyNodesRules, server: "unionRoutes: false"})
	createTables(t, e)
	ref := refOrders(t, e, "selwarn_ref")
	// A row on each of the 20 data nodes, each status a word.
	var values []string
	for i := range 20 {
		values = append(values, fmt.Sprintf("(%d, %d, 'w%d')", i, (i/10)%2, i))
	}
	insert := "INSERT INTO t_order (order_id, user_id, status) VALUES " + strings.Join(values, ", ")
	for _, db := range []*sql.DB{e.open(t), ref} {
		if _, err := db.Exec(insert); err != nil {
			t.Fatal(err)
		}
	}
	run := func(db *sql.DB, q string) []string {
		t.Helper()
		ctx := context.Background()
		c := oneConn(t, db)
		rows, err := c.QueryContext(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		n := 0
		for rows.Next() {
			n++
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
		var count int
		if err := c.QueryRowContext(ctx, "SELECT @@warning_count").Scan(&count); err != nil {
			t.Fatal(err)
		}
		return append([]string{fmt.Sprintf("%d rows, @@warning_count %d", n, count)}, sortedWarnings(t, ctx, c)...)
	}
	for _, q := range []string{
		"SELECT order_id FROM t_order WHERE status = 0",
		"SELECT order_id FROM t_order WHERE status = 0 ORDER BY order_id",
	} {
		if got, want := run(e.open(t), q), run(ref, q); !slices.Equal(got, want) {
			t.Errorf("%s\nproxy   %q\nMariaDB %q", q, got, want)
		}
	}
}

// sortedWarnings is SHOW WARNINGS on c, each condition as "Level Code
// Message", sorted (each data node's warnings come in turn: the order
// may differ from MariaDB's).
func sortedWarnings(t *testing.T, ctx context.Context, c *sql.Conn) []string {
	t.Helper()
	rows, err := c.QueryContext(ctx, "SHOW WARNINGS")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var level, msg string
		var code int
		if err := rows.Scan(&level, &code, &msg); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %d %s", level, code, msg))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// refOrders creates database name on e's first server, holding a t_order
// of the columns createTables gives the logical one, unsharded: the
// reference the proxy's answers are compared with.
func refOrders(t *testing.T, e *testEnv, name string) *sql.DB {
	t.Helper()
	e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS "+name, "CREATE DATABASE "+name)
	t.Cleanup(func() { e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS "+name) })
	ref := e.backends[0].Open(t, name)
	if _, err := ref.Exec("CREATE TABLE t_order (order_id BIGINT NOT NULL, user_id INT NOT NULL, status VARCHAR(32), PRIMARY KEY (order_id))"); err != nil {
		t.Fatal(err)
	}
	return ref
}

// oneConn is a connection of db for the test's statements that must share
// a session (closed when the test ends).
func oneConn(t *testing.T, db *sql.DB) *sql.Conn {
	t.Helper()
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
