package proxy

import (
	"strings"
	"testing"
)

// sequelizeRules are the binding tables with a 53-bit SNOWFLAKE layout:
// Sequelize numbers the rows of a bulkCreate from mysql2's insertId, a
// JavaScript Number, and loops forever on keys past 2^53 (README, Keys).
var sequelizeRules = strings.ReplaceAll(bindingTestRules, "props: { worker-id: 1 }",
	"props: { worker-id: 1, datacenter-bits: 0, worker-bits: 4, sequence-bits: 8 }")

// TestSequelizeApplication runs a small Sequelize application
// (testdata/sequelize/app.js, the mysql2 driver from npm, installed by
// scripts/install-deps.sh) through the proxy over binding tables and
// against one MariaDB: both runs print the same, step by step.
func TestSequelizeApplication(t *testing.T) {
	app := nodeApp{dir: "sequelize", script: "app.js", packages: []string{"sequelize"}}
	app.runner(t) // before the servers start, when node is missing
	e := startEnv(t, envOptions{rules: sequelizeRules})
	e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS sq_ref", "CREATE DATABASE sq_ref")
	t.Cleanup(func() {
		e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS sq_ref")
		db := e.open(t)
		for _, q := range []string{"DROP TABLE IF EXISTS t_order_item", "DROP TABLE IF EXISTS t_order"} {
			if _, err := db.Exec(q); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
	})
	app.sameThroughProxy(t, e, e.backends[0], "sq_ref",
		`"inner" "inner fails"`, `"after nested" [[2,"outer"],[5,"after"]]`, `"rolled back" 0 0`, `"created" 1 "NEW" true`,
		`"include limit" [["NEW",[1,2,3]],["outer",[]],["after",[]]] 5 [["outer",0],["NEW",3]]`,
		`"include required" [["after",[4]]] 3 [["NEW",[2,3]]]`)
}
