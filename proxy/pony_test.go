package proxy

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// ponyRules are the binding test rules with pn_customer, the table the
// orders' foreign key references, broadcast: a foreign key from a
// sharded table to a table on one data source is refused (1235).
var ponyRules = bindingTestRules + `  - !BROADCAST
    tables: [pn_customer]
`

// TestPonyApplication runs a small Pony ORM application
// (testdata/pony_app.py: Debian's python3-pony 0.7.16, over PyMySQL and
// over mysqlclient) through the proxy over binding tables whose keys the
// proxy generates and a broadcast table, and against one MariaDB:
// db.bind's connect-time queries, generate_mapping(create_tables=True)
// (information_schema, CREATE TABLE with foreign keys and indexes, with
// foreign_key_checks off), entities with Required, Optional and Set
// relations, keys commit() and flush() read back, select() generators
// with order_by(), page() and slices, get, count, sum, max, avg, grouping
// and HAVING, select_by_sql, get_for_update, db_session committed, rolled back and abandoned by an
// exception, TransactionIntegrityError on duplicate keys, Pony's
// optimistic checks, deletes and an error after which the connection goes
// on. Both runs print the same, step by step. Pony's exists() over a
// relation from the broadcast side is left out of the application: the
// proxy refuses it across data nodes (1235), and the connection goes on.
func TestPonyApplication(t *testing.T) {
	requirePython(t, "pymysql", "python3-pymysql")
	requirePython(t, "MySQLdb", "python3-mysqldb")
	py := requirePython(t, "pony", "python3-pony")
	e := startEnv(t, envOptions{databases: "pn", rules: ponyRules})
	t.Cleanup(func() { e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS pn_ref") })
	for _, driver := range []string{"pymysql", "mysqldb"} {
		t.Run(driver, func(t *testing.T) {
			e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS pn_ref", "CREATE DATABASE pn_ref")
			db := e.open(t)
			for _, q := range []string{"DROP TABLE IF EXISTS t_order_item", "DROP TABLE IF EXISTS t_order", "DROP TABLE IF EXISTS pn_customer"} {
				if _, err := db.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			run := func(host, port, user, password, database string) []string {
				t.Helper()
				cmd := exec.Command(py, "testdata/pony_app.py", host, port, user, password, database, driver)
				return appOutput(t, cmd, host+":"+port, true)
			}
			want := run(e.backends[0].Host(), fmt.Sprint(e.backends[0].Port()), "root", "", "pn_ref")
			referencePrinted(t, "the application", want,
				fmt.Sprintf("('driver', '%s')", map[string]string{"pymysql": "pymysql", "mysqldb": "MySQLdb"}[driver]),
				"('tables', ['pn_customer', 't_order', 't_order_item'])",
				"('optional relation', ['bob', 'cy'], None, 'ann')",
				"('create', 'o1', 'ann')",
				"('for update', ['o1', 'o5', 'o9', 'o13'])",
				"('rolled back', 0, 3)",
				"('duplicate', 'TransactionIntegrityError', 'IntegrityError', 1062)",
				"('optimistic', 'OptimisticCheckError')",
				"('unknown column', 'OperationalError', 'OperationalError', 1054)",
			)
			host, port, _ := strings.Cut(e.addr, ":")
			sameSteps(t, run(host, port, "app", "app-secret", "sharding_db"), want)
			bindingRowsPlaced(t, e, "pn_ref")

			// What the application leaves out: Pony's exists() over a
			// relation, a subquery on t_order correlated with the
			// broadcast pn_customer, refused across data nodes (1235);
			// the connection goes on.
			conn := e.conn(t)
			exists := "SELECT DISTINCT `c`.`name` FROM `pn_customer` `c` WHERE EXISTS (SELECT 1 FROM `t_order` `x` WHERE `c`.`id` = `x`.`user_id` AND `x`.`amount` > 100)"
			if _, err := conn.ExecContext(context.Background(), exists); errCode(err) != 1235 {
				t.Errorf("%s: %v, want 1235", exists, err)
			}
			var n int
			if err := conn.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM t_order WHERE amount > 100").Scan(&n); err != nil || n == 0 {
				t.Errorf("after the 1235: %d orders above 100, %v", n, err)
			}
		})
	}
}
