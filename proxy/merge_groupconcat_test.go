package proxy

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// TestGroupConcatDifferential: GROUP_CONCAT across data nodes answers as
// one MariaDB holding all the rows: DISTINCT, SEPARATOR, ORDER BY its
// argument (either way) or other expressions, several expressions, next
// to other aggregates and HAVING, and cut at the session's
// group_concat_max_len (they got 1235).
func TestGroupConcatDifferential(t *testing.T) {
	e := diffEnvironment(t)
	for _, tc := range []diffCase{
		{sql: "SELECT user_id, GROUP_CONCAT(DISTINCT qty) FROM t_order GROUP BY user_id"},
		{sql: "SELECT GROUP_CONCAT(DISTINCT item_id SEPARATOR ' ') FROM t_order_item"},
		{sql: "SELECT user_id, GROUP_CONCAT(order_id ORDER BY order_id DESC) FROM t_order GROUP BY user_id ORDER BY user_id", ordered: true},
		{sql: "SELECT user_id, GROUP_CONCAT(DISTINCT HEX(status) ORDER BY HEX(status) SEPARATOR '|'), COUNT(*), SUM(qty) FROM t_order GROUP BY user_id"},
		{sql: "SELECT GROUP_CONCAT(amount ORDER BY amount), MAX(order_id) FROM t_order"},
		{sql: "SELECT user_id, GROUP_CONCAT(qty ORDER BY qty SEPARATOR '') AS q FROM t_order GROUP BY user_id HAVING COUNT(*) > 7"},
		{sql: "SELECT GROUP_CONCAT(DISTINCT user_id ORDER BY user_id DESC) FROM t_order WHERE qty IS NULL"},
		{sql: "SELECT GROUP_CONCAT(qty) FROM t_order WHERE qty > 1000"},
		// ORDER BY other expressions than the argument: routes group by
		// them too (order_id is unique: no ties).
		{sql: "SELECT GROUP_CONCAT(status ORDER BY order_id) FROM t_order"},
		{sql: "SELECT user_id, GROUP_CONCAT(qty ORDER BY order_id DESC SEPARATOR '|') FROM t_order GROUP BY user_id"},
		{sql: "SELECT user_id, GROUP_CONCAT(status ORDER BY qty DESC, order_id), COUNT(*) FROM t_order GROUP BY user_id HAVING COUNT(*) > 2 ORDER BY user_id", ordered: true},
		{sql: "SELECT GROUP_CONCAT(order_id ORDER BY amount, order_id DESC) FROM t_order WHERE user_id IN (1, 2, 3, 4)"},
		{sql: "SELECT GROUP_CONCAT(CONCAT(status, ':', qty) ORDER BY day DESC, order_id SEPARATOR '; ') AS g FROM t_order"},
		{sql: "SELECT user_id, GROUP_CONCAT(order_id ORDER BY order_id), GROUP_CONCAT(status ORDER BY LOWER(status), order_id DESC) FROM t_order GROUP BY user_id"},
		{sql: "SELECT GROUP_CONCAT(DISTINCT status ORDER BY order_id) FROM t_order", wantErr: 1235},
		// Several expressions: a row with a NULL one is skipped.
		{sql: "SELECT user_id, GROUP_CONCAT(status, ':', qty ORDER BY order_id) FROM t_order GROUP BY user_id"},
		{sql: "SELECT GROUP_CONCAT(order_id, '-', amount, city ORDER BY order_id DESC SEPARATOR '|') AS g, COUNT(*) FROM t_order"},
		{sql: "SELECT user_id, GROUP_CONCAT(code, note, score ORDER BY created DESC, order_id) FROM t_order GROUP BY user_id"},
		{sql: "SELECT user_id, GROUP_CONCAT(day, flag ORDER BY day, flag, order_id) FROM t_order GROUP BY user_id HAVING COUNT(*) > 1"},
		{sql: "SELECT GROUP_CONCAT(DISTINCT status, qty) FROM t_order", wantErr: 1235},
		{sql: "SELECT user_id, GROUP_CONCAT(qty ORDER BY qty), COUNT(DISTINCT amount), GROUP_CONCAT(DISTINCT day ORDER BY day) FROM t_order GROUP BY user_id"},
		// The reference sorts through a temporary table, which describes
		// the column as a BLOB of another length.
		{sql: "SELECT user_id, GROUP_CONCAT(DISTINCT qty ORDER BY qty) AS g FROM t_order GROUP BY user_id ORDER BY g, user_id", ordered: true, planMeta: true, ignoreFlags: mysql.BLOB_FLAG},
		{sql: "SELECT user_id FROM t_order GROUP BY user_id HAVING GROUP_CONCAT(DISTINCT qty ORDER BY qty) <> '0'"},
		// Values equal under the collation ('new', 'NEW'): one of them.
		{sql: "SELECT GROUP_CONCAT(DISTINCT TRIM(LOWER(status)) ORDER BY TRIM(LOWER(status)) DESC SEPARATOR '; ') FROM t_order WHERE status NOT LIKE 'r%'"},
	} {
		e.check(t, tc)
	}
	// A NULL key of a GROUP_CONCAT's ORDER BY sorts as MariaDB sorts it
	// there (not first, as in ORDER BY): every type of key, either way.
	for _, k := range []string{"qty", "qty DESC", "amount", "amount DESC", "score", "score DESC", "day", "day DESC", "created", "created DESC", "status", "status DESC", "note", "code DESC", "city", "flag", "big DESC", "TIME(created)", "TIME(created) DESC", "HEX(code)", "CAST(code AS BINARY) DESC"} {
		e.check(t, diffCase{sql: "SELECT user_id, GROUP_CONCAT(order_id ORDER BY " + k + ", order_id) FROM t_order GROUP BY user_id"})
	}
	// An ENUM orders by its position, which the result does not carry.
	e.check(t, diffCase{sql: "SELECT GROUP_CONCAT(order_id ORDER BY prio, order_id) FROM t_order", wantErr: 1235})

	// Without DISTINCT or ORDER BY MariaDB gives the values in the order
	// it reads them: the same values, in some order. So does an ORDER BY
	// for values equal under the collation ('new', 'NEW', 'New '), where
	// every row's own spelling is joined: a data node's rows of one
	// value counted as the spelling it kept ("NEW,NEW" for "New ,NEW").
	ctx := context.Background()
	for _, q := range []string{
		"SELECT user_id, GROUP_CONCAT(order_id) FROM t_order GROUP BY user_id ORDER BY user_id",
		"SELECT user_id, GROUP_CONCAT(status ORDER BY status) FROM t_order WHERE LOWER(status) = 'new' GROUP BY user_id ORDER BY user_id",
		"SELECT 0, GROUP_CONCAT(status ORDER BY status DESC) FROM t_order",
		"SELECT COUNT(DISTINCT status), GROUP_CONCAT(status) FROM t_order WHERE qty > 2",
		"SELECT user_id, GROUP_CONCAT(status, '/', qty SEPARATOR ',') FROM t_order GROUP BY user_id ORDER BY user_id",
	} {
		got, want := e.run(ctx, e.proxyRaw, e.proxy, q), e.run(ctx, e.refRaw, e.ref, q)
		if got.err != nil || want.err != nil || len(got.rows) != len(want.rows) || len(want.rows) == 0 {
			t.Fatalf("%s: proxy %v (%d rows), reference %v (%d rows)", q, got.err, len(got.rows), want.err, len(want.rows))
		}
		for i := range want.rows {
			g, w := strings.Split(*got.rows[i][1], ","), strings.Split(*want.rows[i][1], ",")
			slices.Sort(g)
			slices.Sort(w)
			if *got.rows[i][0] != *want.rows[i][0] || !slices.Equal(g, w) {
				t.Errorf("%s: row %d: proxy %s %q, reference %s %q", q, i, *got.rows[i][0], g, *want.rows[i][0], w)
			}
		}
	}

	// group_concat_max_len is the session's.
	e.setBoth(t, "group_concat_max_len", "7")
	defer e.setBoth(t, "group_concat_max_len", "DEFAULT")
	for _, sql := range []string{
		"SELECT user_id, GROUP_CONCAT(order_id ORDER BY order_id DESC) FROM t_order GROUP BY user_id ORDER BY user_id",
		"SELECT GROUP_CONCAT(DISTINCT HEX(status) ORDER BY HEX(status)) FROM t_order",
		"SELECT user_id, GROUP_CONCAT(status ORDER BY order_id DESC) FROM t_order GROUP BY user_id ORDER BY user_id",
		"SELECT user_id, GROUP_CONCAT(qty, status ORDER BY order_id) FROM t_order GROUP BY user_id ORDER BY user_id",
	} {
		g, w := e.run(ctx, e.proxyRaw, e.proxy, sql), e.run(ctx, e.refRaw, e.ref, sql)
		if d := compareResults(diffCase{sql: sql, ordered: true}, g, w); d != "" {
			t.Errorf("group_concat_max_len = 7: %s\n%s", sql, d)
		}
	}
}

// setBoth sets a session variable on the raw connections to the proxy and
// to the reference.
func (e *diffEnv) setBoth(t *testing.T, name, value string) {
	t.Helper()
	e.mu.Lock()
	_, perr := e.proxyRaw.Execute("SET SESSION " + name + " = " + value)
	_, rerr := e.refRaw.Execute("SET SESSION " + name + " = " + value)
	e.mu.Unlock()
	if perr != nil || rerr != nil {
		t.Fatalf("SET %s = %s: proxy %v, reference %v", name, value, perr, rerr)
	}
}
