package proxy

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"

	gormmysql "gorm.io/driver/mysql"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// A small GORM application: users (a table without rules, on the default
// data source) have orders (t_order, sharded), orders have items
// (t_order_item, bound to t_order). It runs through the proxy and against
// one MariaDB database, and the two transcripts must be equal.

type gormUser struct {
	ID     int64 `gorm:"primaryKey;autoIncrement:false"`
	Name   string
	Orders []gormOrder `gorm:"foreignKey:UserID"`
}

func (gormUser) TableName() string { return "gorm_users" }

type gormOrder struct {
	OrderID int64 `gorm:"primaryKey;autoIncrement:false"`
	UserID  int64 `gorm:"not null"`
	Status  string
	Items   []gormItem `gorm:"foreignKey:OrderID;references:OrderID"`
}

func (gormOrder) TableName() string { return "t_order" }

// gormNewOrder is an order whose key the proxy generates.
type gormNewOrder struct {
	OrderID int64 `gorm:"primaryKey"`
	UserID  int64
	Status  string
}

func (gormNewOrder) TableName() string { return "t_order" }

type gormItem struct {
	ItemID  int64 `gorm:"primaryKey;autoIncrement:false"`
	OrderID int64 `gorm:"not null"`
	UserID  int64 `gorm:"not null"`
	Qty     int
	Order   *gormOrder `gorm:"foreignKey:OrderID;references:OrderID"`
}

func (gormItem) TableName() string { return "t_order_item" }

// stepLog is what a Go application test (GORM, bun, sqlx) saw, one line
// a step, and how it stops on an error it did not expect.
type stepLog struct {
	t   *testing.T
	out []string
}

// say records one step.
func (l *stepLog) say(format string, args ...any) {
	l.out = append(l.out, fmt.Sprintf(format, args...))
}

// must stops the test on err, naming the step.
func (l *stepLog) must(step string, err error) {
	l.t.Helper()
	if err != nil {
		l.t.Fatalf("%s: %v", step, err)
	}
}

// rows(step)(stmt.Exec(...)) is the number of rows the statement changed.
func (l *stepLog) rows(step string) func(sql.Result, error) int64 {
	return func(res sql.Result, err error) int64 {
		l.t.Helper()
		l.must(step, err)
		n, err := res.RowsAffected()
		l.must(step, err)
		return n
	}
}

// gormApp runs the application on db and returns what it saw, one line a
// step.
func gormApp(t *testing.T, db *gorm.DB) []string {
	t.Helper()
	app := &stepLog{t: t}
	say, must := app.say, app.must
	m := db.Migrator()
	for _, tbl := range []string{"t_order_item", "t_order", "gorm_users"} {
		must("drop "+tbl, m.DropTable(tbl))
	}
	must("migrate", db.AutoMigrate(&gormUser{}, &gormOrder{}, &gormItem{}))
	say("tables: %v %v %v", m.HasTable(&gormUser{}), m.HasTable(&gormOrder{}), m.HasTable(&gormItem{}))

	// Create with associations: the user, its orders and their items.
	for u := int64(1); u <= 4; u++ {
		user := gormUser{ID: u, Name: fmt.Sprintf("user %d", u)}
		for o := int64(0); o < 3; o++ {
			oid := u*100 + o
			order := gormOrder{OrderID: oid, UserID: u, Status: "new"}
			for i := int64(0); i < 2; i++ {
				order.Items = append(order.Items, gormItem{ItemID: oid*10 + i, UserID: u, Qty: int(i + 1)})
			}
			user.Orders = append(user.Orders, order)
		}
		must("create user", db.Create(&user).Error)
	}
	// Bulk insert in batches.
	var bulk []gormItem
	for i := int64(0); i < 25; i++ {
		bulk = append(bulk, gormItem{ItemID: 9000 + i, OrderID: 300, UserID: 3, Qty: int(i)})
	}
	res := db.CreateInBatches(bulk, 10)
	must("bulk insert", res.Error)
	say("bulk insert: %d rows", res.RowsAffected)

	// Eager loading, nested.
	var users []gormUser
	must("preload", db.Preload("Orders", func(tx *gorm.DB) *gorm.DB { return tx.Order("order_id") }).
		Preload("Orders.Items", func(tx *gorm.DB) *gorm.DB { return tx.Order("item_id") }).
		Order("id").Find(&users).Error)
	for _, u := range users {
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
	// Belongs-to with a JOIN (GORM Joins): item joined to its order on the
	// foreign key alone, filtered on the item's sharding column.
	var items []gormItem
	must("joins", db.Joins("Order").Where("t_order_item.user_id = ?", 2).Order("t_order_item.item_id").Find(&items).Error)
	for _, it := range items {
		say("item %d of order %d (%s)", it.ItemID, it.OrderID, it.Order.Status)
	}

	// Pagination across data nodes.
	var total int64
	must("count", db.Model(&gormOrder{}).Count(&total).Error)
	var page []gormOrder
	must("page", db.Order("order_id DESC").Limit(4).Offset(3).Find(&page).Error)
	var ids []int64
	for _, o := range page {
		ids = append(ids, o.OrderID)
	}
	say("orders: %d, page 2: %v", total, ids)
	var items3 int64
	must("count items", db.Model(&gormItem{}).Where("user_id = ?", 3).Count(&items3).Error)
	say("items of user 3: %d", items3)

	// Nested transactions: the inner one fails and rolls back to its
	// savepoint, the outer one commits; then a whole one rolls back.
	err := db.Transaction(func(tx *gorm.DB) error {
		if err := tx.Model(&gormOrder{}).Where("user_id = ? AND order_id = ?", 1, 100).Update("status", "paid").Error; err != nil {
			return err
		}
		inner := tx.Transaction(func(tx2 *gorm.DB) error {
			if err := tx2.Model(&gormOrder{}).Where("user_id = ? AND order_id = ?", 2, 200).Update("status", "lost").Error; err != nil {
				return err
			}
			if err := tx2.Create(&gormItem{ItemID: 7777, OrderID: 400, UserID: 4, Qty: 1}).Error; err != nil {
				return err
			}
			return errors.New("inner fails")
		})
		say("inner transaction: %v", inner)
		return tx.Transaction(func(tx3 *gorm.DB) error {
			return tx3.Model(&gormOrder{}).Where("user_id = ? AND order_id = ?", 3, 300).Update("status", "shipped").Error
		})
	})
	must("outer transaction", err)
	err = db.Transaction(func(tx *gorm.DB) error {
		if err := tx.Delete(&gormItem{}, "user_id = ? AND order_id = ?", 1, 101).Error; err != nil {
			return err
		}
		return errors.New("abandon")
	})
	say("abandoned transaction: %v", err)
	var statuses []string
	must("statuses", db.Model(&gormOrder{}).Where("order_id IN ?", []int64{100, 200, 300}).Order("order_id").Pluck("status", &statuses).Error)
	var n7777, n101 int64
	db.Model(&gormItem{}).Where("item_id = ?", 7777).Count(&n7777)
	db.Model(&gormItem{}).Where("order_id = ?", 101).Count(&n101)
	say("after transactions: statuses %v, item 7777 %d, items of order 101 %d", statuses, n7777, n101)

	// Save() writes every column, the sharding column too: it stays, then
	// it moves to another user (another data node).
	var o gormOrder
	must("first", db.First(&o, "order_id = ?", 102).Error)
	o.Status = "saved"
	res = db.Save(&o)
	must("save", res.Error)
	say("save: %d rows", res.RowsAffected)
	o.UserID, o.Status = 2, "moved"
	must("save moving", db.Save(&o).Error)
	var moved gormOrder
	must("reload", db.First(&moved, "order_id = ?", 102).Error)
	var ofUser2 int64
	db.Model(&gormOrder{}).Where("user_id = ?", 2).Count(&ofUser2)
	say("moved: order %d user %d %s; user 2 has %d orders", moved.OrderID, moved.UserID, moved.Status, ofUser2)

	// Delete with associations gone, then what is left.
	must("delete", db.Where("order_id = ?", 9010).Delete(&gormItem{}).Error)
	var left int64
	db.Model(&gormItem{}).Count(&left)
	say("items left: %d", left)
	return app.out
}

// TestGORMApplication runs the GORM application through the proxy (users
// unsharded, orders sharded, items bound to orders) and against MariaDB
// directly, and requires the same transcript.
func TestGORMApplication(t *testing.T) {
	e := startEnv(t, envOptions{rules: bindingTestRules})
	// Other tests list the shared data sources' tables.
	cleanup := e.open(t)
	t.Cleanup(func() { cleanup.Exec("DROP TABLE IF EXISTS t_order_item, gorm_users") })
	e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS gorm_ref", "CREATE DATABASE gorm_ref")
	// Foreign keys cannot span data sources: sharded applications migrate
	// without them.
	cfg := &gorm.Config{Logger: logger.Discard, DisableForeignKeyConstraintWhenMigrating: true}
	viaProxy, err := gorm.Open(gormmysql.Open(e.dsn("app", "app-secret", "parseTime=true")), cfg)
	if err != nil {
		t.Fatal(err)
	}
	direct, err := gorm.Open(gormmysql.Open(e.backends[0].DSN("gorm_ref")+"&parseTime=true"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, db := range []*gorm.DB{viaProxy, direct} {
		sqlDB, err := db.DB()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sqlDB.Close() })
	}
	want := gormApp(t, direct)
	got := gormApp(t, viaProxy)
	sameSteps(t, got, want)
	// Keys the proxy generates (the model's key has no value): GORM
	// reads the first from the OK packet and counts up for a batch, as
	// MySQL's AUTO_INCREMENT; the proxy's keys of one INSERT are
	// consecutive, so each model finds its own row.
	batch := []gormNewOrder{{UserID: 1, Status: "gen a"}, {UserID: 2, Status: "gen b"}, {UserID: 3, Status: "gen c"}}
	if err := viaProxy.Create(&batch).Error; err != nil {
		t.Fatal(err)
	}
	for _, o := range batch {
		var back gormNewOrder
		if err := viaProxy.First(&back, "user_id = ? AND order_id = ?", o.UserID, o.OrderID).Error; err != nil || back.Status != o.Status {
			t.Errorf("generated key %d of %q: %v, read back %+v", o.OrderID, o.Status, err, back)
		}
	}
	// The rows are where the rules put them: the saved order moved to
	// user 2's data source.
	if got := landed(t, e)[102]; got != "ds_0.t_order_0" {
		t.Errorf("order 102 is on %s, want ds_0.t_order_0", got)
	}
	if got := landedItems(t, e)[9003]; got != "ds_1.t_order_item_0" {
		t.Errorf("item 9003 (order 300, user 3) is on %s", got)
	}
}

// landedItems returns where each item is stored, by querying every
// physical item table directly.
func landedItems(t *testing.T, e *testEnv) map[int64]string {
	t.Helper()
	out := map[int64]string{}
	for i := range e.backends {
		for j := range 2 {
			rows, err := e.backend(t, i).Query(fmt.Sprintf("SELECT item_id FROM t_order_item_%d", j))
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var id int64
				rows.Scan(&id)
				out[id] = fmt.Sprintf("ds_%d.t_order_item_%d", i, j)
			}
			rows.Close()
		}
	}
	return out
}
