package proxy

import "testing"

// TestSubqueryReachingNoDataNode compares statements where a subquery's
// conditions, or the outer statement's, reach no data node of a sharded
// table (contradicting sharding values), as text and prepared. The
// routing ran such a statement on one data node with its WHERE ANDed with
// 0: a subquery that reads nothing emptied the statement around it (NOT
// EXISTS, NOT IN, a COUNT in the select list gave no rows), and an outer
// statement that matches nothing kept its select-list subquery over one
// data node's rows (a COUNT of one physical table; no 1242 for a
// subquery of several rows). Found by TestNewFeaturesRandomDifferential.
func TestSubqueryReachingNoDataNode(t *testing.T) {
	e := featEnvironment(t)
	for _, tc := range []diffCase{
		// The subquery reads nothing, the statement's rows stay.
		{sql: "SELECT id, (SELECT COUNT(*) FROM t_order WHERE user_id = 1 AND user_id = 2) FROM t_feat_single"},
		{sql: "SELECT id FROM t_feat_single WHERE NOT EXISTS (SELECT 1 FROM t_order WHERE user_id = 1 AND user_id = 2)"},
		{sql: "SELECT COUNT(*) FROM t_feat_single WHERE id NOT IN (SELECT order_id FROM t_order WHERE user_id = 1 AND user_id = 2)"},
		{sql: "SELECT id FROM t_feat_broadcast WHERE NOT EXISTS (SELECT 1 FROM t_order WHERE user_id = 1 AND user_id = 2) ORDER BY id", ordered: true},
		{sql: "SELECT order_id FROM t_order WHERE user_id = 3 AND order_id = 22 AND NOT EXISTS (SELECT 1 FROM t_order_item WHERE user_id = 1 AND user_id = 2)"},
		{sql: "SELECT (SELECT COUNT(*) FROM t_order WHERE user_id = 1 AND user_id = 2)"},
		// The statement matches nothing; its one row of aggregates still
		// holds the subquery's value over every data node.
		{sql: "SELECT COUNT(*), (SELECT COUNT(*) FROM t_order) FROM t_order_item WHERE user_id = 9 AND user_id = 6"},
		{sql: "SELECT COUNT(*), (SELECT MAX(order_id) FROM t_order) FROM t_order WHERE user_id = 1 AND user_id = 2"},
		{sql: "SELECT COUNT(*), (SELECT COUNT(*) FROM t_order WHERE user_id = 1 AND order_id = 8) FROM t_order_item WHERE user_id = 9 AND user_id = 6"},
		{sql: "SELECT COUNT(*), (SELECT user_id FROM t_order WHERE user_id = 11) AS x FROM t_order_item WHERE user_id = 9 AND user_id = 6"},
		// Both empty.
		{sql: "SELECT order_id FROM t_order WHERE user_id = 1 AND user_id = 2 AND order_id IN (SELECT order_id FROM t_order_item WHERE user_id = 1 AND order_id = 5)"},
	} {
		e.check(t, tc)
		got, want := e.runPrepared(e.proxyRaw, tc.sql), e.runPrepared(e.refRaw, tc.sql)
		if d := compareResults(tc, got, want); d != "" {
			t.Errorf("%s (prepared)\n%s", tc.sql, d)
		}
	}
}
