package router

import (
	"testing"

	"github.com/shardflake/shardflake/idgen"
)

// TestZeroKeyOnAutoIncrement: a 0 given for t_order's generated key
// column, written or bound, gets a generated key where MariaDB's
// AUTO_INCREMENT makes one for it (the column is AUTO_INCREMENT and the
// session's sql_mode has no NO_AUTO_VALUE_ON_ZERO); otherwise it is the
// row's key and routes by it, as MariaDB stores it. NULL always gets one.
func TestZeroKeyOnAutoIncrement(t *testing.T) {
	stored := PrepareOptions{ZeroKey: ZeroKeyStored}
	tests := []struct {
		give    string
		args    []any
		autoInc bool
		opts    PrepareOptions
		want    string
		keys    bool
	}{
		{"INSERT INTO t_order (order_id, user_id) VALUES (0, 2)", nil, true, PrepareOptions{}, "INSERT INTO `t_order_0` (`order_id`,`user_id`) VALUES (1000,2)", true},
		{"INSERT INTO t_order (order_id, user_id) VALUES (?, ?)", []any{int64(0), int64(2)}, true, PrepareOptions{}, "INSERT INTO `t_order_0` (`order_id`,`user_id`) VALUES (1000,?)", true},
		{"INSERT INTO t_order (order_id, user_id) VALUES (0, 2)", nil, true, stored, "INSERT INTO `t_order_0` (`order_id`,`user_id`) VALUES (0,2)", false},
		{"INSERT INTO t_order (order_id, user_id) VALUES (?, ?)", []any{int64(0), int64(1)}, true, stored, "INSERT INTO `t_order_0` (`order_id`,`user_id`) VALUES (?,?)", false},
		{"INSERT INTO t_order (order_id, user_id) VALUES (0, 2)", nil, false, PrepareOptions{}, "INSERT INTO `t_order_0` (`order_id`,`user_id`) VALUES (0,2)", false},
		{"INSERT INTO t_order (order_id, user_id) VALUES (NULL, 2)", nil, false, stored, "INSERT INTO `t_order_0` (`order_id`,`user_id`) VALUES (1000,2)", true},
	}
	for _, tt := range tests {
		t.Run(tt.opts.ZeroKey.String()+" "+tt.give, func(t *testing.T) {
			keys := &fakeKeys{next: 1000, batch: 4}
			r, err := New(loadGoldenRules(t), map[string]idgen.KeyGenerator{"snowflake": keys},
				WithAutoIncrement(func(table string) bool { return tt.autoInc && table == "t_order" }))
			if err != nil {
				t.Fatal(err)
			}
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
