package traffic

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/router"
)

func plan(kind router.StatementKind, tables []string, dss ...string) *router.Plan {
	p := &router.Plan{Kind: kind, Tables: tables}
	for _, ds := range dss {
		p.Routes = append(p.Routes, router.Route{DataSource: ds, SQL: "x"})
	}
	return p
}

func mustSet(t testing.TB, c Clock, rules ...config.TrafficRule) *Set {
	t.Helper()
	s, err := New(rules, c)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func fixedRule(name string, permits int, m config.TrafficMatch) config.TrafficRule {
	return config.TrafficRule{Name: name, Match: m, OnLimit: config.TrafficReject,
		Limit: config.TrafficLimit{Type: "FIXED_WINDOW", Permits: permits, Window: time.Hour}}
}

func TestSetMatchesAndCosts(t *testing.T) {
	sql := "SELECT * FROM t_order WHERE user_id = 1"
	digest := (&Statement{SQL: "select * from t_order where user_id = 42"}).Digest()
	tests := []struct {
		name  string
		match config.TrafficMatch
		user  string
		plan  *router.Plan
		want  int // permits taken
	}{
		{"everything, one route", config.TrafficMatch{}, "app", plan(router.KindSelect, nil, "ds_0"), 1},
		{"scatter costs a permit per route", config.TrafficMatch{}, "app", plan(router.KindSelect, nil, "ds_0", "ds_0", "ds_1", "ds_1"), 4},
		{"user", config.TrafficMatch{Users: []string{"app"}}, "app", plan(router.KindSelect, nil, "ds_0"), 1},
		{"other user", config.TrafficMatch{Users: []string{"app"}}, "report", plan(router.KindSelect, nil, "ds_0"), 0},
		{"kind", config.TrafficMatch{Kinds: []string{"insert"}}, "app", plan(router.KindInsert, nil, "ds_0"), 1},
		{"other kind", config.TrafficMatch{Kinds: []string{"insert"}}, "app", plan(router.KindSelect, nil, "ds_0"), 0},
		{"show is other", config.TrafficMatch{Kinds: []string{"other"}}, "app", plan(router.KindShow, nil, "ds_0"), 1},
		{"table", config.TrafficMatch{Tables: []string{"t_order"}}, "app", plan(router.KindSelect, []string{"T_ORDER"}, "ds_0"), 1},
		{"other table", config.TrafficMatch{Tables: []string{"t_order"}}, "app", plan(router.KindSelect, []string{"t_user"}, "ds_0"), 0},
		{"digest", config.TrafficMatch{Digests: []string{digest}}, "app", plan(router.KindSelect, nil, "ds_0"), 1},
		{"data source counts its routes", config.TrafficMatch{DataSources: []string{"ds_1"}}, "app", plan(router.KindSelect, nil, "ds_0", "ds_1", "ds_1", "ds_2"), 2},
		{"other data source", config.TrafficMatch{DataSources: []string{"ds_3"}}, "app", plan(router.KindSelect, nil, "ds_0", "ds_1"), 0},
		{"all of them", config.TrafficMatch{Users: []string{"app"}, Kinds: []string{"select"}, Tables: []string{"t_order"}, DataSources: []string{"ds_0"}},
			"app", plan(router.KindSelect, []string{"t_order"}, "ds_0", "ds_1"), 1},
		{"all but one", config.TrafficMatch{Users: []string{"app"}, Kinds: []string{"update"}, Tables: []string{"t_order"}},
			"app", plan(router.KindSelect, []string{"t_order"}, "ds_0"), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustSet(t, newFakeClock(), fixedRule("r", 10, tt.match))
			var st Statement
			st.Reset(tt.user, tt.plan, sql)
			held, err := s.Admit(context.Background(), &st, time.Second, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := s.States()[0]
			if left := 10 - int(got.Available); left != tt.want {
				t.Errorf("took %d permits, want %d", left, tt.want)
			}
			if tt.want > 0 != (len(held) == 1) {
				t.Errorf("held %d grants", len(held))
			}
			names := s.Matching(&st)
			if (len(names) > 0) != (tt.want > 0) {
				t.Errorf("Matching = %v", names)
			}
			// PREVIEW's wording: "r (1 permit)", "r (2 permits)".
			want := fmt.Sprintf("r (%d permits)", tt.want)
			if tt.want == 1 {
				want = "r (1 permit)"
			}
			if tt.want > 0 && len(names) > 0 && names[0] != want {
				t.Errorf("Matching = %v, want %q", names, want)
			}
		})
	}
}

func TestSetRefusalReturnsEarlierPermits(t *testing.T) {
	c := newFakeClock()
	conc := config.TrafficRule{Name: "inflight", OnLimit: config.TrafficReject, Limit: config.TrafficLimit{Type: "CONCURRENCY", MaxInFlight: 4}}
	s := mustSet(t, c, conc, fixedRule("quota", 3, config.TrafficMatch{}))
	var st Statement
	st.Reset("app", plan(router.KindSelect, nil, "ds_0"), "SELECT 1")
	var held []Held
	for i := range 3 {
		var err error
		if held, err = s.Admit(context.Background(), &st, time.Second, held); err != nil {
			t.Fatalf("statement %d: %v", i, err)
		}
	}
	_, err := s.Admit(context.Background(), &st, time.Second, held)
	var le *LimitError
	if !errors.As(err, &le) || le.Rule != "quota" || le.Code() != CodeUserLimitReached {
		t.Fatalf("fourth: %v, want the quota rule's 1226", err)
	}
	if want := "User 'app' has exceeded the 'quota' resource"; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("message %q, want it to start %q", err, want)
	}
	states := s.States()
	if states[0].InFlight != 3 {
		t.Errorf("in flight %d after the refusal, want 3 (the refused one gave its slot back)", states[0].InFlight)
	}
	if states[0].Admitted != 3 || states[1].Admitted != 3 || states[1].Rejected != 1 || states[0].Rejected != 0 {
		t.Errorf("counters %+v / %+v", states[0], states[1])
	}
	held = s.Finish(held, true)
	if s.States()[0].InFlight != 0 || len(held) != 0 {
		t.Errorf("Finish left %d in flight", s.States()[0].InFlight)
	}
}

func TestSetBudgetBoundsTheWait(t *testing.T) {
	c := newFakeClock()
	r := config.TrafficRule{Name: "slow", OnLimit: config.TrafficWait, MaxWait: time.Second,
		Limit: config.TrafficLimit{Type: "LEAKY_BUCKET", Rate: 10}}
	s := mustSet(t, c, r)
	var st Statement
	st.Reset("app", plan(router.KindSelect, nil, "ds_0"), "SELECT 1")
	if _, err := s.Admit(context.Background(), &st, time.Second, nil); err != nil {
		t.Fatal(err)
	}
	// maxWait allows the 100ms wait, the statement's time left does not.
	_, err := s.Admit(context.Background(), &st, 50*time.Millisecond, nil)
	var le *LimitError
	if !errors.As(err, &le) {
		t.Fatalf("over the budget: %v, want a LimitError", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Admit(context.Background(), &st, time.Second, nil)
		done <- err
	}()
	c.waitFor(t, 1)
	c.Advance(100 * time.Millisecond)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := s.States()[0]; got.Delayed != 1 || got.Admitted != 2 || got.Rejected != 1 || got.WaitCount != 2 {
		t.Errorf("counters %+v", got)
	}
}

func TestSetAlterAndDisable(t *testing.T) {
	c := newFakeClock()
	s := mustSet(t, c, fixedRule("quota", 1, config.TrafficMatch{}))
	var st Statement
	st.Reset("app", plan(router.KindSelect, nil, "ds_0"), "SELECT 1")
	admit := func() error { _, err := s.Admit(context.Background(), &st, time.Second, nil); return err }
	if err := admit(); err != nil {
		t.Fatal(err)
	}
	if err := admit(); err == nil {
		t.Fatal("second statement admitted over a quota of 1")
	}
	if err := s.SetEnabled("QUOTA", false); err != nil {
		t.Fatal(err)
	}
	if err := admit(); err != nil {
		t.Fatalf("disabled rule refused: %v", err)
	}
	if err := s.SetEnabled("quota", true); err != nil {
		t.Fatal(err)
	}
	if err := admit(); err == nil {
		t.Fatal("enabled again, the rule kept its count: want refused")
	}
	if err := s.Alter("quota", map[string]string{"permits": "5"}); err != nil {
		t.Fatal(err)
	}
	if got := s.States()[0]; got.Limit != "permits=5 window=1h0m0s" || got.Available != 5 {
		t.Errorf("after ALTER: %q, %v available", got.Limit, got.Available)
	}
	if err := s.Alter("quota", map[string]string{"type": "TOKEN_BUCKET", "rate": "100", "burst": "7", "onLimit": "wait", "maxWait": "10ms"}); err != nil {
		t.Fatal(err)
	}
	if got := s.States()[0]; got.Type != "TOKEN_BUCKET" || got.Limit != "rate=100 burst=7" || got.MaxWait != 10*time.Millisecond {
		t.Errorf("after ALTER to a token bucket: %+v", got)
	}
	var re *RuleError
	if err := s.Alter("quota", map[string]string{"burst": "-1"}); !errors.As(err, &re) || !strings.Contains(err.Error(), "burst must be positive") {
		t.Errorf("bad burst: %v", err)
	}
	if err := s.Alter("quota", map[string]string{"colour": "red"}); !errors.As(err, &re) {
		t.Errorf("unknown property: %v", err)
	}
	cluster := mustSet(t, c, config.TrafficRule{Name: "shared", Scope: config.TrafficCluster, OnLimit: config.TrafficReject,
		Limit: config.TrafficLimit{Type: "TOKEN_BUCKET", Rate: 10, Burst: 10}})
	if err := cluster.Alter("shared", map[string]string{"type": "LEAKY_BUCKET", "rate": "5"}); !errors.As(err, &re) || !strings.Contains(err.Error(), "cannot be split") {
		t.Errorf("cluster rule to a leaky bucket: %v", err)
	}
	if err := s.SetEnabled("nope", true); !errors.As(err, &re) || !re.Unknown {
		t.Errorf("unknown rule: %v", err)
	}
}

// BenchmarkAdmit is the admit stage's cost per statement: with ten rules
// for other users (none matches), and with one token bucket that matches.
func BenchmarkAdmit(b *testing.B) {
	var rules []config.TrafficRule
	for i := range 10 {
		rules = append(rules, config.TrafficRule{Name: fmt.Sprintf("r%d", i), OnLimit: config.TrafficReject,
			Match: config.TrafficMatch{Users: []string{fmt.Sprintf("tenant%d", i)}, Kinds: []string{"select"}},
			Limit: config.TrafficLimit{Type: "TOKEN_BUCKET", Rate: 1e9, Burst: 1e9}})
	}
	p := plan(router.KindSelect, []string{"t_order"}, "ds_0")
	run := func(b *testing.B, s *Set, user string) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			var st Statement
			var held []Held
			for pb.Next() {
				st.Reset(user, p, "SELECT * FROM t_order WHERE order_id = 1")
				var err error
				if held, err = s.Admit(context.Background(), &st, time.Second, held); err != nil {
					b.Fatal(err)
				}
				held = s.Finish(held, true)
			}
		})
	}
	b.Run("none-matches", func(b *testing.B) { run(b, mustSet(b, nil, rules...), "app") })
	b.Run("token-bucket-matches", func(b *testing.B) { run(b, mustSet(b, nil, rules...), "tenant9") })
	window := append([]config.TrafficRule{}, rules[:9]...)
	window = append(window, config.TrafficRule{Name: "w", OnLimit: config.TrafficReject, Match: config.TrafficMatch{Users: []string{"tenant9"}},
		Limit: config.TrafficLimit{Type: "SLIDING_WINDOW", Permits: 1 << 30, Window: time.Second, SubWindows: 10}})
	b.Run("sliding-window-matches", func(b *testing.B) { run(b, mustSet(b, nil, window...), "tenant9") })
}

func TestShares(t *testing.T) {
	tests := []struct {
		name    string
		budget  float64
		demands map[string]float64
		want    map[string]float64
	}{
		{"one member takes it all", 500, map[string]float64{"a": 10}, map[string]float64{"a": 500}},
		{"both over: an even split", 500, map[string]float64{"a": 3000, "b": 1000}, map[string]float64{"a": 250, "b": 250}},
		{"the small one gets its demand", 500, map[string]float64{"a": 900, "b": 100}, map[string]float64{"a": 400, "b": 100}},
		{"nobody wants it all: the rest split", 500, map[string]float64{"a": 300, "b": 100}, map[string]float64{"a": 350, "b": 150}},
		{"idle members", 300, map[string]float64{"a": 0, "b": 0, "c": 0}, map[string]float64{"a": 100, "b": 100, "c": 100}},
		{"three uneven", 600, map[string]float64{"a": 50, "b": 400, "c": 1000}, map[string]float64{"a": 50, "b": 275, "c": 275}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Shares(tt.budget, tt.demands)
			sum := 0.0
			for m, w := range tt.want {
				if d := got[m] - w; d > 1e-9 || d < -1e-9 {
					t.Errorf("%s: %v, want %v", m, got[m], w)
				}
				sum += got[m]
			}
			if d := sum - tt.budget; d > 1e-9 || d < -1e-9 {
				t.Errorf("shares add up to %v, want the budget %v", sum, tt.budget)
			}
		})
	}
}
