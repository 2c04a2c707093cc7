package proxy

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/mysqldialect"
)

// A small bun application with bun's defaults: users (a table without
// rules, on the default data source) have orders (t_order, sharded),
// orders have items (t_order_item, bound to t_order). Keys are
// `pk,autoincrement`, so bun writes DEFAULT for a missing key and, as the
// server says MariaDB, reads keys back with INSERT ... RETURNING. It runs
// through the proxy and against one MariaDB database, and the two
// transcripts must be equal.

type bunUser struct {
	bun.BaseModel `bun:"table:bun_users,alias:u"`

	ID     int64       `bun:",pk,autoincrement"`
	Name   string      `bun:",notnull,unique"`
	Orders []*bunOrder `bun:"rel:has-many,join:id=user_id"`
}

type bunOrder struct {
	bun.BaseModel `bun:"table:t_order,alias:o"`

	OrderID int64      `bun:",pk,autoincrement"`
	UserID  int64      `bun:",notnull"`
	Status  string     `bun:",notnull"`
	Placed  time.Time  `bun:",notnull"`
	Items   []*bunItem `bun:"rel:has-many,join:order_id=order_id"`
}

type bunItem struct {
	bun.BaseModel `bun:"table:t_order_item,alias:i"`

	ItemID  int64     `bun:",pk,autoincrement"`
	OrderID int64     `bun:",notnull"`
	UserID  int64     `bun:",notnull"`
	Qty     int       `bun:",notnull"`
	Order   *bunOrder `bun:"rel:belongs-to,join:order_id=order_id"`
	// Deleting an item sets DeletedAt; selects leave such items out.
	DeletedAt time.Time `bun:",soft_delete,nullzero"`
}

// bunRecorder is a bun query hook: it counts the statements bun runs and
// keeps the failed ones' errors. ScanAndCount runs two statements at once.
type bunRecorder struct {
	mu      sync.Mutex
	queries int
	failed  []string
}

func (r *bunRecorder) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	return ctx
}

func (r *bunRecorder) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.queries++
	if e.Err != nil && !errors.Is(e.Err, sql.ErrNoRows) {
		r.failed = append(r.failed, fmt.Sprintf("%s: %d", e.Operation(), errCode(e.Err)))
	}
}

// bunApp runs the application on db and returns what it saw, one line a
// step.
func bunApp(t *testing.T, db *bun.DB) []string {
	t.Helper()
	ctx := context.Background()
	app := &stepLog{t: t}
	say, must, rows := app.say, app.must, app.rows
	hook := &bunRecorder{}
	db.AddQueryHook(hook)

	models := []any{(*bunItem)(nil), (*bunOrder)(nil), (*bunUser)(nil)}
	for _, m := range models {
		_, err := db.NewDropTable().Model(m).IfExists().Exec(ctx)
		must("drop", err)
	}
	// An application creates its tables at each start: the second time
	// IF NOT EXISTS finds them.
	for range 2 {
		for _, m := range slices.Backward(models) {
			_, err := db.NewCreateTable().Model(m).IfNotExists().Exec(ctx)
			must("create", err)
		}
	}
	var tables []string
	must("tables", db.NewSelect().TableExpr("information_schema.tables").Column("table_name").
		Where("table_schema = DATABASE()").Where("table_name IN (?)", bun.In([]string{"bun_users", "t_order", "t_order_item"})).
		OrderExpr("table_name").Scan(ctx, &tables))
	say("tables: %v", tables)
	// Later schema changes: an index (MariaDB's IF NOT EXISTS, twice) and
	// a column the models do not map.
	for range 2 {
		_, err := db.NewCreateIndex().Model((*bunOrder)(nil)).Index("idx_order_user_status").Column("user_id", "status").IfNotExists().Exec(ctx)
		must("create index", err)
	}
	_, err := db.NewAddColumn().Model((*bunOrder)(nil)).ColumnExpr("note VARCHAR(32) NULL").Exec(ctx)
	must("add column", err)
	var columns []string
	must("index columns", db.NewRaw("SELECT column_name FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = ? AND index_name = ? ORDER BY seq_in_index",
		"t_order", "idx_order_user_status").Scan(ctx, &columns))
	say("index on %v", columns)

	// Bulk inserts. Users get their keys from the table's AUTO_INCREMENT
	// (RETURNING hands them back); orders and items come with theirs.
	users := []*bunUser{{Name: "ann"}, {Name: "bob"}, {Name: "cyd"}, {Name: "dee"}}
	say("users: %d rows", rows("insert users")(db.NewInsert().Model(&users).Exec(ctx)))
	var orders []*bunOrder
	var items []*bunItem
	placed := time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)
	for _, u := range users {
		for o := range int64(3) {
			oid := u.ID*100 + o
			orders = append(orders, &bunOrder{OrderID: oid, UserID: u.ID, Status: "new", Placed: placed.Add(time.Duration(oid) * time.Hour)})
			for i := range int64(2) {
				items = append(items, &bunItem{ItemID: oid*10 + i, OrderID: oid, UserID: u.ID, Qty: int(o + i + 1)})
			}
		}
	}
	say("user ids %d..%d, orders: %d rows, items: %d rows", users[0].ID, users[len(users)-1].ID,
		rows("insert orders")(db.NewInsert().Model(&orders).Exec(ctx)),
		rows("insert items")(db.NewInsert().Model(&items).Exec(ctx)))

	// Without keys: the proxy's key generator fills them (MariaDB its
	// AUTO_INCREMENT), and RETURNING gives each model its own.
	fresh := []*bunOrder{{UserID: 1, Status: "gen a", Placed: placed}, {UserID: 2, Status: "gen b", Placed: placed}, {UserID: 3, Status: "gen c", Placed: placed}}
	say("generated orders: %d rows", rows("insert generated")(db.NewInsert().Model(&fresh).Exec(ctx)))
	seen := map[int64]bool{}
	for _, o := range fresh {
		back := &bunOrder{OrderID: o.OrderID}
		must("reload generated", db.NewSelect().Model(back).WherePK().Scan(ctx))
		seen[o.OrderID] = o.OrderID != 0 && back.Status == o.Status && back.UserID == o.UserID
	}
	say("generated keys: %d distinct, all read back %v", len(seen), !slices.Contains(slices.Collect(maps.Values(seen)), false))
	newItem := &bunItem{OrderID: fresh[0].OrderID, UserID: 1, Qty: 9}
	say("generated item: %d row", rows("insert item")(db.NewInsert().Model(newItem).Exec(ctx)))
	var item bunItem
	must("reload item", db.NewSelect().Model(&item).Where("item_id = ?", newItem.ItemID).Scan(ctx))
	say("generated item read back: order matches %v, qty %d", item.OrderID == fresh[0].OrderID, item.Qty)
	// Delete them by key, the slice at once.
	say("deleted generated: %d rows", rows("delete generated")(db.NewDelete().Model(&fresh).WherePK().Exec(ctx)))
	say("deleted generated item: %d rows", rows("delete item")(db.NewDelete().Model(newItem).WherePK().Exec(ctx)))

	// Where, Order, Limit and Offset over every data node.
	// Composite IN, over the sharding columns.
	var pairs []bunOrder
	must("pairs", db.NewSelect().Model(&pairs).Where("(user_id, order_id) IN (?)", bun.In([][]any{{1, 100}, {2, 201}, {3, 100}, {4, 402}})).
		Order("order_id").Scan(ctx))
	say("pairs: %s", bunOrderList(pairs))
	var page []bunOrder
	must("page", db.NewSelect().Model(&page).Where("status = ?", "new").Where("user_id IN (?)", bun.In([]int64{1, 2, 3})).
		Order("order_id DESC").Limit(4).Offset(2).Scan(ctx))
	say("page: %s", bunOrderList(page))
	var byTime []bunOrder
	must("by time", db.NewSelect().Model(&byTime).Column("order_id", "placed").Where("placed >= ?", placed.Add(300*time.Hour)).
		Order("placed").Limit(3).Scan(ctx))
	for _, o := range byTime {
		say("placed: %d at %s", o.OrderID, o.Placed.UTC().Format(time.RFC3339))
	}
	// ScanAndCount: the page and a COUNT(*) of the whole, side by side.
	var counted []bunOrder
	total, err := db.NewSelect().Model(&counted).Where("user_id <> ?", 4).Order("order_id").Limit(3).Offset(3).ScanAndCount(ctx)
	must("scan and count", err)
	say("scan and count: %d in all, page %s", total, bunOrderList(counted))
	var single []bunItem
	n, err := db.NewSelect().Model(&single).Where("user_id = ? AND order_id = ?", 2, 201).Order("item_id").ScanAndCount(ctx)
	must("scan and count one node", err)
	say("scan and count without a limit: %d", n)
	// ScanAndCount over the JOIN of the binding tables (belongs-to),
	// filtered on the parent.
	var joinedPage []bunItem
	joinedTotal, err := db.NewSelect().Model(&joinedPage).Relation("Order").Where("?TableAlias.qty > ?", 1).WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("order.status = ?", "new").WhereOr("order.user_id = ?", 9)
	}).Order("i.item_id").Limit(3).Offset(2).ScanAndCount(ctx)
	must("scan and count join", err)
	say("scan and count joined: %d in all, page %s", joinedTotal, bunItemList(joinedPage))
	var distinctUsers int
	must("distinct", db.NewSelect().Model((*bunItem)(nil)).ColumnExpr("COUNT(DISTINCT user_id)").Scan(ctx, &distinctUsers))
	say("distinct users with items: %d", distinctUsers)
	exists, err := db.NewSelect().Model((*bunItem)(nil)).Where("qty > ?", 3).Exists(ctx)
	must("exists", err)
	say("an item of more than 3: %v", exists)

	// Relations: has-many from the users (a query by user_id IN (...))
	// and nested; belongs-to is a JOIN between the binding tables.
	var withOrders []bunUser
	must("relations", db.NewSelect().Model(&withOrders).
		Relation("Orders", func(q *bun.SelectQuery) *bun.SelectQuery { return q.Order("o.order_id") }).
		Relation("Orders.Items", func(q *bun.SelectQuery) *bun.SelectQuery { return q.Order("i.item_id") }).
		Order("u.id").Scan(ctx))
	for _, u := range withOrders {
		var parts []string
		for _, o := range u.Orders {
			qty := 0
			for _, it := range o.Items {
				qty += it.Qty
			}
			parts = append(parts, fmt.Sprintf("%d:%d items/%d qty", o.OrderID, len(o.Items), qty))
		}
		say("user %d %s: %s", u.ID, u.Name, strings.Join(parts, ", "))
	}
	var joined []bunItem
	must("join", db.NewSelect().Model(&joined).Relation("Order").Where("i.user_id = ?", 2).Order("i.item_id").Scan(ctx))
	for _, it := range joined {
		say("item %d of order %d (%s, user %d)", it.ItemID, it.OrderID, it.Order.Status, it.Order.UserID)
	}
	var everyJoined []bunItem
	must("join all", db.NewSelect().Model(&everyJoined).Relation("Order", func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Column("status")
	}).Where("i.qty >= ?", 3).Order("i.item_id").Limit(5).Scan(ctx))
	say("joined over every node: %s", bunItemList(everyJoined))

	// Aggregates.
	var perUser []struct {
		UserID int64
		N      int
		Total  int
		Top    int
	}
	must("group", db.NewSelect().Model((*bunItem)(nil)).ColumnExpr("user_id, COUNT(*) AS n, SUM(qty) AS total, MAX(qty) AS top").
		Group("user_id").Order("user_id").Scan(ctx, &perUser))
	say("per user: %+v", perUser)
	count, err := db.NewSelect().Model((*bunOrder)(nil)).Where("status = ?", "new").Count(ctx)
	must("count", err)
	say("new orders: %d", count)

	// Update and delete by primary key: bun's Update writes every column,
	// the sharding column too (unchanged).
	order := &bunOrder{OrderID: 101}
	must("load order", db.NewSelect().Model(order).WherePK().Scan(ctx))
	order.Status = "paid"
	say("update: %d rows", rows("update")(db.NewUpdate().Model(order).WherePK().Exec(ctx)))
	say("update column: %d rows", rows("update column")(db.NewUpdate().Model(&bunOrder{OrderID: 102, UserID: 1, Status: "sent"}).
		Column("status").WherePK().Exec(ctx)))
	say("delete item: %d rows", rows("delete")(db.NewDelete().Model(&bunItem{ItemID: 1011}).WherePK().Exec(ctx)))
	say("delete where: %d rows", rows("delete where")(db.NewDelete().Model((*bunItem)(nil)).Where("user_id = ? AND qty = ?", 4, 1).Exec(ctx)))

	// Soft-deleted items: counted apart, then removed for good.
	deleted, err := db.NewSelect().Model((*bunItem)(nil)).WhereDeleted().Count(ctx)
	must("deleted", err)
	all, err := db.NewSelect().Model((*bunItem)(nil)).WhereAllWithDeleted().Count(ctx)
	must("all", err)
	say("soft deleted: %d of %d", deleted, all)
	say("force delete: %d rows", rows("force delete")(db.NewDelete().Model((*bunItem)(nil)).WhereDeleted().Where("user_id = ?", 4).ForceDelete().Exec(ctx)))

	// Upsert (ON DUPLICATE KEY UPDATE) of a row that exists and one that
	// does not; INSERT IGNORE of a duplicate and a new row; DELETE ...
	// RETURNING (MariaDB) over every data node.
	ups := []*bunOrder{{OrderID: 100, UserID: 1, Status: "upserted", Placed: placed}, {OrderID: 103, UserID: 1, Status: "new", Placed: placed}}
	say("upsert: %d rows", rows("upsert")(db.NewInsert().Model(&ups).On("DUPLICATE KEY UPDATE").Set("status = VALUES(status)").Exec(ctx)))
	ign := []*bunItem{{ItemID: 1000, OrderID: 100, UserID: 1, Qty: 50}, {ItemID: 1030, OrderID: 103, UserID: 1, Qty: 60}, {ItemID: 3030, OrderID: 303, UserID: 3, Qty: 70}}
	say("insert ignore: %d rows", rows("insert ignore")(db.NewInsert().Model(&ign).Ignore().Exec(ctx)))
	// Without keys, upserted and ignored: the keys come back by
	// RETURNING.
	upFresh := []*bunOrder{{UserID: 2, Status: "up a", Placed: placed}, {UserID: 3, Status: "up b", Placed: placed}}
	_, err = db.NewInsert().Model(&upFresh).On("DUPLICATE KEY UPDATE").Set("status = VALUES(status)").Exec(ctx)
	must("upsert fresh", err)
	ignFresh := []*bunItem{{OrderID: 200, UserID: 2, Qty: 1}, {OrderID: 301, UserID: 3, Qty: 1}}
	_, err = db.NewInsert().Model(&ignFresh).Ignore().Exec(ctx)
	must("ignore fresh", err)
	var backUp []bunOrder
	must("reload upserted", db.NewSelect().Model(&backUp).Where("order_id IN (?)", bun.In([]int64{upFresh[0].OrderID, upFresh[1].OrderID})).Order("status").Scan(ctx))
	var backIgn int64
	backIgn, err = db.NewSelect().Model((*bunItem)(nil)).Where("item_id IN (?)", bun.In([]int64{ignFresh[0].ItemID, ignFresh[1].ItemID})).Count(ctx)
	must("reload ignored", err)
	say("fresh upserted %d (%d distinct keys), ignored-in %d", len(backUp), len(map[int64]bool{upFresh[0].OrderID: true, upFresh[1].OrderID: true}), backIgn)
	say("deleted fresh: %d, %d rows", rows("delete fresh")(db.NewDelete().Model(&upFresh).WherePK().Exec(ctx)),
		rows("delete fresh items")(db.NewDelete().Model(&ignFresh).WherePK().ForceDelete().Exec(ctx)))
	var gone []bunItem
	must("delete returning", db.NewDelete().Model(&gone).Where("qty >= ?", 50).ForceDelete().Returning("item_id, qty").Scan(ctx))
	slices.SortFunc(gone, func(a, b bunItem) int { return int(a.ItemID - b.ItemID) })
	say("deleted and returned: %s", bunItemList(gone))
	var notes []string
	must("notes", db.NewRaw("SELECT COALESCE(note, 'none') FROM t_order WHERE order_id IN (?) ORDER BY order_id", bun.In([]int64{100, 103})).Scan(ctx, &notes))
	say("notes: %v", notes)

	// RunInTx: one commits, one rolls back on the function's error, one
	// rolls back a nested transaction (a savepoint) and commits the rest.
	must("commit", db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var locked []bunOrder
		if err := tx.NewSelect().Model(&locked).Where("user_id = ?", 2).Order("order_id").For("UPDATE").Scan(ctx); err != nil {
			return err
		}
		say("locked: %s", bunOrderList(locked))
		if _, err := tx.NewUpdate().Model((*bunOrder)(nil)).Set("status = ?", "shipped").Where("user_id = ? AND order_id = ?", 2, 200).Exec(ctx); err != nil {
			return err
		}
		_, err := tx.NewInsert().Model(&[]*bunItem{{ItemID: 5000, OrderID: 200, UserID: 2, Qty: 7}, {ItemID: 5001, OrderID: 301, UserID: 3, Qty: 8}}).Exec(ctx)
		return err
	}))
	err = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewDelete().Model((*bunItem)(nil)).Where("order_id = ?", 300).Exec(ctx); err != nil {
			return err
		}
		if _, err := tx.NewInsert().Model(&bunOrder{OrderID: 999, UserID: 1, Status: "lost", Placed: placed}).Exec(ctx); err != nil {
			return err
		}
		return errors.New("abandon")
	})
	say("rolled back: %v", err)
	must("nested", db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewUpdate().Model((*bunOrder)(nil)).Set("status = ?", "kept").Where("order_id = ?", 400).Exec(ctx); err != nil {
			return err
		}
		inner := tx.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			if _, err := tx.NewUpdate().Model((*bunOrder)(nil)).Set("status = ?", "undone").Where("order_id = ?", 401).Exec(ctx); err != nil {
				return err
			}
			// A duplicate key inside: the savepoint undoes the update.
			_, err := tx.NewInsert().Model(&bunUser{Name: "ann"}).Exec(ctx)
			return err
		})
		say("nested: %d", errCode(inner))
		return nil
	}))
	var statuses []string
	must("statuses", db.NewSelect().Model((*bunOrder)(nil)).Column("status").Where("order_id IN (?)", bun.In([]int64{200, 400, 401})).
		Order("order_id").Scan(ctx, &statuses))
	var left300, n999 int64
	left300, err = db.NewSelect().Model((*bunItem)(nil)).Where("order_id = ?", 300).Count(ctx)
	must("count 300", err)
	n999, err = db.NewSelect().Model((*bunOrder)(nil)).Where("order_id = ?", 999).Count(ctx)
	must("count 999", err)
	say("after transactions: %v, items of order 300 %d, order 999 %d", statuses, left300, n999)

	// Errors: a duplicate key, a missing row; the connection goes on.
	_, err = db.NewInsert().Model(&bunUser{Name: "bob"}).Exec(ctx)
	say("duplicate: %d %v", errCode(err), err)
	_, err = db.NewInsert().Model(&bunOrder{OrderID: 100, UserID: 1, Status: "again", Placed: placed}).Exec(ctx)
	say("duplicate order: %d %v", errCode(err), err)
	err = db.NewSelect().Model(&bunOrder{OrderID: 12345}).WherePK().Scan(ctx)
	say("missing: %v", errors.Is(err, sql.ErrNoRows))
	var left int64
	left, err = db.NewSelect().Model((*bunItem)(nil)).Count(ctx)
	must("count items", err)
	say("items left: %d", left)

	hook.mu.Lock()
	say("hook: %d queries, failed %v", hook.queries, hook.failed)
	hook.mu.Unlock()
	return app.out
}

func bunOrderList(orders []bunOrder) string {
	var parts []string
	for _, o := range orders {
		parts = append(parts, fmt.Sprintf("%d/%d/%s", o.OrderID, o.UserID, o.Status))
	}
	return strings.Join(parts, " ")
}

func bunItemList(items []bunItem) string {
	var parts []string
	for _, it := range items {
		status := "-"
		if it.Order != nil {
			status = it.Order.Status
		}
		parts = append(parts, fmt.Sprintf("%d/%d/%s", it.ItemID, it.Qty, status))
	}
	return strings.Join(parts, " ")
}

// TestBunApplication runs the bun application (mysqldialect over
// go-sql-driver/mysql, DSNs as bun's documentation writes them) through
// the proxy (users unsharded, orders sharded, items bound to orders) and
// against MariaDB directly, and requires the same transcript. What the
// application leaves out: a belongs-to relation from orders to users
// (a JOIN of sharded rows with a table on another data source, refused
// with 1235); bun's bulk UPDATE and ADD COLUMN IF NOT EXISTS, which
// mysqldialect does not offer.
func TestBunApplication(t *testing.T) {
	e := startEnv(t, envOptions{rules: bindingTestRules})
	// Other tests list the shared data sources' tables.
	cleanup := e.open(t)
	t.Cleanup(func() { cleanup.Exec("DROP TABLE IF EXISTS t_order_item, bun_users") })
	refDatabase(t, e.backends[0], "bun_ref")
	open := func(dsn string) *bun.DB {
		sqldb, err := sql.Open("mysql", dsn)
		if err != nil {
			t.Fatal(err)
		}
		db := bun.NewDB(sqldb, mysqldialect.New())
		t.Cleanup(func() { db.Close() })
		return db
	}
	viaProxy := open(e.dsn("app", "app-secret"))
	direct := open(e.backends[0].DSN("bun_ref"))
	want := bunApp(t, direct)
	if !slices.Contains(want, "nested: 1062") {
		t.Fatalf("directly on MariaDB the application printed\n%s\nwithout a duplicate key in the nested transaction", strings.Join(want, "\n"))
	}
	got := bunApp(t, viaProxy)
	sameSteps(t, got, want)
	// The rows are where the rules put them.
	if got := landedItems(t, e)[5001]; got != "ds_1.t_order_item_1" {
		t.Errorf("item 5001 (order 301, user 3) is on %s", got)
	}
}
