package proxy

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// TestTypeORMApplication runs a small TypeORM application
// (testdata/typeorm/typeorm.js, with the mysql2 driver, from npm, installed
// by scripts/install-deps.sh) through the proxy over binding tables with
// the 53-bit key layout (TypeORM reads the key from mysql2's insertId, a
// JavaScript Number) and against one MariaDB: both runs print the same,
// step by step.
func TestTypeORMApplication(t *testing.T) {
	runNodeApplication(t, "typeorm", "typeorm.js", []string{"VIEW v_note", "t_audit", "migrations", "t_note", "t_order_item", "t_order"},
		`"second synchronize" []`, `"resave" "RESAVED" true false`, `"inner" "inner fails"`, `"after nested" [[2,"outer"],[5,"after"]]`, `"on delete cascade" 0 5`, `"query runner" ["kept"] 0`, `"dropped schema" []`, `"error in transaction" "ER_BAD_FIELD_ERROR" 1054`)
}

// TestKnexApplication runs a small Knex application
// (testdata/typeorm/knex.js, mysql2 driver, from npm as above) through the
// proxy over the same binding tables and against one MariaDB: both runs
// print the same, step by step.
func TestKnexApplication(t *testing.T) {
	runNodeApplication(t, "knex", "knex.js", []string{"knex_migrations", "knex_migrations_lock", "k_note", "t_order_item", "t_order"},
		`"migrate again" [1,[]]`, `"has" true false true false`, `"rolled back" "give up"`, `"explicit" ["committed"]`, `"rollback migration" ["20240101000000_orders.js"] false`)
}

// runNodeApplication runs testdata/typeorm/script once against a fresh
// database on the first data source and once through the proxy (rules
// sequelizeRules), compares the printed steps, checks the reference
// printed each of steps, and drops tables (and "VIEW name"s) through the
// proxy before and after.
func runNodeApplication(t *testing.T, name, script string, tables []string, steps ...string) {
	t.Helper()
	dir := filepath.Join("testdata", "typeorm")
	node, err := exec.LookPath("node")
	if err == nil {
		for _, pkg := range []string{"typeorm", "knex", "mysql2"} {
			if _, err = os.Stat(filepath.Join(dir, "node_modules", pkg)); err != nil {
				break
			}
		}
	}
	if err != nil {
		mariadbtest.Require(t, fmt.Errorf("node and testdata/typeorm/node_modules (scripts/install-deps.sh runs npm ci there): %v", err))
	}
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
	run := func(host, port, user, password, db string) []string {
		t.Helper()
		cmd := exec.Command(node, filepath.Join(dir, script), host, port, user, password, db)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("the application against %s:%s: %v\n%s\n%s", host, port, err, out, stderr.String())
		}
		return strings.Split(strings.TrimSpace(string(out)), "\n")
	}
	want := run(e.backends[0].Host(), fmt.Sprint(e.backends[0].Port()), "root", "", ref)
	for _, step := range steps {
		if !strings.Contains(strings.Join(want, "\n"), step) {
			t.Fatalf("directly on MariaDB the application printed\n%s\nwithout %s: the reference is not what this test assumes", strings.Join(want, "\n"), step)
		}
	}
	host, port, _ := strings.Cut(e.addr, ":")
	sameSteps(t, run(host, port, "app", "app-secret", "sharding_db"), want)
}
