package proxy

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// bindingTestRules bind t_order_item to t_order (both by user_id over the
// data sources and order_id over the tables; t_order's key is order_id).
const bindingTestRules = `  - !SHARDING
    tables:
      t_order:
        actualDataNodes: ds_${0..1}.t_order_${0..1}
        databaseStrategy:
          standard: { shardingColumn: user_id, shardingAlgorithmName: db_inline }
        tableStrategy:
          standard: { shardingColumn: order_id, shardingAlgorithmName: order_inline }
        keyGenerateStrategy: { column: order_id, keyGeneratorName: snowflake }
      t_order_item:
        actualDataNodes: ds_${0..1}.t_order_item_${0..1}
        databaseStrategy:
          standard: { shardingColumn: user_id, shardingAlgorithmName: db_inline }
        tableStrategy:
          standard: { shardingColumn: order_id, shardingAlgorithmName: item_inline }
        keyGenerateStrategy: { column: item_id, keyGeneratorName: snowflake }
    bindingTables:
      - t_order,t_order_item
    shardingAlgorithms:
      db_inline:    { type: INLINE, props: { algorithm-expression: "ds_${user_id % 2}" } }
      order_inline: { type: INLINE, props: { algorithm-expression: "t_order_${order_id % 2}" } }
      item_inline:  { type: INLINE, props: { algorithm-expression: "t_order_item_${order_id % 2}" } }
    keyGenerators:
      snowflake: { type: SNOWFLAKE, props: { worker-id: 1 } }
`

var bindingTestSchema = []string{
	"DROP TABLE IF EXISTS t_order_item",
	"DROP TABLE IF EXISTS t_order",
	"CREATE TABLE t_order (order_id BIGINT NOT NULL PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(16))",
	"CREATE TABLE t_order_item (item_id BIGINT NOT NULL PRIMARY KEY, order_id BIGINT NOT NULL, user_id INT NOT NULL, qty INT)",
}

// ormBindingJoins are the joins ORMs write between a child and its
// parent: on the foreign key only, filtered on the child's or the
// parent's sharding column.
var ormBindingJoins = []string{
	// Django select_related, GORM Joins, Hibernate join fetch.
	"SELECT order_items.item_id, orders.status FROM t_order_item AS order_items INNER JOIN t_order AS orders ON (order_items.order_id = orders.order_id) WHERE order_items.user_id = 3 ORDER BY order_items.item_id",
	// Django annotate(Count(...)).
	"SELECT orders.order_id, COUNT(order_items.item_id) AS n FROM t_order AS orders LEFT OUTER JOIN t_order_item AS order_items ON (orders.order_id = order_items.order_id) WHERE orders.user_id = 3 GROUP BY orders.order_id ORDER BY orders.order_id",
	// Sequelize include / TypeORM relations, over every data node.
	"SELECT orders.order_id, orders.status, order_items.item_id, order_items.qty FROM t_order AS orders LEFT JOIN t_order_item AS order_items ON orders.order_id = order_items.order_id ORDER BY orders.order_id, order_items.item_id",
	// Django Subquery(OuterRef("pk")) and Exists(...) over every data node:
	// subqueries correlated on the foreign key alone.
	"SELECT `t_order`.`order_id`, (SELECT U0.`qty` FROM `t_order_item` U0 WHERE U0.`order_id` = `t_order`.`order_id` ORDER BY U0.`qty` DESC LIMIT 1) AS `top_qty` FROM `t_order` ORDER BY `t_order`.`order_id`",
	"SELECT `t_order`.`order_id` FROM `t_order` WHERE EXISTS(SELECT (1) AS `a` FROM `t_order_item` U0 WHERE (U0.`order_id` = `t_order`.`order_id` AND U0.`qty` >= 2) LIMIT 1) ORDER BY `t_order`.`order_id`",
	"SELECT `t_order`.`order_id` FROM `t_order` WHERE NOT EXISTS(SELECT (1) AS `a` FROM `t_order_item` U0 WHERE U0.`order_id` = `t_order`.`order_id` AND U0.`qty` >= 2 LIMIT 1) ORDER BY `t_order`.`order_id`",
	// The child's parent, from the child.
	"SELECT i.`item_id`, (SELECT U0.`status` FROM `t_order` U0 WHERE U0.`order_id` = i.`order_id`) AS `st` FROM `t_order_item` i ORDER BY i.`item_id`",
}

// TestORMBindingJoin: the joins ORMs write between binding tables pair
// data node by data node and answer as one MariaDB does; strict
// bindingJoins refuses them with 1235; SHOW SHARDING BINDING ORPHANS
// counts the child rows whose parent is on another data node, which such
// a join misses.
func TestORMBindingJoin(t *testing.T) {
	e := startEnv(t, envOptions{rules: bindingTestRules})
	db := e.open(t)
	// The data sources are shared: leave no t_order_item_N behind for the
	// tests that list the default data source's own tables.
	t.Cleanup(func() { db.Exec("DROP TABLE IF EXISTS t_order_item") })
	e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS binding_ref", "CREATE DATABASE binding_ref")
	ref := e.backends[0].Open(t, "binding_ref")
	data := []string{
		"INSERT INTO t_order (order_id, user_id, status) VALUES (10, 3, 'new'), (11, 3, 'paid'), (12, 4, 'new'), (13, 1, 'shipped')",
		"INSERT INTO t_order_item (item_id, order_id, user_id, qty) VALUES (100, 10, 3, 1), (101, 10, 3, 2), (102, 11, 3, 5), (103, 12, 4, 1), (104, 13, 1, 7)",
	}
	for _, q := range append(slices.Clone(bindingTestSchema), data...) {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("through the proxy: %s: %v", q, err)
		}
		if _, err := ref.Exec(q); err != nil {
			t.Fatalf("directly: %s: %v", q, err)
		}
	}
	for _, q := range ormBindingJoins {
		got, want := queryStrings(t, db, q), queryStrings(t, ref, q)
		if !slices.Equal(got, want) || len(want) == 0 {
			t.Errorf("%s\nthrough the proxy %q\ndirectly          %q", q, got, want)
		}
	}

	orphans := func() map[string]string {
		t.Helper()
		out := map[string]string{}
		for _, row := range queryStrings(t, db, "SHOW SHARDING BINDING ORPHANS") {
			f := strings.Split(row, ",")
			if len(f) != 7 || f[0] != "t_order_item" || f[1] != "t_order" || f[2] != "order_id" {
				t.Fatalf("row %q", row)
			}
			out[f[3]] = f[5] + "/" + f[6]
		}
		return out
	}
	want := map[string]string{"ds_0.t_order_item_0": "1/0", "ds_0.t_order_item_1": "0/0", "ds_1.t_order_item_0": "2/0", "ds_1.t_order_item_1": "2/0"}
	if got := orphans(); !maps.Equal(got, want) {
		t.Errorf("orphans with the promise kept: %v, want %v", got, want)
	}
	// A child whose user_id differs from its parent's breaks the promise:
	// item 105 of order 11 (user 3, on ds_1) lands on ds_0.
	if _, err := db.Exec("INSERT INTO t_order_item (item_id, order_id, user_id, qty) VALUES (105, 11, 4, 9)"); err != nil {
		t.Fatal(err)
	}
	want["ds_0.t_order_item_1"] = "1/1"
	if got := orphans(); !maps.Equal(got, want) {
		t.Errorf("orphans with a misplaced child: %v, want %v", got, want)
	}

	strict := startEnv(t, envOptions{rules: bindingTestRules, server: "bindingJoins: strict"})
	for _, q := range []string{ormBindingJoins[0], ormBindingJoins[3]} {
		if _, err := strict.open(t).Query(q); errCode(err) != 1235 {
			t.Errorf("strict: %s: %v, want 1235", q, err)
		}
	}
	if got := queryOne(t, strict.open(t), "SELECT COUNT(*) FROM t_order o JOIN t_order_item i ON o.user_id = i.user_id AND o.order_id = i.order_id"); got != "5" {
		t.Errorf("strict, joined on all sharding columns: %s rows, want 5", got)
	}
	if _, err := db.QueryContext(context.Background(), "SELECT COUNT(*) FROM t_order o JOIN t_order_item i ON o.user_id = i.user_id"); errCode(err) != 1235 {
		t.Errorf("a join on user_id alone (no parent key): %v, want 1235", err)
	}
}

// bindingRowsPlaced checks, on each data source directly, that every row
// of the binding tables t_order and t_order_item is on the data node of
// its user_id and order_id (the items beside their orders) and that the
// data nodes hold as many rows in all as database ref on MariaDB.
func bindingRowsPlaced(t *testing.T, e *testEnv, ref string) {
	t.Helper()
	var orders, items int
	for i := range e.backends {
		for j := range 2 {
			for _, table := range []string{"t_order", "t_order_item"} {
				var n, misplaced int
				q := fmt.Sprintf("SELECT COUNT(*), COALESCE(SUM(user_id %% 2 <> %d OR order_id %% 2 <> %d), 0) FROM %s_%d", i, j, table, j)
				if err := e.backend(t, i).QueryRow(q).Scan(&n, &misplaced); err != nil {
					t.Fatal(err)
				}
				if misplaced != 0 {
					t.Errorf("ds_%d.%s_%d holds %d rows of another data node", i, table, j, misplaced)
				}
				if table == "t_order" {
					orders += n
				} else {
					items += n
				}
			}
		}
	}
	var wantOrders, wantItems int
	if err := e.backends[0].Open(t, ref).QueryRow("SELECT (SELECT COUNT(*) FROM t_order), (SELECT COUNT(*) FROM t_order_item)").Scan(&wantOrders, &wantItems); err != nil {
		t.Fatal(err)
	}
	if orders != wantOrders || items != wantItems {
		t.Errorf("the data nodes hold %d orders and %d items, MariaDB %d and %d", orders, items, wantOrders, wantItems)
	}
}
