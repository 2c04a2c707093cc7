package proxy

import (
	"fmt"
	"strings"
)

// The generator's expressions over aggregates: the select-list columns,
// HAVING conditions and ORDER BY keys that the merge computes from the
// merged aggregates (and that MariaDB computes from unrounded values,
// rounding a DECIMAL to its decimals only to compare or return it).

// exprLiterals are the constants of expressions and HAVING conditions:
// small integers, and decimals with four or five places, near the
// quotients of the test rows (8/12 = 0.6667), where MariaDB's rounding
// before a comparison decides.
var exprLiterals = []string{"0", "1", "2", "3", "7", "-1", "1.5", "0.25", "0.6667", "0.66667", "0.6666", "7.8571", "7.85714", "-0.5", "100", "1000000"}

// numericAggregate returns an aggregate with a numeric value. Not SUM or
// AVG of a DOUBLE: see newAggregate; no AVG when g.noAvg.
func (g *generator) numericAggregate() string {
	if len(g.nums) > 0 && g.r.IntN(4) == 0 {
		if a := g.nums[g.r.IntN(len(g.nums))]; !g.noAvg || !strings.HasPrefix(a, "AVG") {
			return a
		}
	}
	var exact, any []genColumn
	for _, c := range g.cols {
		if c.kind == kInt || c.kind == kDec {
			exact = append(exact, c)
		}
		if c.kind != kTime {
			any = append(any, c)
		}
	}
	var a string
	switch g.r.IntN(10) {
	case 0:
		a = "COUNT(*)"
	case 1:
		a = "COUNT(" + g.pick(any).name + ")"
	case 2:
		a = "COUNT(DISTINCT " + g.pick(exact).name + ")"
	case 3, 4:
		c := g.pick(exact)
		for c.name == "big" {
			// MariaDB 10.11 reads MIN/MAX of a BIGINT UNSIGNED as signed
			// in a DOUBLE expression: with big = 2^64-1, MAX(big)/MAX(score)
			// is -1e-20 and CAST(MAX(big) AS DOUBLE) is -1. The merge
			// computes the true value (0.18446744073709552); the
			// reference cannot be compared there.
			c = g.pick(exact)
		}
		// A DOUBLE next to an AVG under GROUP BY is refused (see
		// TestMergeDifferential).
		if !g.noDouble && g.r.IntN(4) == 0 {
			c = genColumn{name: "score", kind: kDouble}
			if g.table != "t_order" {
				c = g.pick(exact)
			}
		}
		a = []string{"MIN", "MAX"}[g.r.IntN(2)] + "(" + c.name + ")"
	case 5:
		a = []string{"SUM(DISTINCT ", "AVG(DISTINCT "}[g.r.IntN(2)] + g.pick(exact).name + ")"
		if g.noAvg {
			a = "SUM(DISTINCT " + g.pick(exact).name + ")"
		}
	case 6, 7:
		a = "AVG(" + g.pick(exact).name + ")"
		if g.noAvg {
			a = "MAX(" + g.pick(exact).name + ")"
		}
	default:
		a = "SUM(" + g.pick(exact).name + ")"
	}
	g.nums = append(g.nums, a)
	return a
}

// exprLiteral returns one of exprLiterals.
func (g *generator) exprLiteral() string { return exprLiterals[g.r.IntN(len(exprLiterals))] }

// aggExpr returns an expression over aggregates: arithmetic, unary minus,
// ROUND, ABS, IFNULL and COALESCE, nested while depth < 2. keys are
// numeric group keys it may use too.
func (g *generator) aggExpr(depth int, keys []string) string {
	// operand may be a literal or a group key only where the other
	// operand is an aggregate: without one the expression is not computed
	// by the merge (see TestMergeDifferential for constants over no rows).
	operand := func(alone bool) string {
		switch {
		case depth < 2 && g.r.IntN(4) == 0:
			return "(" + g.aggExpr(depth+1, keys) + ")"
		case alone:
		case len(keys) > 0 && g.r.IntN(6) == 0:
			return keys[g.r.IntN(len(keys))]
		case g.r.IntN(5) == 0:
			return g.exprLiteral()
		}
		return g.numericAggregate()
	}
	switch g.r.IntN(10) {
	case 0:
		if g.r.IntN(2) == 0 {
			return "ROUND(" + operand(true) + ")"
		}
		return fmt.Sprintf("ROUND(%s, %d)", operand(true), g.r.IntN(5)-1)
	case 1:
		return "ABS(" + operand(true) + ")"
	case 2:
		return "-" + operand(true)
	case 3:
		return "IFNULL(" + operand(true) + ", " + g.exprLiteral() + ")"
	case 4:
		return "COALESCE(" + operand(true) + ", " + operand(false) + ", " + g.exprLiteral() + ")"
	}
	op := []string{"+", "-", "*", "/", "/", " DIV ", " % "}[g.r.IntN(7)]
	a := g.numericAggregate()
	b := operand(false)
	if g.r.IntN(2) == 0 {
		a, b = b, a
	}
	return a + op + b
}

// condition returns a HAVING condition on x (an expression or an alias)
// with a comparison, BETWEEN or IN; only a comparison when compareOnly.
func (g *generator) condition(x string, compareOnly bool) string {
	switch n := g.r.IntN(6); {
	case compareOnly:
	case n == 0:
		return x + " BETWEEN " + g.exprLiteral() + " AND " + g.exprLiteral()
	case n == 1:
		if g.r.IntN(2) == 0 {
			return x + " IN (" + g.exprLiteral() + ")"
		}
		return x + " IN (" + g.exprLiteral() + ", " + g.exprLiteral() + ")"
	}
	return x + " " + []string{">", "<", ">=", "<=", "<>", "=", "<=>"}[g.r.IntN(7)] + " " + g.exprLiteral()
}

// numericKeys returns the names of the integer and decimal columns among
// keys.
func numericKeys(keys []genColumn) []string {
	var out []string
	for _, k := range keys {
		if k.kind == kInt || k.kind == kDec {
			out = append(out, k.name)
		}
	}
	return out
}

// exprCase returns a query of expressions over aggregates: over all rows
// or grouped, with HAVING and ORDER BY on them.
func (g *generator) exprCase(tc diffCase, where string, limit func() string) diffCase {
	tc.ignoreFlags, tc.planMeta = planFlags, true
	var keys []genColumn
	if g.r.IntN(4) != 0 {
		for range 1 + g.r.IntN(2) {
			if k := g.pick(g.cols); k.kind != kDouble && !containsColumn(keys, k.name) {
				keys = append(keys, k)
			}
		}
	}
	var parts, keyNames, aliases []string
	for i, k := range keys {
		parts = append(parts, k.name)
		keyNames = append(keyNames, k.name)
		if k.coll != "" {
			tc.fold[i] = k.coll
		}
	}
	nums := numericKeys(keys)
	// An ORDER BY other than the group keys (in their order, one
	// direction) lets MariaDB's plan decide whether an AVG inside an
	// expression, or a computed column HAVING names, is rounded first: the
	// proxy refuses those (TestMergeDifferential has cases), so they are
	// not generated then.
	var order []string
	switch {
	case containsKind(keys, kEnum):
		// No order: the merge hashes the groups (an ENUM sorts by its
		// members' positions).
		order = []string{"NULL"}
	case len(keys) > 0 && g.r.IntN(2) == 0:
		switch g.r.IntN(4) {
		case 0, 1:
			order = append(order, "")
		}
		dir := []string{"", " DESC"}[g.r.IntN(2)]
		for _, k := range keyNames {
			if g.r.IntN(3) == 0 {
				dir = []string{"", " DESC"}[g.r.IntN(2)]
			}
			order = append(order, k+dir)
		}
	}
	reordered := len(order) > 1 && (order[0] == "" || strings.HasSuffix(order[0], " DESC") != strings.HasSuffix(order[len(order)-1], " DESC"))
	g.noAvg, g.noDouble = reordered, len(keys) > 0
	for range 1 + g.r.IntN(3) {
		alias := fmt.Sprintf("e%d", len(aliases))
		x := g.aggExpr(0, nums)
		if g.r.IntN(4) == 0 {
			x = g.numericAggregate()
		}
		parts = append(parts, x+" AS "+alias)
		aliases = append(aliases, alias)
	}
	q := "SELECT " + strings.Join(parts, ", ") + " FROM " + g.table + where
	if len(keys) > 0 {
		q += " GROUP BY " + strings.Join(keyNames, ", ")
	}
	if g.r.IntN(2) == 0 {
		var cond string
		switch n := g.r.IntN(3); {
		case n == 0:
			cond = g.condition(aliases[g.r.IntN(len(aliases))], reordered)
		case n == 1 || reordered:
			cond = g.condition(g.aggExpr(1, nums), false)
		default:
			cond = g.condition(aliases[g.r.IntN(len(aliases))]+[]string{" * 1000", " + 1", " / 3"}[g.r.IntN(3)], false)
		}
		if g.r.IntN(4) == 0 {
			cond = "NOT (" + cond + ")"
		}
		q += " HAVING " + cond
	}
	tc.ordered = !containsKind(keys, kEnum) // one row, or ordered by the group keys
	if len(order) > 0 {
		if order[0] == "" {
			// First by a computed column or an expression over
			// aggregates (with one, not a constant).
			if g.r.IntN(2) == 0 {
				order[0] = aliases[g.r.IntN(len(aliases))]
			} else {
				order[0] = g.aggExpr(1, nums) + " + " + g.numericAggregate()
			}
			order[0] += []string{"", " DESC"}[g.r.IntN(2)]
		}
		q += " ORDER BY " + strings.Join(order, ", ")
		if tc.ordered {
			q += limit()
		}
	}
	tc.sql = q
	tc.zeroSign = strings.Contains(q, " % ")
	return tc
}
