package proxy

import "testing"

// TestLastInsertIDExprOneDataNode: a write that calls LAST_INSERT_ID(expr)
// leaves the session the value set for the last row MariaDB changed, in
// its order, and reports it in the OK packet. Over several data nodes of
// a sharded table each route reports the last of its own rows, and the
// proxy gave the first route's: INSERT ... ON DUPLICATE KEY UPDATE
// item_id = LAST_INSERT_ID(item_id) of the items 140, 100 and 110 said
// 100 where MariaDB says 110 (found by
// TestNewFeaturesWriteRandomDifferential). Such a write is refused with
// 1235 and changes nothing; over one data node, and on a broadcast
// table's copies, it answers as MariaDB, text and prepared.
func TestLastInsertIDExprOneDataNode(t *testing.T) {
	e := newWriteFuzzEnv(t)
	tests := []struct {
		give    write
		refused bool
	}{
		// Items 140 and 100 are on ds_0.t_order_item_2, 110 on
		// ds_1.t_order_item_3.
		{give: write{sql: "INSERT INTO t_order_item (item_id, order_id, user_id, qty) VALUES (140, 14, 6, 1), (100, 10, 0, 1), (110, 11, 5, 1) ON DUPLICATE KEY UPDATE item_id = LAST_INSERT_ID(item_id)"}, refused: true},
		{give: write{sql: "INSERT INTO t_order_item (item_id, order_id, user_id, qty) VALUES (?, 14, 6, 1), (100, 10, 0, ?), (110, 11, 5, 1) ON DUPLICATE KEY UPDATE item_id = LAST_INSERT_ID(item_id)", args: []any{140, 2}}, refused: true},
		{give: write{sql: "INSERT INTO t_order_item (item_id, order_id, user_id, qty) VALUES (140, 14, 6, 1), (100, 10, 0, 1) ON DUPLICATE KEY UPDATE item_id = LAST_INSERT_ID(item_id)"}},
		{give: write{sql: "INSERT INTO t_order_item (item_id, order_id, user_id, qty) VALUES (110, 11, 5, 1), (111, 11, 5, 2), (112, 11, 5, 3) ON DUPLICATE KEY UPDATE qty = qty + LAST_INSERT_ID(7)"}},
		// Orders 2 (ds_0.t_order_2) and 3 (ds_1.t_order_3).
		{give: write{sql: "UPDATE t_order SET big = LAST_INSERT_ID(big + 1) WHERE order_id IN (2, 3)"}, refused: true},
		{give: write{sql: "UPDATE t_order SET big = LAST_INSERT_ID(big + ?) WHERE order_id IN (2, ?)", args: []any{1, 3}}, refused: true},
		{give: write{sql: "DELETE FROM t_order WHERE order_id IN (2, 3) AND LAST_INSERT_ID(order_id) > 0"}, refused: true},
		{give: write{sql: "UPDATE t_order SET big = LAST_INSERT_ID(big + 1) WHERE order_id = ? AND user_id = ?", args: []any{3, 3}}},
		{give: write{sql: "INSERT INTO t_feat_broadcast (id, user_id, code) VALUES (3, 1, 'q'), (9, 2, 'r') ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id)"}},
		{give: write{sql: "INSERT INTO t_feat_single (id, user_id, code) VALUES (3, 1, 'q'), (9, 2, 'r') ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id)"}},
	}
	for _, tt := range tests {
		for _, prepared := range []bool{false, true} {
			got, outcome, d := e.step(t, tt.give, prepared, false)
			if d != "" {
				t.Errorf("prepared %v: %s", prepared, d)
			}
			if refused := outcome == writeRefused; refused != tt.refused {
				t.Errorf("prepared %v: %s %v: %s, want refused %v", prepared, tt.give.sql, tt.give.args, got, tt.refused)
			}
		}
	}
}
