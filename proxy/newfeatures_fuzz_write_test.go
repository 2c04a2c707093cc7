package proxy

import (
	"fmt"
	"math"
	"strings"
)

// The random differential generator's writes: UPDATE and DELETE with
// WHERE on and off the sharding columns, IN lists, ranges, ORDER BY and
// LIMIT; multi-table UPDATE and DELETE over binding tables and with the
// broadcast table; multi-row INSERT with explicit keys, INSERT IGNORE,
// ON DUPLICATE KEY UPDATE, REPLACE and INSERT ... SELECT; updates of a
// unique column and of the sharding columns; NULLs and the types' edge
// values. Written with featStatement's constants, so they run prepared
// with ? too.
//
// Every key a statement writes comes with its own sharding values: an
// order_id's rows, and its items', have a user_id of order_id's parity,
// an item's item_id is its order_id * 10 + k, and a t_range row's grp has
// the parity of |id|. A PRIMARY or UNIQUE key of a sharded table is
// unique per data node (README), so a duplicate key always meets its
// first copy on the same data node, as on one MariaDB. Rows that move to
// another data source (user_id + 1) are t_order's from 901 up, which no
// INSERT writes.

// writeSchema is the write family's tables, the same for the physical
// tables and the reference's. The unique key of t_order_item holds its
// table sharding column, so it is unique across data nodes; the
// broadcast and single tables' code is unique alone.
var writeSchema = map[string]string{
	"t_order": `(
  order_id BIGINT NOT NULL PRIMARY KEY,
  user_id INT NOT NULL,
  status VARCHAR(20) NULL,
  qty INT NULL,
  amount DECIMAL(12,2) NULL,
  big BIGINT UNSIGNED NULL
)`,
	"t_order_item":     strings.Replace(diffSchema["t_order_item"], "\n)", ",\n  code VARCHAR(10) NULL,\n  UNIQUE KEY uk_order_code (order_id, code)\n)", 1),
	"t_range":          diffSchema["t_range"],
	"t_feat_broadcast": writeSharedSchema,
	"t_feat_single":    writeSharedSchema,
}

// writeSharedSchema is the broadcast and the single table's definition.
const writeSharedSchema = `(
  id BIGINT NOT NULL PRIMARY KEY,
  user_id INT NOT NULL,
  qty INT NULL,
  status VARCHAR(20) NULL,
  amount DECIMAL(12,2) NULL,
  code VARCHAR(10) NULL,
  UNIQUE KEY uk_code (code)
)`

// writeKeys names each write table's primary key, by which its rows are
// read back in order.
var writeKeys = map[string]string{"t_order": "order_id", "t_order_item": "item_id", "t_range": "id", "t_feat_broadcast": "id", "t_feat_single": "id"}

// writeTables lists the write family's logical tables in the order their
// contents are compared.
var writeTables = []string{"t_order", "t_order_item", "t_range", "t_feat_broadcast", "t_feat_single"}

// writeStatuses are strings equal under utf8mb4_general_ci ('a', 'A',
// 'a '), empty, and ordinary ones.
var writeStatuses = []any{"new", "NEW", "paid", "a", "A ", "a ", "", "z", nil}

// writeCodes are unique-key values, some equal under the collation.
var writeCodes = []any{"a", "A", "a ", "b", "B ", "c", "x", nil}

// writeInts are INT values with the edges.
var writeInts = []any{0, 1, -1, 2, 5, int64(math.MaxInt32), int64(math.MinInt32), nil}

// writeOwner is a user_id for order_id o: o's parity, so that o's rows
// stay on one data source.
func (g *featStatement) writeOwner(o int) int { return o%2 + 2*g.r.IntN(5) }

// writeData returns the rows the write family starts from, as INSERT
// statements for both sides.
func writeData() []string {
	var orders, items []string
	for o := 1; o <= 40; o++ {
		user := o%2 + 2*((o*7)%5)
		qty := fmt.Sprint(writeInts[o%len(writeInts)])
		if writeInts[o%len(writeInts)] == nil {
			qty = "NULL"
		}
		big := fmt.Sprint(uint64(o) * 1234567891234567)
		switch o % 6 {
		case 0:
			big = "18446744073709551615"
		case 5:
			big = "NULL"
		}
		status := "NULL"
		if s := writeStatuses[o%len(writeStatuses)]; s != nil {
			status = quoteString(s.(string))
		}
		orders = append(orders, fmt.Sprintf("(%d, %d, %s, %s, %d.%02d, %s)", o, user, status, qty, o%7-2, (o*13)%100, big))
		for k := range o % 3 {
			code := []string{"'a'", "'b'", "NULL"}[(o+k)%3]
			items = append(items, fmt.Sprintf("(%d, %d, %d, %d, %d.%02d, %s)", o*10+k, o, user, (o+k)%5, k, o%100, code))
		}
	}
	for o := 901; o <= 906; o++ {
		orders = append(orders, fmt.Sprintf("(%d, %d, 'moving', %d, 1.00, 7)", o, o%2+2*(o%3), o%4))
	}
	var ranges []string
	for id := -8; id <= 8; id++ {
		a := max(id, -id)
		ranges = append(ranges, fmt.Sprintf("(%d, %d, %s, %d.%03d)", id, a%2+2*(a%3), quoteString([]string{"x", "X", "y", "x "}[a%4]), id%3, (a*37)%1000))
	}
	var shared []string
	for id := 1; id <= 10; id++ {
		code := "NULL"
		if id <= 5 {
			code = quoteString([]string{"a", "b", "c", "x", "y"}[id-1])
		}
		status := "NULL"
		if s := writeStatuses[id%len(writeStatuses)]; s != nil {
			status = quoteString(s.(string))
		}
		shared = append(shared, fmt.Sprintf("(%d, %d, %d, %s, %d.50, %s)", id, id%4, id%3-1, status, id%5, code))
	}
	return []string{
		"INSERT INTO t_order VALUES " + strings.Join(orders, ", "),
		"INSERT INTO t_order_item VALUES " + strings.Join(items, ", "),
		"INSERT INTO t_range VALUES " + strings.Join(ranges, ", "),
		"INSERT INTO t_feat_broadcast VALUES " + strings.Join(shared, ", "),
		"INSERT INTO t_feat_single VALUES " + strings.Join(shared, ", "),
	}
}

// either returns one of the options' strings, calling only that one (a
// constant it writes adds its argument).
func (g *featStatement) either(options ...func() string) string {
	return options[g.r.IntN(len(options))]()
}

// writeValue returns one of vals as a constant (NULL for nil).
func (g *featStatement) writeValue(vals []any) string {
	v := vals[g.r.IntN(len(vals))]
	if v == nil {
		if g.prepared && g.r.IntN(2) == 0 {
			g.args = append(g.args, nil)
			return "?"
		}
		return "NULL"
	}
	return g.constant(v)
}

// writeTable returns a table the family writes and its column roles.
func (g *featStatement) writeTable() string {
	return g.pick("t_order", "t_order", "t_order_item", "t_range", "t_feat_broadcast", "t_feat_single")
}

// writeFilter returns a predicate over table (columns prefixed by a,
// "" or "x.").
func (g *featStatement) writeFilter(table, a string) string {
	key := a + writeKeys[table]
	for {
		switch g.r.IntN(9) {
		case 0:
			return fmt.Sprintf("%s = %s", key, g.constant(g.r.IntN(45)))
		case 1:
			return fmt.Sprintf("%s IN (%s, %s, %s)", key, g.constant(g.r.IntN(45)), g.constant(g.r.IntN(45)), g.constant(g.r.IntN(12)-6))
		case 2:
			// INLINE routes no range: only a range algorithm's key and
			// the unsharded tables' take one.
			if table != "t_order" && table != "t_order_item" || g.r.IntN(8) == 0 {
				lo := g.r.IntN(40) - 8
				return fmt.Sprintf("%s BETWEEN %s AND %s", key, g.constant(lo), g.constant(lo+g.r.IntN(8)))
			}
		case 3:
			switch table {
			case "t_order", "t_order_item", "t_feat_broadcast", "t_feat_single":
				return fmt.Sprintf("%suser_id %s", a, g.either(func() string { return "= " + g.constant(g.r.IntN(10)) }, func() string { return fmt.Sprintf("IN (%s, %s)", g.constant(g.r.IntN(10)), g.constant(g.r.IntN(10))) }))
			case "t_range":
				return fmt.Sprintf("%sgrp = %s", a, g.constant(g.r.IntN(6)))
			}
		case 4:
			if table != "t_range" {
				return fmt.Sprintf("%sqty %s", a, g.either(func() string { return g.pick("IS NULL", "IS NOT NULL") }, func() string { return "> " + g.constant(g.r.IntN(4)) }, func() string { return "<=> " + g.writeValue(writeInts) }))
			}
		case 5:
			switch table {
			case "t_order", "t_feat_broadcast", "t_feat_single":
				return fmt.Sprintf("%sstatus %s %s", a, g.pick("=", "<>", "<"), g.constant(writeStatuses[g.r.IntN(len(writeStatuses)-1)]))
			case "t_order_item":
				return fmt.Sprintf("%scode = %s", a, g.constant(writeCodes[g.r.IntN(len(writeCodes)-1)]))
			case "t_range":
				return fmt.Sprintf("%sv = %s", a, g.constant(g.pick("x", "X", "y", "x ")))
			}
		case 6:
			if table == "t_order_item" {
				return fmt.Sprintf("%sorder_id IN (%s, %s)", a, g.constant(g.r.IntN(42)), g.constant(g.r.IntN(42)))
			}
			if table == "t_order" {
				return fmt.Sprintf("%sbig %s %s", a, g.pick(">", "=", "<"), g.constant(g.pick("18446744073709551615", "0", "9223372036854775808")))
			}
		case 7:
			return fmt.Sprintf("%s %% %s = %s", key, g.constant(3), g.constant(g.r.IntN(3)))
		case 8:
			if table == "t_order" {
				return fmt.Sprintf("%sorder_id > %s", a, g.constant(900))
			}
		}
	}
}

// writeWhere returns a WHERE clause over table, rarely none.
func (g *featStatement) writeWhere(table, a string) string {
	switch g.r.IntN(6) {
	case 0:
		return ""
	case 1:
		return " WHERE " + g.writeFilter(table, a) + g.pick(" AND ", " OR ") + g.writeFilter(table, a)
	}
	return " WHERE " + g.writeFilter(table, a)
}

// writeAssignment returns one column = value of table for an UPDATE's
// SET (a prefix a on both sides).
func (g *featStatement) writeAssignment(table, a string) string {
	for {
		switch g.r.IntN(8) {
		case 0:
			if table != "t_range" {
				return fmt.Sprintf("%sqty = %sqty + %s", a, a, g.constant(g.r.IntN(3)+1))
			}
		case 1:
			if table != "t_range" {
				return fmt.Sprintf("%sqty = %s", a, g.writeValue(writeInts))
			}
		case 2:
			switch table {
			case "t_order", "t_feat_broadcast", "t_feat_single":
				return fmt.Sprintf("%sstatus = %s", a, g.writeValue(writeStatuses))
			case "t_range":
				return fmt.Sprintf("%sv = %s", a, g.writeValue([]any{"x", "X ", "q", nil}))
			}
		case 3:
			switch table {
			case "t_order_item", "t_feat_broadcast", "t_feat_single":
				// A duplicate under the unique key: 1062.
				return fmt.Sprintf("%scode = %s", a, g.writeValue(writeCodes))
			}
		case 4:
			switch table {
			case "t_order":
				return fmt.Sprintf("%sbig = %s", a, g.either(func() string { return g.pick(a+"big + 1", a+"big - 1", "NULL") }, func() string { return g.constant("18446744073709551615") }))
			case "t_range":
				return fmt.Sprintf("%sw = %sw * %s", a, a, g.constant(g.pick("2", "-1.5", "1000")))
			}
		case 5:
			switch table {
			case "t_order", "t_feat_broadcast", "t_feat_single":
				return fmt.Sprintf("%samount = %samount * %s", a, a, g.constant(g.pick("2", "-1", "0.5", "99999999")))
			case "t_order_item":
				return fmt.Sprintf("%sprice = %sprice + %s", a, a, g.constant(g.pick("1", "-0.25", "999999")))
			}
		case 6:
			// The sharding columns: a user_id of the same parity keeps
			// the data source; t_order's rows from 901 move.
			switch table {
			case "t_order":
				return fmt.Sprintf("%suser_id = %suser_id + %s", a, a, g.constant(2))
			case "t_range":
				return fmt.Sprintf("%sgrp = %sgrp + %s", a, a, g.constant(2))
			}
		case 7:
			if table == "t_order" && g.r.IntN(3) == 0 {
				return fmt.Sprintf("%sqty = %sqty * %s", a, a, g.constant(2))
			}
			if table == "t_order" && a == "" {
				// The session's LAST_INSERT_ID(), set for the last row
				// changed: 1235 over several data nodes.
				return "big = LAST_INSERT_ID(big - 1)"
			}
		}
	}
}

// writeUpdate returns a single-table UPDATE or DELETE, maybe IGNORE,
// maybe with ORDER BY the key and LIMIT.
func (g *featStatement) writeUpdate() string {
	table := g.writeTable()
	var b strings.Builder
	if g.r.IntN(2) == 0 {
		fmt.Fprintf(&b, "DELETE FROM %s%s", table, g.writeWhere(table, ""))
	} else {
		set := g.writeAssignment(table, "")
		if g.r.IntN(3) == 0 {
			set += ", " + g.writeAssignment(table, "")
		}
		fmt.Fprintf(&b, "UPDATE %s%s SET %s%s", g.pick("", "", "", "IGNORE "), table, set, g.writeWhere(table, ""))
	}
	if g.r.IntN(3) == 0 {
		order := writeKeys[table] + g.pick("", " DESC")
		if table == "t_order" && g.r.IntN(2) == 0 {
			order = g.pick("qty", "status", "amount DESC") + ", " + order
		}
		fmt.Fprintf(&b, " ORDER BY %s LIMIT %s", order, g.constant(g.r.IntN(5)))
	}
	return b.String()
}

// writeMove returns an UPDATE of t_order's moving rows or of t_range's
// id, which changes a row's data source.
func (g *featStatement) writeMove() string {
	if g.r.IntN(4) == 0 {
		// A change of the primary key with the sharding column: 1235.
		return fmt.Sprintf("UPDATE t_range SET id = -id%s WHERE id %s", g.pick("", ", v = 'moved'"), g.either(func() string { return "= " + g.constant(g.r.IntN(17)-8) }, func() string {
			return fmt.Sprintf("IN (%s, %s)", g.constant(g.r.IntN(17)-8), g.constant(g.r.IntN(17)-8))
		}))
	}
	w := fmt.Sprintf("order_id = %d", 901+g.r.IntN(7))
	if g.r.IntN(2) == 0 {
		w = fmt.Sprintf("order_id > %s AND qty %s", g.constant(900), g.pick("= 1", "> 1", "IS NOT NULL"))
	}
	return fmt.Sprintf("UPDATE t_order SET user_id = user_id + %s%s WHERE %s", g.constant(g.pick("1", "3")), g.pick("", ", qty = qty + 1"), w)
}

// writeRow returns one row of table's columns with an explicit key.
func (g *featStatement) writeRow(table string) string {
	switch table {
	case "t_order":
		o := 1 + g.r.IntN(50)
		return fmt.Sprintf("(%s, %s, %s, %s, %s, %s)", g.constant(o), g.constant(g.writeOwner(o)), g.writeValue(writeStatuses), g.writeValue(writeInts),
			g.constant(g.pick("1.50", "-2.25", "0", "9999999999.99")), g.writeValue([]any{"18446744073709551615", 0, 77, nil}))
	case "t_order_item":
		o := 1 + g.r.IntN(44)
		return fmt.Sprintf("(%s, %s, %s, %s, %s, %s)", g.constant(o*10+g.r.IntN(3)), g.constant(o), g.constant(g.writeOwner(o)), g.writeValue(writeInts),
			g.constant(g.pick("1.00", "0.01", "999999.99")), g.writeValue(writeCodes))
	case "t_range":
		id := g.r.IntN(21) - 10
		a := max(id, -id)
		return fmt.Sprintf("(%s, %s, %s, %s)", g.constant(id), g.constant(a%2+2*g.r.IntN(3)), g.writeValue([]any{"x", "X", "n ", nil}), g.constant(g.pick("1.5", "-0.001", "99999.999")))
	}
	return fmt.Sprintf("(%s, %s, %s, %s, %s, %s)", g.constant(1+g.r.IntN(14)), g.constant(g.r.IntN(5)), g.writeValue(writeInts), g.writeValue(writeStatuses),
		g.constant(g.pick("1.50", "0.00")), g.writeValue(writeCodes))
}

// writeUpsert returns an ON DUPLICATE KEY UPDATE clause for table.
func (g *featStatement) writeUpsert(table string) string {
	switch table {
	case "t_range":
		return g.pick(" ON DUPLICATE KEY UPDATE w = VALUES(w)", " ON DUPLICATE KEY UPDATE v = CONCAT(v, VALUES(v)), w = w + 1")
	case "t_order":
		return g.pick(" ON DUPLICATE KEY UPDATE qty = qty + 1", " ON DUPLICATE KEY UPDATE qty = VALUES(qty), status = VALUES(status)",
			" ON DUPLICATE KEY UPDATE amount = amount + VALUES(amount), big = VALUES(big)", " ON DUPLICATE KEY UPDATE user_id = VALUES(user_id)",
			" ON DUPLICATE KEY UPDATE status = NULL", " ON DUPLICATE KEY UPDATE status = 'a '", " ON DUPLICATE KEY UPDATE big = LAST_INSERT_ID(big)",
			// A sharding column changed in the clause: 1235.
			" ON DUPLICATE KEY UPDATE user_id = user_id + 2")
	case "t_order_item":
		return g.pick(" ON DUPLICATE KEY UPDATE qty = qty + 1", " ON DUPLICATE KEY UPDATE qty = VALUES(qty), code = VALUES(code)",
			" ON DUPLICATE KEY UPDATE code = 'c'", " ON DUPLICATE KEY UPDATE code = 'A '", " ON DUPLICATE KEY UPDATE code = NULL", " ON DUPLICATE KEY UPDATE item_id = LAST_INSERT_ID(item_id)")
	}
	return g.pick(" ON DUPLICATE KEY UPDATE qty = qty + 1", " ON DUPLICATE KEY UPDATE qty = VALUES(qty), code = VALUES(code)",
		" ON DUPLICATE KEY UPDATE code = 'c'", " ON DUPLICATE KEY UPDATE code = 'A '", " ON DUPLICATE KEY UPDATE code = NULL", " ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id)")
}

// writeInsert returns a multi-row INSERT, INSERT IGNORE, REPLACE or
// upsert with explicit keys, or an INSERT ... SELECT.
func (g *featStatement) writeInsert() string {
	table := g.writeTable()
	if g.r.IntN(4) == 0 {
		return g.writeInsertSelect()
	}
	verb := g.pick("INSERT INTO", "INSERT INTO", "INSERT IGNORE INTO", "REPLACE INTO")
	var rows []string
	for range 1 + g.r.IntN(4) {
		rows = append(rows, g.writeRow(table))
	}
	q := fmt.Sprintf("%s %s VALUES %s", verb, table, strings.Join(rows, ", "))
	if verb != "REPLACE INTO" && g.r.IntN(2) == 0 {
		if table != "t_range" && g.r.IntN(5) == 0 {
			// MySQL 8's row alias, which MariaDB does not read (1064).
			return q + " AS new ON DUPLICATE KEY UPDATE qty = new.qty"
		}
		q += g.writeUpsert(table)
	}
	return q
}

// writeInsertSelect returns an INSERT ... SELECT whose rows keep the
// key's sharding values: from t_order to itself, its items or the
// broadcast table, and from the broadcast or single table to t_order.
func (g *featStatement) writeInsertSelect() string {
	verb := g.pick("INSERT INTO", "INSERT IGNORE INTO", "REPLACE INTO")
	upsert := ""
	if verb == "INSERT INTO" && g.r.IntN(2) == 0 {
		upsert = g.pick(" ON DUPLICATE KEY UPDATE qty = VALUES(qty)", " ON DUPLICATE KEY UPDATE qty = qty + 1")
	}
	kind := g.r.IntN(5)
	if kind == 3 {
		src := g.pick("t_feat_broadcast", "t_feat_single")
		return fmt.Sprintf("%s t_order (order_id, user_id, status, qty, amount) SELECT id * 2 + %s, user_id * 2, status, qty, amount FROM %s%s%s", verb, g.constant(g.pick("0", "300")), src, g.writeWhere(src, ""), upsert)
	}
	// Constants in the select list come before the WHERE clause's; an
	// even shift keeps order_id's parity.
	shift := g.constant(g.pick("0", "100", "2", "200"))
	w := fmt.Sprintf(" WHERE order_id %% %s < %s", g.constant(9), g.constant(g.r.IntN(9)))
	if g.r.IntN(2) == 0 {
		w += " AND " + g.writeFilter("t_order", "")
	}
	switch kind {
	case 0:
		return fmt.Sprintf("%s t_order (order_id, user_id, status, qty) SELECT order_id + %s, user_id, status, qty FROM t_order%s%s", verb, shift, w, upsert)
	case 1, 2:
		return fmt.Sprintf("%s t_order_item (item_id, order_id, user_id, qty) SELECT order_id * 10 + %s %% 3, order_id, user_id, qty FROM t_order%s%s", verb, shift, w, upsert)
	}
	// A change of the broadcast table from sharded rows: 1235.
	return fmt.Sprintf("%s t_feat_broadcast (id, user_id, qty, status) SELECT order_id + %s, user_id, qty, status FROM t_order%s%s", verb, shift, w, upsert)
}

// writeMulti returns a multi-table UPDATE or DELETE over the binding
// tables, or with the broadcast table.
func (g *featStatement) writeMulti() string {
	on := "o.user_id = i.user_id AND o.order_id = i.order_id"
	switch g.r.IntN(8) {
	case 0, 6:
		return fmt.Sprintf("UPDATE t_order o JOIN t_order_item i ON %s SET i.qty = o.qty + %s, o.status = %s%s", on, g.constant(1), g.writeValue(writeStatuses), g.writeWhere("t_order", "o."))
	case 1, 7:
		return fmt.Sprintf("DELETE %s FROM t_order o JOIN t_order_item i ON %s%s", g.pick("i", "o, i", "o"), on, g.writeWhere("t_order", "o."))
	case 2:
		return fmt.Sprintf("UPDATE t_order o, t_order_item i SET %s WHERE %s%s", g.either(func() string { return "i.code = " + g.writeValue(writeCodes) }, func() string { return g.pick("o.qty = i.qty", "i.price = i.price * 2") }), on, strings.Replace(g.writeWhere("t_order", "o."), " WHERE ", " AND ", 1))
	case 3:
		// Sharded rows from the broadcast table's values.
		return fmt.Sprintf("UPDATE t_order o JOIN t_feat_broadcast b ON b.user_id = o.user_id SET o.qty = b.qty, o.amount = b.amount%s", g.writeWhere("t_order", "o."))
	case 4:
		// The broadcast table from sharded rows: every copy would
		// differ, 1235.
		return fmt.Sprintf("UPDATE t_feat_broadcast b JOIN t_order o ON b.user_id = o.user_id SET b.qty = o.qty%s", g.writeWhere("t_order", "o."))
	}
	return fmt.Sprintf("DELETE o FROM t_order o JOIN t_feat_broadcast b ON b.user_id = o.user_id WHERE b.status %s %s", g.pick("=", "<>"), g.constant(writeStatuses[g.r.IntN(len(writeStatuses)-1)]))
}

// writeStatement returns one random write.
func (g *featStatement) writeStatement() string {
	switch g.r.IntN(10) {
	case 0, 1, 2:
		return g.writeUpdate()
	case 3, 4, 5:
		return g.writeInsert()
	case 6, 7:
		return g.writeMulti()
	case 8:
		return g.writeMove()
	}
	return g.writeOther()
}

// writeOther returns the rarer shapes: an UPDATE or DELETE filtered by
// IN (SELECT ...), a sharding column assigned the value its WHERE clause
// pins, a primary key changed, INSERT ... SET, a NULL sharding value, a
// multi-table UPDATE with ORDER BY and LIMIT (MariaDB's 1221), ORDER BY
// and LIMIT on the broadcast and single tables.
func (g *featStatement) writeOther() string {
	switch g.r.IntN(8) {
	case 0:
		return fmt.Sprintf("UPDATE t_order SET qty = qty + 1 WHERE order_id %s (SELECT order_id FROM t_order_item WHERE qty > %s)", g.pick("IN", "NOT IN"), g.constant(g.r.IntN(4)))
	case 1:
		return fmt.Sprintf("DELETE FROM t_order_item WHERE order_id IN (SELECT order_id FROM t_order WHERE status = %s)", g.constant(writeStatuses[g.r.IntN(len(writeStatuses)-1)]))
	case 2:
		o := 1 + g.r.IntN(44)
		u := g.writeOwner(o)
		return fmt.Sprintf("UPDATE t_order SET user_id = %s, qty = %s WHERE user_id = %s AND order_id = %s", g.constant(u), g.writeValue(writeInts), g.constant(u), g.constant(o))
	case 3:
		return fmt.Sprintf("UPDATE %s SET id = id + %s WHERE id %s %s", g.pick("t_feat_broadcast", "t_feat_single"), g.constant(g.r.IntN(3)+1), g.pick(">", "<", "="), g.constant(g.r.IntN(12)))
	case 4:
		o := 1 + g.r.IntN(50)
		return fmt.Sprintf("INSERT %sINTO t_order SET order_id = %s, user_id = %s, status = %s", g.pick("", "IGNORE "), g.constant(o), g.constant(g.writeOwner(o)), g.writeValue(writeStatuses))
	case 5:
		o := 1 + g.r.IntN(50)
		return fmt.Sprintf("INSERT INTO t_order (order_id, user_id, qty) VALUES (%s, %s, 1)", g.constant(o), g.writeValue([]any{nil}))
	case 6:
		return fmt.Sprintf("UPDATE t_order o JOIN t_order_item i ON o.user_id = i.user_id AND o.order_id = i.order_id SET i.qty = %s ORDER BY o.order_id, i.item_id LIMIT %s", g.constant(3), g.constant(2))
	}
	table := g.pick("t_feat_broadcast", "t_feat_single")
	verb := g.either(func() string { return "DELETE FROM " + table }, func() string { return "UPDATE " + table + " SET " + g.writeAssignment(table, "") })
	return fmt.Sprintf("%s%s ORDER BY %s, id LIMIT %s", verb, g.writeWhere(table, ""), g.pick("qty", "status DESC", "code"), g.constant(g.r.IntN(4)))
}
