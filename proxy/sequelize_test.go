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
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join("testdata", "sequelize", "node_modules", "sequelize"))
	}
	if err != nil {
		mariadbtest.Require(t, fmt.Errorf("node and testdata/sequelize/node_modules (scripts/install-deps.sh runs npm ci there): %v", err))
	}
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
	run := func(host, port, user, password, db string) []string {
		t.Helper()
		cmd := exec.Command(node, filepath.Join("testdata", "sequelize", "app.js"), host, port, user, password, db)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("the application against %s:%s: %v\n%s\n%s", host, port, err, out, stderr.String())
		}
		return strings.Split(strings.TrimSpace(string(out)), "\n")
	}
	want := run(e.backends[0].Host(), fmt.Sprint(e.backends[0].Port()), "root", "", "sq_ref")
	for _, step := range []string{`"inner" "inner fails"`, `"after nested" [[2,"outer"],[5,"after"]]`, `"rolled back" 0 0`, `"created" 1 "NEW" true`} {
		if !strings.Contains(strings.Join(want, "\n"), step) {
			t.Fatalf("directly on MariaDB the application printed\n%s\nwithout %s: the reference is not what this test assumes", strings.Join(want, "\n"), step)
		}
	}
	host, port, _ := strings.Cut(e.addr, ":")
	got := run(host, port, "app", "app-secret", "sharding_db")
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("step %d through the proxy: %s\n           on MariaDB: %s", i+1, g, w)
		}
	}
}
