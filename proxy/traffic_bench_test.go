package proxy

import (
	"context"
	"fmt"
	"testing"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/proxy/traffic"
	"github.com/shardflake/shardflake/router"
)

// BenchmarkAdmitStage is the session's admit stage per statement (what
// the door's runPlan adds): ten rules for other tenants and none matches, one
// token bucket that matches, and no rules at all.
func BenchmarkAdmitStage(b *testing.B) {
	var rules []config.TrafficRule
	for i := range 10 {
		rules = append(rules, config.TrafficRule{Name: fmt.Sprintf("tenant%d", i), OnLimit: config.TrafficReject, Scope: config.TrafficLocal,
			Match: config.TrafficMatch{Users: []string{fmt.Sprintf("tenant%d", i)}, Tables: []string{"t_order"}},
			Limit: config.TrafficLimit{Type: "TOKEN_BUCKET", Rate: 1e9, Burst: 1e9}})
	}
	plan := &router.Plan{Kind: router.KindSelect, Type: router.RouteSingle, Tables: []string{"t_order"},
		Routes: []router.Route{{DataSource: "ds_0", SQL: "SELECT * FROM t_order_1 WHERE order_id = 1"}}}
	run := func(b *testing.B, rs []config.TrafficRule, user string) {
		set, err := traffic.New(rs, nil)
		if err != nil {
			b.Fatal(err)
		}
		s := &Session{srv: sessionServer{Server: &Server{traffic: set}, snapshot: &snapshot{rules: &config.Rules{}}}, user: user, autocommit: true}
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if err := s.admit(ctx, plan, "SELECT * FROM t_order WHERE order_id = 1"); err != nil {
				b.Fatal(err)
			}
			s.finishAdmit()
		}
	}
	b.Run("no-rules", func(b *testing.B) { run(b, nil, "app") })
	b.Run("ten-rules-none-matches", func(b *testing.B) { run(b, rules, "app") })
	b.Run("ten-rules-one-matches", func(b *testing.B) { run(b, rules, "tenant9") })
}
