package proxy

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// maintenanceEnv is a proxy with t_order sharded over 20 data nodes,
// t_dict broadcast and t_plain single, and a reference MariaDB whose
// sharding_db holds the same tables with the same rows in one table each.
func maintenanceEnv(t *testing.T) (*testEnv, *mariadbtest.Server, *sql.DB) {
	t.Helper()
	e := startEnv(t, envOptions{databases: "maint", rules: manyNodesRules})
	createTables(t, e)
	ref := mariadbtest.Start(t, mariadbtest.Options{Databases: []string{"sharding_db"}})
	refDB, err := ref.DB("sharding_db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { refDB.Close() })
	var orders, plain []string
	for i := range 97 {
		status := fmt.Sprintf("'s%d'", i%7)
		if i%5 == 0 {
			status = "NULL"
		}
		orders = append(orders, fmt.Sprintf("(%d, %d, %s)", 1000+i*13, i%11, status))
		plain = append(plain, fmt.Sprintf("(%d, 'v%d')", i+1, i))
	}
	for _, db := range []*sql.DB{e.open(t), refDB} {
		for _, q := range []string{
			"CREATE TABLE IF NOT EXISTS t_order (order_id BIGINT NOT NULL, user_id INT NOT NULL, status VARCHAR(32), PRIMARY KEY (order_id))",
			"CREATE TABLE IF NOT EXISTS t_dict (code VARCHAR(16) PRIMARY KEY, label VARCHAR(64))",
			"CREATE TABLE IF NOT EXISTS t_plain (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(32))",
			"INSERT INTO t_order (order_id, user_id, status) VALUES " + strings.Join(orders, ", "),
			"INSERT INTO t_dict (code, label) VALUES ('a', 'x'), ('b', NULL), ('c', 'z')",
			"INSERT INTO t_plain (id, v) VALUES " + strings.Join(plain, ", "),
		} {
			if _, err := db.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	// The rows are spread: several physical tables hold some.
	holding := 0
	for i := range e.backends {
		for j := range 10 {
			var n int
			if err := e.backend(t, i).QueryRow(fmt.Sprintf("SELECT COUNT(*) FROM t_order_%d", j)).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n > 0 {
				holding++
			}
		}
	}
	if holding < 10 {
		t.Fatalf("t_order's rows are on %d data nodes only", holding)
	}
	return e, ref, refDB
}

// maintenanceResult runs q on a connection of db and writes what a client
// sees: the column names, the rows, and the warnings.
func maintenanceResult(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	ctx := context.Background()
	c := oneConn(t, db)
	rows, err := c.QueryContext(ctx, q)
	if err != nil {
		return "error: " + err.Error()
	}
	var b strings.Builder
	writeResultSet(t, &b, rows)
	if err := rows.Err(); err != nil {
		fmt.Fprintf(&b, "error: %v\n", err)
	}
	rows.Close()
	for _, w := range sortedWarnings(t, ctx, c) {
		fmt.Fprintf(&b, "warning %s\n", w)
	}
	return b.String()
}

// allResultSets runs q, which may hold several statements, on db and
// writes what a client sees of each result set: the column names and the
// rows, then an error if one ended them.
func allResultSets(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		return "error: " + err.Error()
	}
	defer rows.Close()
	var b strings.Builder
	for {
		writeResultSet(t, &b, rows)
		if !rows.NextResultSet() {
			break
		}
	}
	if err := rows.Err(); err != nil {
		fmt.Fprintf(&b, "error: %v\n", err)
	}
	return b.String()
}

// writeResultSet writes the column names and the rows of rows' current
// result set to b.
func writeResultSet(t *testing.T, b *strings.Builder, rows *sql.Rows) {
	t.Helper()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(b, "columns %q\n", cols)
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for _, v := range vals {
			if v.Valid {
				fmt.Fprintf(b, "%q ", v.String)
			} else {
				b.WriteString("NULL ")
			}
		}
		b.WriteString("\n")
	}
}

// TestMaintenanceStatements: ANALYZE, CHECK, CHECKSUM, OPTIMIZE and
// REPAIR TABLE of logical tables (sharded over 20 data nodes, broadcast,
// single, missing) answer what MariaDB holding each logical table in one
// table answers: the same columns and rows (Table the logical
// schema.table, each message once) and warnings; CHECKSUM TABLE's
// checksum of a sharded table equals that of one table holding all its
// rows.
func TestMaintenanceStatements(t *testing.T) {
	e, ref, refDB := maintenanceEnv(t)
	proxyDB := e.open(t)
	for _, q := range []string{
		"CHECK TABLE t_order",
		"CHECK TABLE t_order, t_dict, t_plain",
		"CHECK TABLE t_nope",
		"CHECK TABLE t_order, t_nope EXTENDED",
		"check table `sharding_db`.`t_dict` QUICK",
		"CHECK TABLE t_order FOR UPGRADE",
		"REPAIR TABLE t_order",
		"REPAIR NO_WRITE_TO_BINLOG TABLE t_plain, t_nope",
		"ANALYZE TABLE t_order, t_dict",
		"ANALYZE NO_WRITE_TO_BINLOG TABLE t_plain PERSISTENT FOR ALL",
		"ANALYZE TABLE t_nope",
		"OPTIMIZE TABLE t_order",
		"OPTIMIZE LOCAL TABLE t_dict, t_nope",
		"CHECKSUM TABLE t_order, t_dict, t_plain",
		"CHECKSUM TABLE t_order EXTENDED",
		"CHECKSUM TABLE t_order QUICK",
		"CHECKSUM TABLE t_nope, t_order",
	} {
		got, want := maintenanceResult(t, proxyDB, q), maintenanceResult(t, refDB, q)
		if got != want {
			t.Errorf("%s:\nproxy:\n%s\nMariaDB:\n%s", q, got, want)
		}
	}
	// A table of another schema or a physical table gets what a SELECT of
	// it gets.
	for q, like := range map[string]string{
		"CHECKSUM TABLE nosuchdb.t_order": "SELECT * FROM nosuchdb.t_order",
		"ANALYZE TABLE t_order_0, t_dict": "SELECT * FROM t_order_0",
	} {
		got, want := maintenanceResult(t, proxyDB, q), maintenanceResult(t, proxyDB, like)
		if got != want || !strings.HasPrefix(want, "error: ") {
			t.Errorf("%s: %s, want %s", q, got, want)
		}
	}
	// The checksum is of the rows: one more row changes it alike.
	for _, db := range []*sql.DB{proxyDB, refDB} {
		if _, err := db.Exec("INSERT INTO t_order (order_id, user_id, status) VALUES (7, 3, 'x')"); err != nil {
			t.Fatal(err)
		}
	}
	q := "CHECKSUM TABLE t_order"
	if got, want := maintenanceResult(t, proxyDB, q), maintenanceResult(t, refDB, q); got != want {
		t.Errorf("%s after an insert:\nproxy:\n%s\nMariaDB:\n%s", q, got, want)
	}
	// In a multi-statement query, each statement its own result.
	refMulti, err := sql.Open("mysql", ref.DSN("sharding_db")+"&multiStatements=true")
	if err != nil {
		t.Fatal(err)
	}
	defer refMulti.Close()
	multi := "CHECK TABLE t_order; CHECKSUM TABLE t_plain, t_order; ANALYZE TABLE t_dict"
	if got, want := allResultSets(t, e.open(t, "multiStatements=true"), multi), allResultSets(t, refMulti, multi); got != want {
		t.Errorf("%s:\nproxy:\n%s\nMariaDB:\n%s", multi, got, want)
	}
	// CHECK TABLE commits an open transaction, as MariaDB's does;
	// CHECKSUM TABLE does not.
	kept := func(db *sql.DB) string {
		t.Helper()
		ctx := context.Background()
		c := oneConn(t, db)
		var out []string
		for _, q := range []string{
			"BEGIN", "INSERT INTO t_plain (id, v) VALUES (500, 'in txn')", "CHECK TABLE t_dict", "ROLLBACK",
			"BEGIN", "INSERT INTO t_plain (id, v) VALUES (501, 'in txn')", "CHECKSUM TABLE t_dict", "ROLLBACK",
		} {
			if _, err := c.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		rows, err := c.QueryContext(ctx, "SELECT id FROM t_plain WHERE id >= 500 ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			out = append(out, id)
		}
		return strings.Join(out, ",")
	}
	if got, want := kept(proxyDB), kept(refDB); got != want {
		t.Errorf("rows kept after BEGIN, INSERT, CHECK or CHECKSUM, ROLLBACK: proxy %q, MariaDB %q", got, want)
	}
	// Inside a transaction CHECKSUM TABLE reads as the transaction does:
	// its own uncommitted rows count, with BEGIN and with autocommit=0.
	inTxn := func(db *sql.DB, begin string) string {
		t.Helper()
		ctx := context.Background()
		c := oneConn(t, db)
		for _, q := range []string{begin, "INSERT INTO t_order (order_id, user_id, status) VALUES (9001, 1, 'txn'), (9002, 2, 'txn')"} {
			if _, err := c.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		var table string
		var sum sql.NullInt64
		if err := c.QueryRowContext(ctx, "CHECKSUM TABLE t_order").Scan(&table, &sum); err != nil {
			t.Fatalf("CHECKSUM TABLE in a transaction: %v", err)
		}
		if _, err := c.ExecContext(ctx, "ROLLBACK"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ExecContext(ctx, "SET autocommit = 1"); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%s %v", table, sum)
	}
	for _, begin := range []string{"BEGIN", "SET autocommit = 0"} {
		if got, want := inTxn(proxyDB, begin), inTxn(refDB, begin); got != want {
			t.Errorf("%s, INSERT, CHECKSUM TABLE t_order: proxy %s, MariaDB %s", begin, got, want)
		}
	}
	// A broadcast table's copies each hold every row: its checksum is one
	// copy's (the default data source's), not their sum, even when
	// another copy went astray.
	if _, err := e.backend(t, 1).Exec("INSERT INTO t_dict (code, label) VALUES ('stray', 'only on ds_1')"); err != nil {
		t.Fatal(err)
	}
	q = "CHECKSUM TABLE t_dict"
	if got, want := maintenanceResult(t, proxyDB, q), maintenanceResult(t, refDB, q); got != want {
		t.Errorf("%s with a stray row on one copy:\nproxy:\n%s\nMariaDB:\n%s", q, got, want)
	}
}

// TestMariadbCheck: mariadb-check (check, --analyze, --optimize) of the
// logical schema through the proxy succeeds and prints what it prints
// for MariaDB holding the logical tables.
func TestMariadbCheck(t *testing.T) {
	check := mariadbtest.RequireBinary(t, "mariadb-check")
	e, ref, _ := maintenanceEnv(t)
	run := func(addr, user, password string, mode []string) string {
		t.Helper()
		host, port, _ := net.SplitHostPort(addr)
		args := append([]string{"--no-defaults", "--protocol=tcp", "-h", host, "-P", port, "-u" + user, "--skip-ssl"}, mode...)
		if password != "" {
			args = append(args, "-p"+password)
		}
		cmd := exec.Command(check, append(args, "sharding_db")...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || stderr.Len() > 0 {
			return fmt.Sprintf("%s\nerror: %v\n%s", out, err, stderr.String())
		}
		return string(out)
	}
	for _, mode := range [][]string{nil, {"--analyze"}, {"--optimize"}, {"--all-in-1"}, {"--extended"}} {
		got, want := run(e.addr, "app", "app-secret", mode), run(ref.Addr(), ref.User(), "", mode)
		if got != want || strings.Contains(want, "error") || !strings.Contains(want, "sharding_db.t_order") {
			t.Errorf("mariadb-check %v:\nproxy:\n%s\nMariaDB:\n%s", mode, got, want)
		}
	}
}

// TestMaintenanceDataSourcesAtOnce: a maintenance statement over a
// sharded table runs on its data sources at once: while one data
// source's ANALYZE waits for a table another session holds locked, the
// other data source's physical tables are analyzed (their persistent
// statistics, deleted before, come back); once the lock goes the answer
// is MariaDB's for the logical table.
func TestMaintenanceDataSourcesAtOnce(t *testing.T) {
	e, _, refDB := maintenanceEnv(t)
	proxyDB := e.open(t)
	want := maintenanceResult(t, refDB, "ANALYZE TABLE t_order")
	for _, c := range []struct{ locked, watched int }{{0, 1}, {1, 0}} {
		t.Run(fmt.Sprintf("ds_%d locked", c.locked), func(t *testing.T) {
			ctx := context.Background()
			watch := e.backend(t, c.watched)
			var schema string
			if err := watch.QueryRow("SELECT DATABASE()").Scan(&schema); err != nil {
				t.Fatal(err)
			}
			stats := func() (int, error) {
				var n int
				err := watch.QueryRow(`SELECT COUNT(*) FROM mysql.innodb_table_stats
					WHERE database_name = ? AND table_name LIKE 't\_order\_%'`, schema).Scan(&n)
				return n, err
			}
			if _, err := watch.Exec(`DELETE FROM mysql.innodb_table_stats
				WHERE database_name = ? AND table_name LIKE 't\_order\_%'`, schema); err != nil {
				t.Fatal(err)
			}
			if n, err := stats(); err != nil || n != 0 {
				t.Fatalf("statistics rows after the delete: %d, %v", n, err)
			}
			lock := oneConn(t, e.backend(t, c.locked))
			if _, err := lock.ExecContext(ctx, "LOCK TABLES t_order_3 WRITE"); err != nil {
				t.Fatal(err)
			}
			// The watcher waits for the other data source's ten tables'
			// statistics, then lets the locked one go in any case.
			seen := make(chan string, 1)
			go func() {
				var got string
				deadline := time.Now().Add(30 * time.Second)
				for {
					n, err := stats()
					if err != nil {
						got = err.Error()
						break
					}
					if n == 10 {
						break
					}
					if time.Now().After(deadline) {
						got = fmt.Sprintf("%d of ds_%d's 10 tables analyzed while ds_%d waited", n, c.watched, c.locked)
						break
					}
					time.Sleep(20 * time.Millisecond)
				}
				if _, err := lock.ExecContext(ctx, "UNLOCK TABLES"); err != nil && got == "" {
					got = err.Error()
				}
				seen <- got
			}()
			got := maintenanceResult(t, proxyDB, "ANALYZE TABLE t_order")
			if problem := <-seen; problem != "" {
				t.Error(problem)
			}
			if got != want {
				t.Errorf("ANALYZE TABLE t_order:\nproxy:\n%s\nMariaDB:\n%s", got, want)
			}
		})
	}
}
