package proxy

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
// tables and an unsharded one (then a broadcast one), and directly on one
// MariaDB. Both runs print the same, step by step: the Migrator's
// migrations (Schema::create with id(), timestamps(), softDeletes(),
// indexes and a foreign key, Schema::table adding a column, change() and
// renameColumn() through Doctrine DBAL, a rollback, migrate:fresh's
// dropAllTables, hasTable and hasColumn), models whose keys the proxy
// generates, finds, pages (paginate, simplePaginate, cursorPaginate,
// chunk, chunkById, cursor, lazyById), increment, upsert, insertOrIgnore,
// firstOrCreate, updateOrCreate, updateOrInsert, a model moved to another
// user's data node, relations (with, whereHas, has, withCount, withSum),
// JSON columns, soft deletes, transactions committed, rolled back and
// nested, locking reads, aggregates, raw selects, and the QueryExceptions
// of duplicate keys, strict mode and a foreign key.
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
	// First users without rules (on the default data source), with
	// PDO's native and emulated prepares; then users as a broadcast
	// table, as the proxy's 1235 for a foreign key to it advises.
	for _, tt := range []struct {
		name      string
		broadcast bool
		prepares  []string
	}{
		{"users unsharded", false, []string{"native", "emulated"}},
		{"users broadcast", true, []string{"native"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rules := laravelRules
			if tt.broadcast {
				rules += "  - !BROADCAST\n    tables: [users]\n"
			}
			e := startEnv(t, envOptions{rules: rules, databases: "laravel"})
			t.Cleanup(func() { e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS laravel_ref") })
			for _, prepares := range tt.prepares {
				t.Run(prepares, func(t *testing.T) { testLaravel(t, e, php, prepares, tt.broadcast) })
			}
		})
	}
}

// testLaravel runs the application with PDO's prepares native or
// emulated, users broadcast or not.
func testLaravel(t *testing.T, e *testEnv, php, prepares string, broadcast bool) {
	e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS laravel_ref", "CREATE DATABASE laravel_ref")
	run := func(host, port, user, password, db string) []string {
		t.Helper()
		cmd := exec.Command(php, filepath.Join("testdata", "laravel", "laravel_app.php"), host, port, user, password, db, prepares)
		return appOutput(t, cmd, host+":"+port, true)
	}
	want := run(e.backends[0].Host(), fmt.Sprint(e.backends[0].Port()), "root", "", "laravel_ref")
	referencePrinted(t, "the application", want,
		`has tables | [true,true,true,false]`,
		`ids | [true,true,true,true,true,true,true,true,true,true,true,true]`,
		`update or insert | [true,true,["ada lovelace","bob","cy","dee","eve adams","fay","gus","kim"]]`,
		`transaction rollback | ["changed my mind",0,0,0,0,`,
		`duplicate email | ["duplicate","23000","23000",1062,`,
	)
	host, port, _ := strings.Cut(e.addr, ":")
	got := run(host, port, "app", "app-secret", "sharding_db")
	sameSteps(t, got, want)

	// Where the proxy put the rows: each order and item on the data node
	// of its user; the migrations table on ds_0 only, and users there
	// only or, broadcast, the same rows on each data source.
	var orders, items int
	var users [][]string
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
		tables := queryStrings(t, e.backend(t, i), "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name IN ('users', 'migrations') ORDER BY 1")
		want := map[bool][]string{true: {"migrations", "users"}, false: nil}[i == 0]
		if broadcast && i > 0 {
			want = []string{"users"}
		}
		if !slices.Equal(tables, want) {
			t.Errorf("ds_%d holds %q of users and migrations, want %q", i, tables, want)
		}
		if slices.Contains(tables, "users") {
			users = append(users, queryStrings(t, e.backend(t, i), "SELECT id, name, email FROM users ORDER BY id"))
		}
	}
	if orders == 0 || items == 0 {
		t.Errorf("the data nodes hold %d orders and %d items", orders, items)
	}
	for i := 1; i < len(users); i++ {
		if !slices.Equal(users[i], users[0]) {
			t.Errorf("the broadcast users differ:\nds_0 %q\nds_%d %q", users[0], i, users[i])
		}
	}

	// What the application avoids, as SQL Laravel writes it:
	// User::whereHas('orders') and User::has('orders'), whose subqueries
	// on orders over every data node are correlated with users; and,
	// while users lies on the default data source only, a foreign key
	// from orders to it, Order::whereHas('user'), and a join of orders
	// with users where the orders lie on another data source (user 1's on
	// ds_1). The proxy refuses each with 1235, changing nothing, and the
	// connection stays usable. With users broadcast, the last three work
	// as on MariaDB.
	db := e.open(t)
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ref := e.backends[0].Open(t, "laravel_ref")
	// The foreign key needs every order's user: the orders of users that
	// are gone (or never were) go first, on both.
	userIDs := strings.Join(queryStrings(t, ref, "SELECT id FROM users"), ",")
	execBoth(t, db, ref, "delete from `orders` where `user_id` not in ("+userIDs+")")
	for _, tt := range []struct {
		give      string
		broadcast bool // works with users broadcast
	}{
		{"select count(*) from `users` where exists (select * from `orders` where `users`.`id` = `orders`.`user_id` and `orders`.`deleted_at` is null)", false},
		{"select count(*) from `users` where (select count(*) from `orders` where `users`.`id` = `orders`.`user_id` and `orders`.`deleted_at` is null) >= 1", false},
		{"select count(*) from `orders` where exists (select * from `users` where `orders`.`user_id` = `users`.`id` and `name` = 'bob') and `orders`.`deleted_at` is null", true},
		{"select count(*) from `orders` inner join `users` on `users`.`id` = `orders`.`user_id` where `orders`.`user_id` = 1", true},
		{"alter table `orders` add constraint `orders_user_id_foreign` foreign key (`user_id`) references `users` (`id`)", true},
	} {
		var n, want int
		var err error
		if strings.HasPrefix(tt.give, "alter") {
			_, err = conn.ExecContext(t.Context(), tt.give)
			if _, rerr := ref.Exec(tt.give); rerr != nil {
				t.Fatalf("%s on MariaDB: %v", tt.give, rerr)
			}
		} else {
			err = conn.QueryRowContext(t.Context(), tt.give).Scan(&n)
			if rerr := ref.QueryRow(tt.give).Scan(&want); rerr != nil {
				t.Fatalf("%s on MariaDB: %v", tt.give, rerr)
			}
		}
		switch {
		case broadcast && tt.broadcast:
			if err != nil || n != want {
				t.Errorf("%s through the proxy: %d, %v; on MariaDB %d", tt.give, n, err, want)
			}
		default:
			var myErr *mysql.MySQLError
			if !errors.As(err, &myErr) || myErr.Number != 1235 {
				t.Errorf("%s through the proxy: %v, want 1235", tt.give, err)
			}
		}
	}
	var n int
	if err := conn.QueryRowContext(t.Context(), "select count(*) from information_schema.table_constraints where table_name = 'orders' and constraint_type = 'FOREIGN KEY'").Scan(&n); err != nil || n != map[bool]int{true: 1, false: 0}[broadcast] {
		t.Errorf("after the foreign key to users: orders has %d foreign keys, %v", n, err)
	}
	if err := conn.QueryRowContext(t.Context(), "select count(*) from users").Scan(&n); err != nil || n == 0 {
		t.Errorf("after the 1235s: %d users, %v", n, err)
	}
}
