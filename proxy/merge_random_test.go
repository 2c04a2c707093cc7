package proxy

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
)

var (
	mergeSeed  = flag.Uint64("merge.seed", 0, "seed of TestMergeRandomized (0: from SHARDFLAKE_MERGE_SEED, else the clock)")
	mergeCases = flag.Int("merge.cases", 0, "cases of TestMergeRandomized (0: from SHARDFLAKE_MERGE_CASES, else 500)")
)

// genColumn is a column the generator may use.
type genColumn struct {
	name string
	kind genKind
	coll string // strings: the column's collation
}

type genKind int

const (
	kInt genKind = iota + 1
	kDec
	kDouble
	kString
	kTime
	// kEnum orders by its members' positions, which the merge does not
	// know: never an ORDER BY key, a GROUP BY key only with ORDER BY NULL
	// (see TestMergeDifferential).
	kEnum
)

var orderColumns = []genColumn{
	{"order_id", kInt, ""}, {"user_id", kInt, ""}, {"status", kString, gci}, {"note", kString, uci},
	{"code", kString, bin}, {"city", kString, swe}, {"amount", kDec, ""}, {"qty", kInt, ""},
	{"score", kDouble, ""}, {"created", kTime, ""}, {"day", kTime, ""}, {"flag", kInt, ""}, {"big", kInt, ""},
	{"prio", kEnum, ""},
}

var rangeColumns = []genColumn{{"id", kInt, ""}, {"grp", kInt, ""}, {"v", kString, gci}, {"w", kDec, ""}}

// literals are comparison constants per column, chosen to split the rows.
var literals = map[string][]string{
	"order_id": {"50", "200", "4016"},
	"user_id":  {"0", "3", "7", "12"},
	"status":   {"'new'", "'PAID'", "'resume'", "''"},
	"note":     {"'strasse'", "'aeble'", "'m'"},
	"code":     {"'abc'", "'B'", "'a'"},
	"city":     {"'Oslo'", "'Zurich'", "'M'"},
	"amount":   {"0", "3.33", "-1.5", "100"},
	"qty":      {"0", "-2", "3"},
	"score":    {"0", "2.5", "-1"},
	"created":  {"'2024-03-01'", "'2024-05-05 04:52:00'"},
	"day":      {"'2024-01-01'", "'2000-01-01'"},
	"flag":     {"0", "1"},
	"big":      {"1234567891234567", "10000000000000000"},
	"prio":     {"'low'", "'mid'", "'high'", "2"},
	"id":       {"0", "-7", "12"},
	"grp":      {"1", "3"},
	"v":        {"'x'", "'Y'"},
	"w":        {"0", "1.5", "-2.25"},
}

// planFlags are the column-definition flags MariaDB derives from its
// execution plan: a result that passes through a temporary table loses
// or gains the key flags, GROUP_FLAG, NO_DEFAULT_VALUE_FLAG and an
// aggregate's BINARY_FLAG. Routes group
// by more (the arguments of DISTINCT aggregates), filter later (HAVING is
// the merge's) and sort otherwise than the single-table query, so their
// plans, and these flags, can differ from the reference's.
const planFlags = mysql.PRI_KEY_FLAG | mysql.UNIQUE_KEY_FLAG | 8 /* MULTIPLE_KEY_FLAG */ | mysql.PART_KEY_FLAG |
	mysql.GROUP_FLAG | mysql.BINARY_FLAG | 4096 /* NO_DEFAULT_VALUE_FLAG */

// generator writes random SELECTs over t_order and t_range and says how
// to compare their results.
type generator struct {
	r     *rand.Rand
	table string
	cols  []genColumn
	pk    string
	aggs  []genAggregate // of the current query
	nums  []string       // numeric aggregates of the current query
	noAvg bool           // numericAggregate writes no AVG
	// noDouble: numericAggregate writes no MIN or MAX of a DOUBLE.
	noDouble bool
}

func (g *generator) pick(cols []genColumn) genColumn { return cols[g.r.IntN(len(cols))] }

// pickOrderable picks a column the merge can sort by: not an ENUM.
func (g *generator) pickOrderable() genColumn {
	for {
		if c := g.pick(g.cols); c.kind != kEnum {
			return c
		}
	}
}

func (g *generator) predicate(depth int) string {
	if depth < 2 && g.r.IntN(4) == 0 {
		op := " AND "
		if g.r.IntN(2) == 0 {
			op = " OR "
		}
		return "(" + g.predicate(depth+1) + op + g.predicate(depth+1) + ")"
	}
	if g.table == "t_order" && g.r.IntN(4) == 0 {
		// Sharding columns: one data source, one table, or a few.
		switch g.r.IntN(3) {
		case 0:
			return fmt.Sprintf("user_id = %d", g.r.IntN(13))
		case 1:
			return fmt.Sprintf("user_id IN (%d, %d)", g.r.IntN(13), g.r.IntN(13))
		default:
			return fmt.Sprintf("order_id IN (%d, %d, %d)", 7*g.r.IntN(96)+1, 7*g.r.IntN(96)+1, 4000+7*g.r.IntN(96)+2)
		}
	}
	c := g.pick(g.cols)
	if g.r.IntN(6) == 0 {
		return c.name + []string{" IS NULL", " IS NOT NULL"}[g.r.IntN(2)]
	}
	lits := literals[c.name]
	op := []string{"=", "<>", "<", "<=", ">", ">="}[g.r.IntN(6)]
	if c.name == "order_id" || c.name == "user_id" || c.name == "grp" {
		// INLINE sharding columns route no ranges (the rules do not
		// allow-range-query-with-inline-sharding): the proxy refuses them.
		op = "="
	}
	p := c.name + " " + op + " " + lits[g.r.IntN(len(lits))]
	if g.r.IntN(8) == 0 {
		p = "NOT (" + p + ")"
	}
	return p
}

// genAggregate is an aggregate the generator wrote into the current
// query.
type genAggregate struct {
	expr   string
	approx bool
	fold   string
}

// aggregate returns an aggregate expression and whether its value may
// differ in the last bits (DOUBLE sums) and its fold collation. One time
// in four it repeats an aggregate of the same query: every column of a
// repeated aggregate must be merged.
func (g *generator) aggregate() (expr string, approx bool, fold string) {
	if len(g.aggs) > 0 && g.r.IntN(4) == 0 {
		a := g.aggs[g.r.IntN(len(g.aggs))]
		return a.expr, a.approx, a.fold
	}
	expr, approx, fold = g.newAggregate()
	g.aggs = append(g.aggs, genAggregate{expr, approx, fold})
	return expr, approx, fold
}

func (g *generator) newAggregate() (expr string, approx bool, fold string) {
	c := g.pick(g.cols)
	switch g.r.IntN(9) {
	case 0:
		return "COUNT(*)", false, ""
	case 1:
		return "COUNT(" + c.name + ")", false, ""
	case 2:
		return "COUNT(DISTINCT " + c.name + ")", false, ""
	case 3, 4:
		if c.kind == kEnum {
			// MIN and MAX of an ENUM under GROUP BY: the column's type
			// depends on MariaDB's plan (ENUM STRING from a temporary
			// table, VAR_STRING otherwise), and HAVING compares it with
			// numbers by position. TestMergeDifferential has cases.
			return "COUNT(DISTINCT " + c.name + ")", false, ""
		}
		f := []string{"MIN", "MAX"}[g.r.IntN(2)]
		return f + "(" + c.name + ")", false, c.coll
	}
	// Not DOUBLE columns: their sums depend on the order of addition
	// (score holds 1e20 next to 1e-7), which differs between plans even
	// on one server. TestMergeDifferential sums them over whole tables.
	var nums []genColumn
	for _, n := range g.cols {
		if n.kind == kInt || n.kind == kDec {
			nums = append(nums, n)
		}
	}
	n := g.pick(nums)
	f := []string{"SUM", "AVG", "SUM(DISTINCT", "AVG(DISTINCT"}[g.r.IntN(4)]
	if strings.HasSuffix(f, "DISTINCT") {
		return f + " " + n.name + ")", n.kind == kDouble, ""
	}
	return f + "(" + n.name + ")", n.kind == kDouble, ""
}

// query returns one random case.
func (g *generator) query() diffCase {
	if g.r.IntN(5) == 0 {
		g.table, g.cols, g.pk = "t_range", rangeColumns, "id"
	} else {
		g.table, g.cols, g.pk = "t_order", orderColumns, "order_id"
	}
	tc := diffCase{fold: map[int]string{}}
	g.aggs, g.nums, g.noAvg, g.noDouble = g.aggs[:0], g.nums[:0], false, false
	where := ""
	if g.r.IntN(3) != 0 {
		where = " WHERE " + g.predicate(0)
	}
	limit := func() string {
		switch g.r.IntN(4) {
		case 0:
			return fmt.Sprintf(" LIMIT %d", g.r.IntN(20))
		case 1:
			return fmt.Sprintf(" LIMIT %d, %d", g.r.IntN(60), 1+g.r.IntN(15))
		case 2:
			return fmt.Sprintf(" LIMIT %d OFFSET %d", 1+g.r.IntN(10), g.r.IntN(200))
		}
		return ""
	}
	dir := func() string { return []string{"", " DESC"}[g.r.IntN(2)] }
	if g.r.IntN(4) == 0 {
		return g.exprCase(tc, where, limit)
	}
	switch g.r.IntN(3) {
	case 0: // rows
		var sel []genColumn
		for range 1 + g.r.IntN(4) {
			sel = append(sel, g.pick(g.cols))
		}
		names := make([]string, len(sel))
		for i, c := range sel {
			names[i] = c.name
		}
		distinct := g.r.IntN(4) == 0
		q := "SELECT "
		if distinct {
			q += "DISTINCT "
			tc.ignoreFlags, tc.planMeta = planFlags, true
			for i, c := range sel {
				if c.coll != "" {
					tc.fold[i] = c.coll
				}
			}
		}
		q += strings.Join(names, ", ") + " FROM " + g.table + where
		var keys []string
		if distinct {
			// Ordered by every column, the order is total.
			if g.r.IntN(2) == 0 && !containsKind(sel, kEnum) {
				for _, n := range names {
					keys = append(keys, n+dir())
				}
				tc.ordered = !hasDouble(sel)
			}
		} else if g.r.IntN(4) != 0 {
			for range g.r.IntN(3) {
				keys = append(keys, g.pickOrderable().name+dir())
			}
			keys = append(keys, g.pk+dir())
			tc.ordered = true
		}
		if len(keys) > 0 {
			q += " ORDER BY " + strings.Join(keys, ", ")
			if tc.ordered {
				q += limit()
			}
		}
		tc.sql = q
	case 1: // aggregates over all rows
		var parts []string
		for range 1 + g.r.IntN(4) {
			a, approx, fold := g.aggregate()
			i := len(parts)
			parts = append(parts, a)
			tc.approx = tc.approx || approx
			if fold != "" {
				tc.fold[i] = fold
			}
		}
		tc.sql = "SELECT " + strings.Join(parts, ", ") + " FROM " + g.table + where
		tc.ignoreFlags, tc.planMeta = planFlags, true
	default: // GROUP BY
		var keys []genColumn
		for range 1 + g.r.IntN(2) {
			k := g.pick(g.cols)
			if k.kind == kDouble || containsColumn(keys, k.name) {
				continue
			}
			keys = append(keys, k)
		}
		if len(keys) == 0 {
			keys = []genColumn{g.cols[1]}
		}
		var parts, keyNames []string
		for i, k := range keys {
			parts = append(parts, k.name)
			keyNames = append(keyNames, k.name)
			if k.coll != "" {
				tc.fold[i] = k.coll
			}
		}
		var aggs []string
		orderable := map[string]bool{}
		for range 1 + g.r.IntN(3) {
			a, approx, fold := g.aggregate()
			alias := fmt.Sprintf("a%d", len(aggs))
			if fold != "" {
				tc.fold[len(parts)] = fold
			}
			parts = append(parts, a+" AS "+alias)
			aggs = append(aggs, alias)
			orderable[alias] = !approx
			tc.approx = tc.approx || approx
		}
		q := "SELECT " + strings.Join(parts, ", ") + " FROM " + g.table + where + " GROUP BY " + strings.Join(keyNames, ", ")
		tc.ignoreFlags, tc.planMeta = planFlags, true
		var having []string
		if g.r.IntN(3) == 0 {
			a := aggs[g.r.IntN(len(aggs))]
			h := a + " " + []string{">", "<", ">=", "<>", "="}[g.r.IntN(5)] + " " + strconv.Itoa(g.r.IntN(5))
			if g.r.IntN(3) == 0 {
				h += " OR " + keyNames[0] + " IS NULL"
			}
			having = append(having, "("+h+")")
		}
		limited := true // may get a LIMIT
		if g.r.IntN(4) == 0 {
			// A function of a group key: MariaDB moves it to WHERE, but
			// not with LIMIT; then it sees the group's first row, and a
			// string key's first row may be any of its equal values.
			k := keys[g.r.IntN(len(keys))]
			having = append(having, g.keyFunction(k))
			limited = k.kind == kInt || k.kind == kDec
		}
		if len(having) > 0 {
			q += " HAVING " + strings.Join(having, " AND ")
		}
		tc.ordered = true // ordered by the group keys, explicitly or not
		if containsKind(keys, kEnum) {
			// No order: the merge hashes the groups.
			q += " ORDER BY NULL"
			tc.ordered = false
		} else if g.r.IntN(2) == 0 {
			var order []string
			if a := aggs[g.r.IntN(len(aggs))]; orderable[a] && g.r.IntN(2) == 0 {
				order = append(order, a+dir())
			}
			for _, k := range keyNames {
				order = append(order, k+dir())
			}
			q += " ORDER BY " + strings.Join(order, ", ")
			if limited {
				q += limit()
			}
		}
		tc.sql = q
	}
	return tc
}

// keyFunction returns a condition on a function of a group key, which
// HAVING leaves to the routes.
func (g *generator) keyFunction(k genColumn) string {
	var fs []string
	switch k.kind {
	case kInt, kDec:
		fs = []string{"ABS(%s) > 2", "%s %% 3 = 1", "GREATEST(%s, 0) < 5", "SIGN(%s) <> 1"}
	case kTime:
		fs = []string{"YEAR(%s) = 2024", "DAYOFMONTH(%s) > 15", "DATE(%s) >= '2024-03-01'"}
	default:
		fs = []string{"LENGTH(%s) > 3", "LOWER(%s) = 'new'", "CONCAT(%s, '!') <> 'a!'", "LEFT(%s, 1) IN ('a', 'Z')"}
	}
	return fmt.Sprintf(fs[g.r.IntN(len(fs))], k.name)
}

func hasDouble(cols []genColumn) bool { return containsKind(cols, kDouble) }

func containsKind(cols []genColumn, k genKind) bool {
	for _, c := range cols {
		if c.kind == k {
			return true
		}
	}
	return false
}

func containsColumn(cols []genColumn, name string) bool {
	for _, c := range cols {
		if c.name == name {
			return true
		}
	}
	return false
}

// TestMergeRandomized runs random SELECTs through the proxy and on the
// reference tables and compares them like TestMergeDifferential. Set the
// seed with -merge.seed or SHARDFLAKE_MERGE_SEED to replay a failure, the
// number of cases with -merge.cases or SHARDFLAKE_MERGE_CASES.
func TestMergeRandomized(t *testing.T) {
	e := diffEnvironment(t)
	seed := seedSetting(*mergeSeed, "SHARDFLAKE_MERGE_SEED", uint64(time.Now().UnixNano()))
	cases := countSetting(*mergeCases, "SHARDFLAKE_MERGE_CASES", 500)
	t.Logf("seed %d (replay with SHARDFLAKE_MERGE_SEED=%d), %d cases", seed, seed, cases)
	g := &generator{r: rand.New(rand.NewPCG(seed, seed^0x5f5f))}
	failures := 0
	for i := range cases {
		tc := g.query()
		if d := e.diff(tc); d != "" {
			t.Errorf("case %d (seed %d): %s\n%s", i, seed, tc.sql, d)
			if failures++; failures >= 10 {
				t.Fatalf("stopping after 10 failures; replay with SHARDFLAKE_MERGE_SEED=%d", seed)
			}
		}
	}
	if t.Failed() {
		t.Errorf("seed %d: replay with SHARDFLAKE_MERGE_SEED=%d", seed, seed)
	}
}

// seedSetting is a random test's seed: the flag's value, else the
// environment variable's, else fallback.
func seedSetting(flagValue uint64, env string, fallback uint64) uint64 {
	if flagValue != 0 {
		return flagValue
	}
	if s, err := strconv.ParseUint(os.Getenv(env), 10, 64); err == nil {
		return s
	}
	return fallback
}

// countSetting is a random test's number of cases: the flag's value,
// else the environment variable's when positive, else fallback.
func countSetting(flagValue int, env string, fallback int) int {
	if flagValue != 0 {
		return flagValue
	}
	if n, err := strconv.Atoi(os.Getenv(env)); err == nil && n > 0 {
		return n
	}
	return fallback
}
