package proxy

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// sameError reports how the proxy's error got differs from MariaDB's want
// for the same statement: number, SQLSTATE and message, the reference
// database's name read as the logical schema's; "" when they agree.
func sameError(got, want error) string {
	var g, w *mysql.MyError
	if !errors.As(want, &w) {
		return fmt.Sprintf("MariaDB answered %v, want an error", want)
	}
	if !errors.As(got, &g) {
		return fmt.Sprintf("proxy answered %v, MariaDB %d (%s) %q", got, w.Code, w.State, w.Message)
	}
	wantMsg := strings.ReplaceAll(w.Message, diffRefDB, diffLogicalDB)
	if g.Code != w.Code || g.State != w.State || g.Message != wantMsg {
		return fmt.Sprintf("proxy %d (%s) %q, MariaDB %d (%s) %q", g.Code, g.State, g.Message, w.Code, w.State, wantMsg)
	}
	return ""
}

// TestUnknownColumnClause: an unknown column of a SELECT over several
// data nodes is reported as MariaDB reports it for the client's
// statement, in the clause the client wrote it in, although the routes
// read ORDER BY, GROUP BY and HAVING names in hidden select-list columns
// (where MariaDB reports them in 'SELECT'); as text and prepared.
func TestUnknownColumnClause(t *testing.T) {
	e := diffEnvironment(t)
	for _, q := range []string{
		"SELECT order_id FROM t_order ORDER BY nosuch",
		"SELECT order_id FROM t_order ORDER BY nosuch DESC LIMIT 3",
		"SELECT order_id FROM t_order WHERE user_id = 3 ORDER BY NoSuch",
		"SELECT order_id FROM t_order ORDER BY order_id, nosuch + 1",
		"SELECT o.order_id FROM t_order o ORDER BY o.nosuch",
		"SELECT order_id FROM t_order ORDER BY t_order.nosuch",
		"SELECT COUNT(*) FROM t_order ORDER BY nosuch",
		"SELECT SUM(qty) FROM t_order GROUP BY user_id ORDER BY nosuch",
		"SELECT user_id FROM t_order GROUP BY user_id ORDER BY COUNT(nosuch)",
		"SELECT order_id FROM t_order GROUP BY nosuch",
		"SELECT user_id, COUNT(*) FROM t_order GROUP BY user_id HAVING nosuch > 1",
		"SELECT user_id, COUNT(*) FROM t_order GROUP BY user_id HAVING MAX(nosuch) > 1",
		"SELECT user_id, COUNT(*) FROM t_order GROUP BY user_id HAVING COUNT(*) > 1 ORDER BY nosuch",
		"SELECT order_id FROM t_order WHERE nosuch = 1",
		"SELECT order_id FROM t_order WHERE nosuch = 1 ORDER BY nosuch",
		"SELECT nosuch FROM t_order ORDER BY nosuch",
		"SELECT order_id, nosuch FROM t_order GROUP BY nosuch",
	} {
		t.Run(q, func(t *testing.T) { e.sameErrorBothWays(t, q) })
	}
}

// TestSetOpOrderByUnknownColumn: a UNION, INTERSECT or EXCEPT across
// t_order and t_order_item (the proxy runs its branches apart and sorts
// their rows itself) whose ORDER BY names no result column gets
// MariaDB's 1054, as text and prepared: a name (Drizzle's unionAll
// ordered by the key of its selection, sql`u`, where the column is named
// user_id), after a name it has, or a position past the last column, of
// a select list with or without a wildcard. The names got 1235 (the
// proxy could not sort by them), the positions 1105 (an internal error).
func TestSetOpOrderByUnknownColumn(t *testing.T) {
	e := diffEnvironment(t)
	for _, q := range []string{
		"(SELECT user_id FROM t_order) UNION ALL (SELECT user_id FROM t_order_item) ORDER BY u LIMIT 5",
		"SELECT user_id FROM t_order INTERSECT SELECT user_id FROM t_order_item ORDER BY u",
		"SELECT user_id FROM t_order UNION ALL SELECT qty FROM t_order_item ORDER BY qty",
		"SELECT user_id AS u FROM t_order UNION SELECT user_id FROM t_order_item ORDER BY U DESC, nosuch",
		"SELECT user_id, order_id FROM t_order EXCEPT SELECT user_id, order_id FROM t_order_item ORDER BY 1, NoSuch",
		"SELECT user_id FROM t_order UNION SELECT user_id FROM t_order_item ORDER BY 2",
		"SELECT user_id, qty FROM t_order UNION ALL SELECT user_id, qty FROM t_order_item ORDER BY 1, 3 DESC",
		"SELECT * FROM t_order_item UNION ALL SELECT order_id, order_id, user_id, qty, amount FROM t_order ORDER BY 9",
	} {
		t.Run(q, func(t *testing.T) { e.sameErrorBothWays(t, q) })
	}
}

// TestSetOpOrderByQualifiedColumn: a set operation over t_order and
// t_order_item whose ORDER BY names a column with its table's name (or
// an alias's, or the schema's and table's), anywhere outside a subquery,
// gets MariaDB's 1250 naming that table as written, before an unknown
// name of the ORDER BY, a position past the select list or an unknown
// table of a branch, as text and prepared; each got 1235.
func TestSetOpOrderByQualifiedColumn(t *testing.T) {
	e := diffEnvironment(t)
	for _, q := range []string{
		"SELECT order_id FROM t_order UNION SELECT order_id FROM t_order ORDER BY t_order.order_id",
		"SELECT user_id FROM t_order UNION ALL SELECT user_id FROM t_order_item ORDER BY t_order_item.user_id LIMIT 3",
		"SELECT o.user_id FROM t_order o INTERSECT SELECT i.user_id FROM t_order_item i ORDER BY o.user_id DESC",
		"(SELECT user_id FROM t_order) EXCEPT (SELECT user_id FROM t_order_item) ORDER BY T_Order.user_id",
		"SELECT user_id FROM t_order UNION SELECT user_id FROM t_order_item ORDER BY ABS(t_order.user_id) + 1",
		"SELECT user_id FROM t_order UNION SELECT user_id FROM t_order_item ORDER BY user_id, sharding_db.t_order.nosuch",
		"SELECT user_id FROM t_order UNION SELECT user_id FROM t_order_item ORDER BY nosuch, x.user_id",
		"SELECT user_id FROM t_order UNION SELECT user_id FROM t_order_item ORDER BY 2, t_order.user_id",
		"SELECT user_id FROM t_order UNION ALL SELECT user_id FROM no_such_table ORDER BY t_order.user_id",
	} {
		t.Run(q, func(t *testing.T) { e.sameErrorBothWays(t, q) })
	}
}

// TestPositionOutOfRange: ORDER BY or GROUP BY a position the select list
// lacks, over several data nodes, is MariaDB's 1054 as it words it ('0'
// in 'ORDER BY', where the proxy said 'order clause' and 'group
// statement'), for an item MariaDB folds into an integer too ((0),
// -(2), GROUP BY -1, which named 'ORDER BY'), ORDER BY's before GROUP
// BY's, as text and prepared; the connection goes on.
func TestPositionOutOfRange(t *testing.T) {
	e := diffEnvironment(t)
	for _, q := range []string{
		"SELECT order_id FROM t_order ORDER BY 0",
		"SELECT order_id FROM t_order ORDER BY 2 DESC LIMIT 3",
		"SELECT order_id, user_id FROM t_order ORDER BY 1, 3",
		"SELECT order_id FROM t_order ORDER BY (0)",
		"SELECT order_id FROM t_order ORDER BY -(2)",
		"SELECT order_id FROM t_order ORDER BY FALSE",
		"SELECT DISTINCT user_id FROM t_order ORDER BY 0",
		"SELECT COUNT(*) FROM t_order ORDER BY 2",
		"SELECT user_id FROM t_order GROUP BY 0",
		"SELECT user_id, COUNT(*) FROM t_order GROUP BY 3",
		"SELECT user_id, COUNT(*) FROM t_order GROUP BY -1",
		"SELECT user_id, COUNT(*) FROM t_order GROUP BY (3)",
		"SELECT user_id FROM t_order GROUP BY 0 ORDER BY 2",
		"SELECT user_id, COUNT(*) FROM t_order GROUP BY 1 ORDER BY 3",
	} {
		t.Run(q, func(t *testing.T) { e.sameErrorBothWays(t, q) })
	}
	e.check(t, diffCase{sql: "SELECT COUNT(*) FROM t_order"})
}

// TestFoldedPosition: an ORDER BY or GROUP BY item that MariaDB folds
// into an integer literal, (1), +2, - -1, (TRUE), is a position of the
// select list, as 1 is. The merge took them for constants: it neither
// sorted the routes' rows nor grouped them (GROUP BY (1) answered one
// row).
func TestFoldedPosition(t *testing.T) {
	e := diffEnvironment(t)
	for _, tc := range []diffCase{
		{sql: "SELECT order_id FROM t_order ORDER BY (1) DESC LIMIT 5", ordered: true},
		{sql: "SELECT user_id, order_id FROM t_order ORDER BY +1, - -2 LIMIT 7", ordered: true},
		{sql: "SELECT order_id, qty FROM t_order ORDER BY (TRUE) DESC LIMIT 4", ordered: true},
		{sql: "SELECT user_id % 3, COUNT(*) FROM t_order GROUP BY (1)"},
		{sql: "SELECT user_id, SUM(qty) FROM t_order GROUP BY +1 ORDER BY (1) LIMIT 4", ordered: true},
		// GROUP_CONCAT's own ORDER BY (1) is its first argument, which
		// the merge refuses as it refuses ORDER BY 1 there; it joined
		// each group's values unordered.
		{sql: "SELECT user_id % 2, GROUP_CONCAT(order_id ORDER BY (1) DESC) FROM t_order GROUP BY 1", wantErr: 1235},
	} {
		e.check(t, tc)
		if d := compareResults(tc, e.runPrepared(e.proxyRaw, tc.sql), e.runPrepared(e.refRaw, tc.sql)); d != "" {
			t.Errorf("%s (prepared)\n%s", tc.sql, d)
		}
	}
}

// TestUnknownFunctionCase: a stored function that does not exist, called
// in a statement on a sharded table, is named in MariaDB's 1305 as the
// client wrote it, not upper-cased by the restore of the routes' SQL; on
// one data node and on several, as text and prepared.
func TestUnknownFunctionCase(t *testing.T) {
	e := diffEnvironment(t)
	for _, q := range []string{
		"SELECT order_id, My_Func(qty) FROM t_order WHERE user_id = 3 AND order_id = 22",
		"SELECT order_id, my_func(qty) FROM t_order",
		"SELECT order_id FROM t_order WHERE noSuch_fn(qty) = 1 ORDER BY order_id",
		"SELECT user_id, COUNT(*) FROM t_order GROUP BY user_id ORDER BY Lookup_Rank(user_id)",
		"UPDATE t_order SET qty = Next_Qty(qty) WHERE user_id = 3 AND order_id = 22",
	} {
		t.Run(q, func(t *testing.T) { e.sameErrorBothWays(t, q) })
	}
}

// sameErrorBothWays runs q through the proxy and on the reference
// tables, as text and prepared, and wants the same error each way.
func (e *diffEnv) sameErrorBothWays(t *testing.T, q string) {
	t.Helper()
	e.mu.Lock()
	_, got := e.proxyRaw.Execute(q)
	_, want := e.refRaw.Execute(q)
	e.mu.Unlock()
	if d := sameError(got, want); d != "" {
		t.Errorf("text: %s", d)
	}
	if d := sameError(e.runPrepared(e.proxyRaw, q).err, e.runPrepared(e.refRaw, q).err); d != "" {
		t.Errorf("prepared: %s", d)
	}
}
