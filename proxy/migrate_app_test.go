package proxy

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/golang-migrate/migrate/v4"
	"github.com/golang-migrate/migrate/v4/database"
	_ "github.com/golang-migrate/migrate/v4/database/mysql"
	_ "github.com/golang-migrate/migrate/v4/source/file"
)

// A golang-migrate application: its mysql driver over go-sql-driver/mysql
// with multiStatements, the migrations in proxy/testdata/migrate (a table
// without rules, the sharded t_order whose key the proxy generates, the
// broadcast t_dict; a column and an index added; a migration that fails
// half way), run up, forced, down and dropped as the migrate command
// runs them, under its GET_LOCK advisory lock; the application between
// the migrations uses database/sql.

// migrateError is what a migration's error says: golang-migrate's own
// errors as they are, a statement's error by its MySQL number.
func migrateError(err error) string {
	var dbErr database.Error
	if errors.As(err, &dbErr) {
		return fmt.Sprintf("%s: %d", dbErr.Err, errCode(dbErr.OrigErr))
	}
	return fmt.Sprint(err)
}

// migrateApp runs the application: url is the migrate command's
// database URL, db the application's own pool on the same database.
func migrateApp(t *testing.T, url string, db *sql.DB, dbName string) []string {
	t.Helper()
	ctx := context.Background()
	app := &stepLog{t: t}
	say, must, rows := app.say, app.must, app.rows
	open := func() *migrate.Migrate {
		t.Helper()
		m, err := migrate.New("file://testdata/migrate", url)
		must("open", err)
		t.Cleanup(func() { m.Close() })
		return m
	}
	version := func(m *migrate.Migrate) string {
		t.Helper()
		v, dirty, err := m.Version()
		if errors.Is(err, migrate.ErrNilVersion) {
			return "none"
		}
		must("version", err)
		return fmt.Sprintf("%d dirty %v", v, dirty)
	}
	tableList := func() string {
		t.Helper()
		var names []string
		r, err := db.Query("SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY table_name")
		must("tables", err)
		defer r.Close()
		for r.Next() {
			var n string
			must("table", r.Scan(&n))
			names = append(names, n)
		}
		must("tables", r.Err())
		return strings.Join(names, " ")
	}
	orderSchema := func() string {
		t.Helper()
		var cols, idx string
		must("columns", db.QueryRow("SELECT GROUP_CONCAT(column_name ORDER BY ordinal_position) FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = 't_order'").Scan(&cols))
		must("indexes", db.QueryRow("SELECT GROUP_CONCAT(DISTINCT index_name ORDER BY index_name) FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = 't_order'").Scan(&idx))
		return fmt.Sprintf("columns %s; indexes %s", cols, idx)
	}

	m := open()
	say("version at first: %s", version(m))
	// Up stops at migration 3: its first statement ran, its second failed
	// on every data node.
	err := m.Up()
	say("up: %s", migrateError(err))
	say("version: %s; %s", version(m), orderSchema())
	err = m.Up()
	say("up again: %v", err)
	// What a user does about it: force the version the database is at,
	// then run 3's down migration, which undoes its first statement.
	must("force", m.Force(3))
	must("steps -1", m.Steps(-1))
	say("forced and down: %s; %s", version(m), orderSchema())
	say("migrate to 2: %v", m.Migrate(2))
	say("tables: %s", tableList())

	// The lock: held by another connection, golang-migrate waits its 10
	// seconds for GET_LOCK and gives up; two at once take turns.
	lockID, err := database.GenerateAdvisoryLockId(dbName + ":schema_migrations")
	must("lock id", err)
	waiter := open() // opening takes the lock too, to create schema_migrations
	holder, err := db.Conn(ctx)
	must("holder", err)
	var got sql.NullInt64
	must("get lock", holder.QueryRowContext(ctx, "SELECT GET_LOCK(?, 0)", lockID).Scan(&got))
	say("held elsewhere: %v", got)
	say("migrate to 1 while held: %v", waiter.Migrate(1))
	must("release", holder.QueryRowContext(ctx, "SELECT RELEASE_LOCK(?)", lockID).Scan(&got))
	say("released: %v", got)
	holder.Close()
	var wg sync.WaitGroup
	results := make([]string, 2)
	for i, m := range []*migrate.Migrate{open(), open()} {
		wg.Go(func() { results[i] = fmt.Sprint(m.Migrate(1)) })
	}
	wg.Wait()
	slices.Sort(results)
	say("two at once to 1: %v; %s; %s", results, version(m), orderSchema())
	must("up to 2", m.Migrate(2))
	say("up to 2: %s; %s", version(m), orderSchema())

	// The application at version 2.
	var users []int64
	for _, name := range []string{"ann", "bob", "cyd"} {
		res, err := db.Exec("INSERT INTO migrate_users (name) VALUES (?)", name)
		must("user", err)
		id, err := res.LastInsertId()
		must("user id", err)
		users = append(users, id)
	}
	say("users: %v", users)
	var values []string
	var args []any
	for _, u := range users {
		for o := range int64(4) {
			values = append(values, "(?, ?, ?)")
			args = append(args, u, []string{"new", "paid", "sent", "new"}[o], u*10+o)
		}
	}
	res, err := db.Exec("INSERT INTO t_order (user_id, status, amount) VALUES "+strings.Join(values, ", "), args...)
	must("orders", err)
	first, err := res.LastInsertId()
	must("first id", err)
	var inserted int64
	ids := make([]any, 0, len(values))
	for i := range int64(len(values)) {
		ids = append(ids, first+i)
	}
	must("read back", db.QueryRow("SELECT COUNT(*) FROM t_order WHERE order_id IN (?"+strings.Repeat(", ?", len(ids)-1)+")", ids...).Scan(&inserted))
	say("orders: %d rows, %d read back by the ids after LastInsertId", rows("orders")(res, nil), inserted)
	var amount int
	var status string
	must("by key", db.QueryRow("SELECT status, amount FROM t_order WHERE order_id = ?", first+5).Scan(&status, &amount))
	say("order first+5: %s %d", status, amount)
	page, err := db.Query("SELECT o.user_id, o.amount, d.id FROM t_order o JOIN t_dict d ON d.label = o.status WHERE o.status <> ? ORDER BY o.amount DESC LIMIT 3 OFFSET 2", "sent")
	must("page", err)
	for page.Next() {
		var u, a, d int
		must("page row", page.Scan(&u, &a, &d))
		say("page: user %d amount %d dict %d", u, a, d)
	}
	must("page", page.Err())
	page.Close()
	agg, err := db.Query("SELECT user_id, COUNT(*), SUM(amount), MIN(status), AVG(amount) FROM t_order GROUP BY user_id HAVING SUM(amount) > ? ORDER BY user_id", 10)
	must("aggregate", err)
	for agg.Next() {
		var u, n, sum int
		var minStatus, avg string
		must("aggregate row", agg.Scan(&u, &n, &sum, &minStatus, &avg))
		say("user %d: %d orders, sum %d, min %s, avg %s", u, n, sum, minStatus, avg)
	}
	must("aggregate", agg.Err())
	agg.Close()

	tx, err := db.Begin()
	must("begin", err)
	say("commit: %d updated, %d noted", rows("update")(tx.Exec("UPDATE t_order SET status = 'sent' WHERE user_id = ? AND status = 'paid'", users[0])),
		rows("note")(tx.Exec("UPDATE t_order SET note = 'rush' WHERE amount >= ?", 32)))
	must("commit", tx.Commit())
	tx, err = db.Begin()
	must("begin", err)
	say("rollback: %d deleted, %d dictionary rows", rows("delete")(tx.Exec("DELETE FROM t_order WHERE user_id = ?", users[1])),
		rows("dict")(tx.Exec("DELETE FROM t_dict WHERE id = 3")))
	must("rollback", tx.Rollback())
	var sent, noted, dict int
	must("after", db.QueryRow("SELECT SUM(status = 'sent'), COUNT(note), (SELECT COUNT(*) FROM t_dict) FROM t_order").Scan(&sent, &noted, &dict))
	say("after transactions: %d sent, %d noted, %d in the dictionary", sent, noted, dict)
	_, err = db.Exec("INSERT INTO migrate_users (name) VALUES ('bob')")
	say("duplicate: %d %v", errCode(err), err)
	_, err = db.Exec("INSERT INTO t_order (order_id, user_id, status, amount) VALUES (?, ?, 'new', 1)", first, users[0])
	say("duplicate order: %d", errCode(err))

	// Down, all of it, and drop.
	must("down one", m.Steps(-1))
	say("down one: %s; %s", version(m), orderSchema())
	must("down", m.Down())
	say("down: %s; tables %s", version(m), tableList())
	must("drop", m.Drop())
	say("dropped: tables %q", tableList())
	return app.out
}

// TestGolangMigrateApplication runs the golang-migrate application
// through the proxy and against MariaDB directly and requires the same
// transcript. schema_migrations has no rules: it and the advisory lock
// live on the default data source.
func TestGolangMigrateApplication(t *testing.T) {
	e := startEnv(t, envOptions{databases: "migrateapp"})
	refDatabase(t, e.backends[0], "migrate_ref")
	directDSN := e.backends[0].DSN("migrate_ref")
	direct, err := sql.Open("mysql", directDSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { direct.Close() })
	withParam := func(dsn string) string {
		if strings.Contains(dsn, "?") {
			return "mysql://" + dsn + "&multiStatements=true"
		}
		return "mysql://" + dsn + "?multiStatements=true"
	}
	want := migrateApp(t, withParam(directDSN), direct, "migrate_ref")
	if !slices.Contains(want, "up: migration failed: 1072") || !slices.Contains(want, "migrate to 1 while held: can't acquire lock") {
		t.Fatalf("directly on MariaDB the application printed\n%s\nwithout the failed migration or the lock", strings.Join(want, "\n"))
	}
	got := migrateApp(t, withParam(e.dsn("app", "app-secret")), e.open(t), "sharding_db")
	sameSteps(t, got, want)
}
