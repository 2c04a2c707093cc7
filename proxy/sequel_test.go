package proxy

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sequelRules are the binding test rules with range conditions on
// order_id allowed: Sequel's paged_each with strategy: :filter pages by
// key (WHERE order_id > last ORDER BY order_id LIMIT n), which an INLINE
// algorithm refuses to route without allow-range-query-with-inline-sharding.
var sequelRules = strings.Replace(bindingTestRules,
	`"t_order_${order_id % 2}" }`, `"t_order_${order_id % 2}", allow-range-query-with-inline-sharding: true }`, 1)

// TestSequelApplication runs a small Sequel application
// (testdata/sequel/app.rb: Debian's ruby-sequel 5.63 over the mysql2
// adapter) through the proxy over binding tables whose keys the proxy
// generates (range queries on order_id allowed: sequelRules) and directly
// on one MariaDB. Both runs print the same, step by step: Sequel.connect's
// setup (SET NAMES, wait_timeout, SQL_AUTO_IS_NULL, sql_mode, the server's
// version), the integer Migrator up, again, down one and up (schema_info,
// create_table with indexes and a foreign key between the binding tables,
// alter_table), DB.tables, DB.schema, DB.indexes and DB.foreign_key_list,
// create_table?, Sequel::Model with associations lazy, eager
// and eager_graph, Model.create, dataset insert, multi_insert and import
// (with slices and return: :primary_key) without keys, where, order,
// limit and offset, paginate and each_page, paged_each (streamed, by
// offset, by key filter), stream, aggregates with group_and_count,
// transactions committed, rolled back by Sequel::Rollback and nested with
// a savepoint, for_update, insert_ignore and on_duplicate_key_update,
// Sequel::UniqueConstraintViolation, ForeignKeyConstraintViolation (1451
// with the logical names), native prepared statements,
// find_or_create, lock!, refresh, a limited dataset update and delete
// (UPDATE/DELETE ... LIMIT over every data node), Model#save of a new and
// of an existing row (UPDATE ... WHERE pk LIMIT 1, over two data nodes),
// updates, deletes and an error after which the connection goes on.
func TestSequelApplication(t *testing.T) {
	ruby := requireCommand(t, "ruby", "ruby with Sequel and mysql2 (scripts/install-deps.sh installs ruby-sequel and ruby-mysql2)",
		"-e", `require "sequel"; require "mysql2"`)
	if sequelRules == bindingTestRules {
		t.Fatal("the rules allow no range query on order_id: bindingTestRules changed")
	}
	e := startEnv(t, envOptions{databases: "sq", rules: sequelRules})
	refDatabase(t, e.backends[0], "sq_ref")
	run := func(host, port, user, password, database string) []string {
		t.Helper()
		cmd := exec.Command(ruby, filepath.Join("testdata", "sequel", "app.rb"), host, port, user, password, database)
		return appOutput(t, cmd, host+":"+port, true)
	}
	want := run(e.backends[0].Host(), fmt.Sprint(e.backends[0].Port()), "root", "", "sq_ref")
	referencePrinted(t, "the application", want,
		`migrate | [3]`,
		`tables | [:schema_info,:sq_customer,:t_order,:t_order_item]`,
		`duplicate customer | Sequel::UniqueConstraintViolation 1062 23000`,
		`create | ["o1",1,d5.25,"first"]`,
		`rollback | [0,3]`,
		`savepoint | [2,0]`,
		`error in transaction | ["Sequel::UniqueConstraintViolation",1062,0,false]`,
		"duplicate key | Sequel::UniqueConstraintViolation 1062 23000 Duplicate entry 'o1' for key 'PRIMARY'",
		`lock! | "locked"`,
		`refresh | ["m3","behind"]`,
		`limited update | [2,2]`,
		"parent row | Sequel::ForeignKeyConstraintViolation 1451 23000 Cannot delete or update a parent row: a foreign key constraint fails (`DB`.`t_order_item`, CONSTRAINT `t_order_item_order_fk` FOREIGN KEY (`order_id`) REFERENCES `t_order` (`order_id`))",
		`limited delete | [3,1,1]`,
		`model save | ["saved",d0.0]`,
		`unknown column | Sequel::DatabaseError 1054 42S22`,
	)
	host, port, _ := strings.Cut(e.addr, ":")
	sameSteps(t, run(host, port, "app", "app-secret", "sharding_db"), want)

	bindingRowsPlaced(t, e, "sq_ref")
}
