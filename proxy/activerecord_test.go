package proxy

import (
	"bytes"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shardflake/shardflake/idgen"
)

// requireActiveRecord returns the Ruby interpreter after checking that it
// loads ActiveRecord and mysql2, skipping (or failing under CI=true) when it
// does not.
func requireActiveRecord(t *testing.T) string {
	t.Helper()
	return requireCommand(t, "ruby", "ruby with ActiveRecord and mysql2 (scripts/install-deps.sh installs ruby-activerecord and ruby-mysql2)",
		"-e", `require "active_record"; require "mysql2"`)
}

// activeRecordRules are the default test rules with range conditions on
// order_id allowed: find_each, find_in_batches and in_batches page by
// primary key (WHERE order_id > last ORDER BY order_id LIMIT n), which an
// INLINE algorithm, as in ShardingSphere, refuses to route without
// allow-range-query-with-inline-sharding (1235 naming the property).
var activeRecordRules = strings.Replace(defaultTestRules,
	`"t_order_${order_id % 2}" }`, `"t_order_${order_id % 2}", allow-range-query-with-inline-sharding: true }`, 1)

// activeRecordTables are the tables the ActiveRecord application's
// migrations create: t_order (sharded by the default rules), customers (no
// rules: the default data source) and the migrator's own two.
var activeRecordTables = []string{"t_order", "customers", "schema_migrations", "ar_internal_metadata"}

// TestActiveRecordApplication runs a small ActiveRecord application
// (testdata/rails/app.rb: Debian's ruby-activerecord 6.1 with the mysql2
// adapter) through the proxy over the default sharded rules (range queries
// on order_id allowed: activeRecordRules) and directly on
// one MariaDB, once with the adapter's defaults (no prepared statements),
// once with prepared_statements: true, and once with strict: false, another
// collation and session variables, as a database.yml may set them. Both runs print the same, step by
// step: the adapter's connection setup, db:migrate with its advisory lock,
// schema_migrations and ar_internal_metadata, the schema dump, a migration
// down and up, the model API (find, where, order, limit and offset, pluck,
// count, sum, group, find_each and in_batches, update_all, delete_all,
// insert_all and upsert_all), keys the proxy generates as create's id,
// optimistic and pessimistic locking, transactions rolled back, committed
// and nested, errors with the connection after them, and test fixtures
// loaded as Rails loads them (a multi-statement query); then where the rows
// landed, read on each data source (checkActiveRecordNodes).
func TestActiveRecordApplication(t *testing.T) {
	ruby := requireActiveRecord(t)
	if activeRecordRules == defaultTestRules {
		t.Fatal("the rules allow no range query on order_id: defaultTestRules changed")
	}
	e := startEnv(t, envOptions{databases: "ar", rules: activeRecordRules})
	db := e.open(t)
	drop := func() {
		for _, table := range activeRecordTables {
			if _, err := db.Exec("DROP TABLE IF EXISTS " + table); err != nil {
				t.Errorf("DROP TABLE %s: %v", table, err)
			}
		}
	}
	t.Cleanup(func() {
		e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS ar_ref")
		drop()
	})
	for _, mode := range []string{"defaults", "prepared", "options"} {
		t.Run(mode, func(t *testing.T) {
			drop()
			e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS ar_ref", "CREATE DATABASE ar_ref")
			run := func(addr, user, password, database string) []string {
				t.Helper()
				host, port, err := net.SplitHostPort(addr)
				if err != nil {
					t.Fatal(err)
				}
				cmd := exec.Command(ruby, filepath.Join("testdata", "rails", "app.rb"), host, port, user, password, database, mode)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil || stderr.Len() > 0 {
					t.Fatalf("the application against %s: %v\n%s\n%s", addr, err, out, stderr.String())
				}
				return strings.Split(strings.TrimSpace(string(out)), "\n")
			}
			want := run(e.backends[0].Addr(), "root", "", "ar_ref")
			steps := []string{
				`migrate | [i20240101000001,i20240101000002,i20240101000003,i20240101000004]`,
				`migrate again | []`,
				`advisory lock | [true,true,true,true,false]`,
				`create generated | [[G0,G1,G2],true,true]`,
				`insert_all generated | [i3,true]`,
				`insert_all! | ActiveRecord::RecordNotUnique 1062 23000 Duplicate entry '902' for key 'PRIMARY'`,
				`after bulk | [[i901,i1,"up",d10.0],[i902,i2,"bulk",d2.0],[i903,i3,"bulk",d3.0],[i904,i0,"up",d4.0]]`,
				`in_batches | [[i901,i902,i903],[i904,i1001,i1002],[i1003,i1004,i1005],[i1006,G0,G1],[G2,G3,G4],[G5,G6]]`,
				`stale object | ["ActiveRecord::StaleObjectError","update",["first",i2]]`,
				`rollback | [i0,i0,"first"]`,
				`savepoint | [i955,i957]`,
				`rollback by error | ["ActiveRecord::RecordNotUnique",i1062,i0]`,
				`fixtures | [[[i11,i1,"fx","fixture ✓"],`,
			}
			if mode == "defaults" {
				steps = append(steps, `exec_query | ActiveRecord::StatementInvalid 1064 42000 You have an error in your SQL syntax; check the manual that corresponds to your MariaDB server version for the right syntax to use near '?' at line 1`)
			}
			for i := range steps {
				steps[i] = mode + " | " + steps[i]
			}
			referencePrinted(t, "the application", want, steps...)
			start := time.Now()
			got := run(e.addr, "app", "app-secret", "sharding_db")
			sameSteps(t, got, want)
			checkActiveRecordNodes(t, e, start)
		})
	}
}

// checkActiveRecordNodes reads the data sources directly after a run: each
// t_order row on the data node of its user_id and order_id, the keys the
// proxy generated (create without an id, insert_all) Snowflake ids of
// worker 1 issued during the run, the migrations' tables without rules and
// their rows on ds_0 only, and the migration's index on every data node.
func checkActiveRecordNodes(t *testing.T, e *testEnv, start time.Time) {
	t.Helper()
	generated := 0
	for i := range e.backends {
		db := e.backend(t, i)
		for j := range 2 {
			rows, err := db.Query(fmt.Sprintf("SELECT order_id, user_id FROM t_order_%d", j))
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var order, user int64
				if err := rows.Scan(&order, &user); err != nil {
					t.Fatal(err)
				}
				if user%2 != int64(i) || order%2 != int64(j) {
					t.Errorf("order %d of user %d stored in ds_%d.t_order_%d", order, user, i, j)
				}
				if order < 1<<32 {
					continue // given by the application
				}
				generated++
				p, err := idgen.Decode(order)
				if err != nil || p.Worker != 1 || p.Time.Before(start.Add(-time.Second)) || p.Time.After(time.Now()) {
					t.Errorf("order %d of user %d is no Snowflake id of worker 1 issued during the run: %+v, %v", order, user, p, err)
				}
			}
			rows.Close()
			var index string
			if err := db.QueryRow(fmt.Sprintf("SELECT GROUP_CONCAT(DISTINCT index_name ORDER BY index_name) FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = 't_order_%d'", j)).Scan(&index); err != nil {
				t.Fatal(err)
			}
			if want := "index_t_order_on_user_id_and_status,PRIMARY"; index != want {
				t.Errorf("ds_%d.t_order_%d has indexes %s, want %s", i, j, index, want)
			}
		}
		var tables string
		if err := db.QueryRow("SELECT COALESCE(GROUP_CONCAT(table_name ORDER BY table_name), '') FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name NOT LIKE 't\\_order\\_%'").Scan(&tables); err != nil {
			t.Fatal(err)
		}
		want := map[int]string{0: "ar_internal_metadata,customers,schema_migrations"}[i]
		if tables != want {
			t.Errorf("ds_%d holds tables %q besides t_order's, want %q", i, tables, want)
		}
	}
	// G0..G6: three creates, one save, three rows of an insert_all.
	if generated != 7 {
		t.Errorf("%d rows hold a generated key, want 7", generated)
	}
	var versions, customers int
	if err := e.backend(t, 0).QueryRow("SELECT (SELECT COUNT(*) FROM schema_migrations), (SELECT COUNT(*) FROM customers)").Scan(&versions, &customers); err != nil {
		t.Fatal(err)
	}
	if versions != 4 || customers != 1 {
		t.Errorf("ds_0 holds %d schema versions and %d customers, want 4 and 1", versions, customers)
	}
}
