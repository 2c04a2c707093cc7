package router

import "testing"

// TestZeroKeyStoredKeepsZero: under ZeroKeyStored (sql_mode
// NO_AUTO_VALUE_ON_ZERO) a 0 given for t_order's generated key column,
// written or bound, is the row's key and routes by it; ZeroKeyGenerates
// (the golden cases) generates one.
func TestZeroKeyStoredKeepsZero(t *testing.T) {
	tests := []struct {
		give string
		args []any
		opts PrepareOptions
		want string
		keys bool
	}{
		{"INSERT INTO t_order (order_id, user_id) VALUES (0, 2)", nil, PrepareOptions{ZeroKey: ZeroKeyStored}, "INSERT INTO `t_order_0` (`order_id`,`user_id`) VALUES (0,2)", false},
		{"INSERT INTO t_order (order_id, user_id) VALUES (?, ?)", []any{int64(0), int64(1)}, PrepareOptions{ZeroKey: ZeroKeyStored}, "INSERT INTO `t_order_0` (`order_id`,`user_id`) VALUES (?,?)", false},
		{"INSERT INTO t_order (order_id, user_id) VALUES (NULL, 2)", nil, PrepareOptions{ZeroKey: ZeroKeyStored}, "INSERT INTO `t_order_0` (`order_id`,`user_id`) VALUES (1000,2)", true},
		{"INSERT INTO t_order (order_id, user_id) VALUES (0, 2)", nil, PrepareOptions{}, "INSERT INTO `t_order_0` (`order_id`,`user_id`) VALUES (1000,2)", true},
	}
	for _, tt := range tests {
		t.Run(tt.opts.ZeroKey.String()+" "+tt.give, func(t *testing.T) {
			r, _ := newGoldenRouter(t, loadGoldenRules(t))
			stmt, err := ParseOne(tt.give)
			if err != nil {
				t.Fatal(err)
			}
			p, err := r.PrepareWith(stmt, tt.give, "sharding_db", tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			plan, err := p.Bind(tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if len(plan.Routes) != 1 || plan.Routes[0].SQL != tt.want {
				t.Errorf("routes %+v, want one with %s", plan.Routes, tt.want)
			}
			if (plan.Keys != nil) != tt.keys {
				t.Errorf("generated keys %+v, want some: %v", plan.Keys, tt.keys)
			}
		})
	}
}
