package proxy

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// requireMariaDBODBC returns the path of MariaDB Connector/ODBC's driver
// (Debian's odbc-mariadb), skipping (or failing under CI=true) when it is
// not installed.
func requireMariaDBODBC(t *testing.T) string {
	t.Helper()
	found, _ := filepath.Glob("/usr/lib/*/odbc/libmaodbc.so")
	if len(found) == 0 {
		mariadbtest.Require(t, fmt.Errorf("no /usr/lib/*/odbc/libmaodbc.so: MariaDB Connector/ODBC (Debian package odbc-mariadb, scripts/install-deps.sh)"))
	}
	return found[0]
}

// TestODBCApplication runs a small ODBC application
// (testdata/odbc_app.py: pyodbc over MariaDB Connector/ODBC and unixODBC)
// through the proxy over binding tables and directly on one MariaDB:
// SQLGetInfo's answers, CREATE TABLE, the catalog functions (SQLTables,
// SQLColumns, SQLPrimaryKeys, SQLStatistics, SQLGetTypeInfo), inserts
// without keys with ? parameters, executemany with and without
// fast_executemany's parameter arrays, LAST_INSERT_ID(), reads by key,
// ranges sorted and paged, aggregates, NULLs, DECIMAL, DATETIME, DATE,
// TIME, BIGINT UNSIGNED, unicode text, BLOBs sent as data at execution,
// ODBC escapes ({d}, {ts}, {fn}, {oj}), pyodbc's default autocommit off
// with commit and rollback, the isolation level through
// SQLSetConnectAttr, and errors with SQLSTATE and native code. Both runs print the
// same, step by step; then the data nodes hold the rows MariaDB holds,
// none of the rolled-back ones.
func TestODBCApplication(t *testing.T) {
	driver := requireMariaDBODBC(t)
	py := requirePython(t, "pyodbc", "python3-pyodbc")
	// The driver is registered in an odbcinst.ini of the test's own, as an
	// administrator registers it, so that nothing in /etc decides how it
	// loads.
	sysini := t.TempDir()
	ini := fmt.Sprintf("[MariaDB ODBC]\nDescription = MariaDB Connector/ODBC\nDriver = %s\n", driver)
	if err := os.WriteFile(filepath.Join(sysini, "odbcinst.ini"), []byte(ini), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sysini, "odbc.ini"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	e := startEnv(t, envOptions{rules: bindingTestRules})
	refDatabase(t, e.backends[0], "odbc_ref")
	t.Cleanup(func() {
		db := e.open(t)
		for _, q := range []string{"DROP TABLE IF EXISTS t_order_item", "DROP TABLE IF EXISTS t_order"} {
			if _, err := db.Exec(q); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
	})
	run := func(host, port, user, password, db string) []string {
		t.Helper()
		cmd := exec.Command(py, filepath.Join("testdata", "odbc_app.py"), "MariaDB ODBC", host, port, user, password, db)
		cmd.Env = append(os.Environ(), "ODBCSYSINI="+sysini, "ODBCINI="+filepath.Join(sysini, "odbc.ini"))
		return appOutput(t, cmd, host+":"+port, true)
	}
	want := run(e.backends[0].Host(), fmt.Sprint(e.backends[0].Port()), "root", "", "odbc_ref")
	referencePrinted(t, "the application", want,
		"('autocommit', False, 0)",
		"('rolled back', 0, 'NEW')",
		"('duplicate key', 'error', 'IntegrityError', '23000', 1062,",
	)
	host, port, _ := strings.Cut(e.addr, ":")
	sameSteps(t, run(host, port, "app", "app-secret", "sharding_db"), want)
	bindingRowsPlaced(t, e, "odbc_ref")
	for i := range e.backends {
		for j := range 2 {
			var n int
			q := fmt.Sprintf("SELECT COUNT(*) FROM t_order_%d WHERE status = 'GONE'", j)
			if err := e.backend(t, i).QueryRow(q).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Errorf("ds_%d.t_order_%d holds %d rows that ROLLBACK undid on MariaDB", i, j, n)
			}
		}
	}
}
