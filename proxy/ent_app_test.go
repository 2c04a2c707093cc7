package proxy

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"ariga.io/atlas/sql/migrate"
	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"entgo.io/ent/dialect/sql/schema"
	"entgo.io/ent/dialect/sql/sqlgraph"
	"entgo.io/ent/schema/field"
)

// A small ent application. What `ent generate` writes for its schema is
// thousands of lines; the application keeps the two parts of it that
// talk to the database: the tables of migrate/schema.go (written here by
// hand, as the generator writes them) for the auto-migration
// (client.Schema.Create is schema.Create over these tables), and
// sqlgraph's create, query, update and delete specs, which the generated
// builders fill. Users (ent_users, without rules) have orders (t_order,
// sharded, key generated); t_dict is broadcast.

// entTables are the application's tables at a schema version: 2 adds a
// nullable column and an index on the orders.
func entTables(version int) []*schema.Table {
	userColumns := []*schema.Column{
		{Name: "id", Type: field.TypeInt64, Increment: true},
		{Name: "name", Type: field.TypeString, Unique: true, Size: 32},
	}
	users := &schema.Table{Name: "ent_users", Columns: userColumns, PrimaryKey: userColumns[:1]}
	orderColumns := []*schema.Column{
		{Name: "order_id", Type: field.TypeInt64, Increment: true},
		{Name: "user_id", Type: field.TypeInt64},
		{Name: "status", Type: field.TypeString, Size: 16, Default: "new"},
		{Name: "amount", Type: field.TypeInt},
	}
	if version >= 2 {
		orderColumns = append(orderColumns, &schema.Column{Name: "note", Type: field.TypeString, Size: 64, Nullable: true})
	}
	orders := &schema.Table{Name: "t_order", Columns: orderColumns, PrimaryKey: orderColumns[:1],
		Indexes: []*schema.Index{{Name: "order_user_status", Columns: orderColumns[1:3]}}}
	if version >= 2 {
		orders.Indexes = append(orders.Indexes, &schema.Index{Name: "order_amount", Columns: orderColumns[3:4]})
	}
	dictColumns := []*schema.Column{
		{Name: "id", Type: field.TypeInt64},
		{Name: "label", Type: field.TypeString, Size: 32},
	}
	dict := &schema.Table{Name: "t_dict", Columns: dictColumns, PrimaryKey: dictColumns[:1]}
	return []*schema.Table{users, orders, dict}
}

// entOrder is a row of t_order as the application reads it (its key
// apart: the proxy's differs from MariaDB's AUTO_INCREMENT).
type entOrder struct {
	UserID int64  `sql:"user_id"`
	Status string `sql:"status"`
	Amount int    `sql:"amount"`
}

// entApp runs the application on drv and returns what it saw, one line a
// step.
func entApp(t *testing.T, drv *entsql.Driver) []string {
	t.Helper()
	ctx := context.Background()
	app := &stepLog{t: t}
	say, must := app.say, app.must
	for _, tbl := range []string{"t_order", "ent_users", "t_dict"} {
		must("drop", drv.Exec(ctx, "DROP TABLE IF EXISTS "+tbl, []any{}, nil))
	}
	// migrate runs client.Schema.Create and says what it changed. Version
	// 1 after 2 is the way back: ent drops what the schema no longer
	// has only when told to.
	migrateTo := func(version int) {
		t.Helper()
		var changes []string
		m, err := schema.NewMigrate(drv, schema.WithDropColumn(true), schema.WithDropIndex(true),
			schema.WithApplyHook(func(next schema.Applier) schema.Applier {
				return schema.ApplyFunc(func(ctx context.Context, conn dialect.ExecQuerier, plan *migrate.Plan) error {
					for _, c := range plan.Changes {
						changes = append(changes, c.Cmd)
					}
					return next.Apply(ctx, conn, plan)
				})
			}))
		must("new migrate", err)
		must(fmt.Sprintf("migrate to %d", version), m.Create(ctx, entTables(version)...))
		say("migrate to %d: %d changes", version, len(changes))
		for _, c := range changes {
			say("  %s", c)
		}
	}
	migrateTo(1)
	// An application migrates at each start: the second time there is
	// nothing to change.
	migrateTo(1)

	// Creates without keys, one by one and in bulk, as the generated
	// Create().Save() and CreateBulk().Save() do: ids come from
	// LastInsertId (a bulk's are the first and the ones after it).
	var userIDs []int64
	for _, name := range []string{"ann", "bob", "cyd", "dee"} {
		spec := sqlgraph.NewCreateSpec("ent_users", sqlgraph.NewFieldSpec("id", field.TypeInt64))
		spec.SetField("name", field.TypeString, name)
		must("create user", sqlgraph.CreateNode(ctx, drv, spec))
		userIDs = append(userIDs, spec.ID.Value.(int64))
	}
	say("users: %v", userIDs)
	bulk := &sqlgraph.BatchCreateSpec{}
	for _, u := range userIDs {
		for o := range 3 {
			spec := sqlgraph.NewCreateSpec("t_order", sqlgraph.NewFieldSpec("order_id", field.TypeInt64))
			spec.SetField("user_id", field.TypeInt64, u)
			spec.SetField("status", field.TypeString, []string{"new", "paid", "sent"}[o])
			spec.SetField("amount", field.TypeInt, int(u)*10+o)
			bulk.Nodes = append(bulk.Nodes, spec)
		}
	}
	must("create orders", sqlgraph.BatchCreate(ctx, drv, bulk))
	orderIDs := map[string]int64{}
	for _, n := range bulk.Nodes {
		orderIDs[fmt.Sprintf("%d/%d", n.Fields[0].Value, n.Fields[2].Value)] = n.ID.Value.(int64)
	}
	// Each id read back is the row it was given to.
	same := 0
	for key, id := range orderIDs {
		var got []entOrder
		must("by id", entSelect(ctx, drv, &got, entsql.Select("user_id", "status", "amount").From(entsql.Table("t_order")).
			Where(entsql.EQ("order_id", id))))
		if len(got) == 1 && fmt.Sprintf("%d/%d", got[0].UserID, got[0].Amount) == key {
			same++
		}
	}
	say("orders: %d created, %d distinct ids, %d read back by id", len(bulk.Nodes), len(orderIDs), same)
	one := sqlgraph.NewCreateSpec("t_order", sqlgraph.NewFieldSpec("order_id", field.TypeInt64))
	one.SetField("user_id", field.TypeInt64, userIDs[0])
	one.SetField("amount", field.TypeInt, 99)
	must("create order", sqlgraph.CreateNode(ctx, drv, one))
	var defaulted []entOrder
	must("created", entSelect(ctx, drv, &defaulted, entsql.Select("user_id", "status", "amount").From(entsql.Table("t_order")).
		Where(entsql.And(entsql.EQ("user_id", userIDs[0]), entsql.EQ("order_id", one.ID.Value)))))
	say("one order, its status by default: %+v", defaulted)
	dict := &sqlgraph.BatchCreateSpec{}
	for i, label := range []string{"new", "paid", "sent"} {
		spec := sqlgraph.NewCreateSpec("t_dict", sqlgraph.NewFieldSpec("id", field.TypeInt64))
		spec.ID.Value = int64(i + 1)
		spec.SetField("label", field.TypeString, label)
		dict.Nodes = append(dict.Nodes, spec)
	}
	must("create dict", sqlgraph.BatchCreate(ctx, drv, dict))

	// Queries: by sharding column, IN, a range, pages over every data
	// node, counts and aggregates.
	var page []entOrder
	must("page", entSelect(ctx, drv, &page, entsql.Select("user_id", "status", "amount").From(entsql.Table("t_order")).
		Where(entsql.In("status", "new", "paid")).OrderBy(entsql.Desc("amount")).Limit(3).Offset(2)))
	say("page: %+v", page)
	var user2 []entOrder
	must("user 2", entSelect(ctx, drv, &user2, entsql.Select("user_id", "status", "amount").From(entsql.Table("t_order")).
		Where(entsql.And(entsql.EQ("user_id", userIDs[1]), entsql.GTE("amount", 21))).OrderBy("amount")))
	say("user %d, amount >= 21: %+v", userIDs[1], user2)
	count, err := sqlgraph.CountNodes(ctx, drv, &sqlgraph.QuerySpec{
		Node:      &sqlgraph.NodeSpec{Table: "t_order", Columns: []string{"order_id"}, ID: sqlgraph.NewFieldSpec("order_id", field.TypeInt64)},
		Predicate: func(s *entsql.Selector) { s.Where(entsql.NEQ(s.C("status"), "sent")) },
	})
	must("count", err)
	say("not sent: %d", count)
	var perUser []struct {
		UserID int64 `sql:"user_id"`
		N      int   `sql:"n"`
		Sum    int   `sql:"total"`
		Max    int   `sql:"top"`
	}
	must("group", entSelect(ctx, drv, &perUser, entsql.Select("user_id", entsql.As(entsql.Count("*"), "n"), entsql.As(entsql.Sum("amount"), "total"),
		entsql.As(entsql.Max("amount"), "top")).From(entsql.Table("t_order")).GroupBy("user_id").Having(entsql.GT(entsql.Count("*"), 1)).OrderBy("user_id")))
	say("per user: %+v", perUser)
	var labels []struct {
		Label string `sql:"label"`
	}
	must("dict", entSelect(ctx, drv, &labels, entsql.Select("label").From(entsql.Table("t_dict")).OrderBy(entsql.Desc("id"))))
	say("dict: %+v", labels)

	// Update and delete, as UpdateNodes and DeleteNodes run them.
	upd := sqlgraph.NewUpdateSpec("t_order", []string{"order_id"}, sqlgraph.NewFieldSpec("order_id", field.TypeInt64))
	upd.Predicate = func(s *entsql.Selector) {
		s.Where(entsql.And(entsql.EQ(s.C("user_id"), userIDs[2]), entsql.EQ(s.C("status"), "new")))
	}
	upd.Fields.Add = append(upd.Fields.Add, &sqlgraph.FieldSpec{Column: "amount", Type: field.TypeInt, Value: 100})
	n, err := sqlgraph.UpdateNodes(ctx, drv, upd)
	must("update", err)
	say("updated: %d", n)
	n, err = sqlgraph.DeleteNodes(ctx, drv, &sqlgraph.DeleteSpec{
		Node:      &sqlgraph.NodeSpec{Table: "t_order", ID: sqlgraph.NewFieldSpec("order_id", field.TypeInt64)},
		Predicate: func(s *entsql.Selector) { s.Where(entsql.EQ(s.C("amount"), 99)) },
	})
	must("delete", err)
	say("deleted: %d", n)

	// Transactions, as client.Tx(ctx) gives them: one commits, one rolls
	// back.
	tx, err := drv.Tx(ctx)
	must("begin", err)
	// The generated client's transaction wraps dialect.Tx in a driver of
	// its own; the builder's INSERT is what its Create runs.
	query, args := entsql.Dialect(dialect.MySQL).Insert("t_order").Columns("user_id", "status", "amount").Values(userIDs[3], "tx", 1).Query()
	must("create in tx", tx.Exec(ctx, query, args, nil))
	must("update in tx", tx.Exec(ctx, "UPDATE t_dict SET label = ? WHERE id = ?", []any{"PAID", 2}, nil))
	must("commit", tx.Commit())
	tx, err = drv.Tx(ctx)
	must("begin", err)
	must("delete in tx", tx.Exec(ctx, "DELETE FROM t_order WHERE user_id = ?", []any{userIDs[0]}, nil))
	must("update in tx", tx.Exec(ctx, "UPDATE ent_users SET name = ? WHERE id = ?", []any{"lost", userIDs[0]}, nil))
	must("rollback", tx.Rollback())
	var after []struct {
		N int `sql:"n"`
	}
	must("after", entSelect(ctx, drv, &after, entsql.Select(entsql.As(entsql.Count("*"), "n")).From(entsql.Table("t_order")).
		Where(entsql.Or(entsql.EQ("user_id", userIDs[0]), entsql.EQ("status", "tx")))))
	var names []struct {
		Name string `sql:"name"`
	}
	must("names", entSelect(ctx, drv, &names, entsql.Select("name").From(entsql.Table("ent_users")).OrderBy("id")))
	labels = nil
	must("dict", entSelect(ctx, drv, &labels, entsql.Select("label").From(entsql.Table("t_dict")).OrderBy("id")))
	say("after transactions: %d orders, users %+v, dict %+v", after[0].N, names, labels)

	// A duplicate key: ent's ConstraintError, the connection goes on.
	dup := sqlgraph.NewCreateSpec("ent_users", sqlgraph.NewFieldSpec("id", field.TypeInt64))
	dup.SetField("name", field.TypeString, "bob")
	err = sqlgraph.CreateNode(ctx, drv, dup)
	say("duplicate: constraint %v, unique %v, %d %v", sqlgraph.IsConstraintError(err), sqlgraph.IsUniqueConstraintError(err), errCode(err), err)

	// The next version adds a column and an index; then back.
	migrateTo(2)
	migrateTo(2)
	var indexes []struct {
		Name   string `sql:"index_name"`
		Column string `sql:"column_name"`
	}
	must("indexes", entSelect(ctx, drv, &indexes, entsql.Select("index_name", "column_name").From(entsql.Table("statistics").Schema("information_schema")).
		Where(entsql.And(entsql.ExprP("table_schema = DATABASE()"), entsql.EQ("table_name", "t_order"))).OrderBy("index_name", "seq_in_index")))
	say("indexes: %+v", indexes)
	must("note", drv.Exec(ctx, "UPDATE t_order SET note = ? WHERE user_id = ? AND amount >= ?", []any{"big", userIDs[2], 100}, nil))
	var noted []struct {
		N int `sql:"n"`
	}
	must("noted", entSelect(ctx, drv, &noted, entsql.Select(entsql.As(entsql.Count("note"), "n")).From(entsql.Table("t_order"))))
	say("noted: %d", noted[0].N)
	migrateTo(1)
	var columns []struct {
		Name string `sql:"column_name"`
	}
	must("columns", entSelect(ctx, drv, &columns, entsql.Select("column_name").From(entsql.Table("columns").Schema("information_schema")).
		Where(entsql.And(entsql.ExprP("table_schema = DATABASE()"), entsql.EQ("table_name", "t_order"))).OrderBy("ordinal_position")))
	say("columns after going back: %+v", columns)
	return app.out
}

// entSelect runs a selector built with ent's SQL builder and scans its
// rows into v, as the generated Select(...).Scan(ctx, &v) does.
func entSelect(ctx context.Context, drv *entsql.Driver, v any, s *entsql.Selector) error {
	s.SetDialect(dialect.MySQL)
	query, args := s.Query()
	var rows entsql.Rows
	if err := drv.Query(ctx, query, args, &rows); err != nil {
		return err
	}
	defer rows.Close()
	return entsql.ScanSlice(rows, v)
}

// TestEntApplication runs the ent application (entgo.io/ent 0.14 over
// go-sql-driver/mysql) through the proxy (ent_users unsharded, t_order
// sharded with its key generated, t_dict broadcast) and against MariaDB
// directly, and requires the same transcript: ent's auto-migration
// (information_schema inspected, CREATE TABLE, then ALTER TABLE) run
// twice finds nothing left to change.
func TestEntApplication(t *testing.T) {
	e := startEnv(t, envOptions{databases: "entapp"})
	refDatabase(t, e.backends[0], "ent_ref")
	open := func(dsn string) *entsql.Driver {
		drv, err := entsql.Open(dialect.MySQL, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { drv.Close() })
		return drv
	}
	want := entApp(t, open(e.backends[0].DSN("ent_ref")))
	if !slices.ContainsFunc(want, func(s string) bool { return strings.HasPrefix(s, "duplicate: constraint true, unique true, 1062") }) {
		t.Fatalf("directly on MariaDB the application printed\n%s\nwithout a duplicate key", strings.Join(want, "\n"))
	}
	got := entApp(t, open(e.dsn("app", "app-secret")))
	sameSteps(t, got, want)
	// The orders are on both data sources.
	for i := range 2 {
		var n int
		if err := e.backend(t, i).QueryRow("SELECT (SELECT COUNT(*) FROM t_order_0) + (SELECT COUNT(*) FROM t_order_1)").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Errorf("no order on ds_%d", i)
		}
	}
}
