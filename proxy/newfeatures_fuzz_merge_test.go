package proxy

import (
	"fmt"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// The random differential generator's select-list subqueries and core
// cross-shard merges (ORDER BY over several columns, LIMIT with OFFSET,
// GROUP BY with DISTINCT aggregates, GROUP_CONCAT, HAVING), written with
// featStatement's constants so that they run prepared with ? too.

// scalarField returns an uncorrelated scalar subquery for a select list,
// an aggregate or one table's column (maybe several rows, MariaDB's
// 1242), over a WHERE that may leave it no row, whether its value is a
// string (which of the strings equal under the collation MIN, MAX or the
// column gives is MariaDB's choice), and whether it may have several
// rows.
func (g *featStatement) scalarField() (string, bool, bool) {
	u := g.tableWith("")
	where := func() string {
		if g.r.IntN(5) == 0 {
			return fmt.Sprintf(" WHERE %s < %s", u.i, g.constant(-100))
		}
		return g.plainWhere(u)
	}
	arg := func(roles string) (string, bool) {
		for {
			if c := u.col(roles[g.r.IntN(len(roles))]); c != "" {
				return c, c == u.s
			}
		}
	}
	switch g.r.IntN(6) {
	case 0:
		c, _ := arg("ink")
		return fmt.Sprintf("(SELECT %s FROM %s%s)", g.pick("COUNT(*)", "COUNT("+c+")", "COUNT(DISTINCT "+c+")"), u.name, where()), false, false
	case 1:
		c, _ := arg("ind")
		return fmt.Sprintf("(SELECT %s(%s) FROM %s%s)", g.pick("SUM", "AVG"), c, u.name, where()), false, false
	case 2:
		c, str := arg("inds")
		return fmt.Sprintf("(SELECT %s(%s) FROM %s%s)", g.pick("MIN", "MAX"), c, u.name, where()), str, false
	case 3:
		c, str := arg("inds")
		return fmt.Sprintf("(SELECT %s FROM %s%s ORDER BY %s DESC, %s LIMIT 1)", c, u.name, where(), u.k, c), str, false
	case 4:
		// One row by the key, or several: MariaDB's 1242 at the outer
		// SELECT's first row.
		c, str := arg("inds")
		return fmt.Sprintf("(SELECT %s FROM %s WHERE %s = %s)", c, u.name, u.i, g.constant(g.r.IntN(13))), str, true
	}
	c, _ := arg("ind")
	return fmt.Sprintf("(SELECT %s(%s) FROM %s%s)", g.pick("SUM", "AVG", "MIN", "MAX"), c, u.name, where()), false, false
}

// selectListSubquery returns a SELECT with a scalar subquery as a select
// field, beside the outer table's columns, aggregates or groups, with
// DISTINCT, HAVING, ORDER BY and LIMIT.
func (g *featStatement) selectListSubquery() diffCase {
	t := g.tableWith("")
	sub, str, many := g.scalarField()
	if g.r.IntN(2) == 0 {
		sub += " AS x"
	}
	tc := diffCase{fold: map[int]string{}}
	var cols []string
	switch g.r.IntN(3) {
	case 0:
		roles := g.pick("k", "i", "in", "is", "d", "nd")
		for i := range len(roles) {
			if c := t.col(roles[i]); c != "" {
				if c == t.s {
					tc.fold[len(cols)] = gci
				}
				cols = append(cols, c)
			}
		}
		pos := g.r.IntN(len(cols) + 1)
		cols = append(cols[:pos], append([]string{sub}, cols[pos:]...)...)
		for p := len(cols) - 1; p > pos; p-- {
			if _, ok := tc.fold[p-1]; ok {
				delete(tc.fold, p-1)
				tc.fold[p] = gci
			}
		}
		if str {
			tc.fold[pos] = gci
		}
		tc.sql = fmt.Sprintf("SELECT %s%s FROM %s%s", g.pick("", "", "DISTINCT "), strings.Join(cols, ", "), t.name, g.where(t))
	case 1:
		cols = []string{t.i, "COUNT(*)", "SUM(" + t.d + ")", sub}
		tc.sql = fmt.Sprintf("SELECT %s FROM %s%s GROUP BY %s", strings.Join(cols, ", "), t.name, g.where(t), t.i)
		switch g.r.IntN(3) {
		case 0:
			tc.sql += fmt.Sprintf(" HAVING COUNT(*) > %s", g.constant(g.r.IntN(3)))
		case 1:
			if strings.HasSuffix(sub, " AS x") && !str && !many {
				tc.sql += fmt.Sprintf(" HAVING x %s %s", g.pick(">", "<=", "IS NULL OR x <>"), g.constant(g.r.IntN(10)-2))
			}
		}
		if str {
			tc.fold[3] = gci
		}
	default:
		cols = []string{"COUNT(*)", g.pick("SUM", "AVG", "MAX") + "(" + t.d + ")", sub}
		tc.sql = fmt.Sprintf("SELECT %s FROM %s%s", strings.Join(cols, ", "), t.name, g.where(t))
		if str {
			tc.fold[2] = gci
		}
	}
	// A subquery of several rows that ORDER BY or HAVING names: MariaDB
	// fails with 1242 at once, unless its plan finds no row first (an
	// impossible WHERE it notices, order_id % 3 = 0 AND order_id % 3 =
	// 2; GROUP BY without a group; DISTINCT), which the proxy cannot
	// know.
	if !many && g.r.IntN(2) == 0 {
		tc.sql += g.orderLimit(len(cols))
		tc.ordered = true
	}
	return tc
}

// coreColumns are t_order's columns the core merges read: NULLs,
// strings equal under utf8mb4_general_ci, DECIMALs, negative numbers and
// BIGINT UNSIGNED up to 2^64-1.
var coreColumns = []string{"user_id", "status", "qty", "amount", "big", "flag", "day"}

// coreFilter returns "" or a WHERE clause over t_order.
func (g *featStatement) coreFilter() string {
	t := featTables[0]
	switch g.r.IntN(5) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf(" WHERE big %s %s", g.pick(">", "<", ">="), g.constant([]uint64{10000000000000000, 18446744073709551614, 1234567891234567}[g.r.IntN(3)]))
	}
	return g.where(t)
}

// coreAggregate returns an aggregate over t_order and whether its value
// is a string that may be any of its collation-equal values.
func (g *featStatement) coreAggregate() (string, bool) {
	switch g.r.IntN(9) {
	case 0:
		return "COUNT(*)", false
	case 1:
		return "COUNT(DISTINCT " + g.pick("qty", "amount", "big", "status", "user_id, qty") + ")", false
	case 2:
		return g.pick("SUM", "AVG") + "(" + g.pick("amount", "big", "qty") + ")", false
	case 3:
		return g.pick("SUM", "AVG") + "(DISTINCT " + g.pick("amount", "big", "qty") + ")", false
	case 4:
		return g.pick("MIN", "MAX") + "(" + g.pick("amount", "big", "qty", "day") + ")", false
	case 5:
		return g.pick("MIN", "MAX") + "(status)", true
	case 6:
		// Ordered by its argument only (the proxy refuses other keys
		// across data nodes), which ties only equal values: not status,
		// whose equal strings differ.
		c := g.pick("qty", "amount", "big", "day")
		return fmt.Sprintf("GROUP_CONCAT(%s ORDER BY %s%s SEPARATOR %s)", c, c, g.pick("", " DESC"), g.constant(g.pick("|", "", ", ", "--"))), false
	case 7:
		return fmt.Sprintf("GROUP_CONCAT(DISTINCT %s ORDER BY %s%s)", g.pick("qty", "amount", "big"), "1", g.pick("", " DESC")), false
	}
	return "COUNT(" + g.pick("qty", "status", "amount") + ")", false
}

// coreAggregates appends one to most aggregates (coreAggregate) to
// cols, folding in tc those whose strings are any of their equal values.
func (g *featStatement) coreAggregates(tc *diffCase, cols []string, most int) []string {
	for range 1 + g.r.IntN(most) {
		a, str := g.coreAggregate()
		if str {
			tc.fold[len(cols)] = gci
		}
		cols = append(cols, a)
	}
	return cols
}

// limitOffset returns, a third of the time each, LIMIT below count,
// LIMIT below paged with an OFFSET below offset, or "".
func (g *featStatement) limitOffset(count, paged, offset int) string {
	switch g.r.IntN(3) {
	case 0:
		return fmt.Sprintf(" LIMIT %s", g.constant(g.r.IntN(count)))
	case 1:
		return fmt.Sprintf(" LIMIT %s OFFSET %s", g.constant(g.r.IntN(paged)), g.constant(g.r.IntN(offset)))
	}
	return ""
}

// coreMerge returns a SELECT over t_order that the proxy merges across
// data nodes: rows ordered by several columns (t_order's key last, so
// that no two rows tie) with LIMIT and OFFSET, or groups or one row of
// aggregates with HAVING, ORDER BY and LIMIT.
func (g *featStatement) coreMerge() diffCase {
	tc := diffCase{fold: map[int]string{}}
	dir := func() string { return g.pick("", " DESC") }
	limit := func() string { return g.limitOffset(20, 12, 90) }
	switch g.r.IntN(3) {
	case 0:
		cols := []string{"order_id"}
		for range 1 + g.r.IntN(3) {
			cols = append(cols, coreColumns[g.r.IntN(len(coreColumns))])
		}
		var keys []string
		for range g.r.IntN(4) {
			keys = append(keys, coreColumns[g.r.IntN(len(coreColumns))]+dir())
		}
		keys = append(keys, "order_id"+dir())
		tc.sql = fmt.Sprintf("SELECT %s FROM t_order%s ORDER BY %s%s", strings.Join(cols, ", "), g.coreFilter(), strings.Join(keys, ", "), limit())
		tc.ordered = true
		return tc
	case 1:
		key := g.pick("user_id", "status", "qty", "flag", "day", "big")
		cols := []string{key}
		if key == "status" {
			tc.fold[0] = gci
		}
		cols = g.coreAggregates(&tc, cols, 3)
		tc.sql = fmt.Sprintf("SELECT %s FROM t_order%s GROUP BY %s", strings.Join(cols, ", "), g.coreFilter(), key)
		if g.r.IntN(2) == 0 {
			h := g.pick("COUNT(*)", "SUM(qty)", "AVG(amount)", "MAX(big)", "COUNT(DISTINCT qty)", "SUM(amount)")
			var v any = g.r.IntN(6) - 1
			if h == "MAX(big)" {
				v = uint64(10000000000000000)
			} else if h == "AVG(amount)" || h == "SUM(amount)" {
				v = g.pick("1.5", "3.33", "-0.5", "10")
			}
			tc.sql += fmt.Sprintf(" HAVING %s %s %s", h, g.pick(">", "<", ">=", "<>"), g.constant(v))
		}
		tc.ignoreFlags, tc.planMeta = planFlags, true
		if g.r.IntN(3) != 0 {
			order := []string{}
			if a := cols[1]; !strings.HasPrefix(a, "GROUP_CONCAT") && !strings.HasPrefix(a, "MIN(status") && !strings.HasPrefix(a, "MAX(status") && g.r.IntN(2) == 0 {
				order = append(order, a+dir())
				// Ordered by an aggregate, MariaDB sorts its groups in a
				// temporary table, whose GROUP_CONCAT column, a BLOB,
				// is flagged BLOB: a plan's flag, as planFlags.
				tc.ignoreFlags |= mysql.BLOB_FLAG
			}
			order = append(order, key+dir())
			tc.sql += " ORDER BY " + strings.Join(order, ", ") + limit()
			tc.ordered = true
		}
		return tc
	}
	cols := g.coreAggregates(&tc, nil, 4)
	tc.sql = fmt.Sprintf("SELECT %s FROM t_order%s", strings.Join(cols, ", "), g.coreFilter())
	tc.ignoreFlags, tc.planMeta = planFlags, true
	return tc
}

// inlineArgs writes args into q's ?s as literals, the statement's text
// form (no generated string holds a ?).
func inlineArgs(q string, args []any) string {
	var b strings.Builder
	if strings.Count(q, "?") != len(args) {
		panic(fmt.Sprintf("%d arguments for %s", len(args), q))
	}
	for _, a := range args {
		i := strings.IndexByte(q, '?')
		b.WriteString(q[:i])
		if s, ok := a.(string); ok {
			b.WriteString(quoteString(s))
		} else if a == nil {
			b.WriteString("NULL")
		} else {
			fmt.Fprint(&b, a)
		}
		q = q[i+1:]
	}
	b.WriteString(q)
	return b.String()
}
