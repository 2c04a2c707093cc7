package router

import (
	"strings"
	"testing"

	"github.com/shardflake/shardflake/config"
)

// TestBindingJoinsStrict: with server.bindingJoins: strict, a join of
// binding tables on the foreign key alone no longer pairs their data
// nodes (1235 across data nodes); with the default it pairs slot by slot,
// and a join on a column that does not identify the parent pairs under
// neither.
func TestBindingJoinsStrict(t *testing.T) {
	tests := []struct {
		query    string
		declared int // routes under the default; 0: 1235
		strict   int // routes under strict; 0: 1235
	}{
		{"SELECT i.item_id, o.status FROM t_order_item i JOIN t_order o ON i.order_id = o.order_id WHERE i.user_id = 3", 8, 0},
		{"SELECT COUNT(*) FROM t_order o LEFT JOIN t_order_item i ON o.order_id = i.order_id", 32, 0},
		{"SELECT COUNT(*) FROM t_order o JOIN t_order_item i ON o.user_id = i.user_id AND o.order_id = i.order_id", 32, 32},
		{"SELECT COUNT(*) FROM t_order o JOIN t_order_item i ON o.user_id = i.user_id", 0, 0},
		{"SELECT COUNT(*) FROM t_order o JOIN t_order_item i ON o.status = i.item_id", 0, 0},
	}
	for _, mode := range []config.BindingJoins{config.BindingDeclared, config.BindingStrict} {
		rules := loadGoldenRules(t)
		rules.Server.BindingJoins = mode
		r, _ := newGoldenRouter(t, rules)
		for _, tt := range tests {
			want := tt.declared
			if mode == config.BindingStrict {
				want = tt.strict
			}
			plan, err := planFor(r, tt.query, "", nil)
			switch {
			case want == 0 && (err == nil || !strings.HasPrefix(err.Error(), "1235")):
				t.Errorf("%s, %s: %v, want 1235", mode, tt.query, err)
			case want > 0 && err != nil:
				t.Errorf("%s, %s: %v", mode, tt.query, err)
			case want > 0 && len(plan.Routes) != want:
				t.Errorf("%s, %s: %d routes, want %d", mode, tt.query, len(plan.Routes), want)
			}
			if want > 0 && err == nil {
				// Paired: each route joins t_order_k with t_order_item_k.
				for _, rt := range plan.Routes {
					if len(rt.Nodes) != 2 || strings.TrimPrefix(rt.Nodes[0].Table, "t_order_item") != strings.TrimPrefix(rt.Nodes[1].Table, "t_order") &&
						strings.TrimPrefix(rt.Nodes[0].Table, "t_order") != strings.TrimPrefix(rt.Nodes[1].Table, "t_order_item") {
						t.Errorf("%s, %s: route %v does not pair its data nodes", mode, tt.query, rt.Nodes)
					}
				}
			}
		}
	}
}

// TestBindingJoinsSetting: the rules file's server.bindingJoins.
func TestBindingJoinsSetting(t *testing.T) {
	base := "databaseName: db\nserver:\n  users: [{user: app, password: pw}]\n  bindingJoins: %s\ndataSources:\n  ds_0: {url: \"jdbc:mysql://127.0.0.1:3306/ds_0\", username: root, password: \"\"}\nrules: []\n"
	for _, tt := range []struct {
		give string
		want config.BindingJoins
		err  bool
	}{{"declared", config.BindingDeclared, false}, {"strict", config.BindingStrict, false}, {"loose", 0, true}} {
		r, err := config.Parse([]byte(strings.Replace(base, "%s", tt.give, 1)), "rules.yaml")
		if tt.err {
			if err == nil || !strings.Contains(err.Error(), "bindingJoins") {
				t.Errorf("bindingJoins: %s: %v, want an error naming it", tt.give, err)
			}
			continue
		}
		if err != nil || r.Server.BindingJoins != tt.want {
			t.Errorf("bindingJoins: %s: %v, %v", tt.give, r, err)
		}
	}
}

// TestBindingPairs: each child table of a binding group with its parent,
// their data nodes paired on one data source.
func TestBindingPairs(t *testing.T) {
	pairs := loadGoldenRules(t).BindingPairs()
	if len(pairs) != 1 {
		t.Fatalf("pairs %+v", pairs)
	}
	p := pairs[0]
	if p.Parent != "t_order" || p.Child != "t_order_item" || p.Key != "order_id" || len(p.Nodes) != 32 {
		t.Fatalf("pair %+v", p)
	}
	for _, n := range p.Nodes {
		if n[0].DataSource != n[1].DataSource || strings.TrimPrefix(n[0].Table, "t_order_item") != strings.TrimPrefix(n[1].Table, "t_order") {
			t.Errorf("unpaired %v", n)
		}
	}
}
