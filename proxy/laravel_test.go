package proxy

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// laravelRules shard Laravel's orders, whose key (id) the proxy generates,
// and their order_items, bound to them, by user_id over the data sources
// and the tables: binding tables shard alike on columns of the same name,
// and the items' key to their order is order_id, not id. The application
// selects ranges of users (user_id <= 2), which INLINE routes only with
// allow-range-query-with-inline-sharding. users has no rule.
const laravelRules = `  - !SHARDING
    tables:
      orders:
        actualDataNodes: ds_${0..1}.orders_${0..1}
        databaseStrategy:
          standard: { shardingColumn: user_id, shardingAlgorithmName: db_inline }
        tableStrategy:
          standard: { shardingColumn: user_id, shardingAlgorithmName: orders_inline }
        keyGenerateStrategy: { column: id, keyGeneratorName: snowflake }
      order_items:
        actualDataNodes: ds_${0..1}.order_items_${0..1}
        databaseStrategy:
          standard: { shardingColumn: user_id, shardingAlgorithmName: db_inline }
        tableStrategy:
          standard: { shardingColumn: user_id, shardingAlgorithmName: items_inline }
        keyGenerateStrategy: { column: id, keyGeneratorName: snowflake }
    bindingTables:
      - orders,order_items
    shardingAlgorithms:
      db_inline:     { type: INLINE, props: { algorithm-expression: "ds_${user_id % 2}", allow-range-query-with-inline-sharding: true } }
      orders_inline: { type: INLINE, props: { algorithm-expression: "orders_${user_id.intdiv(2) % 2}", allow-range-query-with-inline-sharding: true } }
      items_inline:  { type: INLINE, props: { algorithm-expression: "order_items_${user_id.intdiv(2) % 2}", allow-range-query-with-inline-sharding: true } }
    keyGenerators:
      snowflake: { type: SNOWFLAKE, props: { worker-id: 1 } }
`

// TestLaravelApplication runs a small Laravel application
// (testdata/laravel/laravel_app.php: Debian's php-laravel-framework, its
// Eloquent and query builder through Capsule, pdo_mysql with Laravel's
// defaults, then with emulated prepares) through the proxy over binding
// tables and an unsharded one, and directly on one MariaDB. Both runs
// print the same, step by step: the Migrator's migrations
// (Schema::create with id(), timestamps(), softDeletes(), indexes and a
// foreign key, Schema::table adding a column, change() and renameColumn()
// through Doctrine DBAL, a rollback, migrate:fresh's dropAllTables,
// hasTable and hasColumn), models whose keys the proxy generates, finds,
// pages (paginate, simplePaginate, cursorPaginate, chunk, chunkById,
// cursor, lazyById),
// increment, upsert, insertOrIgnore, firstOrCreate, updateOrCreate, a
// model moved to another user's data node, relations (with, whereHas,
// has, withCount, withSum), soft deletes, transactions committed and
// rolled back, locking reads, aggregates, raw selects, and the
// QueryExceptions of duplicate keys, strict mode and a foreign key.
func TestLaravelApplication(t *testing.T) {
	php := requirePHP(t)
	for file, pkg := range map[string]string{
		"Illuminate/Database/autoload.php": "php-laravel-framework",
		"Doctrine/DBAL/autoload.php":       "php-doctrine-dbal", // Laravel's change() and renameColumn()
	} {
		if _, err := os.Stat(filepath.Join("/usr/share/php", file)); err != nil {
			mariadbtest.Require(t, fmt.Errorf("%s (scripts/install-deps.sh installs it): %v", pkg, err))
		}
	}
	e := startEnv(t, envOptions{rules: laravelRules, databases: "laravel"})
	t.Cleanup(func() { e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS laravel_ref") })
	for _, prepares := range []string{"native", "emulated"} {
		t.Run(prepares, func(t *testing.T) { testLaravel(t, e, php, prepares) })
	}
}

// testLaravel runs the application with PDO's prepares native or
// emulated.
func testLaravel(t *testing.T, e *testEnv, php, prepares string) {
	e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS laravel_ref", "CREATE DATABASE laravel_ref")
	run := func(host, port, user, password, db string) []string {
		t.Helper()
		cmd := exec.Command(php, filepath.Join("testdata", "laravel", "laravel_app.php"), host, port, user, password, db, prepares)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || stderr.Len() > 0 {
			t.Fatalf("the application against %s:%s: %v\n%s\n%s", host, port, err, out, stderr.String())
		}
		return strings.Split(strings.TrimSpace(string(out)), "\n")
	}
	want := run(e.backends[0].Host(), fmt.Sprint(e.backends[0].Port()), "root", "", "laravel_ref")
	if os.Getenv("LARAVEL_PRINT") != "" {
		t.Logf("reference:\n%s", strings.Join(want, "\n"))
	}
	referencePrinted(t, "the application", want,
		`has tables | [true,true,true,false]`,
		`ids | [true,true,true,true,true,true,true,true,true,true,true,true]`,
		`transaction rollback | ["changed my mind",0,0,0,0,`,
		`duplicate email | ["duplicate","23000","23000",1062,`,
	)
	host, port, _ := strings.Cut(e.addr, ":")
	got := run(host, port, "app", "app-secret", "sharding_db")
	sameSteps(t, got, want)

	// Where the proxy put the rows: each order and item on the data node
	// of its user, users and the migrations table on ds_0 only.
	var orders, items int
	for i := range e.backends {
		for j := range 2 {
			for _, q := range []struct {
				sql string
				n   *int
			}{
				{fmt.Sprintf("SELECT user_id FROM orders_%d", j), &orders},
				{fmt.Sprintf("SELECT user_id FROM order_items_%d", j), &items},
			} {
				rows, err := e.backend(t, i).Query(q.sql)
				if err != nil {
					t.Fatal(err)
				}
				for rows.Next() {
					var user int64
					if err := rows.Scan(&user); err != nil {
						t.Fatal(err)
					}
					if user%2 != int64(i) || user/2%2 != int64(j) {
						t.Errorf("%s on ds_%d: a row of user %d", q.sql, i, user)
					}
					*q.n++
				}
				rows.Close()
			}
		}
		var tables int
		err := e.backend(t, i).QueryRow("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name IN ('users', 'migrations')").Scan(&tables)
		if err != nil {
			t.Fatal(err)
		}
		if want := 2 * (1 - i); tables != want {
			t.Errorf("ds_%d holds %d of users and migrations, want %d", i, tables, want)
		}
	}
	if orders == 0 || items == 0 {
		t.Errorf("the data nodes hold %d orders and %d items", orders, items)
	}

	// What the application avoids, as SQL Laravel writes it: a foreign
	// key from orders (on every data source) to users (on the default
	// one only); User::whereHas('orders'), User::has('orders') and
	// Order::whereHas('user'), whose subqueries join users with orders on
	// every data source; and a join of orders with users where the orders
	// lie on another data source than users (user 1's on ds_1). The
	// proxy refuses each with 1235, changing nothing, and the connection
	// stays usable.
	db := e.open(t)
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range []string{
		"alter table `orders` add constraint `orders_user_id_foreign` foreign key (`user_id`) references `users` (`id`)",
		"select * from `users` where exists (select * from `orders` where `users`.`id` = `orders`.`user_id` and `orders`.`deleted_at` is null)",
		"select * from `users` where (select count(*) from `orders` where `users`.`id` = `orders`.`user_id` and `orders`.`deleted_at` is null) >= 1",
		"select * from `orders` where exists (select * from `users` where `orders`.`user_id` = `users`.`id` and `name` = ?) and `orders`.`deleted_at` is null",
		"select `orders`.*, `users`.`name` from `orders` inner join `users` on `users`.`id` = `orders`.`user_id` where `orders`.`user_id` = 1",
	} {
		_, err := conn.ExecContext(t.Context(), strings.Replace(q, "?", "'bob'", 1))
		var myErr *mysql.MySQLError
		if !errors.As(err, &myErr) || myErr.Number != 1235 {
			t.Errorf("%s through the proxy: %v, want 1235", q, err)
		}
	}
	var n int
	if err := conn.QueryRowContext(t.Context(), "select count(*) from information_schema.table_constraints where table_name = 'orders' and constraint_type = 'FOREIGN KEY'").Scan(&n); err != nil || n != 0 {
		t.Errorf("after the refused foreign key: orders has %d foreign keys, %v", n, err)
	}
	if err := conn.QueryRowContext(t.Context(), "select count(*) from users").Scan(&n); err != nil || n == 0 {
		t.Errorf("after the 1235s: %d users, %v", n, err)
	}
}
