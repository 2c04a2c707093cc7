package router

import "testing"

// TestPlanUnionable: the planner says, from the statement, whether the
// routes of a multi-route SELECT may be branches of one UNION ALL and
// whether they carry the client's LIMIT (offset+count) pushed down.
func TestPlanUnionable(t *testing.T) {
	r, _ := newGoldenRouter(t, loadGoldenRules(t))
	tests := []struct {
		give          string
		args          []any
		wantUnionable bool
		wantPushed    bool
	}{
		{"SELECT order_id, status FROM t_order WHERE status = 'UNION INTO FOR UPDATE'", nil, true, false},
		{"SELECT order_id FROM t_order ORDER BY order_id LIMIT 5, 10", nil, true, true},
		{"SELECT order_id FROM t_order ORDER BY order_id LIMIT ?", []any{int64(3)}, true, true},
		{"SELECT DISTINCT status, user_id FROM t_order ORDER BY user_id LIMIT 4", nil, true, true},
		{"SELECT status FROM t_order GROUP BY status ORDER BY COUNT(*) DESC LIMIT 2", nil, true, false},
		{"SELECT order_id FROM t_order FOR UPDATE", nil, false, false},
		{"SELECT order_id FROM t_order FOR SHARE", nil, false, false},
		{"SELECT order_id FROM t_order LOCK IN SHARE MODE", nil, false, false},
		{"SELECT order_id FROM t_order ORDER BY order_id LIMIT 3 FOR UPDATE", nil, false, true},
		{"SELECT ?, order_id FROM t_order", []any{int64(1)}, false, false},
		{"SELECT @v, order_id FROM t_order", nil, false, false},
		{"SELECT @@sql_mode, order_id FROM t_order", nil, false, false},
		{"SELECT 'x', order_id FROM t_order", nil, false, false},
		{"SELECT order_id FROM t_order WHERE (@n := order_id) > 0", nil, false, false},
		{"SELECT order_id FROM t_order WHERE status IN (SELECT k FROM t_config)", nil, false, false},
		{"SELECT SQL_NO_CACHE order_id FROM t_order", nil, false, false},
		{"SELECT HIGH_PRIORITY order_id FROM t_order", nil, false, false},
		{"SELECT SQL_BUFFER_RESULT order_id FROM t_order", nil, false, false},
		{"SELECT GROUP_CONCAT(status) FROM t_order", nil, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			plan := bind(t, prepare(t, r, tt.give), tt.args...)
			if len(plan.Routes) < 2 || plan.Merge == nil {
				t.Fatalf("want a merged multi-route plan, got %d routes, merge %v", len(plan.Routes), plan.Merge)
			}
			if plan.Unionable != tt.wantUnionable {
				t.Errorf("Unionable = %v, want %v (route SQL %q)", plan.Unionable, tt.wantUnionable, plan.Routes[0].SQL)
			}
			if pushed := plan.Merge.Limit != nil && plan.Merge.Limit.Pushed; pushed != tt.wantPushed {
				t.Errorf("Limit.Pushed = %v, want %v (route SQL %q)", pushed, tt.wantPushed, plan.Routes[0].SQL)
			}
		})
	}
}
