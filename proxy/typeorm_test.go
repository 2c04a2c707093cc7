package proxy

import (
	"strings"
	"testing"
)

// TestTypeORMApplication runs a small TypeORM application
// (testdata/typeorm/typeorm.js, with the mysql2 driver, from npm, installed
// by scripts/install-deps.sh) through the proxy over binding tables with
// the 53-bit key layout (TypeORM reads the key from mysql2's insertId, a
// JavaScript Number) and against one MariaDB: both runs print the same,
// step by step.
func TestTypeORMApplication(t *testing.T) {
	runNodeApplication(t, typeormApp("typeorm.js"), "typeorm", []string{"VIEW v_note", "t_audit", "migrations", "t_note", "t_order_item", "t_order"},
		`"second synchronize" []`, `"resave" "RESAVED" true false`, `"inner" "inner fails"`, `"after nested" [[2,"outer"],[5,"after"]]`, `"on delete cascade" 0 5`, `"query runner" ["kept"] 0`, `"dropped schema" []`, `"error in transaction" "ER_BAD_FIELD_ERROR" 1054`)
}

// TestKnexApplication runs a small Knex application
// (testdata/typeorm/knex.js, mysql2 driver, from npm as above) through the
// proxy over the same binding tables and against one MariaDB: both runs
// print the same, step by step.
func TestKnexApplication(t *testing.T) {
	runNodeApplication(t, typeormApp("knex.js"), "knex", []string{"knex_migrations", "knex_migrations_lock", "k_note", "t_order_item", "t_order"},
		`"migrate again" [1,[]]`, `"has" true false true false`, `"rolled back" "give up"`, `"explicit" ["committed"]`, `"rollback migration" ["20240101000000_orders.js"] false`)
}

// TestDrizzleApplication runs a small Drizzle ORM application
// (testdata/typeorm/drizzle.js, drizzle-orm with the mysql2 driver, from
// npm as above) through the proxy over the same binding tables and
// against one MariaDB: both runs print the same, step by step.
func TestDrizzleApplication(t *testing.T) {
	runNodeApplication(t, typeormApp("drizzle.js"), "drizzle", []string{"__drizzle_migrations", "d_note", "t_order_item", "t_order"},
		`"migrations" 1 [64]`, `"returning ids" 3 true`, `"relational many" [{"status":"NEW","items":[{"qty":1},{"qty":2},{"qty":3}]}]`, `"rollback" "TransactionRollbackError" "Rollback"`, `"inner" "inner fails"`, `"after nested" [[8,"outer"]]`, `"prepared" ["upd","upd","upd","upd","upd","upd","upd"] ["outer"]`, `"error" "ER_BAD_FIELD_ERROR" 1054`)
}

// typeormApp is a script of testdata/typeorm, whose packages the
// TypeORM, Knex and Drizzle applications share.
func typeormApp(script string) nodeApp {
	return nodeApp{dir: "typeorm", script: script, packages: []string{"typeorm", "knex", "drizzle-orm", "mysql2"}}
}

// runNodeApplication runs app once against a fresh database name_ref on
// the first data source and once through the proxy (rules
// sequelizeRules) and compares the printed steps (nodeApp), dropping
// tables (and "VIEW name"s) through the proxy before and after.
func runNodeApplication(t *testing.T, app nodeApp, name string, tables []string, steps ...string) {
	t.Helper()
	app.runner(t) // before the servers start, when node is missing
	e := startEnv(t, envOptions{rules: sequelizeRules})
	ref := name + "_ref"
	e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS "+ref, "CREATE DATABASE "+ref)
	drop := func() {
		db := e.open(t)
		for _, table := range tables {
			kind, name, ok := strings.Cut(table, " ")
			if !ok {
				kind, name = "TABLE", table
			}
			if _, err := db.Exec("DROP " + kind + " IF EXISTS " + name); err != nil {
				t.Errorf("DROP TABLE %s: %v", table, err)
			}
		}
	}
	drop()
	t.Cleanup(func() {
		e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS "+ref)
		drop()
	})
	app.sameThroughProxy(t, e, e.backends[0], ref, steps...)
}
