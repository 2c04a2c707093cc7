package proxy

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// TestPeeweeApplication runs a small peewee application
// (testdata/peewee_app.py: MySQLDatabase over PyMySQL, its default) through
// the proxy over binding tables whose keys the proxy generates, and against
// one MariaDB: create_tables(safe=True) and peewee's introspection,
// Model.create, insert_many and get_or_create, selects with where,
// order_by and paginate, || under peewee's PIPES_AS_CONCAT, fn.COUNT and
// fn.SUM with group_by and having, joins between the binding tables,
// atomic() committed and rolled back with a nested atomic() (a savepoint),
// updates and deletes by primary key, and errors. Both runs print the
// same, step by step.
func TestPeeweeApplication(t *testing.T) {
	requirePython(t, "pymysql", "python3-pymysql")
	py := requirePython(t, "peewee", "python3-peewee")
	e := startEnv(t, envOptions{rules: bindingTestRules})
	e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS pw_ref", "CREATE DATABASE pw_ref")
	t.Cleanup(func() {
		e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS pw_ref")
		db := e.open(t)
		for _, q := range []string{"DROP TABLE IF EXISTS t_order_item", "DROP TABLE IF EXISTS t_order", "DROP TABLE IF EXISTS pw_customer"} {
			if _, err := db.Exec(q); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
	})
	run := func(host, port, user, password, database string) []string {
		t.Helper()
		cmd := exec.Command(py, "testdata/peewee_app.py", host, port, user, password, database, "pw_")
		return appOutput(t, cmd, host+":"+port, false)
	}
	want := run(e.backends[0].Host(), fmt.Sprint(e.backends[0].Port()), "root", "", "pw_ref")
	referencePrinted(t, "the application", want,
		"('tables', ['pw_customer', 't_order', 't_order_item'])",
		"('get_or_create', 'ann', 1, False, 3)",
		"('nested failed', 'IntegrityError', 1062)",
		"('rolled back', 0, 5)",
		"('concat', ['NEW-20', 'NEW-60', 'NEW-100'])",
		"('duplicate key', 'IntegrityError', 1062)",
		"('foreign key', 'IntegrityError', 1452)",
	)
	host, port, _ := strings.Cut(e.addr, ":")
	sameSteps(t, run(host, port, "app", "app-secret", "sharding_db"), want)

	bindingRowsPlaced(t, e, "pw_ref")
}
