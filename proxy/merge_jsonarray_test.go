package proxy

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
)

// jsonArrayQueries are JSON_ARRAYAGG across data nodes (they got 1235),
// with and without GROUP BY: strings with quotes, tabs, accents and empty
// ones in three collations and latin1, DECIMAL, DOUBLE (1e20, -0, 1e-7),
// BIGINT UNSIGNED, dates, ENUM, binary strings, NULL values (null
// elements) and groups of NULLs only, no rows (NULL), JSON values
// (JSON_OBJECT, JSON_ARRAY, JSON_QUERY) written as JSON, beside other
// aggregates, HAVING, WITH ROLLUP and a join of binding tables. MariaDB
// writes the elements in the order it reads the rows, so each array
// compares as its length and the multiset of its elements.
var jsonArrayQueries = []string{
	"SELECT JSON_ARRAYAGG(order_id) FROM t_order",
	"SELECT user_id, JSON_ARRAYAGG(status), JSON_ARRAYAGG(amount), COUNT(*) FROM t_order GROUP BY user_id ORDER BY user_id",
	"SELECT user_id, JSON_ARRAYAGG(score), JSON_ARRAYAGG(created), JSON_ARRAYAGG(day) FROM t_order GROUP BY user_id ORDER BY user_id",
	"SELECT flag, JSON_ARRAYAGG(note), JSON_ARRAYAGG(code), JSON_ARRAYAGG(city), SUM(qty) FROM t_order GROUP BY flag ORDER BY flag",
	"SELECT JSON_ARRAYAGG(big), JSON_ARRAYAGG(prio), JSON_ARRAYAGG(flag), JSON_ARRAYAGG(qty IS NULL), JSON_ARRAYAGG(CAST(code AS BINARY)) FROM t_order",
	"SELECT user_id, JSON_ARRAYAGG(JSON_OBJECT('id', order_id, 's', status, 'a', amount, 'q', qty)) FROM t_order GROUP BY user_id ORDER BY user_id",
	`SELECT JSON_ARRAYAGG(JSON_ARRAY(qty, note, score)), JSON_ARRAYAGG(JSON_QUERY('{"a": [1,  "x\\"y", {"b": null}]}', '$.a')) FROM t_order WHERE qty < 3`,
	"SELECT JSON_ARRAYAGG(qty) FROM t_order WHERE qty > 1000",
	"SELECT user_id, JSON_ARRAYAGG(qty) FROM t_order WHERE qty > 1000 GROUP BY user_id ORDER BY user_id",
	"SELECT user_id, JSON_ARRAYAGG(status), JSON_ARRAYAGG(NULL) FROM t_order WHERE status IS NULL GROUP BY user_id ORDER BY user_id",
	"SELECT flag, JSON_ARRAYAGG(qty), COUNT(*) FROM t_order GROUP BY flag WITH ROLLUP",
	"SELECT user_id, COUNT(*) FROM t_order GROUP BY user_id HAVING JSON_ARRAYAGG(amount) IS NOT NULL AND COUNT(*) > 7 ORDER BY user_id",
	"SELECT o.user_id, JSON_ARRAYAGG(i.price), JSON_ARRAYAGG(o.status) FROM t_order o JOIN t_order_item i ON o.user_id = i.user_id AND o.order_id = i.order_id GROUP BY o.user_id ORDER BY o.user_id",
	// One data node: the statement as it is.
	"SELECT user_id, JSON_ARRAYAGG(status) FROM t_order WHERE user_id = 3 AND order_id = 22 GROUP BY user_id",
}

func TestJSONArrayAggDifferential(t *testing.T) {
	e := diffEnvironment(t)
	sameJSONAggregates(t, e, jsonArrayQueries)
	// A function of the array is not computed by the merge: 1235, and
	// the connection answers the next statement.
	for _, tc := range []diffCase{
		{sql: "SELECT JSON_LENGTH(JSON_ARRAYAGG(qty)) FROM t_order", wantErr: 1235},
		{sql: "SELECT user_id, COUNT(*) FROM t_order GROUP BY user_id ORDER BY user_id", ordered: true},
	} {
		e.check(t, tc)
	}
}

// TestJSONArrayAggMaxLen: MariaDB cuts JSON_ARRAYAGG's elements at the
// session's group_concat_max_len bytes, with a warning 1260 counting the
// elements it wrote in the order it read the rows. At the longest
// array's length nothing is cut and the proxy answers as the reference,
// without warnings; one byte less the reference cuts, and the proxy,
// which cannot tell that order, refuses with 1235 naming the limit and
// answers the next statement.
func TestJSONArrayAggMaxLen(t *testing.T) {
	e := diffEnvironment(t)
	ctx := context.Background()
	q := "SELECT user_id, JSON_ARRAYAGG(status) FROM t_order GROUP BY user_id ORDER BY user_id"
	ref := e.run(ctx, e.refRaw, e.ref, q)
	if ref.err != nil || len(ref.rows) == 0 {
		t.Fatalf("%s on the reference: %v, %d rows", q, ref.err, len(ref.rows))
	}
	longest := 0
	for _, row := range ref.rows {
		longest = max(longest, len(*row[1])-2) // the elements, without [ ]
	}
	defer e.setBoth(t, "group_concat_max_len", "DEFAULT")

	e.setBoth(t, "group_concat_max_len", strconv.Itoa(longest))
	sameJSONAggregates(t, e, []string{q})
	if p, r := e.warnings(t, e.proxyRaw, q), e.warnings(t, e.refRaw, q); p != 0 || r != 0 {
		t.Errorf("group_concat_max_len = %d: %d warnings through the proxy, %d on the reference, want none", longest, p, r)
	}

	e.setBoth(t, "group_concat_max_len", strconv.Itoa(longest-1))
	if e.warnings(t, e.refRaw, q) == 0 {
		t.Fatalf("group_concat_max_len = %d: the reference cut nothing", longest-1)
	}
	got := e.run(ctx, e.proxyRaw, e.proxy, q)
	if got.errCode != 1235 || !strings.Contains(got.err.Error(), "group_concat_max_len ("+strconv.Itoa(longest-1)+";") {
		t.Errorf("group_concat_max_len = %d: proxy %v, want 1235 naming the limit", longest-1, got.err)
	}
	e.check(t, diffCase{sql: "SELECT user_id, COUNT(*) FROM t_order GROUP BY user_id ORDER BY user_id", ordered: true})
}

// warnings runs q on c and returns how many rows SHOW WARNINGS lists
// after it.
func (e *diffEnv) warnings(t *testing.T, c *client.Conn, q string) int {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, err := c.Execute(q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	r, err := c.Execute("SHOW WARNINGS")
	if err != nil {
		t.Fatalf("SHOW WARNINGS after %s: %v", q, err)
	}
	defer r.Close()
	return r.RowNumber()
}
