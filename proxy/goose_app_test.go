package proxy

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/pressly/goose/v3"
)

// A goose application: goose's Provider over database/sql with the
// MySQL dialect and the SQL migrations of proxy/testdata/goose (a table
// without rules, the sharded t_order whose key the proxy generates, the
// broadcast t_dict; a trigger between StatementBegin and StatementEnd; a
// column and an index; a migration whose duplicate key rolls back its
// transaction), run up, down and to a version, with the application's
// own statements between.

// gooseResults is what a run of migrations did, one version a result.
func gooseResults(results []*goose.MigrationResult) string {
	var parts []string
	for _, r := range results {
		parts = append(parts, fmt.Sprintf("%d %s", r.Source.Version, r.Direction))
	}
	return fmt.Sprintf("[%s]", strings.Join(parts, ", "))
}

// gooseApp runs the application on db and returns what it saw, one line
// a step.
func gooseApp(t *testing.T, db *sql.DB) []string {
	t.Helper()
	ctx := context.Background()
	app := &stepLog{t: t}
	say, must, rows := app.say, app.must, app.rows
	p, err := goose.NewProvider(goose.DialectMySQL, db, os.DirFS("testdata/goose"))
	must("provider", err)
	status := func() string {
		t.Helper()
		list, err := p.Status(ctx)
		must("status", err)
		var parts []string
		for _, s := range list {
			parts = append(parts, fmt.Sprintf("%d %s", s.Source.Version, s.State))
		}
		v, err := p.GetDBVersion(ctx)
		must("version", err)
		return fmt.Sprintf("version %d: %s", v, strings.Join(parts, ", "))
	}
	scalar := func(query string, args ...any) string {
		t.Helper()
		var s sql.NullString
		must(query, db.QueryRow(query, args...).Scan(&s))
		return s.String
	}

	say("%s", status())
	results, err := p.UpTo(ctx, 3)
	must("up to 3", err)
	say("up to 3: %s; %s", gooseResults(results), status())
	results, err = p.UpTo(ctx, 3)
	must("up to 3 again", err)
	say("up to 3 again: %s", gooseResults(results))
	pending, err := p.HasPending(ctx)
	must("pending", err)
	say("pending: %v", pending)
	// Migration 4 fails on its second statement; its transaction takes
	// the first one back.
	results, err = p.Up(ctx)
	var partial *goose.PartialError
	if errors.As(err, &partial) {
		say("up: applied %s, failed %d: %d", gooseResults(partial.Applied), partial.Failed.Source.Version, errCode(partial.Failed.Error))
	} else {
		say("up: %s %v", gooseResults(results), err)
	}
	say("after the failure: %s; dictionary %s", status(), scalar("SELECT GROUP_CONCAT(label ORDER BY id) FROM t_dict"))
	say("tables: %s", scalar("SELECT GROUP_CONCAT(table_name ORDER BY table_name) FROM information_schema.tables WHERE table_schema = DATABASE()"))
	say("t_order: %s; %s", scalar("SELECT GROUP_CONCAT(column_name ORDER BY ordinal_position) FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = 't_order'"),
		scalar("SELECT GROUP_CONCAT(DISTINCT index_name ORDER BY index_name) FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = 't_order'"))

	// The application at version 3. The trigger lower-cases the names and
	// refuses an empty one.
	var users []int64
	for _, name := range []string{" Ann", "BOB ", "Cyd"} {
		res, err := db.Exec("INSERT INTO goose_users (name) VALUES (?)", name)
		must("user", err)
		id, err := res.LastInsertId()
		must("user id", err)
		users = append(users, id)
	}
	say("users %v: %s", users, scalar("SELECT GROUP_CONCAT(name ORDER BY id) FROM goose_users"))
	_, err = db.Exec("INSERT INTO goose_users (name) VALUES ('  ')")
	say("empty name: %d %v", errCode(err), err)
	_, err = db.Exec("INSERT INTO goose_users (name) VALUES ('bob')")
	say("duplicate: %d %v", errCode(err), err)
	stmt, err := db.Prepare("INSERT INTO t_order (user_id, status, amount) VALUES (?, ?, ?)")
	must("prepare", err)
	defer stmt.Close()
	var ids []any
	for _, u := range users {
		for o := range int64(3) {
			res, err := stmt.Exec(u, []string{"new", "paid", "sent"}[o], u*100+o)
			must("order", err)
			id, err := res.LastInsertId()
			must("order id", err)
			ids = append(ids, id)
		}
	}
	distinct := map[any]bool{}
	for _, id := range ids {
		distinct[id] = true
	}
	say("orders: %d distinct ids, %s read back", len(distinct),
		scalar("SELECT COUNT(*) FROM t_order WHERE order_id IN (?"+strings.Repeat(", ?", len(ids)-1)+")", ids...))
	say("order 4: %s", scalar("SELECT CONCAT(user_id, '/', status, '/', amount) FROM t_order WHERE order_id = ?", ids[4]))
	// The page is read row by row: a derived table over every data node
	// (SELECT GROUP_CONCAT(...) FROM (SELECT ... LIMIT 2 OFFSET 1) p) is
	// refused with 1235.
	r, err := db.Query("SELECT amount FROM t_order WHERE status IN ('new', 'sent') ORDER BY amount DESC LIMIT 2 OFFSET 1")
	must("page", err)
	var page []int
	for r.Next() {
		var amount int
		must("page row", r.Scan(&amount))
		page = append(page, amount)
	}
	must("page", r.Err())
	r.Close()
	say("page: %v", page)
	r, err = db.Query("SELECT status, COUNT(*), SUM(amount), MAX(amount) FROM t_order GROUP BY status ORDER BY status")
	must("aggregate", err)
	for r.Next() {
		var status string
		var n, sum, top int
		must("aggregate row", r.Scan(&status, &n, &sum, &top))
		say("%s: %d orders, sum %d, max %d", status, n, sum, top)
	}
	must("aggregate", r.Err())
	r.Close()
	tx, err := db.BeginTx(ctx, nil)
	must("begin", err)
	say("commit: %d noted", rows("note")(tx.Exec("UPDATE t_order SET note = 'gift' WHERE user_id = ? OR amount = ?", users[0], 302)))
	must("commit", tx.Commit())
	tx, err = db.BeginTx(ctx, nil)
	must("begin", err)
	say("rollback: %d deleted", rows("delete")(tx.Exec("DELETE FROM t_order WHERE status = 'paid'")))
	must("rollback", tx.Rollback())
	say("after transactions: %s noted, %s orders", scalar("SELECT COUNT(note) FROM t_order"), scalar("SELECT COUNT(*) FROM t_order"))

	// Down one, then all the way, then up to 3 again.
	result, err := p.Down(ctx)
	must("down", err)
	say("down: %d %s; %s; t_order %s", result.Source.Version, result.Direction, status(),
		scalar("SELECT GROUP_CONCAT(column_name ORDER BY ordinal_position) FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = 't_order'"))
	results, err = p.DownTo(ctx, 0)
	must("down to 0", err)
	say("down to 0: %s; %s; tables %s", gooseResults(results), status(),
		scalar("SELECT GROUP_CONCAT(table_name) FROM information_schema.tables WHERE table_schema = DATABASE()"))
	results, err = p.UpTo(ctx, 3)
	must("up to 3", err)
	say("up to 3: %s; %s; triggers %s", gooseResults(results), status(),
		scalar("SELECT GROUP_CONCAT(trigger_name) FROM information_schema.triggers WHERE trigger_schema = DATABASE()"))
	var versions []string
	r, err = db.Query("SELECT version_id, is_applied FROM goose_db_version ORDER BY id")
	must("versions", err)
	for r.Next() {
		var v int64
		var applied bool
		must("version row", r.Scan(&v, &applied))
		versions = append(versions, fmt.Sprintf("%d:%v", v, applied))
	}
	must("versions", r.Err())
	r.Close()
	say("goose_db_version: %v", versions)
	return app.out
}

// TestGooseApplication runs the goose application through the proxy and
// against MariaDB directly and requires the same transcript.
// goose_db_version has no rules: it lives on the default data source, as
// do the trigger and the table it is on. A trigger on a sharded table
// would be refused (1235).
func TestGooseApplication(t *testing.T) {
	// Migration 2 creates a trigger: as on MariaDB, where the account
	// needs the TRIGGER privilege, the proxy's user needs otherSchemas
	// (a trigger runs with the backend account's rights).
	e := startEnv(t, envOptions{databases: "gooseapp", server: "users: [{ user: app, password: app-secret, otherSchemas: true }]"})
	refDatabase(t, e.backends[0], "goose_ref")
	// goose reads goose_db_version's tstamp into a time.Time.
	direct, err := sql.Open("mysql", e.backends[0].DSN("goose_ref")+"&parseTime=true")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { direct.Close() })
	want := gooseApp(t, direct)
	if !slices.Contains(want, "up: applied [], failed 4: 1062") {
		t.Fatalf("directly on MariaDB the application printed\n%s\nwithout the failed migration", strings.Join(want, "\n"))
	}
	got := gooseApp(t, e.open(t, "parseTime=true"))
	sameSteps(t, got, want)
}
