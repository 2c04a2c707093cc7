package router

import (
	"reflect"
	"testing"
)

// TestBindRendersSameTextPerDataNode binds one prepared statement again
// and again with arguments that route to every data node several times,
// so that most binds reuse the text made for their data node, and
// compares each plan's routes with those of the same statement freshly
// prepared (whose template has rendered nothing before).
func TestBindRendersSameTextPerDataNode(t *testing.T) {
	r, _ := newGoldenRouter(t, loadGoldenRules(t))
	prepare := func(sql string) *Prepared {
		t.Helper()
		stmt, err := ParseOne(sql)
		if err != nil {
			t.Fatal(err)
		}
		p, err := r.Prepare(stmt, sql, "sharding_db")
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		sql  string
		args func(i int64) []any
	}{
		{"SELECT * FROM t_order WHERE user_id = ? AND order_id = ?", func(i int64) []any { return []any{i % 5, i} }},
		{"SELECT status FROM t_order WHERE order_id = ? AND user_id = ? AND status <> 'x'", func(i int64) []any { return []any{i, i % 3} }},
		{"SELECT * FROM t_payment WHERE pay_id BETWEEN ? AND ?", func(i int64) []any { return []any{i, i + i%3} }},
		{"SELECT * FROM t_account WHERE account_id BETWEEN ? AND ? ORDER BY account_id LIMIT 3", func(i int64) []any { return []any{i * 100, i*100 + 1500} }},
		{"SELECT * FROM t_event WHERE tenant_id = ? AND event_id IN (?, ?)", func(i int64) []any { return []any{i % 2, i, i + 1} }},
		{"UPDATE t_order SET status = ? WHERE user_id = ? AND order_id = ?", func(i int64) []any { return []any{"paid", i % 7, i} }},
		{"DELETE FROM t_order WHERE user_id = ? AND order_id = ?", func(i int64) []any { return []any{i % 2, i} }},
		{"SELECT * FROM t_user WHERE user_id = ?", func(i int64) []any { return []any{i} }},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			cached := prepare(tt.sql)
			for i := int64(0); i < 96; i++ {
				args := tt.args(i)
				got, err := cached.Bind(args)
				if err != nil {
					t.Fatalf("bind %v: %v", args, err)
				}
				want, err := prepare(tt.sql).Bind(args)
				if err != nil {
					t.Fatalf("fresh bind %v: %v", args, err)
				}
				if !reflect.DeepEqual(got.Routes, want.Routes) {
					t.Fatalf("bind %v:\ngot  %+v\nwant %+v", args, got.Routes, want.Routes)
				}
			}
		})
	}
}
