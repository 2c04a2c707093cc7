package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// statsQueries are the variance family across data nodes (they got 1235):
// every name MariaDB knows, with and without GROUP BY, over DECIMAL, INT,
// DOUBLE and BIGINT UNSIGNED columns (99999999.99 and 1e20 among the
// values, where SUM(x*x) - SUM(x)^2/n would cancel), NULLs, no rows,
// groups of one row (the _SAMP forms are NULL), HAVING, ORDER BY and
// arithmetic over them. Each has an ORDER BY that makes its order total:
// the comparison goes row by row.
var statsQueries = []string{
	"SELECT STDDEV(amount), STD(qty), STDDEV_POP(score), STDDEV_SAMP(amount), VARIANCE(qty), VAR_POP(amount), VAR_SAMP(score) FROM t_order",
	"SELECT user_id, STDDEV(amount), STD(qty), STDDEV_POP(score), STDDEV_SAMP(amount), VARIANCE(qty), VAR_POP(amount), VAR_SAMP(score), COUNT(*) FROM t_order GROUP BY user_id ORDER BY user_id",
	"SELECT VAR_POP(big), STDDEV_SAMP(big), VAR_SAMP(order_id) FROM t_order",
	"SELECT STDDEV(amount), VAR_SAMP(qty) FROM t_order WHERE qty > 1000",
	"SELECT user_id, STDDEV(amount), VAR_SAMP(qty) FROM t_order WHERE qty > 1000 GROUP BY user_id ORDER BY user_id",
	"SELECT STDDEV(amount), VAR_SAMP(amount), STDDEV_SAMP(qty) FROM t_order WHERE amount IS NULL",
	"SELECT order_id, VAR_SAMP(amount), STDDEV_SAMP(qty), VAR_POP(qty), STDDEV_POP(score) FROM t_order GROUP BY order_id ORDER BY order_id",
	"SELECT user_id % 5 AS k, STDDEV_SAMP(qty) AS s, VARIANCE(amount) FROM t_order GROUP BY k HAVING s > 2 ORDER BY VARIANCE(amount) DESC, k",
	"SELECT user_id, ROUND(STDDEV(amount), 2), VAR_SAMP(qty) * 2 + 1 FROM t_order GROUP BY user_id ORDER BY user_id",
	"SELECT user_id FROM t_order GROUP BY user_id HAVING VAR_POP(qty) < 5 ORDER BY user_id",
	"SELECT VAR_SAMP(price), STDDEV(qty), AVG(price) FROM t_order_item",
	// An expression or HAVING reads the DOUBLE, not its value printed
	// with the column's 4 decimals (the proxy said 42.243000 for
	// ROUND(STDDEV(k), 6) where MariaDB says 42.242967).
	"SELECT STDDEV(qty), ROUND(STDDEV(qty), 6), STDDEV(qty) * 1000000, VAR_POP(qty) * 1000000 FROM t_order",
	"SELECT user_id, STDDEV(qty) s FROM t_order GROUP BY user_id HAVING s * 1000000 > 1 ORDER BY user_id",
	"SELECT user_id, ROUND(VAR_SAMP(qty) * 7, 8) FROM t_order GROUP BY user_id ORDER BY user_id",
	"SELECT user_id, STD(qty), STDDEV_POP(qty), VAR_POP(qty) FROM t_order WHERE user_id = 3 GROUP BY user_id ORDER BY user_id",
}

// sameStats runs each query through the proxy and on the reference, as
// text and prepared, and compares the answers (compareStats).
func sameStats(t *testing.T, e *diffEnv, queries []string) {
	t.Helper()
	ctx := context.Background()
	for _, q := range queries {
		got, want := e.run(ctx, e.proxyRaw, e.proxy, q), e.run(ctx, e.refRaw, e.ref, q)
		if d := compareStats(got, want); d != "" {
			t.Errorf("%s\n%s", q, d)
		}
		got, want = e.runPrepared(e.proxyRaw, q), e.runPrepared(e.refRaw, q)
		if d := compareStats(got, want); d != "" {
			t.Errorf("%s (prepared)\n%s", q, d)
		}
	}
}

func TestVarianceDifferential(t *testing.T) {
	e := diffEnvironment(t)
	sameStats(t, e, statsQueries)
	// A route to one data node is sent the statement as it is: the
	// variance is MariaDB's own, digit for digit.
	for _, q := range []string{
		"SELECT STDDEV(amount), VAR_SAMP(qty) FROM t_order WHERE user_id = 3 AND order_id = 22",
		"SELECT user_id, VARIANCE(score) FROM t_order WHERE user_id = 4 AND order_id IN (29, 393) GROUP BY user_id",
	} {
		e.check(t, diffCase{sql: q, ordered: true})
	}
}

// compareStats compares two answers exactly except for DOUBLE values,
// which agree to a relative 1e-9 (plus one unit of the last printed
// decimal, when the column prints a fixed number of them): MariaDB's
// variance is a running (Welford) computation whose last bits depend on
// the order it reads the rows in, and the proxy's combines the data
// nodes' partial values in another order.
func compareStats(got, want diffResult) string {
	if got.err != nil || want.err != nil {
		return fmt.Sprintf("error: proxy %v, reference %v", got.err, want.err)
	}
	if d := compareFields(got.fields, want.fields, 0, false, ""); d != "" {
		return d
	}
	if d := compareColumnTypes(got.colTypes, want.colTypes, 0); d != "" {
		return d
	}
	if len(got.rows) != len(want.rows) {
		return fmt.Sprintf("%d rows, reference %d", len(got.rows), len(want.rows))
	}
	for i := range want.rows {
		for j := range want.rows[i] {
			g, w := got.rows[i][j], want.rows[i][j]
			if g == nil || w == nil {
				if g != w {
					return fmt.Sprintf("row %d column %d: proxy %v, reference %v", i, j, deref(g), deref(w))
				}
				continue
			}
			if *g == *w {
				continue
			}
			if want.types[j] != mysql.MYSQL_TYPE_DOUBLE || !closeDoubles(*g, *w, want.fields[j].Decimal) {
				return fmt.Sprintf("row %d column %d: proxy %q, reference %q", i, j, *g, *w)
			}
		}
	}
	return ""
}

func closeDoubles(g, w string, decimals uint8) bool {
	gf, gerr := strconv.ParseFloat(g, 64)
	wf, werr := strconv.ParseFloat(w, 64)
	if gerr != nil || werr != nil {
		return false
	}
	tol := 1e-9 * math.Max(math.Abs(gf), math.Abs(wf))
	if decimals < 31 {
		tol += math.Pow10(-int(decimals))
	}
	return math.Abs(gf-wf) <= tol
}

// rollupQueries are GROUP BY ... WITH ROLLUP across data nodes (they got
// 1235): one and two group keys (qty has NULLs, so a group of NULL keys
// stands beside the super-aggregate rows), a key in descending order, a
// key the select list leaves out, COUNT, SUM, MIN, MAX, AVG, the variance
// family, DISTINCT aggregates, GROUP_CONCAT ordered, expressions over
// aggregates, HAVING (on aggregates and on the NULL of the super rows),
// and LIMIT, and no rows (MariaDB then answers no grand total).
// MariaDB takes no ORDER BY beside ROLLUP, so its order (each group's
// super rows after it, the grand total last) is compared row by row.
var rollupQueries = []string{
	"SELECT user_id, COUNT(*), SUM(amount), MIN(score), MAX(day), AVG(qty) FROM t_order GROUP BY user_id WITH ROLLUP",
	"SELECT flag, qty, COUNT(*), SUM(qty), AVG(amount), MAX(created) FROM t_order GROUP BY flag, qty WITH ROLLUP",
	"SELECT flag, user_id, COUNT(*), MIN(amount) FROM t_order GROUP BY flag DESC, user_id WITH ROLLUP",
	"SELECT COUNT(*), SUM(qty) FROM t_order GROUP BY flag WITH ROLLUP",
	"SELECT flag, STDDEV(amount), VAR_SAMP(qty), STD(score) FROM t_order GROUP BY flag WITH ROLLUP",
	"SELECT flag, COUNT(DISTINCT qty), SUM(DISTINCT qty), AVG(DISTINCT amount) FROM t_order GROUP BY flag WITH ROLLUP",
	"SELECT flag, GROUP_CONCAT(DISTINCT qty ORDER BY qty), GROUP_CONCAT(order_id ORDER BY order_id DESC SEPARATOR ';') FROM t_order GROUP BY flag WITH ROLLUP",
	"SELECT flag, SUM(amount) / COUNT(*), ROUND(AVG(qty), 1), COUNT(*) + 1 FROM t_order GROUP BY flag WITH ROLLUP",
	"SELECT flag, user_id, COUNT(*) AS n FROM t_order GROUP BY flag, user_id WITH ROLLUP HAVING n > 3",
	"SELECT flag, qty, COUNT(*) FROM t_order GROUP BY flag, qty WITH ROLLUP HAVING COUNT(*) > 2 OR flag > 0",
	"SELECT flag, user_id, COUNT(*) FROM t_order GROUP BY flag, user_id WITH ROLLUP LIMIT 7",
	"SELECT flag, user_id, SUM(qty) FROM t_order GROUP BY flag, user_id WITH ROLLUP LIMIT 3, 5",
	"SELECT user_id, COUNT(*), SUM(amount) FROM t_order WHERE qty > 1000 GROUP BY user_id WITH ROLLUP",
	"SELECT user_id, order_id, COUNT(*), SUM(price), AVG(qty) FROM t_order_item GROUP BY user_id, order_id WITH ROLLUP",
	// One data node: the statement as it is, MariaDB's own ROLLUP.
	"SELECT user_id, COUNT(*), SUM(amount) FROM t_order WHERE user_id = 4 AND order_id IN (29, 393) GROUP BY user_id WITH ROLLUP",
}

func TestRollupDifferential(t *testing.T) {
	e := diffEnvironment(t)
	ctx := context.Background()
	sameStats(t, e, rollupQueries)
	// MariaDB's own error for ORDER BY beside ROLLUP; 1235 where a super
	// row would need an expression of the NULL keys; the connection
	// answers the next statement.
	for _, tc := range []diffCase{
		{sql: "SELECT user_id, COUNT(*) FROM t_order GROUP BY user_id WITH ROLLUP ORDER BY user_id"},
		{sql: "SELECT user_id, COUNT(*) FROM t_order WHERE user_id = 3 AND order_id = 22 GROUP BY user_id WITH ROLLUP ORDER BY user_id"},
		{sql: "SELECT user_id + 1, COUNT(*) FROM t_order GROUP BY user_id WITH ROLLUP", wantErr: 1235},
		{sql: "SELECT user_id, COUNT(*) FROM t_order GROUP BY user_id WITH ROLLUP HAVING ABS(user_id) > 2", wantErr: 1235},
		{sql: "SELECT * FROM t_order GROUP BY order_id WITH ROLLUP", wantErr: 1235},
		// MariaDB keeps super rows that repeat a group's values.
		{sql: "SELECT DISTINCT flag, COUNT(*) > 0 FROM t_order GROUP BY flag, user_id WITH ROLLUP", wantErr: 1235},
		// MariaDB folds user_id IS NULL (NOT NULL) to false, super rows
		// or not.
		{sql: "SELECT flag, user_id, COUNT(*) FROM t_order GROUP BY flag, user_id WITH ROLLUP HAVING user_id IS NULL", wantErr: 1235},
		{sql: "SELECT user_id, COUNT(*) FROM t_order GROUP BY user_id WITH ROLLUP", ordered: true},
	} {
		got, want := e.run(ctx, e.proxyRaw, e.proxy, tc.sql), e.run(ctx, e.refRaw, e.ref, tc.sql)
		if tc.wantErr == 0 && !tc.ordered && (want.errCode != 1221 || got.errCode != 1221 || got.err.Error() != want.err.Error()) {
			t.Errorf("%s: proxy %v, reference %v", tc.sql, got.err, want.err)
			continue
		}
		if d := compareResults(tc, got, want); d != "" {
			t.Errorf("%s\n%s", tc.sql, d)
		}
	}
}

// TestJSONObjectAggDifferential: JSON_OBJECTAGG across data nodes (it got
// 1235) gives MariaDB's members and column definition. MariaDB writes the
// members in the order it reads the rows, which no ORDER BY fixes, so
// each object compares as the multiset of its members (sameJSONAggregates).
func TestJSONObjectAggDifferential(t *testing.T) {
	e := diffEnvironment(t)
	sameJSONAggregates(t, e, []string{
		"SELECT JSON_OBJECTAGG(order_id, status) FROM t_order",
		"SELECT user_id, JSON_OBJECTAGG(status, amount), COUNT(*) FROM t_order GROUP BY user_id ORDER BY user_id",
		"SELECT user_id, JSON_OBJECTAGG(day, created), JSON_OBJECTAGG(order_id, score) FROM t_order GROUP BY user_id ORDER BY user_id",
		"SELECT JSON_OBJECTAGG(status, qty) FROM t_order WHERE qty > 1000",
		"SELECT JSON_OBJECTAGG(status, qty) FROM t_order WHERE status IS NULL",
		"SELECT flag, JSON_OBJECTAGG(order_id, big), COUNT(*) FROM t_order GROUP BY flag WITH ROLLUP",
	})
}

// sameJSONAggregates runs each query through the proxy and on the
// reference, as text and prepared, and compares the answers with every
// JSON_OBJECTAGG and JSON_ARRAYAGG column (by its name) read as its
// length and the multiset of its members or elements (jsonMembers).
func sameJSONAggregates(t *testing.T, e *diffEnv, queries []string) {
	t.Helper()
	ctx := context.Background()
	for _, q := range queries {
		for _, prepared := range []bool{false, true} {
			var got, want diffResult
			if prepared {
				got, want = e.runPrepared(e.proxyRaw, q), e.runPrepared(e.refRaw, q)
			} else {
				got, want = e.run(ctx, e.proxyRaw, e.proxy, q), e.run(ctx, e.refRaw, e.ref, q)
			}
			for _, r := range []diffResult{got, want} {
				for _, row := range r.rows {
					for j, v := range row {
						name := string(r.fields[j].Name)
						if v != nil && (strings.HasPrefix(name, "JSON_OBJECTAGG") || strings.HasPrefix(name, "JSON_ARRAYAGG")) {
							s := jsonMembers(t, *v)
							row[j] = &s
						}
					}
				}
			}
			if d := compareStats(got, want); d != "" {
				t.Errorf("%s (prepared %v)\n%s", q, prepared, d)
			}
		}
	}
}

// jsonMembers returns the length of a JSON object or array and its
// members as sorted "key=value" lines (an array's elements as sorted
// lines), values as written.
func jsonMembers(t *testing.T, s string) string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	open, err := dec.Token()
	if err != nil || (open != json.Delim('{') && open != json.Delim('[')) {
		t.Fatalf("%q is not a JSON object or array: %v", s, err)
	}
	var members []string
	for dec.More() {
		var k json.Token
		if open == json.Delim('{') {
			if k, err = dec.Token(); err != nil {
				t.Fatalf("%q: %v", s, err)
			}
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if k != nil {
			members = append(members, fmt.Sprintf("%v=%s", k, v))
		} else {
			members = append(members, string(v))
		}
	}
	slices.Sort(members)
	return fmt.Sprintf("%d bytes\n%s", len(s), strings.Join(members, "\n"))
}
