package router

import (
	"testing"

	"github.com/shardflake/shardflake/idgen"
)

// replica may answer, for static and bound plans alike.
func TestPlanAccess(t *testing.T) {
	r, err := New(load(t, "../config/testdata/rules/ss_readwrite_splitting.yaml"), map[string]idgen.KeyGenerator{"snowflake": &fakeKeys{next: 1, batch: 10}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		give string
		args []any
		want Access
	}{
		{"SELECT * FROM t_order WHERE user_id = 1", nil, AccessRead},
		{"SELECT * FROM t_order WHERE user_id = ?", []any{int64(1)}, AccessRead},
		{"SELECT COUNT(*) FROM t_order", nil, AccessRead},
		{"SELECT * FROM t_order WHERE user_id = 1 AND order_id = 2 UNION ALL SELECT * FROM t_order WHERE user_id = 1 AND order_id = 6", nil, AccessRead},
		{"SELECT * FROM t_order WHERE user_id = ? FOR UPDATE", []any{int64(1)}, AccessLockingRead},
		{"SELECT * FROM t_order WHERE user_id = 1 LOCK IN SHARE MODE", nil, AccessLockingRead},
		{"SELECT * FROM t_order WHERE order_id IN (SELECT order_id FROM t_order WHERE user_id = 1 FOR UPDATE) AND user_id = 1", nil, AccessLockingRead},
		{"SELECT CONCAT(status, 'x'), CHAR(65), INSERT(status, 1, 1, 'x'), IFNULL(status, NOW()) FROM t_order WHERE user_id = 1", nil, AccessRead},
		{"SELECT CAST(status AS CHAR), COUNT(*), SUM(order_id), JSON_EXTRACT('{}', '$.a') FROM t_order WHERE user_id = 1 GROUP BY status", nil, AccessRead},
		{"SELECT bump(status) FROM t_order WHERE user_id = 1", nil, AccessWrite},
		{"SELECT sharding_db.concat(status) FROM t_order WHERE user_id = 1", nil, AccessWrite},
		{"SELECT status FROM t_order WHERE user_id = 1 AND order_id = 2 AND status IN (SELECT bump(status) FROM t_order WHERE user_id = 1 AND order_id = 2)", nil, AccessWrite},
		{"SELECT LAST_INSERT_ID(), bump(status) FROM t_order WHERE user_id = 1", nil, AccessWrite},
		{"SELECT LAST_INSERT_ID(), status FROM t_order WHERE user_id = 1", nil, AccessSessionRead},
		{"SELECT @x := status FROM t_order WHERE user_id = 1", nil, AccessSessionRead},
		{"SELECT @@tx_isolation, status FROM t_order WHERE user_id = 1", nil, AccessSessionRead},
		{"/* SHARDINGSPHERE_HINT: WRITE_ROUTE_ONLY=true */ SELECT * FROM t_order WHERE user_id = 1", nil, AccessWriteRouteOnly},
		{"/* SHARDINGSPHERE_HINT: WRITE_ROUTE_ONLY=false */ SELECT * FROM t_order WHERE user_id = 1", nil, AccessRead},
		{"/* SHARDINGSPHERE_HINT: DATA_SOURCE_NAME=readwrite_ds_1 */ SELECT * FROM t_order_1", nil, AccessRead},
		{"INSERT INTO t_order (user_id, status) VALUES (1, 'a')", nil, AccessWrite},
		{"UPDATE t_order SET status = 'b' WHERE user_id = ?", []any{int64(1)}, AccessWrite},
		{"DELETE FROM t_order WHERE user_id = 1", nil, AccessWrite},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			stmt, err := ParseOne(tt.give)
			if err != nil {
				t.Fatal(err)
			}
			p, err := r.Prepare(stmt, tt.give, "sharding_db")
			if err != nil {
				t.Fatal(err)
			}
			plan, err := p.Bind(tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if plan.Access != tt.want {
				t.Errorf("access = %s, want %s", plan.Access, tt.want)
			}
		})
	}
}
