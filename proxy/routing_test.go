package proxy

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
)

// createTables makes the test schema through the proxy: t_order sharded
// over ds_0/ds_1 × t_order_0/t_order_1, t_dict broadcast, t_plain a
// table of the default data source.
func createTables(t *testing.T, e *testEnv) {
	t.Helper()
	db := e.open(t)
	for _, q := range []string{
		"DROP TABLE IF EXISTS t_order",
		"DROP TABLE IF EXISTS t_dict",
		"DROP TABLE IF EXISTS t_plain",
		"CREATE TABLE t_order (order_id BIGINT NOT NULL, user_id INT NOT NULL, status VARCHAR(32), PRIMARY KEY (order_id))",
		"CREATE TABLE t_dict (code VARCHAR(16) PRIMARY KEY, label VARCHAR(64))",
		"CREATE TABLE t_plain (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(32))",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// landed returns where each order_id is stored, by querying every
// physical table on every backend directly: "ds_1.t_order_0".
func landed(t *testing.T, e *testEnv) map[int64]string {
	t.Helper()
	out := map[int64]string{}
	for i := range e.backends {
		db := e.backend(t, i)
		for j := range 2 {
			rows, err := db.Query(fmt.Sprintf("SELECT order_id FROM t_order_%d", j))
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var id int64
				rows.Scan(&id)
				if prev, dup := out[id]; dup {
					t.Errorf("order %d stored twice: %s and ds_%d.t_order_%d", id, prev, i, j)
				}
				out[id] = fmt.Sprintf("ds_%d.t_order_%d", i, j)
			}
			rows.Close()
		}
	}
	return out
}

func TestShardedWritesLandOnTheirDataNodes(t *testing.T) {
	for _, mode := range []string{"interpolateParams=false", "interpolateParams=true"} {
		t.Run(mode, func(t *testing.T) {
			e := startEnv(t, envOptions{})
			createTables(t, e)
			db := e.open(t, mode)
			ctx := context.Background()
			c, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()

			// Keys given: the rules decide the data node.
			for _, r := range []struct{ order, user int64 }{{10, 1}, {11, 1}, {20, 2}, {21, 2}} {
				if _, err := c.ExecContext(ctx, "INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, ?)", r.order, r.user, "given"); err != nil {
					t.Fatal(err)
				}
			}
			// No column list: the proxy tells the router the columns.
			if _, err := c.ExecContext(ctx, "INSERT INTO t_order VALUES (31, 3, 'nolist')"); err != nil {
				t.Fatal(err)
			}
			// Keys generated: one statement, three rows, consecutive ids.
			res, err := c.ExecContext(ctx, "INSERT INTO t_order (user_id, status) VALUES (?, 'gen'), (?, 'gen'), (?, 'gen')", 5, 6, 7)
			if err != nil {
				t.Fatal(err)
			}
			first, err := res.LastInsertId()
			if err != nil || first == 0 {
				t.Fatalf("LastInsertId: %d, %v", first, err)
			}
			if n, _ := res.RowsAffected(); n != 3 {
				t.Errorf("affected rows %d, want 3", n)
			}
			var last int64
			if err := c.QueryRowContext(ctx, "SELECT LAST_INSERT_ID()").Scan(&last); err != nil || last != first {
				t.Errorf("SELECT LAST_INSERT_ID() = %d, %v; want %d", last, err, first)
			}

			where := landed(t, e)
			want := map[int64]string{10: "ds_1.t_order_0", 11: "ds_1.t_order_1", 20: "ds_0.t_order_0", 21: "ds_0.t_order_1", 31: "ds_1.t_order_1"}
			for id, node := range want {
				if where[id] != node {
					t.Errorf("order %d on %q, want %s", id, where[id], node)
				}
			}
			users := map[int64]int64{first: 5, first + 1: 6, first + 2: 7}
			for id, user := range users {
				node := fmt.Sprintf("ds_%d.t_order_%d", user%2, id%2)
				if where[id] != node {
					t.Errorf("generated order %d (user %d) on %q, want %s", id, user, where[id], node)
				}
			}
			if len(where) != 8 {
				t.Errorf("%d rows stored, want 8", len(where))
			}

			// Reads by key reach one node; a scatter read sees every row.
			var status string
			if err := c.QueryRowContext(ctx, "SELECT status FROM t_order WHERE user_id = ? AND order_id = ?", 6, first+1).Scan(&status); err != nil || status != "gen" {
				t.Errorf("point read: %q, %v", status, err)
			}
			ids := queryInts(t, c, "SELECT order_id FROM t_order")
			if len(ids) != 8 {
				t.Errorf("scatter read: %d rows, want 8", len(ids))
			}
			// Writes across data nodes sum their affected rows.
			res, err = c.ExecContext(ctx, "UPDATE t_order SET status = ? WHERE status = ?", "done", "gen")
			if err != nil {
				t.Fatal(err)
			}
			if n, _ := res.RowsAffected(); n != 3 {
				t.Errorf("UPDATE across data nodes: %d affected rows, want 3", n)
			}
			res, err = c.ExecContext(ctx, "DELETE FROM t_order WHERE user_id IN (1, 2)")
			if err != nil {
				t.Fatal(err)
			}
			if n, _ := res.RowsAffected(); n != 4 {
				t.Errorf("DELETE: %d affected rows, want 4", n)
			}

			// Broadcast tables are written everywhere, unsharded tables
			// on the default data source, with its AUTO_INCREMENT id.
			if _, err := c.ExecContext(ctx, "INSERT INTO t_dict VALUES (?, ?)", "a", "Alpha"); err != nil {
				t.Fatal(err)
			}
			for i := range e.backends {
				var label string
				if err := e.backend(t, i).QueryRow("SELECT label FROM t_dict WHERE code = 'a'").Scan(&label); err != nil || label != "Alpha" {
					t.Errorf("ds_%d.t_dict: %q, %v", i, label, err)
				}
			}
			res, err = c.ExecContext(ctx, "INSERT INTO t_plain (v) VALUES (?)", "x")
			if err != nil {
				t.Fatal(err)
			}
			if id, _ := res.LastInsertId(); id != 1 {
				t.Errorf("AUTO_INCREMENT id %d, want 1", id)
			}
			var n int
			e.backend(t, 0).QueryRow("SELECT COUNT(*) FROM t_plain").Scan(&n)
			if n != 1 {
				t.Errorf("ds_0.t_plain has %d rows, want 1", n)
			}
		})
	}
}

func queryInts(t *testing.T, c *sql.Conn, q string, args ...any) []int64 {
	t.Helper()
	rows, err := c.QueryContext(context.Background(), q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	slices.Sort(out)
	return out
}

func TestPreparedStatementsRouteAtExecute(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	db := e.open(t)
	ins, err := db.Prepare("INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, ?)")
	if err != nil {
		t.Fatal(err)
	}
	defer ins.Close()
	for i := int64(0); i < 8; i++ {
		if _, err := ins.Exec(100+i, i, fmt.Sprintf("s%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	where := landed(t, e)
	for i := int64(0); i < 8; i++ {
		if want := fmt.Sprintf("ds_%d.t_order_%d", i%2, (100+i)%2); where[100+i] != want {
			t.Errorf("order %d on %q, want %s", 100+i, where[100+i], want)
		}
	}
	sel, err := db.Prepare("SELECT order_id, user_id, status FROM t_order WHERE user_id = ? AND order_id = ?")
	if err != nil {
		t.Fatal(err)
	}
	defer sel.Close()
	for i := int64(0); i < 8; i++ {
		var id, user int64
		var status string
		if err := sel.QueryRow(i, 100+i).Scan(&id, &user, &status); err != nil {
			t.Fatalf("execute %d: %v", i, err)
		}
		if id != 100+i || user != i || status != fmt.Sprintf("s%d", i) {
			t.Errorf("execute %d: got %d %d %q", i, id, user, status)
		}
	}
	// Binary rows of every common type come back as the backend stores them.
	if _, err := db.Exec("CREATE TABLE IF NOT EXISTS t_types (id INT PRIMARY KEY, d DATE, dt DATETIME(3), tm TIME, amount DECIMAL(10,2), f DOUBLE, b BLOB, n INT NULL)"); err != nil {
		t.Fatal(err)
	}
	defer db.Exec("DROP TABLE t_types")
	if _, err := db.Exec("REPLACE INTO t_types VALUES (1, '2024-02-29', '2024-02-29 13:14:15.125', '-12:34:56', 12.50, 0.25, X'00FF10', NULL)"); err != nil {
		t.Fatal(err)
	}
	var (
		d, dt, tm, dec string
		f              float64
		b              []byte
		n              sql.NullInt64
	)
	err = db.QueryRow("SELECT d, dt, tm, amount, f, b, n FROM t_types WHERE id = ?", 1).Scan(&d, &dt, &tm, &dec, &f, &b, &n)
	if err != nil {
		t.Fatal(err)
	}
	if d != "2024-02-29" || dt != "2024-02-29 13:14:15.125" || tm != "-12:34:56" || dec != "12.50" || f != 0.25 || string(b) != "\x00\xff\x10" || n.Valid {
		t.Errorf("binary row: %q %q %q %q %v %x %v", d, dt, tm, dec, f, b, n)
	}
}

func TestStatementErrorsKeepTheConnectionUsable(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	c := e.conn(t)
	ctx := context.Background()
	if _, err := c.ExecContext(ctx, "INSERT INTO t_order (order_id, user_id) VALUES (1, 1)"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		sql  string
		want uint16
	}{
		{"SELEC 1", 1064},
		{"SELECT * FROM no_such_table", 1146},
		{"INSERT INTO t_order (order_id, user_id) VALUES (1, 1)", 1062},
		{"SELECT no_such_column FROM t_order WHERE user_id = 1", 1054},
		{"USE other_db", 1049},
		{"SELECT ROW_NUMBER() OVER (ORDER BY order_id) FROM t_order", 1235},
		// A NULL sharding value: MariaDB's NOT NULL answer (23000).
		{"INSERT INTO t_order (order_id, user_id) VALUES (2, NULL)", 1048},
	}
	for _, tt := range tests {
		_, err := c.ExecContext(ctx, tt.sql)
		if got := errCode(err); got != tt.want {
			t.Errorf("%s: got %v, want %d", tt.sql, err, tt.want)
		}
		var my *gomysql.MySQLError
		if tt.want == 1048 && (!errors.As(err, &my) || string(my.SQLState[:]) != "23000") {
			t.Errorf("%s: SQLSTATE of %v, want 23000", tt.sql, err)
		}
		var one int
		if err := c.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
			t.Fatalf("after %q: %v", tt.sql, err)
		}
	}
}

func TestScatterReadRunsRoutesInParallel(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	db := e.open(t)
	for i := range 4 {
		if _, err := db.Exec("INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, 'x')", i, i/2); err != nil {
			t.Fatal(err)
		}
	}
	// Each of the four routes sleeps 0.5 s per row; in parallel the
	// statement takes about that long, one after the other four times.
	start := time.Now()
	rows, err := db.Query("SELECT order_id, SLEEP(0.5) FROM t_order")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		n++
	}
	rows.Close()
	took := time.Since(start)
	if n != 4 {
		t.Fatalf("got %d rows, want 4", n)
	}
	if took > 1500*time.Millisecond {
		t.Errorf("four routes of 0.5 s took %s: not run in parallel", took)
	}
}

func TestSingleRouteSelectStreams(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	db := e.open(t)
	// Rows larger than the backend's network buffer, each taking 0.1 s:
	// a proxy that buffered the result would show the first row only
	// after the last one was produced.
	if _, err := db.Exec("ALTER TABLE t_order ADD COLUMN pad MEDIUMTEXT"); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if _, err := db.Exec("INSERT INTO t_order (order_id, user_id, status, pad) VALUES (?, 1, 'x', REPEAT('p', 40000))", i*2); err != nil {
			t.Fatal(err)
		}
	}
	for _, proto := range []string{"text", "binary"} {
		t.Run(proto, func(t *testing.T) {
			var ids []string
			for i := range 20 {
				ids = append(ids, fmt.Sprint(i*2))
			}
			// Even order ids of user 1: one data node, ds_1.t_order_0.
			q := "SELECT order_id, pad, SLEEP(0.1) FROM t_order WHERE user_id = 1 AND order_id IN (" + strings.Join(ids, ",") + ") ORDER BY order_id"
			var rows *sql.Rows
			var err error
			start := time.Now()
			if proto == "text" {
				rows, err = db.Query(q)
			} else {
				rows, err = db.Query(strings.Replace(q, "= 1 AND", "= ? AND", 1), 1)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			if !rows.Next() {
				t.Fatal(rows.Err())
			}
			firstRow := time.Since(start)
			n := 1
			for rows.Next() {
				n++
			}
			total := time.Since(start)
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			if n != 20 {
				t.Fatalf("got %d rows, want 20", n)
			}
			if firstRow > total/2 {
				t.Errorf("first row after %s of %s: the result was not streamed", firstRow, total)
			}
		})
	}
}

func TestDDLReachesEveryDataNode(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	for i := range e.backends {
		var tables []string
		rows, err := e.backend(t, i).Query("SHOW TABLES")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var name string
			rows.Scan(&name)
			tables = append(tables, name)
		}
		rows.Close()
		sort.Strings(tables)
		for _, want := range []string{"t_dict", "t_order_0", "t_order_1"} {
			if !slices.Contains(tables, want) {
				t.Errorf("ds_%d lacks %s (has %v)", i, want, tables)
			}
		}
		if slices.Contains(tables, "t_order") {
			t.Errorf("ds_%d has a physical table named like the logical one", i)
		}
	}
}

func TestFoundRowsFlagGetsItsOwnPool(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	db := e.open(t)
	if _, err := db.Exec("INSERT INTO t_order (order_id, user_id, status) VALUES (1, 1, 'same')"); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		param string
		want  int64
	}{{"clientFoundRows=false", 0}, {"clientFoundRows=true", 1}} {
		res, err := e.open(t, tt.param).Exec("UPDATE t_order SET status = 'same' WHERE user_id = 1 AND order_id = 1")
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := res.RowsAffected(); n != tt.want {
			t.Errorf("%s: %d affected rows for an unchanged row, want %d", tt.param, n, tt.want)
		}
	}
}

func TestLongDataParameters(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	// A small maxAllowedPacket makes go-sql-driver send big parameters with
	// COM_STMT_SEND_LONG_DATA.
	db := e.open(t, "maxAllowedPacket=4096")
	big := strings.Repeat("0123456789", 300)
	if _, err := db.Exec("INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, ?)", 1, 1, big[:30]); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("ALTER TABLE t_order ADD COLUMN note TEXT"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("UPDATE t_order SET note = ? WHERE user_id = ? AND order_id = ?", []byte(big), 1, 1); err != nil {
		t.Fatal(err)
	}
	var got string
	if err := e.backend(t, 1).QueryRow("SELECT note FROM t_order_1 WHERE order_id = 1").Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != big {
		t.Errorf("long data stored %d bytes, want %d", len(got), len(big))
	}
}
