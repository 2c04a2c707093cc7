package proxy

import (
	"testing"
)

// TestMariadbNodeApplication runs a small application on MariaDB's
// Node.js connector (testdata/nodedrivers/mariadb_app.js, mariadb 3.5 from
// npm, installed by scripts/install-deps.sh) with its defaults
// (pipelining, PREPARE and EXECUTE sent together, batch(), the prepare
// cache, BigInt keys) through the proxy over binding tables with the
// default 63-bit key layout and against one MariaDB: both runs print the
// same, step by step. The proxy offers no COM_STMT_BULK_EXECUTE, so the
// app compares what a default batch() leaves behind, not its result's
// shape (README).
func TestMariadbNodeApplication(t *testing.T) {
	runNodeDriverApplication(t, "mariadb_app.js", "mariadb", bindingTestRules,
		`"connected" true true`, `"pipelined failure" ["ER_DUP_ENTRY",1062,"23000"`, `"batch" 400`, `"batch without bulk" true 300 300 true`, `"batch duplicate" ["ER_DUP_ENTRY",1062`, `"batch duplicate in transaction" ["ER_DUP_ENTRY",1062,"23000","Duplicate entry 'N' for key 'PRIMARY'"] "n0"`, `"after reset" {"m":null,"mode":1} ["ER_UNKNOWN_STMT_HANDLER",1243`)
}

// runNodeDriverApplication runs testdata/nodedrivers/script (which needs
// the npm package pkg) once against a fresh database on the first data
// source and once through a proxy with rules, and compares the printed
// steps, dropping its tables through the proxy afterwards.
func runNodeDriverApplication(t *testing.T, script, pkg, rules string, steps ...string) {
	t.Helper()
	app := nodeApp{dir: "nodedrivers", script: script, packages: []string{pkg}}
	app.runner(t) // before the servers start, when node is missing
	e := startEnv(t, envOptions{rules: rules})
	ref := pkg + "_ref"
	e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS "+ref, "CREATE DATABASE "+ref)
	t.Cleanup(func() {
		e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS "+ref)
		db := e.open(t)
		for _, q := range []string{"DROP TABLE IF EXISTS t_order_item", "DROP TABLE IF EXISTS t_order"} {
			if _, err := db.Exec(q); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
	})
	app.sameThroughProxy(t, e, e.backends[0], ref, steps...)
}

// TestMysqljsApplication runs a small application on mysqljs
// (testdata/nodedrivers/mysqljs_app.js, mysql 2.18 from npm, installed by
// scripts/install-deps.sh) with its defaults through the proxy over binding
// tables with the 53-bit key layout (mysqljs reads insertId as a
// JavaScript Number and fails on one past 2^53 unless supportBigNumbers)
// and against one MariaDB: both runs print the same, step by step.
func TestMysqljsApplication(t *testing.T) {
	runNodeDriverApplication(t, "mysqljs_app.js", "mysql", sequelizeRules,
		`"duplicate" ["ER_DUP_ENTRY",1062,"23000"`, `"changed user" null 1`, `"change user refused" ["ER_ACCESS_DENIED_ERROR",1045`, `"pool again" 0 2`)
}
