package proxy

import (
	"context"
	"testing"
)

// TestOuterJoinKeptRowsOnce: an outer join that keeps the rows of a
// broadcast table or a table without rules, with a sharded table on its
// nullable side, returns each kept row once, as MariaDB does, or is
// refused with 1235. Run on every data node it reaches, each would return
// the kept rows it finds no match for (with NULLs): t_feat_broadcast b
// LEFT JOIN t_order o returned its unmatched rows once per data node and
// COUNT(*) counted 96 rows for 59. Found by TestNewFeaturesRandomDifferential.
// Such a join still runs where it reaches one data node, where the
// WHERE clause drops the NULL-extended rows (a condition on a sharding
// column of the nullable side), where groups or DISTINCT of the kept
// side's columns drop the repeats (router's nullsMerge), and in an
// UPDATE or DELETE.
func TestOuterJoinKeptRowsOnce(t *testing.T) {
	e := featEnvironment(t)
	ctx := context.Background()
	cases := []struct {
		diffCase
		args []any
	}{
		// Refused: every data node would return the kept rows.
		{diffCase: diffCase{sql: "SELECT b.id, o.order_id FROM t_feat_broadcast b LEFT JOIN t_order o ON o.user_id = b.user_id AND o.qty > 4", wantErr: 1235}},
		{diffCase: diffCase{sql: "SELECT COUNT(*) FROM t_feat_broadcast b LEFT JOIN t_order o ON o.user_id = b.user_id", wantErr: 1235}},
		{diffCase: diffCase{sql: "SELECT o.order_id, b.id FROM t_order o RIGHT JOIN t_feat_broadcast b ON o.user_id = b.user_id AND o.qty > ?", wantErr: 1235}, args: []any{4}},
		{diffCase: diffCase{sql: "SELECT b.id FROM t_feat_broadcast b LEFT JOIN t_order o ON o.user_id = b.user_id WHERE o.user_id IS NULL", wantErr: 1235}},
		{diffCase: diffCase{sql: "SELECT b.qty, COUNT(o.status) FROM t_feat_broadcast b LEFT JOIN t_order o ON o.user_id = b.user_id WHERE o.qty > ? OR o.status IS NULL GROUP BY b.qty", wantErr: 1235}, args: []any{3}},
		{diffCase: diffCase{sql: "SELECT COUNT(*) FROM (SELECT b.id FROM t_feat_broadcast b LEFT JOIN t_order o ON o.user_id = b.user_id) t", wantErr: 1235}},
		{diffCase: diffCase{sql: "SELECT b.id, o.order_id FROM (SELECT id, user_id FROM t_feat_broadcast) b LEFT JOIN t_order o ON o.user_id = b.user_id", wantErr: 1235}},
		// The single table's data source, several of its data nodes.
		{diffCase: diffCase{sql: "SELECT s.id, o.order_id FROM t_feat_single s LEFT JOIN t_order o ON o.user_id = s.user_id AND o.qty > 4 WHERE o.user_id IN (2, 4) OR o.user_id IS NULL", wantErr: 1235}},
		// A branch of the WHERE clause that keeps them.
		{diffCase: diffCase{sql: "SELECT b.id, o.order_id FROM t_feat_broadcast b LEFT JOIN t_order o ON o.user_id = b.user_id AND o.qty > 4 WHERE (o.user_id = 4 AND o.order_id = 29) OR b.id = ?", wantErr: 1235}, args: []any{3}},
		// The WHERE clause drops the NULL-extended rows (an inner join),
		// on one data node or several: MariaDB's answer.
		{diffCase: diffCase{sql: "SELECT b.id, o.order_id FROM t_feat_broadcast b LEFT JOIN t_order o ON o.user_id = b.user_id WHERE o.user_id = ? AND o.order_id = 29"}, args: []any{4}},
		{diffCase: diffCase{sql: "SELECT b.id, o.order_id FROM t_feat_broadcast b LEFT JOIN t_order o ON o.user_id = b.user_id WHERE o.user_id = ?"}, args: []any{4}},
		{diffCase: diffCase{sql: "SELECT b.id, COUNT(*) FROM t_feat_broadcast b LEFT JOIN t_order o ON o.user_id = b.user_id WHERE o.user_id IN (3, 4) GROUP BY b.id ORDER BY b.id", ordered: true, ignoreFlags: planFlags, planMeta: true}},
		// Groups of the kept side's columns, or DISTINCT of them, with
		// COUNT, SUM, MIN, MAX or AVG of a nullable side's column, which
		// ignore the repeated NULLs (Pony's and Django's count of
		// children per parent): the merge gives MariaDB's answer.
		{diffCase: diffCase{sql: "SELECT b.id, b.status, COUNT(o.order_id), COALESCE(SUM(o.amount), 0), MAX(o.qty), AVG(o.amount) FROM t_feat_broadcast b LEFT JOIN t_order o ON o.user_id = b.user_id AND o.qty > ? GROUP BY b.id, b.status ORDER BY b.id, b.status", ordered: true, ignoreFlags: planFlags, planMeta: true, fold: map[int]string{1: gci}}, args: []any{2}},
		{diffCase: diffCase{sql: "SELECT DISTINCT b.user_id FROM t_feat_broadcast b LEFT JOIN t_order o ON o.user_id = b.user_id AND o.qty > 4"}},
		{diffCase: diffCase{sql: "SELECT COUNT(o.order_id), COUNT(DISTINCT o.status) FROM t_feat_broadcast b LEFT JOIN t_order o ON o.user_id = b.user_id WHERE b.qty > ?", ignoreFlags: planFlags, planMeta: true}, args: []any{0}},
		// But not COUNT(*), a kept column's aggregate, a group of a
		// nullable column or a WHERE clause that reads the nullable side:
		// the repeats would count or make groups.
		{diffCase: diffCase{sql: "SELECT b.id, COUNT(*) FROM t_feat_broadcast b LEFT JOIN t_order o ON o.user_id = b.user_id GROUP BY b.id", wantErr: 1235}},
		{diffCase: diffCase{sql: "SELECT b.qty, COUNT(b.status) FROM t_feat_broadcast b LEFT JOIN t_order o ON o.user_id = b.user_id GROUP BY b.qty", wantErr: 1235}},
		{diffCase: diffCase{sql: "SELECT o.qty, COUNT(o.order_id) FROM t_feat_broadcast b LEFT JOIN t_order o ON o.user_id = b.user_id GROUP BY o.qty", wantErr: 1235}},
		{diffCase: diffCase{sql: "SELECT b.id, COUNT(o.order_id) FROM t_feat_broadcast b LEFT JOIN t_order o ON o.user_id = b.user_id AND o.qty > 4 WHERE o.order_id IS NULL GROUP BY b.id", wantErr: 1235}},
		{diffCase: diffCase{sql: "SELECT DISTINCT b.user_id, o.qty FROM t_feat_broadcast b LEFT JOIN t_order o ON o.user_id = b.user_id", wantErr: 1235}},
		// The kept side reads a sharded table: rows pair data node by
		// data node, as before.
		{diffCase: diffCase{sql: "SELECT o.order_id, b.id FROM t_order o LEFT JOIN t_feat_broadcast b ON b.user_id = o.user_id AND b.qty > ?"}, args: []any{0}},
		{diffCase: diffCase{sql: "SELECT o.order_id, b.id, i.item_id FROM t_order o JOIN t_feat_broadcast b ON b.user_id = o.user_id LEFT JOIN t_order_item i ON i.order_id = o.order_id AND i.user_id = o.user_id WHERE i.item_id IS NULL"}},
	}
	for _, tc := range cases {
		// As text with the arguments written in, then prepared.
		text := tc.diffCase
		text.sql = inlineArgs(tc.sql, tc.args)
		got, want := e.run(ctx, e.proxyRaw, e.proxy, text.sql), e.run(ctx, e.refRaw, e.ref, text.sql)
		if d := compareResults(text, got, want); d != "" {
			t.Errorf("%s\n%s", text.sql, d)
		}
		got, want = e.runPrepared(e.proxyRaw, tc.sql, tc.args...), e.runPrepared(e.refRaw, tc.sql, tc.args...)
		if d := compareResults(tc.diffCase, got, want); d != "" {
			t.Errorf("prepared %s %v\n%s", tc.sql, tc.args, d)
		}
		if tc.wantErr == 0 && len(want.rows) == 0 {
			t.Errorf("%s: no row on the reference, the case tests little", text.sql)
		}
	}
	// An UPDATE or DELETE changes only the rows it matches: a kept row
	// without a match changes nothing on any data node, and it runs.
	for _, q := range []string{
		"UPDATE t_feat_broadcast b LEFT JOIN t_order o ON o.user_id = b.user_id SET o.qty = o.qty + 1 WHERE b.id = 99",
		"DELETE o FROM t_feat_broadcast b LEFT JOIN t_order o ON o.user_id = b.user_id AND o.qty = 12345 WHERE b.id = 99",
	} {
		if res, err := e.proxy.ExecContext(ctx, q); err != nil {
			t.Errorf("%s: %v", q, err)
		} else if n, _ := res.RowsAffected(); n != 0 {
			t.Errorf("%s: %d rows affected, want 0", q, n)
		}
	}
	// The connection stays usable after the refusals.
	if got := e.run(ctx, e.proxyRaw, e.proxy, "SELECT COUNT(*) FROM t_feat_broadcast"); got.err != nil || len(got.rows) != 1 || *got.rows[0][0] != "8" {
		t.Errorf("after the refusals: %v %v", got.err, got.rows)
	}
}
