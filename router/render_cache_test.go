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
		{"INSERT INTO t_order (user_id, order_id, status) VALUES (?, ?, ?)", func(i int64) []any { return []any{i % 4, i, "new"} }},
		{"INSERT INTO t_order (order_id, status, user_id) VALUES (?, 'a\\b\x00', ?) ON DUPLICATE KEY UPDATE status = ?", func(i int64) []any { return []any{i, i % 3, "x"} }},
		{"INSERT INTO t_order (user_id, order_id, status) VALUES (?, ?, 'a'), (?, ?, ?)", func(i int64) []any { return []any{i % 2, i, i % 2, i + i%2*3, nil} }},
		{"INSERT INTO t_user (user_id, name) VALUES (?, ?)", func(i int64) []any { return []any{i, []byte{0, 1}} }},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			cached := prepare(tt.sql)
			// From 1: a 0 for t_order's key asks for a generated key,
			// another one each bind.
			for i := int64(1); i <= 96; i++ {
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

// TestInsertFlatText checks that an INSERT whose rows are written into its
// template (flatInsert) renders, on one data node, what its rows' filler
// renders: the same text and arguments.
func TestInsertFlatText(t *testing.T) {
	r, _ := newGoldenRouter(t, loadGoldenRules(t))
	for _, tt := range []struct {
		sql  string
		args []any
		flat bool
	}{
		{"INSERT INTO t_order (user_id, order_id, status) VALUES (?, ?, ?)", []any{int64(1), int64(9), "new"}, true},
		{"INSERT INTO t_order (user_id, order_id, status) VALUES (?, ?, 'it''s \\ \x00'), (?, ?, ?)", []any{int64(1), int64(9), int64(1), int64(17), nil}, true},
		{"INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE status = ?", []any{int64(3), int64(2), "a", "b"}, true},
		{"INSERT INTO t_order (user_id, order_id, status) VALUES (?, ?, CONCAT(?, 'x'))", []any{int64(1), int64(9), "y"}, true},
		// The router appends the generated key to every row: no flat text.
		{"INSERT INTO t_order (user_id, status) VALUES (?, ?)", []any{int64(1), "new"}, false},
	} {
		stmt, err := ParseOne(tt.sql)
		if err != nil {
			t.Fatal(err)
		}
		p, err := r.Prepare(stmt, tt.sql, "sharding_db")
		if err != nil {
			t.Fatal(err)
		}
		b := p.b.(*insertBinder)
		if (b.flat != nil) != tt.flat {
			t.Fatalf("%s: flat template %v, want %v", tt.sql, b.flat != nil, tt.flat)
		}
		for i := 0; i < 3; i++ { // the third bind reuses the text
			plan, err := p.Bind(tt.args)
			if err != nil {
				t.Fatalf("%s: %v", tt.sql, err)
			}
			if len(plan.Routes) != 1 {
				t.Fatalf("%s: %d routes", tt.sql, len(plan.Routes))
			}
			if plan.Keys != nil {
				continue
			}
			node := -1
			for n, dn := range b.target.info.rule.DataNodes {
				if dn == plan.Routes[0].Nodes[0] {
					node = n
				}
			}
			f := &rowFiller{b: b, node: node, rows: b.allRows, bind: tt.args}
			sql, args, err := b.tmpl.render(f, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if sql != plan.Routes[0].SQL || !reflect.DeepEqual(args, plan.Routes[0].Args) {
				t.Fatalf("%s:\ngot  %q %v\nwant %q %v", tt.sql, plan.Routes[0].SQL, plan.Routes[0].Args, sql, args)
			}
		}
	}
}
