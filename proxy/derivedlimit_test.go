package proxy

import (
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// sequelizeInclude is what Sequelize 6 (mysql2) sends for
// Order.findAll({ include: [{ model: Item }], ... , limit }) with Order
// hasMany Item (captured from its log): the parents in a derived table
// carrying the WHERE, ORDER BY and LIMIT (first %s), the children
// LEFT OUTER JOINed to it, and the ORDER BY again outside (second %s).
const sequelizeInclude = "SELECT `Order`.*, `Items`.`item_id` AS `Items.item_id`, `Items`.`order_id` AS `Items.order_id`, `Items`.`user_id` AS `Items.user_id`, `Items`.`qty` AS `Items.qty` " +
	"FROM (SELECT `Order`.`order_id`, `Order`.`user_id`, `Order`.`status` FROM `t_order` AS `Order` %s) AS `Order` " +
	"LEFT OUTER JOIN `t_order_item` AS `Items` ON `Order`.`order_id` = `Items`.`order_id`%s;"

func seqInclude(inner, outer string) string { return fmt.Sprintf(sequelizeInclude, inner, outer) }

// sequelizeRequired is what Sequelize 6 sends for the same include with
// required: true (captured from its log): the derived table keeps only
// the parents that have a child, by a subquery on the children
// correlated on the parent's key (its WHERE first, then AND, when the
// include has one: first %s; the child's own WHERE before the
// correlation inside it: second %s), its ORDER BY and LIMIT after (third
// %s), and the children INNER JOINed (their WHERE again in the ON clause:
// fourth %s) with the ORDER BY again outside (fifth %s).
const sequelizeRequired = "SELECT `Order`.*, `Items`.`item_id` AS `Items.item_id`, `Items`.`order_id` AS `Items.order_id`, `Items`.`user_id` AS `Items.user_id`, `Items`.`qty` AS `Items.qty` " +
	"FROM (SELECT `Order`.`order_id`, `Order`.`user_id`, `Order`.`status` FROM `t_order` AS `Order` " +
	"WHERE %s( SELECT `order_id` FROM `t_order_item` AS `Items` WHERE (%s`Items`.`order_id` = `Order`.`order_id`) LIMIT 1 ) IS NOT NULL %s) AS `Order` " +
	"INNER JOIN `t_order_item` AS `Items` ON `Order`.`order_id` = `Items`.`order_id`%s%s;"

func seqRequired(where, itemWhere, inner, on, outer string) string {
	return fmt.Sprintf(sequelizeRequired, where, itemWhere, inner, on, outer)
}

// TestDerivedLimitFirst runs the statements Sequelize writes for a
// hasMany include with a limit (findAll, findAndCountAll, a nested
// include) through the proxy over binding tables on 2 data sources x 2
// tables, whose parents and their children live on several data nodes,
// and on one MariaDB holding the same rows: the proxy reads the derived
// table with its ORDER BY and LIMIT first, across data nodes, and joins
// the children to the rows it chose. Rows (in order, or as a multiset
// where the ORDER BY leaves the children of a parent in no order) and
// column definitions (but for the children's key flags, a plan's) must
// be MariaDB's, as text and prepared (LIMIT ? and a WHERE ?), with
// OFFSET, ORDER BY DESC, a WHERE whose collation matches 'new', 'NEW'
// and 'new ', no row, a LIMIT past the rows, an OFFSET past the end, a
// UNIQUE key instead of the PRIMARY KEY, and inside a transaction whose
// new parent the derived table must see. Without ORDER BY any rows are
// MariaDB's answer: the parents chosen and their children are checked.
// Refused with 1235 naming why: rows equal in the ORDER BY on both sides
// of the LIMIT or the OFFSET, an ORDER BY of an expression not selected,
// no unique key selected; the connection goes on.
func TestDerivedLimitFirst(t *testing.T) {
	e, db, ref := inSubqueryEnv(t, "dlimit_ref")
	execBoth(t, db, ref, selectSubqueryRows...)
	d := subqueryDiff{t: t, db: db, ref: ref}
	// Column definitions, but not the rows, which answered and
	// sameMultiset compare.
	meta := columnsDiffWith(t, e, "dlimit_ref", columnsCheck{ignore: itemKeyFlags})
	answered := func(queries ...string) {
		t.Helper()
		for _, q := range queries {
			if want := d.same(q); strings.HasPrefix(want, "error") {
				t.Errorf("%s directly: %s; the reference is not what this test assumes", q, want)
			}
			meta(q)
		}
	}

	// Total orders: rows in order, column definitions and values.
	ordered := []string{
		seqInclude("ORDER BY `Order`.`order_id` ASC LIMIT 3", " ORDER BY `Order`.`order_id` ASC, `Items`.`qty` ASC"),
		seqInclude("ORDER BY `Order`.`order_id` ASC LIMIT 2, 3", " ORDER BY `Order`.`order_id` ASC, `Items`.`qty` ASC"),
		seqInclude("ORDER BY `Order`.`order_id` DESC LIMIT 100", " ORDER BY `Order`.`order_id` DESC, `Items`.`qty` ASC"),
		seqInclude("WHERE `Order`.`user_id` IN (99) ORDER BY `Order`.`order_id` LIMIT 3", " ORDER BY `Order`.`order_id`, `Items`.`qty`"),
		seqInclude("ORDER BY `Order`.`order_id` LIMIT 50, 3", " ORDER BY `Order`.`order_id`, `Items`.`qty`"),
		seqInclude("ORDER BY `Order`.`status` ASC, `Order`.`order_id` ASC LIMIT 3", " ORDER BY `Order`.`status` ASC, `Order`.`order_id` ASC, `Items`.`qty`"),
		// The four statuses equal to 'new' (new, NEW, 'new ') are all
		// chosen: no tie at the LIMIT.
		seqInclude("ORDER BY `Order`.`status` ASC LIMIT 4", " ORDER BY `Order`.`order_id`, `Items`.`qty`"),
		seqInclude("ORDER BY `Order`.`status` DESC LIMIT 1", " ORDER BY `Order`.`order_id`, `Items`.`qty`"),
		// A nested include (Order -> Items -> their Order), captured.
		"SELECT `Order`.*, `Items`.`item_id` AS `Items.item_id`, `Items`.`order_id` AS `Items.order_id`, `Items`.`user_id` AS `Items.user_id`, `Items`.`qty` AS `Items.qty`, " +
			"`Items->Order`.`order_id` AS `Items.Order.order_id`, `Items->Order`.`user_id` AS `Items.Order.user_id`, `Items->Order`.`status` AS `Items.Order.status` " +
			"FROM (SELECT `Order`.`order_id`, `Order`.`user_id`, `Order`.`status` FROM `t_order` AS `Order` ORDER BY `Order`.`order_id` ASC LIMIT 3) AS `Order` " +
			"LEFT OUTER JOIN `t_order_item` AS `Items` ON `Order`.`order_id` = `Items`.`order_id` LEFT OUTER JOIN `t_order` AS `Items->Order` ON `Items`.`order_id` = `Items->Order`.`order_id` " +
			"ORDER BY `Order`.`order_id` ASC, `Items`.`qty` ASC;",
		"SELECT o.order_id, o.amount, i.item_id, i.price FROM (SELECT order_id, amount FROM t_order WHERE amount > 1 ORDER BY amount DESC LIMIT 1, 2) AS o " +
			"JOIN t_order_item AS i ON i.order_id = o.order_id ORDER BY o.amount DESC, i.item_id",
	}
	answered(ordered...)
	// A derived table read row by row, joined on the parent's key,
	// pairs as the tables do (no LIMIT to evaluate first).
	answered("SELECT COUNT(*) FROM (SELECT order_id FROM t_order) sub JOIN t_order_item i ON i.order_id = sub.order_id",
		"SELECT sub.*, i.item_id FROM (SELECT order_id AS k, status FROM t_order WHERE status <> 'paid') AS sub LEFT JOIN t_order_item i ON i.order_id = sub.k ORDER BY sub.k, i.item_id")

	// Sequelize's own statements, whose ORDER BY leaves the children of a
	// parent in no order: the same rows and column definitions.
	multiset := []string{
		seqInclude("ORDER BY `Order`.`user_id` DESC, `Order`.`order_id` ASC LIMIT 3", " ORDER BY `Order`.`user_id` DESC, `Order`.`order_id` ASC"),
		seqInclude("WHERE `Order`.`status` = 'new' ORDER BY `Order`.`order_id` DESC LIMIT 3", " ORDER BY `Order`.`order_id` DESC"),
		seqInclude("ORDER BY `Order`.`order_id` ASC LIMIT 1, 3", " ORDER BY `Order`.`order_id` ASC"),
		seqInclude("WHERE `Order`.`user_id` IN (1, 2) ORDER BY `Order`.`user_id` ASC, `Order`.`order_id` ASC LIMIT 4", " ORDER BY `Order`.`user_id` ASC, `Order`.`order_id` ASC"),
		// findAndCountAll's count, beside its page.
		"SELECT count(`Order`.`order_id`) AS `count` FROM `t_order` AS `Order` LEFT OUTER JOIN `t_order_item` AS `Items` ON `Order`.`order_id` = `Items`.`order_id`;",
	}
	for _, q := range multiset {
		sameMultiset(t, db, ref, q)
		meta(q)
	}

	// required: true: only parents with a child are paged (orders 16,
	// 17 and 18 have none), by a subquery correlated on the parent's key,
	// which binding tables pair with the parent's data node. Rows in
	// order where the ORDER BY is total, as multisets where it leaves the
	// children of a parent in no order (Sequelize's own), and column
	// definitions.
	// MariaDB may read the derived table of an INNER JOIN by a key it
	// builds on it (key0), which marks the columns of that key
	// PART_KEY_FLAG: a plan's flags, by the rows (the same statement
	// with order_id IN (11) alone builds none), as the children's.
	requiredMeta := columnsDiffWith(t, e, "dlimit_ref", columnsCheck{ignore: func(*mysql.Field) uint16 { return joinKeyFlags }})
	required := []string{
		seqRequired("", "", "ORDER BY `Order`.`order_id` ASC LIMIT 1, 3", "", " ORDER BY `Order`.`order_id` ASC, `Items`.`qty` ASC"),
		seqRequired("", "", "ORDER BY `Order`.`order_id` DESC LIMIT 2", "", " ORDER BY `Order`.`order_id` DESC, `Items`.`item_id`"),
		seqRequired("", "", "ORDER BY `Order`.`status` DESC, `Order`.`order_id` LIMIT 4", "", " ORDER BY `Order`.`status` DESC, `Order`.`order_id`, `Items`.`item_id`"),
		seqRequired("", "", "ORDER BY `Order`.`order_id` LIMIT 20, 3", "", " ORDER BY `Order`.`order_id`, `Items`.`item_id`"),
		// Correlated on all the sharding columns, as a hand-written query
		// may be.
		strings.Replace(seqRequired("", "`Items`.`user_id` = `Order`.`user_id` AND ", "ORDER BY `Order`.`order_id` DESC LIMIT 3", "", " ORDER BY `Order`.`order_id` DESC, `Items`.`item_id`"),
			"ON `Order`.`order_id` = `Items`.`order_id`", "ON `Order`.`order_id` = `Items`.`order_id` AND `Order`.`user_id` = `Items`.`user_id`", 1),
	}
	for _, q := range required {
		if want := d.same(q); strings.HasPrefix(want, "error") {
			t.Errorf("%s directly: %s; the reference is not what this test assumes", q, want)
		}
		requiredMeta(q)
	}
	for _, q := range []string{
		// findAll({ include: [{ model: Item, required: true }], order, limit, offset }).
		seqRequired("", "", "ORDER BY `Order`.`order_id` ASC LIMIT 1, 3", "", " ORDER BY `Order`.`order_id` ASC"),
		// findAndCountAll's page and its count.
		seqRequired("`Order`.`user_id` IN (1, 2, 5) AND ", "", "ORDER BY `Order`.`order_id` DESC LIMIT 1, 2", "", " ORDER BY `Order`.`order_id` DESC"),
		"SELECT count(`Order`.`order_id`) AS `count` FROM `t_order` AS `Order` INNER JOIN `t_order_item` AS `Items` ON `Order`.`order_id` = `Items`.`order_id` WHERE `Order`.`user_id` IN (1, 2, 5);",
		// An include with its own where: { qty: { [Op.gt]: 1 } }.
		seqRequired("", "`Items`.`qty` > 1 AND ", "ORDER BY `Order`.`order_id` ASC LIMIT 3", " AND `Items`.`qty` > 1", " ORDER BY `Order`.`order_id` ASC"),
	} {
		sameMultiset(t, db, ref, q)
		requiredMeta(q)
	}
	// Without ORDER BY: parents with children only (a childless one
	// would leave fewer parents after the INNER JOIN).
	anyParents(t, db, ref, seqRequired("", "", "LIMIT 3", "", ""), 3)
	anyParents(t, db, ref, seqRequired("", "", "LIMIT 4, 5", "", ""), 2)
	requiredPrepared := seqRequired("`Order`.`user_id` IN (?, ?) AND ", "", "ORDER BY `Order`.`order_id` DESC LIMIT ?, ?", "", " ORDER BY `Order`.`order_id` DESC, `Items`.`item_id`")
	for _, args := range [][]any{{2, 3, 0, 3}, {1, 4, 1, 100}, {9, 7, 0, 2}, {2, 3, 5, 1}} {
		d.same(requiredPrepared, args...)
		requiredMeta(requiredPrepared, args...)
		d.preparedTwice(requiredPrepared, args...)
	}
	d.refused([]struct{ query, reason string }{
		// Correlated on user_id alone, which does not name one parent:
		// an order's children on another data node would be missed.
		{strings.Replace(seqRequired("", "", "ORDER BY `Order`.`order_id` LIMIT 3", "", ""), "(`Items`.`order_id` = `Order`.`order_id`)", "(`Items`.`user_id` = `Order`.`user_id`)", 1),
			"cannot run the statement over the rows it chose: 1235: a subquery or derived table on sharded table t_order_item must reach the same single data node"},
		{seqRequired("", "", "ORDER BY `Order`.`status` ASC LIMIT 1", "", ""), "rows equal in its ORDER BY on both sides of its LIMIT or OFFSET"},
	})

	// Without ORDER BY any parents are MariaDB's answer: as many as the
	// LIMIT takes, each with its children.
	anyParents(t, db, ref, seqInclude("LIMIT 3", ""), 3)
	anyParents(t, db, ref, seqInclude("LIMIT 2, 3", ""), 3)
	anyParents(t, db, ref, seqInclude("WHERE `Order`.`user_id` IN (1, 2) LIMIT 3", ""), 3)
	anyParents(t, db, ref, seqInclude("LIMIT 7, 5", ""), 2)

	prepared := "SELECT `Order`.*, `Items`.`item_id` AS `Items.item_id`, `Items`.`qty` AS `Items.qty` FROM (SELECT `Order`.`order_id`, `Order`.`user_id`, `Order`.`status` FROM `t_order` AS `Order` " +
		"WHERE `Order`.`user_id` IN (?, ?) ORDER BY `Order`.`order_id` DESC LIMIT ?) AS `Order` LEFT OUTER JOIN `t_order_item` AS `Items` ON `Order`.`order_id` = `Items`.`order_id` ORDER BY `Order`.`order_id` DESC, `Items`.`qty`"
	for _, pt := range []preparedCase{
		{prepared, []any{2, 3, 3}},
		{prepared, []any{1, 4, 100}},
		{prepared, []any{9, 7, 2}},
		{prepared, []any{2, 3, 0}},
		{"SELECT o.*, i.item_id FROM (SELECT order_id, status FROM t_order ORDER BY order_id LIMIT ?, ?) AS o LEFT JOIN t_order_item AS i ON o.order_id = i.order_id ORDER BY o.order_id, i.item_id", []any{2, 3}},
		{"SELECT o.*, i.item_id FROM (SELECT order_id, status FROM t_order ORDER BY order_id LIMIT ?, ?) AS o LEFT JOIN t_order_item AS i ON o.order_id = i.order_id ORDER BY o.order_id, i.item_id", []any{20, 3}},
	} {
		d.same(pt.query, pt.args...)
		meta(pt.query, pt.args...)
		d.preparedTwice(pt.query, pt.args...)
	}

	// Inside a transaction the derived table sees its new parent.
	txs := [2]*sql.Tx{}
	for i, c := range []*sql.DB{db, ref} {
		var err error
		if txs[i], err = c.Begin(); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{
			"INSERT INTO t_order (order_id, user_id, status) VALUES (19, 3, 'txn')",
			"INSERT INTO t_order_item (item_id, order_id, user_id, qty) VALUES (301, 19, 3, 4), (302, 19, 3, 5)",
		} {
			if _, err := txs[i].Exec(q); err != nil {
				t.Fatal(err)
			}
		}
	}
	inTxn := seqInclude("ORDER BY `Order`.`order_id` DESC LIMIT 2", " ORDER BY `Order`.`order_id` DESC, `Items`.`qty`")
	if got, want := subqueryAnswer(txs[0], inTxn), subqueryAnswer(txs[1], inTxn); got != want || !strings.Contains(want, "txn") {
		t.Errorf("in a transaction: %s\nthrough the proxy: %s\ndirectly:          %s", inTxn, got, want)
	}
	for _, tx := range txs {
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
	}

	d.refused([]struct{ query, reason string }{
		// 'new', 'NEW', 'new ' and 'new' are equal: which two MariaDB
		// takes is its own.
		{seqInclude("ORDER BY `Order`.`status` ASC LIMIT 2", ""), "rows equal in its ORDER BY on both sides of its LIMIT or OFFSET"},
		{seqInclude("ORDER BY `Order`.`status` ASC LIMIT 2, 4", ""), "rows equal in its ORDER BY on both sides of its LIMIT or OFFSET"},
		{seqInclude("ORDER BY `Order`.`user_id` LIMIT 1", ""), "rows equal in its ORDER BY on both sides of its LIMIT or OFFSET"},
		{seqInclude("ORDER BY `Order`.`user_id` + 0 LIMIT 2", ""), "its ORDER BY names an expression it does not select"},
	})

	// A UNIQUE key of one column names the rows as well; without a
	// unique key among the columns, 1235.
	execBoth(t, db, ref, "ALTER TABLE t_order DROP PRIMARY KEY, ADD UNIQUE KEY uk_order (order_id)")
	answered(ordered[0], ordered[1])
	execBoth(t, db, ref, "ALTER TABLE t_order DROP INDEX uk_order")
	d.refused([]struct{ query, reason string }{
		{ordered[0], "selects no unique key of its table"},
	})
	execBoth(t, db, ref, "ALTER TABLE t_order ADD PRIMARY KEY (order_id)")
	answered(ordered[0])
}

// sameMultiset compares q's column names and rows, as multisets,
// through the proxy (db) and on the reference.
func sameMultiset(t *testing.T, db, ref *sql.DB, q string) {
	t.Helper()
	got, want := sortedAnswer(t, db, q), sortedAnswer(t, ref, q)
	if got != want || strings.HasPrefix(want, "error") {
		t.Errorf("%s\nthrough the proxy: %s\ndirectly:          %s", q, got, want)
	}
}

// sortedAnswer is subqueryAnswer with the rows sorted.
func sortedAnswer(t *testing.T, c *sql.DB, q string) string {
	t.Helper()
	answer := subqueryAnswer(c, q)
	if strings.HasPrefix(answer, "error") {
		return answer
	}
	cols, rows, _ := strings.Cut(answer, ": ")
	lines := strings.Split(rows, "; ")
	slices.Sort(lines)
	return cols + ": " + strings.Join(lines, "; ")
}

// anyParents checks q, a Sequelize include whose derived table has LIMIT
// and no ORDER BY: n parents, each with the children MariaDB joins to it.
func anyParents(t *testing.T, db, ref *sql.DB, q string, n int) {
	t.Helper()
	got := queryStrings(t, db, q)
	parents := map[string]bool{}
	for _, row := range got {
		parents[strings.SplitN(row, ",", 2)[0]] = true
	}
	if len(parents) != n {
		t.Errorf("%s: %d parents through the proxy, want %d: %q", q, len(parents), n, got)
	}
	if len(parents) == 0 {
		return
	}
	ids := slices.Sorted(func(yield func(string) bool) {
		for id := range parents {
			if !yield(id) {
				return
			}
		}
	})
	chosen := seqInclude("WHERE `Order`.`order_id` IN ("+strings.Join(ids, ", ")+") LIMIT 100", "")
	want := queryStrings(t, ref, chosen)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s\nthrough the proxy: %q\nMariaDB for its parents: %q", q, got, want)
	}
}

// joinKeyFlags are the key flags MariaDB gives a joined table's column
// by its plan, not its table: the same statement over the same rows
// describes t_order_item.item_id with PRI_KEY_FLAG and PART_KEY_FLAG
// under LIMIT 3 and without them under LIMIT 1, 3 or with no row chosen
// (read on 10.11), and each data node plans its own rows.
const joinKeyFlags = mysql.PRI_KEY_FLAG | mysql.UNIQUE_KEY_FLAG | 8 /* MULTIPLE_KEY_FLAG */ | mysql.PART_KEY_FLAG

// itemKeyFlags are joinKeyFlags for t_order_item's columns.
func itemKeyFlags(f *mysql.Field) uint16 {
	if string(f.OrgTable) == "t_order_item" {
		return joinKeyFlags
	}
	return 0
}
