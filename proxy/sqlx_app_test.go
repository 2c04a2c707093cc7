package proxy

import (
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
)

// A small sqlx application, written as sqlx's documentation writes one:
// hand-written SQL with ? placeholders, structs with db tags, NamedExec
// bulk inserts, Get/Select, In() for IN lists, prepared statements and
// transactions, over a DSN with parseTime=true. Users (a table without
// rules, on the default data source) have orders (t_order, sharded),
// orders have items (t_order_item, bound to t_order). It runs through the
// proxy and against one MariaDB database, and the two transcripts must be
// equal.

var sqlxSchema = []string{
	"DROP TABLE IF EXISTS t_order_item",
	"DROP TABLE IF EXISTS t_order",
	"DROP TABLE IF EXISTS sqlx_users",
	`CREATE TABLE sqlx_users (
		id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
		name VARCHAR(32) NOT NULL UNIQUE,
		email VARCHAR(64) NULL,
		created_at DATETIME NOT NULL,
		last_login DATETIME(3) NULL
	)`,
	`CREATE TABLE t_order (
		order_id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
		user_id BIGINT NOT NULL,
		status VARCHAR(16) NOT NULL DEFAULT 'new',
		note VARCHAR(64) NULL,
		placed_at DATETIME NOT NULL,
		amount DECIMAL(10,2) NOT NULL DEFAULT 0,
		KEY idx_user (user_id)
	)`,
	`CREATE TABLE t_order_item (
		item_id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
		order_id BIGINT NOT NULL,
		user_id BIGINT NOT NULL,
		qty INT NOT NULL,
		price DECIMAL(10,2) NOT NULL
	)`,
}

type sqlxUser struct {
	ID        int64          `db:"id"`
	Name      string         `db:"name"`
	Email     sql.NullString `db:"email"`
	CreatedAt time.Time      `db:"created_at"`
	LastLogin sql.NullTime   `db:"last_login"`
}

type sqlxOrder struct {
	OrderID  int64          `db:"order_id"`
	UserID   int64          `db:"user_id"`
	Status   string         `db:"status"`
	Note     sql.NullString `db:"note"`
	PlacedAt time.Time      `db:"placed_at"`
	Amount   string         `db:"amount"`
}

type sqlxItem struct {
	ItemID  int64  `db:"item_id"`
	OrderID int64  `db:"order_id"`
	UserID  int64  `db:"user_id"`
	Qty     int    `db:"qty"`
	Price   string `db:"price"`
}

// sqlxItemWithOrder is a row of the join of items and their orders:
// sqlx fills the embedded order from columns named "order.<column>".
type sqlxItemWithOrder struct {
	sqlxItem
	Order sqlxOrder `db:"order"`
}

func (o sqlxOrder) String() string {
	note := "-"
	if o.Note.Valid {
		note = o.Note.String
	}
	return fmt.Sprintf("%d/%d/%s/%s/%s/%s", o.OrderID, o.UserID, o.Status, note, o.PlacedAt.UTC().Format(time.DateTime), o.Amount)
}

// sqlxApp runs the application on db and returns what it saw, one line a
// step.
func sqlxApp(t *testing.T, db *sqlx.DB, multi bool) []string {
	t.Helper()
	app := &stepLog{t: t}
	say, must, rows := app.say, app.must, app.rows
	if multi {
		// As sqlx's README loads its schema: one Exec of several
		// statements.
		db.MustExec(strings.Join(sqlxSchema, ";\n"))
	} else {
		for _, q := range sqlxSchema {
			db.MustExec(q)
		}
	}

	// NamedExec with a slice: one multi-row INSERT. Users take their
	// keys from AUTO_INCREMENT; LastInsertId is the first.
	created := time.Date(2026, 1, 15, 8, 0, 0, 0, time.UTC)
	users := []sqlxUser{
		{Name: "ann", Email: sql.NullString{String: "ann@example.org", Valid: true}, CreatedAt: created},
		{Name: "bob", CreatedAt: created.Add(time.Hour)},
		{Name: "cyd", Email: sql.NullString{String: "cyd@example.org", Valid: true}, CreatedAt: created.Add(2 * time.Hour)},
		{Name: "dee", CreatedAt: created.Add(3 * time.Hour)},
	}
	res, err := db.NamedExec("INSERT INTO sqlx_users (name, email, created_at) VALUES (:name, :email, :created_at)", users)
	must("insert users", err)
	first, err := res.LastInsertId()
	must("insert users", err)
	say("users: %d rows, first id %d", rows("insert users")(res, nil), first)
	var orders []sqlxOrder
	var items []sqlxItem
	placed := time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)
	for u := int64(1); u <= 4; u++ {
		for o := range int64(3) {
			oid := u*100 + o
			order := sqlxOrder{OrderID: oid, UserID: u, Status: "new", PlacedAt: placed.Add(time.Duration(oid) * time.Hour), Amount: fmt.Sprintf("%d.%02d", oid, u*7)}
			if o == 1 {
				order.Note = sql.NullString{String: "gift", Valid: true}
			}
			orders = append(orders, order)
			for i := range int64(2) {
				items = append(items, sqlxItem{ItemID: oid*10 + i, OrderID: oid, UserID: u, Qty: int(o + i + 1), Price: fmt.Sprintf("%d.50", i+2)})
			}
		}
	}
	say("orders: %d rows, items: %d rows",
		rows("insert orders")(db.NamedExec("INSERT INTO t_order (order_id, user_id, status, note, placed_at, amount) VALUES (:order_id, :user_id, :status, :note, :placed_at, :amount)", orders)),
		rows("insert items")(db.NamedExec("INSERT INTO t_order_item (item_id, order_id, user_id, qty, price) VALUES (:item_id, :order_id, :user_id, :qty, :price)", items)))

	// Without keys: the proxy's key generator fills them (MariaDB its
	// AUTO_INCREMENT), consecutive, the first in LastInsertId; In()
	// expands the keys to look the rows up.
	fresh := []sqlxOrder{{UserID: 1, Status: "gen a", PlacedAt: placed}, {UserID: 2, Status: "gen b", PlacedAt: placed}, {UserID: 3, Status: "gen c", PlacedAt: placed}}
	res, err = db.NamedExec("INSERT INTO t_order (user_id, status, placed_at) VALUES (:user_id, :status, :placed_at)", fresh)
	must("insert generated", err)
	key, err := res.LastInsertId()
	must("insert generated", err)
	keys := []int64{key, key + 1, key + 2}
	query, args, err := sqlx.In("SELECT status FROM t_order WHERE order_id IN (?) ORDER BY order_id", keys)
	must("in generated", err)
	var statuses []string
	must("select generated", db.Select(&statuses, db.Rebind(query), args...))
	say("generated: %d rows, key given %v, rows by key %v", rows("insert generated")(res, nil), key != 0, statuses)
	query, args, err = sqlx.In("DELETE FROM t_order WHERE order_id IN (?)", keys)
	must("in delete", err)
	say("deleted generated: %d rows", rows("delete generated")(db.Exec(db.Rebind(query), args...)))

	// Get and Select into structs: NULLs, times, decimals.
	for _, id := range []int64{1, 2} {
		var u sqlxUser
		must("get user", db.Get(&u, "SELECT * FROM sqlx_users WHERE id = ?", id))
		say("user %d %s email %v %q created %s last login %v", u.ID, u.Name, u.Email.Valid, u.Email.String, u.CreatedAt.Format(time.RFC3339), u.LastLogin.Valid)
	}
	var page []sqlxOrder
	must("page", db.Select(&page, "SELECT * FROM t_order WHERE status = ? ORDER BY placed_at DESC, order_id LIMIT ? OFFSET ?", "new", 4, 3))
	say("page: %v", page)
	var noted []sqlxOrder
	must("noted", db.Select(&noted, "SELECT * FROM t_order WHERE note IS NOT NULL AND placed_at BETWEEN ? AND ? ORDER BY order_id", placed.Add(150*time.Hour), placed.Add(350*time.Hour)))
	say("noted: %v", noted)

	// In() with several lists, and with a named query first.
	query, args, err = sqlx.In("SELECT * FROM t_order WHERE user_id IN (?) AND status IN (?) AND order_id <> ? ORDER BY order_id", []int64{1, 3}, []string{"new", "paid"}, 101)
	must("in", err)
	var some []sqlxOrder
	must("select in", db.Select(&some, db.Rebind(query), args...))
	say("in: %v", some)
	query, args, err = sqlx.Named("SELECT item_id, qty FROM t_order_item WHERE order_id IN (:orders) AND qty >= :min ORDER BY item_id", map[string]any{"orders": []int64{100, 201, 302}, "min": 2})
	must("named", err)
	query, args, err = sqlx.In(query, args...)
	must("named in", err)
	var few []sqlxItem
	must("select named in", db.Select(&few, db.Rebind(query), args...))
	var ids []int64
	for _, it := range few {
		ids = append(ids, it.ItemID)
	}
	say("named in: %v", ids)

	// Prepared statements: Preparex, and a named one.
	stmt, err := db.Preparex("SELECT * FROM t_order WHERE user_id = ? AND order_id = ?")
	must("prepare", err)
	defer stmt.Close()
	for _, k := range [][2]int64{{1, 100}, {2, 201}, {4, 402}} {
		var o sqlxOrder
		must("prepared get", stmt.Get(&o, k[0], k[1]))
		say("prepared: %v", o)
	}
	var o sqlxOrder
	say("prepared missing: %v", errors.Is(stmt.Get(&o, 1, 999), sql.ErrNoRows))
	named, err := db.PrepareNamed("SELECT * FROM t_order_item WHERE user_id = :user_id AND qty > :qty ORDER BY item_id DESC LIMIT 3")
	must("prepare named", err)
	defer named.Close()
	var top []sqlxItem
	must("named select", named.Select(&top, map[string]any{"user_id": 3, "qty": 1}))
	say("named prepared: %+v", top)

	// A join of the binding tables into a struct with an embedded one,
	// and aggregates.
	var joined []sqlxItemWithOrder
	must("join", db.Select(&joined, "SELECT i.*, o.order_id AS `order.order_id`, o.user_id AS `order.user_id`, o.status AS `order.status`, "+
		"o.note AS `order.note`, o.placed_at AS `order.placed_at`, o.amount AS `order.amount` "+
		"FROM t_order_item i JOIN t_order o ON o.order_id = i.order_id WHERE i.user_id = ? ORDER BY i.item_id", 2))
	for _, j := range joined {
		say("item %d qty %d of %v", j.ItemID, j.Qty, j.Order)
	}
	var perUser []struct {
		UserID int64  `db:"user_id"`
		N      int    `db:"n"`
		Qty    int    `db:"qty"`
		Value  string `db:"value"`
	}
	must("group", db.Select(&perUser, "SELECT user_id, COUNT(*) AS n, SUM(qty) AS qty, SUM(qty * price) AS value FROM t_order_item GROUP BY user_id HAVING SUM(qty) > ? ORDER BY user_id", 0))
	say("per user: %+v", perUser)
	var stats struct {
		N     int            `db:"n"`
		Total string         `db:"total"`
		First time.Time      `db:"first"`
		Last  time.Time      `db:"last"`
		Notes sql.NullString `db:"notes"`
	}
	must("stats", db.Get(&stats, "SELECT COUNT(*) AS n, SUM(amount) AS total, MIN(placed_at) AS first, MAX(placed_at) AS last, MAX(note) AS notes FROM t_order"))
	say("stats: %d %s %s %s %v", stats.N, stats.Total, stats.First.Format(time.RFC3339), stats.Last.Format(time.RFC3339), stats.Notes)

	// Rows one at a time: StructScan, MapScan.
	qrows, err := db.Queryx("SELECT * FROM sqlx_users WHERE email IS NULL ORDER BY id")
	must("queryx", err)
	for qrows.Next() {
		var u sqlxUser
		must("struct scan", qrows.StructScan(&u))
		say("no email: %d %s", u.ID, u.Name)
	}
	must("queryx", qrows.Err())
	m := map[string]any{}
	must("map scan", db.QueryRowx("SELECT order_id, status, note, amount FROM t_order WHERE user_id = ? AND order_id = ?", 3, 301).MapScan(m))
	var fields []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fields = append(fields, fmt.Sprintf("%s=%s", k, sqlxValue(m[k])))
	}
	say("map scan: %s", strings.Join(fields, " "))

	// time.Time and NULL parameters.
	login := time.Date(2026, 4, 2, 17, 45, 12, 345_000_000, time.UTC)
	say("login: %d rows", rows("login")(db.Exec("UPDATE sqlx_users SET last_login = ?, email = ? WHERE id = ?", login, sql.NullString{}, 1)))
	var u sqlxUser
	must("reload user", db.Get(&u, "SELECT * FROM sqlx_users WHERE name = ?", "ann"))
	say("after login: email %v last login %s", u.Email.Valid, u.LastLogin.Time.Format(time.RFC3339Nano))

	// Updates that change nothing (0 rows; with clientFoundRows the
	// rows matched), and one over every data node.
	say("same values: %d rows", rows("same values")(db.Exec("UPDATE t_order SET status = ? WHERE user_id = ?", "new", 4)))
	say("notes: %d rows", rows("notes")(db.Exec("UPDATE t_order SET note = ? WHERE note IS NULL AND amount > ?", "big", "300")))

	// Transactions: one commits, one rolls back.
	tx, err := db.Beginx()
	must("begin", err)
	say("tx update: %d rows", rows("tx update")(tx.Exec("UPDATE t_order SET status = ? WHERE user_id = ? AND order_id = ?", "paid", 2, 200)))
	say("tx insert: %d rows", rows("tx insert")(tx.NamedExec("INSERT INTO t_order_item (item_id, order_id, user_id, qty, price) VALUES (:item_id, :order_id, :user_id, :qty, :price)",
		[]sqlxItem{{ItemID: 5000, OrderID: 200, UserID: 2, Qty: 7, Price: "1.25"}, {ItemID: 5001, OrderID: 301, UserID: 3, Qty: 8, Price: "2.25"}})))
	txStmt := tx.Stmtx(stmt)
	var inTx sqlxOrder
	must("tx prepared", txStmt.Get(&inTx, 2, 200))
	var n int
	must("tx count", tx.Get(&n, "SELECT COUNT(*) FROM t_order_item WHERE order_id = ?", 200))
	say("in the transaction: %s, %d items", inTx.Status, n)
	must("commit", tx.Commit())
	tx = db.MustBegin()
	tx.MustExec("DELETE FROM t_order_item WHERE order_id = ?", 300)
	tx.MustExec("INSERT INTO t_order (order_id, user_id, status, placed_at) VALUES (?, ?, ?, ?)", 999, 1, "lost", placed)
	must("rollback count", tx.Get(&n, "SELECT COUNT(*) FROM t_order_item WHERE order_id = ?", 300))
	say("before rollback: items of order 300 %d", n)
	must("rollback", tx.Rollback())
	// Three queries: one SELECT of three scalar subqueries over every
	// data node is refused (1235, README: subqueries on sharded tables).
	var after struct {
		Status      string
		Items, Lost int
	}
	must("after status", db.Get(&after.Status, "SELECT status FROM t_order WHERE order_id = ?", 200))
	must("after items", db.Get(&after.Items, "SELECT COUNT(*) FROM t_order_item WHERE order_id = ?", 300))
	must("after lost", db.Get(&after.Lost, "SELECT COUNT(*) FROM t_order WHERE order_id = ?", 999))
	say("after transactions: %+v", after)

	// Errors: a duplicate key, an unknown column, a struct without a
	// column's field; the connection goes on.
	_, err = db.NamedExec("INSERT INTO sqlx_users (name, created_at) VALUES (:name, :created_at)", []sqlxUser{{Name: "eve", CreatedAt: created}, {Name: "bob", CreatedAt: created}})
	say("duplicate: %d %v", errCode(err), err)
	_, err = db.Exec("INSERT INTO t_order (order_id, user_id, placed_at) VALUES (?, ?, ?)", 100, 1, placed)
	say("duplicate order: %d %v", errCode(err), err)
	err = db.Select(&some, "SELECT nosuch FROM t_order WHERE user_id = ?", 1)
	say("unknown column: %d %v", errCode(err), err)
	var slim []struct {
		OrderID int64 `db:"order_id"`
	}
	err = db.Select(&slim, "SELECT order_id, status FROM t_order WHERE user_id = ? ORDER BY order_id", 1)
	say("missing field: %v", err)
	must("eve", db.Get(&n, "SELECT COUNT(*) FROM sqlx_users WHERE name = ?", "eve"))
	var total int
	must("total", db.Get(&total, "SELECT COUNT(*) FROM t_order_item"))
	say("eve %d, items %d", n, total)
	return app.out
}

// sqlxValue prints a value of MapScan: bytes as text.
func sqlxValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case []byte:
		return string(v)
	}
	return fmt.Sprint(v)
}

// TestSQLxApplication runs the sqlx application (over
// go-sql-driver/mysql with parseTime=true, and with the settings Go shops
// add: interpolateParams, multiStatements, clientFoundRows) through the
// proxy (users unsharded, orders sharded, items bound to orders) and
// against MariaDB directly, and requires the same transcript.
func TestSQLxApplication(t *testing.T) {
	e := startEnv(t, envOptions{rules: bindingTestRules})
	// Other tests list the shared data sources' tables.
	cleanup := e.open(t)
	t.Cleanup(func() { cleanup.Exec("DROP TABLE IF EXISTS t_order_item, sqlx_users") })
	refDatabase(t, e.backends[0], "sqlx_ref")
	connect := func(t *testing.T, dsn string) *sqlx.DB {
		db, err := sqlx.Connect("mysql", dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	for _, tt := range []struct {
		name, params string
		multi        bool
	}{
		{"parseTime", "parseTime=true", false},
		{"interpolateParams", "parseTime=true&interpolateParams=true&multiStatements=true&clientFoundRows=true", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			viaProxy := connect(t, e.dsn("app", "app-secret", tt.params))
			direct := connect(t, e.backends[0].DSN("sqlx_ref")+"&"+tt.params)
			want := sqlxApp(t, direct, tt.multi)
			got := sqlxApp(t, viaProxy, tt.multi)
			sameSteps(t, got, want)
			// The rows are where the rules put them.
			if got := landedItems(t, e)[5001]; got != "ds_1.t_order_item_1" {
				t.Errorf("item 5001 (order 301, user 3) is on %s", got)
			}
		})
	}
}
