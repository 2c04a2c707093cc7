package proxy

import (
	"context"
	"strings"
	"testing"
)

// setOpQueries are UNIONs, INTERSECTs and EXCEPTs whose branches read
// different tables (t_order and t_order_item, scattered or on one data
// node each, and the single table t_union_single on ds_0), which got
// 1235: the proxy runs each branch alone and merges them as the set
// operation does.
var setOpQueries = []diffCase{
	{sql: "SELECT order_id, user_id FROM t_order WHERE qty > 2 UNION ALL SELECT order_id, user_id FROM t_order_item WHERE qty > 3"},
	{sql: "SELECT order_id, user_id FROM t_order WHERE qty > 2 UNION SELECT order_id, user_id FROM t_order_item WHERE qty > 3"},
	{sql: "SELECT user_id FROM t_order UNION SELECT user_id FROM t_order_item"},
	{sql: "SELECT user_id FROM t_order UNION ALL SELECT user_id FROM t_order_item UNION ALL SELECT uid FROM t_union_single"},
	{sql: "SELECT order_id, user_id FROM t_order WHERE qty > 2 UNION ALL SELECT order_id, user_id FROM t_order_item ORDER BY 1 DESC, 2 LIMIT 7", ordered: true},
	{sql: "SELECT order_id, user_id FROM t_order UNION SELECT order_id, user_id FROM t_order_item ORDER BY order_id LIMIT 5, 6", ordered: true},
	{sql: "(SELECT order_id AS o FROM t_order WHERE user_id = 3) UNION ALL (SELECT order_id FROM t_order_item WHERE user_id = 4) ORDER BY o", ordered: true},
	// NULLs: UNION DISTINCT keeps one.
	{sql: "SELECT qty FROM t_order UNION SELECT qty FROM t_order_item"},
	{sql: "SELECT qty FROM t_order UNION ALL SELECT qty FROM t_order_item ORDER BY qty LIMIT 12", ordered: true},
	// Strings equal under the column's collation ('new', 'NEW', 'New '):
	// DISTINCT keeps one of them.
	{sql: "SELECT status FROM t_order UNION SELECT s FROM t_union_single", fold: map[int]string{0: gci}},
	{sql: "SELECT status FROM t_order UNION ALL SELECT s FROM t_union_single ORDER BY status DESC", fold: map[int]string{0: gci}},
	{sql: "SELECT order_id, user_id FROM t_order WHERE user_id = 3 UNION ALL SELECT id, uid FROM t_union_single"},
	{sql: "SELECT status, order_id FROM t_order WHERE user_id = 3 UNION ALL SELECT s, id FROM t_union_single LIMIT 50"},
	{sql: "SELECT status FROM t_order WHERE user_id IN (3, 4) UNION SELECT s FROM t_union_single ORDER BY 1 LIMIT 4", ordered: true, fold: map[int]string{0: gci}},
	// Each branch with its own merge: aggregates, its own ORDER BY and LIMIT.
	{sql: "SELECT user_id, COUNT(*) FROM t_order GROUP BY user_id UNION ALL SELECT user_id, COUNT(*) FROM t_order_item GROUP BY user_id ORDER BY 1, 2", ordered: true},
	{sql: "(SELECT order_id FROM t_order ORDER BY order_id DESC LIMIT 3) UNION ALL (SELECT order_id FROM t_order_item ORDER BY order_id LIMIT 2)"},
	// Computed columns, a date and a string function, both ways.
	{sql: "SELECT user_id, qty / 3, user_id + 1 FROM t_order WHERE user_id = 4 UNION ALL SELECT user_id, qty / 3, user_id + 1 FROM t_order_item WHERE user_id = 5"},
	{sql: "SELECT user_id, qty / 3, user_id + 1 FROM t_order WHERE user_id = 4 UNION SELECT user_id, qty / 3, user_id + 1 FROM t_order_item WHERE user_id = 5 ORDER BY 1, 2", ordered: true},
	{sql: "SELECT day, created, UPPER(status) FROM t_order WHERE user_id = 4 UNION ALL SELECT day, created, UPPER(status) FROM t_order WHERE user_id = 6 UNION ALL SELECT day, created, UPPER(status) FROM t_order_item JOIN t_order USING (user_id, order_id) WHERE user_id = 5"},
	{sql: "SELECT day, created, UPPER(status) FROM t_order WHERE user_id = 4 UNION SELECT day, created, UPPER(status) FROM t_order_item JOIN t_order USING (user_id, order_id) WHERE user_id = 5", fold: map[int]string{2: gci}},
	{sql: "SELECT score, score * 2, CONCAT(code, 'x') FROM t_order WHERE user_id = 4 UNION SELECT score, score * 2, CONCAT(code, 'x') FROM t_order_item JOIN t_order USING (user_id, order_id) WHERE user_id = 5", fold: map[int]string{2: bin}},
	{sql: "SELECT score, score * 2, CONCAT(code, 'x') FROM t_order WHERE user_id = 4 UNION ALL SELECT score, score * 2, CONCAT(code, 'x') FROM t_order_item JOIN t_order USING (user_id, order_id) WHERE user_id = 5"},
	// SET STATEMENT: the UNION's result under sql_select_limit, each
	// branch under the other assignments.
	{sql: "SET STATEMENT sql_select_limit = 4 FOR SELECT order_id FROM t_order UNION ALL SELECT order_id FROM t_order_item ORDER BY 1 DESC", ordered: true},
	{sql: "SET STATEMENT sql_select_limit = 4, max_statement_time = 60 FOR SELECT user_id, COUNT(*) FROM t_order GROUP BY user_id UNION ALL SELECT uid, COUNT(*) FROM t_union_single GROUP BY uid ORDER BY 1, 2", ordered: true},
	{sql: "SET STATEMENT div_precision_increment = 1 FOR SELECT user_id, qty / 3 FROM t_order WHERE user_id = 4 UNION SELECT user_id, qty / 3 FROM t_order_item WHERE user_id = 5 ORDER BY 1, 2", ordered: true},
	// Column types that differ between branches: MariaDB widens them
	// (DECIMAL(12,2) and DECIMAL(8,2), BIGINT and INT); the proxy refuses.
	{sql: "SELECT amount FROM t_order UNION ALL SELECT price FROM t_order_item", wantErr: 1235},
	{sql: "SELECT order_id FROM t_order UNION ALL SELECT user_id FROM t_order_item", wantErr: 1235},
	// Different collations (utf8mb4_bin and utf8mb4_general_ci) under DISTINCT.
	{sql: "SELECT code FROM t_order UNION SELECT s FROM t_union_single", wantErr: 1235},
	// Nullability differs (qty INT NULL, uid INT NOT NULL).
	{sql: "SELECT qty FROM t_order UNION ALL SELECT uid FROM t_union_single", wantErr: 1235},
	// INTERSECT and EXCEPT: distinct rows, NULL equal to NULL, strings
	// equal under the column's collation.
	{sql: "SELECT user_id FROM t_order INTERSECT SELECT uid FROM t_union_single"},
	{sql: "SELECT user_id FROM t_order EXCEPT SELECT uid FROM t_union_single ORDER BY 1", ordered: true},
	{sql: "SELECT status FROM t_order INTERSECT SELECT s FROM t_union_single", fold: map[int]string{0: gci}},
	{sql: "SELECT status FROM t_order EXCEPT SELECT s FROM t_union_single ORDER BY 1 LIMIT 5", ordered: true, fold: map[int]string{0: gci}},
	{sql: "SELECT user_id, qty FROM t_order INTERSECT SELECT user_id, qty FROM t_order_item INTERSECT SELECT user_id, qty FROM t_order WHERE qty > 1"},
	{sql: "SELECT qty FROM t_order EXCEPT SELECT qty FROM t_order_item EXCEPT SELECT qty FROM t_order WHERE user_id = 3 ORDER BY qty", ordered: true},
	{sql: "(SELECT user_id FROM t_order WHERE qty < 3) INTERSECT (SELECT user_id FROM t_order_item) ORDER BY user_id DESC LIMIT 3", ordered: true},
	// A branch whose conditions reach no data node is empty, the others
	// are not: the routing, which pairs the tables' data nodes as a
	// join's, found none in common and ran every branch with AND 0.
	{sql: "SELECT user_id FROM t_order WHERE user_id = 1 AND user_id = 2 UNION ALL SELECT user_id FROM t_order_item WHERE user_id = 3"},
	{sql: "SELECT user_id FROM t_order_item WHERE user_id = 3 UNION SELECT user_id FROM t_order WHERE user_id = 1 AND user_id = 2 ORDER BY 1", ordered: true},
	{sql: "SELECT uid FROM t_union_single EXCEPT SELECT user_id FROM t_order WHERE user_id = 1 AND user_id = 2 ORDER BY 1", ordered: true},
	// INTERSECT ALL and EXCEPT ALL count the copies: user_id and uid
	// repeat within each branch (NULLs too), strings equal under the
	// collation count as one value.
	{sql: "SELECT user_id FROM t_order INTERSECT ALL SELECT uid FROM t_union_single"},
	{sql: "SELECT user_id FROM t_order EXCEPT ALL SELECT uid FROM t_union_single ORDER BY 1", ordered: true},
	{sql: "SELECT uid FROM t_union_single EXCEPT ALL SELECT user_id FROM t_order_item WHERE user_id = 3"},
	{sql: "SELECT user_id FROM t_order_item INTERSECT ALL SELECT user_id FROM t_order"},
	{sql: "SELECT qty FROM t_order INTERSECT ALL SELECT qty FROM t_order_item ORDER BY 1 LIMIT 6", ordered: true},
	{sql: "SELECT qty FROM t_order EXCEPT ALL SELECT qty FROM t_order_item EXCEPT ALL SELECT qty FROM t_order WHERE user_id = 3"},
	{sql: "SELECT user_id, qty FROM t_order INTERSECT ALL SELECT user_id, qty FROM t_order_item INTERSECT ALL SELECT user_id, qty FROM t_order WHERE qty > 1"},
	{sql: "SELECT status FROM t_order INTERSECT ALL SELECT s FROM t_union_single", fold: map[int]string{0: gci}},
	{sql: "SELECT status FROM t_order EXCEPT ALL SELECT s FROM t_union_single", fold: map[int]string{0: gci}},
	{sql: "SELECT uid, s FROM t_union_single EXCEPT ALL SELECT user_id, status FROM t_order WHERE user_id = 1 AND user_id = 2"},
	// Mixed operators keep 1235.
	{sql: "SELECT user_id FROM t_order UNION SELECT user_id FROM t_order_item UNION ALL SELECT uid FROM t_union_single", wantErr: 1235},
	{sql: "SELECT user_id FROM t_order UNION SELECT user_id FROM t_order_item INTERSECT SELECT uid FROM t_union_single", wantErr: 1235},
	{sql: "SELECT user_id FROM t_order INTERSECT ALL SELECT uid FROM t_union_single INTERSECT SELECT uid FROM t_union_single", wantErr: 1235},
}

func TestSetOpAcrossTablesDifferential(t *testing.T) {
	e := diffEnvironment(t)
	ctx := context.Background()
	for _, q := range []string{
		"CREATE TABLE IF NOT EXISTS t_union_single (id BIGINT NOT NULL, uid INT NOT NULL, s VARCHAR(20) NULL)",
		"DELETE FROM t_union_single",
		"INSERT INTO t_union_single VALUES (1, 3, 'new'), (2, 3, 'NEW'), (3, 5, 'a'), (4, 6, 'A'), (5, 7, NULL), (6, 8, 'paid '), (1, 3, 'new')",
	} {
		if _, err := e.proxy.ExecContext(ctx, q); err != nil {
			t.Fatalf("proxy: %s: %v", q, err)
		}
		if _, err := e.ref.ExecContext(ctx, q); err != nil {
			t.Fatalf("reference: %s: %v", q, err)
		}
	}
	for _, tc := range setOpQueries {
		e.check(t, tc)
		if tc.wantErr != 0 || strings.HasPrefix(tc.sql, "SET STATEMENT") {
			continue // the proxy prepares no SET STATEMENT
		}
		got, want := e.runPrepared(e.proxyRaw, tc.sql), e.runPrepared(e.refRaw, tc.sql)
		if d := compareResults(tc, got, want); d != "" {
			t.Errorf("%s (prepared)\n%s", tc.sql, d)
		}
	}
	// ? in the branches and the UNION's LIMIT.
	q := "SELECT order_id FROM t_order WHERE user_id = ? UNION ALL SELECT order_id FROM t_order_item WHERE user_id = ? ORDER BY 1 LIMIT ?"
	got, want := e.runPrepared(e.proxyRaw, q, 3, 4, 5), e.runPrepared(e.refRaw, q, 3, 4, 5)
	if d := compareResults(diffCase{sql: q, ordered: true}, got, want); d != "" {
		t.Errorf("%s (3, 4, 5)\n%s", q, d)
	}
}
