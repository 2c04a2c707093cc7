package proxy

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// TestAiomysqlApplication runs a small asyncio application
// (testdata/aiomysql_app.py: Debian's python3-aiomysql 0.1 with its
// defaults, autocommit off, then SQLAlchemy's asyncio engine over it)
// through the proxy over binding tables whose keys the proxy generates,
// and against one MariaDB: a pool and concurrent tasks inserting without
// keys (cursor.lastrowid finds the row), executemany, selects, pages,
// aggregates with their DECIMAL and DATETIME values as the driver decodes
// them, a join of the binding tables, DictCursor, an SSCursor streaming
// 3000 rows and one left unread, transactions begun, committed and rolled
// back, the implicit transaction of autocommit off, upserts (one, and
// executemany's multi-row one), several statements in one query,
// duplicate keys, an unknown column and a too long value, conn.ping(), a
// lock wait timeout between two connections, KILL QUERY of a running
// statement, a statement the client gives up, a connection of its own
// with autocommit on and an init_command setting ANSI_QUOTES
// (double-quoted names), SQL_CALC_FOUND_ROWS; and SQLAlchemy's asyncio
// engine: isolation levels, AUTOCOMMIT, create_all and reflect through
// run_sync, an AsyncSession's flush, get, stream, begin_nested and
// rollback. Both runs print the same, step by step.
func TestAiomysqlApplication(t *testing.T) {
	requirePython(t, "pymysql", "python3-pymysql")
	requirePython(t, "sqlalchemy.ext.asyncio", "python3-sqlalchemy")
	py := requirePython(t, "aiomysql", "python3-aiomysql")
	e := startEnv(t, envOptions{rules: bindingTestRules})
	e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS am_ref", "CREATE DATABASE am_ref")
	t.Cleanup(func() {
		e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS am_ref")
		db := e.open(t)
		for _, q := range []string{"DROP TABLE IF EXISTS t_order_item", "DROP TABLE IF EXISTS t_order", "DROP TABLE IF EXISTS am_customer", "DROP TABLE IF EXISTS am_note"} {
			if _, err := db.Exec(q); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
	})
	run := func(host, port, user, password, database string) []string {
		t.Helper()
		cmd := exec.Command(py, "testdata/aiomysql_app.py", host, port, user, password, database, "am_")
		return appOutput(t, cmd, host+":"+port, false)
	}
	want := run(e.backends[0].Host(), fmt.Sprint(e.backends[0].Port()), "root", "", "am_ref")
	referencePrinted(t, "the application", want,
		"('session', (0, 0, 1))",
		"('in begin', 1, 0)",
		"('rolled back', 0, 1)",
		"('implicit, unseen by others', 0)",
		"('streamed', 3030, 9429, True)",
		"('duplicate in transaction', 'IntegrityError', 1062)",
		"('nested failed', 'IntegrityError', 1062)",
		"('after rollback', [('NESTED', 1)])",
		"('upsert', 2, True, 2)",
		"('multi write', 1, True, 1, None)",
		"('read committed', 'READ COMMITTED', 'READ-COMMITTED')",
		"('upserted many', 6, ",
		"('lock wait', (80,), 'OperationalError', 1205)",
		"('killed', 'OperationalError', 1317)",
		"('given up', True)",
		"('init_command', (1, 1))",
	)
	host, port, _ := strings.Cut(e.addr, ":")
	sameSteps(t, run(host, port, "app", "app-secret", "sharding_db"), want)

	bindingRowsPlaced(t, e, "am_ref")
}
