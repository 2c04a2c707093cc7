package proxy

import (
	"fmt"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// The random differential generator's joins and derived tables, in the
// shapes ORMs write: binding tables joined on their sharding columns or
// on the foreign key alone, with the broadcast and the single table,
// INNER and LEFT; WHERE on either side (IS NULL on a LEFT JOIN's right
// side); GROUP BY, HAVING, DISTINCT, ORDER BY and LIMIT over a join;
// COUNT(*) of a derived table, a derived table joined; EXISTS and IN
// correlated on the sharding columns and uncorrelated over other tables.

// joinColumn is a column of a join: its qualified name, whether it is a
// string of utf8mb4_general_ci (equal strings differ), and whether it is
// a row's key on its side.
type joinColumn struct {
	name string
	str  bool
	key  bool
}

// joinAliases are the joined tables' aliases and their columns.
var joinAliases = map[string][]joinColumn{
	"o": {{name: "order_id", key: true}, {name: "user_id"}, {name: "status", str: true}, {name: "amount"}, {name: "qty"}},
	"i": {{name: "item_id", key: true}, {name: "order_id"}, {name: "user_id"}, {name: "qty"}, {name: "price"}},
	"b": {{name: "id", key: true}, {name: "user_id"}, {name: "qty"}, {name: "status", str: true}, {name: "amount"}},
	"s": {{name: "id", key: true}, {name: "user_id"}, {name: "qty"}, {name: "status", str: true}, {name: "amount"}},
}

// joinTables are the aliases' tables.
var joinTables = map[string]string{"o": "t_order", "i": "t_order_item", "b": "t_feat_broadcast", "s": "t_feat_single"}

// joinFrom is a FROM clause over aliases, and a condition its WHERE
// clause must hold ("" for none).
type joinFrom struct {
	from    string
	aliases []string
	where   string
}

// column returns a random column of the join, qualified.
func (g *featStatement) joinColumnOf(f joinFrom) joinColumn {
	a := f.aliases[g.r.IntN(len(f.aliases))]
	c := joinAliases[a][g.r.IntN(len(joinAliases[a]))]
	c.name = a + "." + c.name
	return c
}

// bindingOn returns t_order o's and t_order_item i's join condition: all
// the sharding columns, the foreign key alone, or with an extra
// condition on either side.
func (g *featStatement) bindingOn() string {
	// The foreign key alone pairs only with a declared key column, which
	// these rules lack: 1235, seldom.
	on := g.pick("o.order_id = i.order_id AND o.user_id = i.user_id", "i.user_id = o.user_id AND i.order_id = o.order_id", "o.order_id = i.order_id AND i.user_id = o.user_id",
		"o.user_id = i.user_id AND o.order_id = i.order_id", "o.order_id = i.order_id AND o.user_id = i.user_id", "i.order_id = o.order_id")
	switch g.r.IntN(4) {
	case 0:
		on += fmt.Sprintf(" AND i.qty %s %s", g.pick(">", "<=", "<>"), g.constant(g.r.IntN(6)))
	case 1:
		on += fmt.Sprintf(" AND o.status %s %s", g.pick("=", "<>"), g.constant(g.pick("new", "paid", "z")))
	}
	return on
}

// joinSource returns a random join.
func (g *featStatement) joinSource() joinFrom {
	outer := func() string { return g.pick("JOIN", "INNER JOIN", "LEFT JOIN", "LEFT OUTER JOIN") }
	switch g.r.IntN(7) {
	case 0, 1:
		return joinFrom{from: fmt.Sprintf("t_order o %s t_order_item i ON %s", outer(), g.bindingOn()), aliases: []string{"o", "i"}}
	case 2:
		// The child first, its parent joined on the foreign key (Django's
		// select_related from the item).
		return joinFrom{from: fmt.Sprintf("t_order_item i %s t_order o ON %s", g.pick("JOIN", "LEFT JOIN"), g.bindingOn()), aliases: []string{"i", "o"}}
	case 3:
		extra := ""
		if g.r.IntN(3) == 0 {
			extra = fmt.Sprintf(" AND b.qty %s %s", g.pick(">", "<"), g.constant(g.r.IntN(4)))
		}
		return joinFrom{from: fmt.Sprintf("t_order o %s t_feat_broadcast b ON b.user_id = o.user_id%s", outer(), extra), aliases: []string{"o", "b"}}
	case 4:
		return joinFrom{from: fmt.Sprintf("t_order o %s t_order_item i ON %s %s t_feat_broadcast b ON b.user_id = o.user_id", outer(), g.bindingOn(), g.pick("JOIN", "LEFT JOIN")), aliases: []string{"o", "i", "b"}}
	case 5:
		// The broadcast table first: its rows without a match must come
		// once, not once per data node.
		return joinFrom{from: fmt.Sprintf("t_feat_broadcast b %s t_order o ON o.user_id = b.user_id", g.pick("JOIN", "LEFT JOIN")), aliases: []string{"b", "o"}}
	}
	// The single table joins the data nodes of its data source only:
	// even user_ids.
	from := fmt.Sprintf("t_order o %s t_feat_single s ON s.user_id = o.user_id", outer())
	return joinFrom{from, []string{"o", "s"}, fmt.Sprintf("o.user_id IN (%s, %s)", g.constant(2*g.r.IntN(7)), g.constant(2*g.r.IntN(7)))}
}

// joinFilter returns a predicate over the join's columns, or over its
// sharding columns.
func (g *featStatement) joinFilter(f joinFrom) string {
	has := func(a string) bool { return strings.Contains(" "+strings.Join(f.aliases, " ")+" ", " "+a+" ") }
	for {
		a := f.aliases[g.r.IntN(len(f.aliases))]
		switch g.r.IntN(9) {
		case 0:
			// INLINE routes no range: = only.
			return fmt.Sprintf("%s.user_id = %s", a, g.constant(g.r.IntN(13)))
		case 1:
			return fmt.Sprintf("%s.user_id IN (%s, %s)", a, g.constant(g.r.IntN(13)), g.constant(g.r.IntN(13)))
		case 2:
			// On a LEFT JOIN's right side, the rows without a match.
			c := map[string]string{"o": "order_id", "i": "item_id", "b": "id", "s": "id"}[a]
			return fmt.Sprintf("%s.%s %s", a, g.pick(c, "qty"), g.pick("IS NULL", "IS NOT NULL"))
		case 3:
			lo := g.r.IntN(7) - 3
			return fmt.Sprintf("%s.qty BETWEEN %s AND %s", a, g.constant(lo), g.constant(lo+g.r.IntN(4)))
		case 4:
			if a != "i" {
				return fmt.Sprintf("%s.status %s %s", a, g.pick("=", "<>", "<"), g.constant(g.pick("new", "NEW", "paid", "a", "z", "")))
			}
		case 5:
			d := map[string]string{"o": "amount", "i": "price", "b": "amount", "s": "amount"}[a]
			return fmt.Sprintf("%s.%s %s %s", a, d, g.pick("<", ">="), g.constant(g.pick("0", "2.5", "3.33", "-1.5", "10", "20.05")))
		case 6:
			if has("o") {
				return fmt.Sprintf("o.order_id %% %s = %s", g.constant(3), g.constant(g.r.IntN(3)))
			}
		case 7:
			if has("o") {
				return fmt.Sprintf("(o.qty > %s OR o.status IS NULL)", g.constant(g.r.IntN(4)))
			}
		case 8:
			if has("o") {
				return g.joinSubquery("o")
			}
			if has("i") {
				return g.joinSubquery("i")
			}
		}
	}
}

// joinWhere returns "" or a WHERE clause over the join, holding f.where.
func (g *featStatement) joinWhere(f joinFrom) string {
	var conds []string
	if f.where != "" {
		conds = append(conds, f.where)
	}
	for range g.r.IntN(3) {
		conds = append(conds, g.joinFilter(f))
	}
	if len(conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(conds, " AND ")
}

// joinSubquery returns EXISTS, NOT EXISTS, IN or NOT IN over the binding
// table of outer (o or i), correlated on the sharding columns or the
// foreign key, or an uncorrelated one over another table.
func (g *featStatement) joinSubquery(outer string) string {
	extra := func(a string) string {
		switch g.r.IntN(3) {
		case 0:
			return fmt.Sprintf(" AND %s.qty %s %s", a, g.pick(">", "<", "="), g.constant(g.r.IntN(5)))
		case 1:
			return fmt.Sprintf(" AND %s.qty IS NULL", a)
		}
		return ""
	}
	switch g.r.IntN(5) {
	case 0, 1:
		inner, innerTable := "x", "t_order_item"
		if outer == "i" {
			innerTable = "t_order"
		}
		corr := g.pick("%[1]s.order_id = %[2]s.order_id AND %[1]s.user_id = %[2]s.user_id", "%[1]s.order_id = %[2]s.order_id")
		return fmt.Sprintf("%s (SELECT 1 FROM %s %s WHERE %s%s)", g.pick("EXISTS", "NOT EXISTS"), innerTable, inner, fmt.Sprintf(corr, inner, outer), extra(inner))
	case 2:
		// IN on the key, correlated on the data-source column.
		innerTable := "t_order_item"
		if outer == "i" {
			innerTable = "t_order"
		}
		return fmt.Sprintf("%s.order_id %s (SELECT x.order_id FROM %s x WHERE x.user_id = %s.user_id%s)", outer, g.pick("IN", "NOT IN"), innerTable, outer, extra("x"))
	case 3:
		// t_range's grp is a sharding column that INLINE routes no
		// range of: the range is on its id.
		u := g.pick("t_feat_broadcast", "t_feat_single", "t_range")
		c, w := "user_id", "user_id"
		if u == "t_range" {
			c, w = "grp", "id"
		}
		return fmt.Sprintf("%s.user_id %s (SELECT %s FROM %s WHERE %s > %s)", outer, g.pick("IN", "NOT IN"), c, u, w, g.constant(g.r.IntN(8)))
	}
	u := g.pick("t_feat_broadcast", "t_feat_single", "t_order_item")
	var w string
	if g.r.IntN(2) == 0 {
		w = fmt.Sprintf("qty %s %s", g.pick("<", ">"), g.constant(g.r.IntN(6)))
	} else {
		w = fmt.Sprintf("user_id = %s", g.constant(g.r.IntN(13)))
	}
	return fmt.Sprintf("%s.qty %s (SELECT qty FROM %s WHERE %s)", outer, g.pick("IN", "NOT IN"), u, w)
}

// joinOrder orders by cols (by position) and then by every key of the
// join, so that only rows equal in every column tie, and maybe limits.
// Sorted through a temporary table, a join's columns lose their key
// flags, which MariaDB keeps under LIMIT 0 (it reads nothing) where a
// route reads offset rows: tc ignores planFlags.
func (g *featStatement) joinOrder(tc *diffCase, f joinFrom, n int) string {
	tc.ignoreFlags |= planFlags
	var keys []string
	for i := range n {
		keys = append(keys, fmt.Sprintf("%d%s", i+1, g.pick("", " DESC")))
	}
	for _, a := range f.aliases {
		for _, c := range joinAliases[a] {
			if c.key {
				keys = append(keys, a+"."+c.name+g.pick("", " DESC"))
			}
		}
	}
	// t_feat_broadcast holds one row twice: order by its other columns
	// too, which leaves only equal rows tied.
	if strings.Contains(f.from, "t_feat_broadcast b") {
		keys = append(keys, "b.status", "b.amount", "b.qty")
	}
	if strings.Contains(f.from, "t_feat_single s") {
		keys = append(keys, "s.status", "s.amount", "s.qty")
	}
	return " ORDER BY " + strings.Join(keys, ", ") + g.joinLimit()
}

func (g *featStatement) joinLimit() string { return g.limitOffset(12, 12, 40) }

// joinSelect returns one statement over a join or a derived table.
func (g *featStatement) joinSelect() diffCase {
	tc := diffCase{fold: map[int]string{}}
	switch g.r.IntN(10) {
	case 8, 9:
		tc = g.joinORM()
	case 0, 1:
		// Rows of the join.
		f := g.joinSource()
		var cols []string
		distinct := g.r.IntN(4) == 0
		for range 1 + g.r.IntN(4) {
			c := g.joinColumnOf(f)
			if c.str && distinct {
				tc.fold[len(cols)] = gci
			}
			cols = append(cols, c.name)
		}
		d := ""
		if distinct {
			// The flags of a DISTINCT's temporary table, which a route
			// under LIMIT 0 or a pinned WHERE may not use.
			d, tc.ignoreFlags = "DISTINCT ", planFlags
		}
		tc.sql = fmt.Sprintf("SELECT %s%s FROM %s%s", d, strings.Join(cols, ", "), f.from, g.joinWhere(f))
		if g.r.IntN(2) == 0 {
			if distinct {
				tc.sql += g.orderLimit(len(cols))
			} else {
				tc.sql += g.joinOrder(&tc, f, len(cols))
			}
			tc.ordered = true
		}
	case 2, 3:
		// Groups of the join.
		f := g.joinSource()
		key := g.joinColumnOf(f)
		if key.str {
			tc.fold[0] = gci
		}
		cols := []string{key.name}
		for range 1 + g.r.IntN(3) {
			c := g.joinColumnOf(f)
			bare := c.name[strings.IndexByte(c.name, '.')+1:]
			switch g.r.IntN(5) {
			case 0:
				cols = append(cols, "COUNT(*)")
			case 1:
				cols = append(cols, "COUNT(DISTINCT "+c.name+")")
			case 2:
				if !c.str && bare != "order_id" && bare != "item_id" && bare != "id" {
					cols = append(cols, "SUM("+c.name+")")
					continue
				}
				cols = append(cols, "COUNT("+c.name+")")
			case 3:
				if c.str {
					tc.fold[len(cols)] = gci
				}
				cols = append(cols, g.pick("MAX", "MIN")+"("+c.name+")")
			default:
				cols = append(cols, "COUNT("+c.name+")")
			}
		}
		tc.sql = fmt.Sprintf("SELECT %s FROM %s%s GROUP BY %s", strings.Join(cols, ", "), f.from, g.joinWhere(f), key.name)
		if g.r.IntN(2) == 0 {
			tc.sql += fmt.Sprintf(" HAVING %s %s %s", g.pick("COUNT(*)", "MAX("+key.name+")", "COUNT(DISTINCT "+key.name+")"), g.pick(">", "<", ">="), g.constant(g.r.IntN(4)))
		}
		tc.ignoreFlags, tc.planMeta = planFlags, true
		if g.r.IntN(2) == 0 {
			tc.sql += g.orderLimit(len(cols))
			tc.ordered = true
		}
	case 4:
		// The count query of an ORM's page over a join: COUNT(*) of a
		// derived table, or COUNT(DISTINCT key) of the join (Sequelize's
		// count with include).
		f := g.joinSource()
		inner := g.joinColumnOf(f)
		switch g.r.IntN(3) {
		case 0:
			tc.sql = fmt.Sprintf("SELECT COUNT(*) FROM (SELECT %s%s FROM %s%s) AS t", g.pick("DISTINCT ", ""), inner.name, f.from, g.joinWhere(f))
		case 1:
			tc.sql = fmt.Sprintf("SELECT COUNT(*) AS __count FROM (SELECT %s AS col1, COUNT(*) AS n FROM %s%s GROUP BY %s) subquery", inner.name, f.from, g.joinWhere(f), inner.name)
		default:
			tc.sql = fmt.Sprintf("SELECT count(DISTINCT(%s)) AS count FROM %s%s", inner.name, f.from, g.joinWhere(f))
		}
		tc.ignoreFlags, tc.planMeta = planFlags, true
	case 5, 6:
		// A derived table of t_order joined with its items or the
		// broadcast table (1235 across data nodes: seldom), or one over
		// a join that an outer block reads.
		var cols []string
		switch g.r.IntN(10) {
		case 0:
			ow := g.plainWhere(featTables[0])
			d := joinFrom{aliases: []string{"o", "i"}}
			tc.sql = fmt.Sprintf("SELECT o.order_id, o.status, i.item_id, i.price FROM (SELECT order_id, user_id, status FROM t_order%s) AS o %s t_order_item i ON i.order_id = o.order_id AND i.user_id = o.user_id", ow, g.pick("JOIN", "LEFT JOIN"))
			cols = []string{"o.order_id", "o.status", "i.item_id", "i.price"}
			if g.r.IntN(2) == 0 {
				tc.sql += g.joinOrder(&tc, d, len(cols))
				tc.ordered = true
			}
		case 1:
			ow := g.plainWhere(featTables[0])
			tc.sql = fmt.Sprintf("SELECT o.user_id, b.id, b.qty FROM (SELECT DISTINCT user_id FROM t_order%s) AS o %s t_feat_broadcast b ON b.user_id = o.user_id", ow, g.pick("JOIN", "LEFT JOIN"))
			if g.r.IntN(2) == 0 {
				tc.sql += " ORDER BY o.user_id, b.id, b.qty" + g.joinLimit()
				tc.ordered = true
			}
		case 3, 4, 5, 6, 7, 8, 9:
			// One derived table over a join whose rows every data node
			// gives alone, read by an outer block that groups, filters or
			// orders them.
			f := g.joinSource()
			a, b := g.joinColumnOf(f), g.joinColumnOf(f)
			inner := fmt.Sprintf("SELECT %s AS c1, %s AS c2 FROM %s%s", a.name, b.name, f.from, g.joinWhere(f))
			tc.derived = "t"
			switch g.r.IntN(3) {
			case 0:
				if a.str {
					tc.fold[0] = gci
				}
				tc.sql = fmt.Sprintf("SELECT t.c1, COUNT(*), COUNT(t.c2), COUNT(DISTINCT t.c2) FROM (%s) AS t GROUP BY t.c1", inner)
				tc.ignoreFlags, tc.planMeta = planFlags, true
				if g.r.IntN(2) == 0 {
					tc.sql += g.orderLimit(4)
					tc.ordered = true
				}
			case 1:
				if a.str {
					tc.fold[0] = gci
				}
				if b.str {
					tc.fold[1] = gci
				}
				tc.sql = fmt.Sprintf("SELECT DISTINCT t.c1, t.c2 FROM (%s) AS t", inner)
				if g.r.IntN(2) == 0 {
					tc.sql += g.orderLimit(2)
					tc.ordered = true
				}
			default:
				tc.sql = fmt.Sprintf("SELECT COUNT(*), COUNT(t.c1), MAX(t.c2) FROM (%s) AS t", inner)
				if b.str {
					tc.fold[2] = gci
				}
				tc.ignoreFlags, tc.planMeta = planFlags, true
			}
		default:
			ow := g.plainWhere(featTables[0])
			tc.sql = fmt.Sprintf("SELECT t.user_id, t.n FROM (SELECT user_id, COUNT(*) AS n FROM t_order%s GROUP BY user_id) AS t", ow)
			if g.r.IntN(2) == 0 {
				tc.sql += fmt.Sprintf(" WHERE t.n > %s", g.constant(g.r.IntN(9)))
			}
			tc.ignoreFlags, tc.planMeta = planFlags, true
		}
	default:
		// Parents filtered by their children, or children by their
		// parents, through a subquery.
		outer := g.pick("o", "i")
		t := joinTables[outer]
		cols := []string{outer + ".order_id", outer + ".user_id", outer + ".qty"}
		if outer == "o" {
			cols[2] = "o.status"
		}
		tc.sql = fmt.Sprintf("SELECT %s FROM %s %s WHERE %s", strings.Join(cols, ", "), t, outer, g.joinSubquery(outer))
		if g.r.IntN(2) == 0 {
			tc.sql += " AND " + g.joinSubquery(outer)
		}
		if g.r.IntN(2) == 0 {
			tc.sql += g.joinOrder(&tc, joinFrom{aliases: []string{outer}}, len(cols))
			tc.ordered = true
		}
	}
	if strings.Contains(tc.sql, "LEFT") {
		// MariaDB makes an outer join inner when the WHERE clause
		// rejects its NULLs, and its nullable side's columns NOT NULL,
		// by the clause's form (o.user_id NOT IN (6, 7), which a route
		// holds for the reference's NOT IN (SELECT ...)), and loses
		// NOT_NULL_FLAG through a temporary table (GROUP BY with ORDER
		// BY): the routes' plans differ.
		tc.ignoreFlags |= mysql.NOT_NULL_FLAG
	}
	return tc
}

// joinORM returns one of the statements ORMs write over the binding
// tables: a page's count with LIMIT inside, a row of aggregates over a
// join, a count of children per parent (Django's annotate(Count), its
// Subquery count), a self-join, parents filtered by a grouped IN.
func (g *featStatement) joinORM() diffCase {
	tc := diffCase{fold: map[int]string{}}
	binding := func() joinFrom {
		return joinFrom{from: fmt.Sprintf("t_order o %s t_order_item i ON %s", g.pick("JOIN", "LEFT JOIN"), g.bindingOn()), aliases: []string{"o", "i"}}
	}
	switch g.r.IntN(7) {
	case 0:
		f := binding()
		c := g.joinColumnOf(f)
		tc.sql = fmt.Sprintf("SELECT COUNT(*) FROM (SELECT %s FROM %s%s%s) AS t", c.name, f.from, g.joinWhere(f), g.pick(
			" LIMIT 5", " ORDER BY o.order_id, i.item_id LIMIT 7", " ORDER BY o.order_id DESC, i.item_id LIMIT 3 OFFSET 4", ""))
		tc.ignoreFlags, tc.planMeta = planFlags, true
	case 1:
		f := g.joinSource()
		var cols []string
		for range 1 + g.r.IntN(4) {
			c := g.joinColumnOf(f)
			switch g.r.IntN(4) {
			case 0:
				cols = append(cols, "COUNT(DISTINCT "+c.name+")")
			case 1:
				if c.str {
					tc.fold[len(cols)] = gci
				}
				cols = append(cols, g.pick("MIN", "MAX")+"("+c.name+")")
			case 2:
				cols = append(cols, "COUNT("+c.name+")")
			default:
				cols = append(cols, "COUNT(*)")
			}
		}
		tc.sql = fmt.Sprintf("SELECT %s FROM %s%s", strings.Join(cols, ", "), f.from, g.joinWhere(f))
		tc.ignoreFlags, tc.planMeta = planFlags, true
	case 2:
		// Django's annotate(n=Count('items')).order_by('-n')[:k].
		f := joinFrom{from: "t_order o LEFT OUTER JOIN t_order_item i ON o.order_id = i.order_id AND o.user_id = i.user_id", aliases: []string{"o", "i"}}
		tc.sql = fmt.Sprintf("SELECT o.order_id, o.status, COUNT(i.item_id) AS n, SUM(i.price) AS total FROM %s%s GROUP BY o.order_id, o.status", f.from, g.joinWhere(f))
		if g.r.IntN(2) == 0 {
			tc.sql += fmt.Sprintf(" HAVING COUNT(i.item_id) %s %s", g.pick(">", "<=", "="), g.constant(g.r.IntN(4)))
		}
		tc.sql += " ORDER BY n" + g.pick("", " DESC") + ", o.order_id" + g.pick("", " DESC") + g.joinLimit()
		tc.ordered = true
		tc.ignoreFlags, tc.planMeta = planFlags, true
	case 3:
		// Django's annotate(n=Subquery(items.filter(order=OuterRef('pk'))
		// .values('order').annotate(c=Count('*')).values('c'))).
		tc.sql = fmt.Sprintf("SELECT o.order_id, (SELECT COUNT(*) FROM t_order_item x WHERE x.order_id = o.order_id AND x.user_id = o.user_id%s) AS n FROM t_order o%s",
			g.pick("", " AND x.qty > 1"), g.plainWhere(featTables[0]))
		if g.r.IntN(2) == 0 {
			tc.sql += " ORDER BY n DESC, o.order_id" + g.joinLimit()
			tc.ordered, tc.ignoreFlags, tc.planMeta = true, planFlags, true
		}
	case 4:
		// A self-join on all the sharding columns.
		f := joinFrom{from: "t_order a " + g.pick("JOIN", "LEFT JOIN") + " t_order b ON a.order_id = b.order_id AND a.user_id = b.user_id AND b.qty " + g.pick(">", "<") + " a.user_id", aliases: []string{"a", "b"}}
		tc.sql = fmt.Sprintf("SELECT a.order_id, b.order_id, b.qty FROM %s WHERE a.status %s %s", f.from, g.pick("<>", "="), g.constant(g.pick("new", "paid", "z")))
		if g.r.IntN(2) == 0 {
			tc.sql += " ORDER BY a.order_id DESC, b.order_id" + g.joinLimit()
			tc.ordered, tc.ignoreFlags = true, planFlags
		}
	case 5:
		// Parents by an aggregate of their children, uncorrelated.
		tc.sql = fmt.Sprintf("SELECT o.order_id, o.status FROM t_order o WHERE o.order_id %s (SELECT U0.order_id FROM t_order_item U0 GROUP BY U0.order_id HAVING %s(U0.%s) %s %s)",
			g.pick("IN", "NOT IN"), g.pick("COUNT", "SUM", "MAX"), g.pick("qty", "price", "item_id"), g.pick(">", "<", ">="), g.constant(g.r.IntN(4)))
		if g.r.IntN(2) == 0 {
			tc.sql += " ORDER BY o.order_id" + g.joinLimit()
			tc.ordered, tc.ignoreFlags = true, planFlags
		}
	default:
		// Two grouping columns across a join.
		f := binding()
		a, b := g.joinColumnOf(f), g.joinColumnOf(f)
		if a.str {
			tc.fold[0] = gci
		}
		if b.str {
			tc.fold[1] = gci
		}
		tc.sql = fmt.Sprintf("SELECT %s, %s, COUNT(*), SUM(i.qty) FROM %s%s GROUP BY %s, %s", a.name, b.name, f.from, g.joinWhere(f), a.name, b.name)
		tc.ignoreFlags, tc.planMeta = planFlags, true
		if g.r.IntN(2) == 0 {
			tc.sql += g.orderLimit(4)
			tc.ordered = true
		}
	}
	return tc
}
