package config

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestTrafficRulesLoad(t *testing.T) {
	doc := edit(t, "  users: [{user: app, password: pw}]\n", `  users: [{user: app, password: pw}, {user: report, password: pw}]
  traffic:
    - name: app_reads
      match: {users: [app], kinds: [select], tables: [T_Order]}
      limit: {type: TOKEN_BUCKET, rate: 500, burst: 50}
    - name: ds1_fanout
      match: {dataSources: [ds_1]}
      limit: {type: sliding_window, permits: 1000, window: 1s}
      onLimit: wait
      maxWait: 20ms
    - name: report_inflight
      match: {users: report, digests: ["AB6C2E93F4D1A0B5C7E8F9A0B1C2D3E4F5A6B7C8D9E0F1A2B3C4D5E6F7A8B9C0"]}
      limit: {type: CONCURRENCY, maxInFlight: 4, queue: 8, queueTimeout: 100ms}
    - name: hourly
      limit: {type: FIXED_WINDOW, permits: 100000, window: 1h}
      disabled: true
    - name: steady
      limit: {type: LEAKY_BUCKET, rate: 0.5}
`)
	r, err := Parse([]byte(doc), "rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := r.Server.Traffic
	if len(got) != 5 {
		t.Fatalf("%d rules, want 5", len(got))
	}
	want := []TrafficRule{
		{Name: "app_reads", Match: TrafficMatch{Users: []string{"app"}, Kinds: []string{"select"}, Tables: []string{"t_order"}},
			Limit: TrafficLimit{Type: "TOKEN_BUCKET", Rate: 500, Burst: 50}, OnLimit: TrafficReject, Scope: TrafficLocal},
		{Name: "ds1_fanout", Match: TrafficMatch{DataSources: []string{"ds_1"}},
			Limit: TrafficLimit{Type: "SLIDING_WINDOW", Permits: 1000, Window: time.Second, SubWindows: 10}, OnLimit: TrafficWait, MaxWait: 20 * time.Millisecond, Scope: TrafficLocal},
		{Name: "report_inflight", Match: TrafficMatch{Users: []string{"report"}, Digests: []string{"ab6c2e93f4d1a0b5c7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0"}},
			Limit: TrafficLimit{Type: "CONCURRENCY", MaxInFlight: 4, Queue: 8, QueueTimeout: 100 * time.Millisecond}, OnLimit: TrafficReject, Scope: TrafficLocal},
		{Name: "hourly", Limit: TrafficLimit{Type: "FIXED_WINDOW", Permits: 100000, Window: time.Hour}, OnLimit: TrafficReject, Scope: TrafficLocal, Disabled: true},
		{Name: "steady", Limit: TrafficLimit{Type: "LEAKY_BUCKET", Rate: 0.5}, OnLimit: TrafficReject, Scope: TrafficLocal},
	}
	for i := range want {
		got[i].Line = 0
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("rule %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

func TestTrafficRuleErrors(t *testing.T) {
	tests := []struct {
		name, rule, want string
	}{
		{"unknown key", `{name: a, limit: {type: TOKEN_BUCKET, rate: 1}, colour: red}`, `unknown key "colour"`},
		{"no name", `{limit: {type: TOKEN_BUCKET, rate: 1}}`, "every rule needs a name"},
		{"bad name", `{name: "a b", limit: {type: TOKEN_BUCKET, rate: 1}}`, "use letters, digits"},
		{"no limit", `{name: a}`, "needs a limit"},
		{"unknown type", `{name: a, limit: {type: GCRA, rate: 1}}`, `limit.type "GCRA"`},
		{"key of another type", `{name: a, limit: {type: LEAKY_BUCKET, rate: 1, burst: 5}}`, `unknown key "burst"`},
		{"no rate", `{name: a, limit: {type: TOKEN_BUCKET}}`, "limit.rate must be a positive number"},
		{"zero permits", `{name: a, limit: {type: FIXED_WINDOW, permits: 0, window: 1s}}`, "limit.permits must be positive"},
		{"no window", `{name: a, limit: {type: SLIDING_WINDOW, permits: 5}}`, "limit.window must be a positive duration"},
		{"queue without timeout", `{name: a, limit: {type: CONCURRENCY, maxInFlight: 2, queue: 3}}`, "needs a queueTimeout"},
		{"concurrency with maxWait", `{name: a, limit: {type: CONCURRENCY, maxInFlight: 2}, onLimit: wait, maxWait: 1s}`, "waits in its queue"},
		{"wait without maxWait", `{name: a, limit: {type: TOKEN_BUCKET, rate: 1}, onLimit: wait}`, "needs a positive maxWait"},
		{"maxWait without wait", `{name: a, limit: {type: TOKEN_BUCKET, rate: 1}, maxWait: 1s}`, "maxWait needs onLimit: wait"},
		{"bad onLimit", `{name: a, limit: {type: TOKEN_BUCKET, rate: 1}, onLimit: queue}`, `onLimit "queue"`},
		{"unknown user", `{name: a, match: {users: [bob]}, limit: {type: TOKEN_BUCKET, rate: 1}}`, `"bob", which is not in server.users`},
		{"unknown data source", `{name: a, match: {dataSources: [ds_9]}, limit: {type: TOKEN_BUCKET, rate: 1}}`, `"ds_9", which is not in dataSources`},
		{"bad kind", `{name: a, match: {kinds: [merge]}, limit: {type: TOKEN_BUCKET, rate: 1}}`, `match.kinds "merge"`},
		{"bad digest", `{name: a, match: {digests: [abc]}, limit: {type: TOKEN_BUCKET, rate: 1}}`, "64 hex digits"},
		{"unknown match key", `{name: a, match: {schema: x}, limit: {type: TOKEN_BUCKET, rate: 1}}`, `unknown key "schema"`},
		{"cluster without etcd", `{name: a, limit: {type: TOKEN_BUCKET, rate: 1}, scope: cluster}`, "no key generator has worker-id-source: etcd"},
		{"bad scope", `{name: a, limit: {type: TOKEN_BUCKET, rate: 1}, scope: global}`, `scope "global"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := edit(t, "  users: [{user: app, password: pw}]\n", "  users: [{user: app, password: pw}]\n  traffic:\n    - "+tt.rule+" # ERR\n")
			_, err := Parse([]byte(doc), "rules.yaml")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
			var ce Errors
			if !asConfigErrors(err, &ce) || ce[0].Line != markedLine(t, doc) {
				t.Errorf("error %v, want it on line %d", err, markedLine(t, doc))
			}
		})
	}
	// Two rules with one name.
	doc := edit(t, "  users: [{user: app, password: pw}]\n", "  users: [{user: app, password: pw}]\n  traffic:\n    - {name: a, limit: {type: TOKEN_BUCKET, rate: 1}}\n    - {name: A, limit: {type: TOKEN_BUCKET, rate: 1}}\n")
	if _, err := Parse([]byte(doc), "rules.yaml"); err == nil || !strings.Contains(err.Error(), `rule "A" appears twice`) {
		t.Errorf("duplicate names: %v", err)
	}
}

func asConfigErrors(err error, ce *Errors) bool {
	c, ok := err.(Errors)
	*ce = c
	return ok && len(c) > 0
}

func TestAlterTrafficRule(t *testing.T) {
	base := TrafficRule{Name: "r", Match: TrafficMatch{Users: []string{"app"}}, OnLimit: TrafficWait, MaxWait: 10 * time.Millisecond,
		Limit: TrafficLimit{Type: "TOKEN_BUCKET", Rate: 100, Burst: 10}, Scope: TrafficLocal}
	got, err := AlterTrafficRule(base, map[string]string{"RATE": "250"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Limit.Rate != 250 || got.Limit.Burst != 10 || got.OnLimit != TrafficWait || got.MaxWait != 10*time.Millisecond || got.Match.Users[0] != "app" {
		t.Errorf("rate change: %+v", got)
	}
	got, err = AlterTrafficRule(base, map[string]string{"onLimit": "reject"})
	if err != nil || got.OnLimit != TrafficReject || got.MaxWait != 0 {
		t.Errorf("onLimit reject: %+v, %v", got, err)
	}
	got, err = AlterTrafficRule(base, map[string]string{"type": "concurrency", "maxInFlight": "3"})
	if err != nil || got.Limit != (TrafficLimit{Type: "CONCURRENCY", MaxInFlight: 3}) || got.MaxWait != 0 {
		t.Errorf("to concurrency: %+v, %v", got, err)
	}
	if _, err := AlterTrafficRule(base, map[string]string{"type": "FIXED_WINDOW"}); err == nil || !strings.Contains(err.Error(), "permits must be positive") {
		t.Errorf("new type without its parameters: %v", err)
	}
	if _, err := AlterTrafficRule(base, map[string]string{"rate": "fast"}); err == nil {
		t.Error("rate fast accepted")
	}
}

// TestExampleTrafficRules loads rules.example.yaml with its commented
// traffic: example switched on: the documented example is valid.
func TestExampleTrafficRules(t *testing.T) {
	data, err := os.ReadFile("../rules.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	on := false
	for i, l := range lines {
		switch {
		case l == "  #   traffic:":
			on = true
		case on && !strings.HasPrefix(l, "  #     "):
			on = false
		}
		if on {
			lines[i] = "  " + strings.TrimPrefix(l, "  #   ")
		}
	}
	r, err := Parse([]byte(strings.Join(lines, "\n")), "rules.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Server.Traffic) != 3 {
		t.Fatalf("%d traffic rules, want the example's 3", len(r.Server.Traffic))
	}
	if tr := r.Server.Traffic[0]; tr.Name != "app_reads" || tr.Limit.Rate != 500 || tr.OnLimit != TrafficWait {
		t.Errorf("first rule %+v", tr)
	}
}

func TestTrafficClusterScope(t *testing.T) {
	withEtcd := func(rule string) string {
		return edit(t, "  users: [{user: app, password: pw}]\n", "  users: [{user: app, password: pw}]\n  traffic:\n    - "+rule+"\n",
			"snowflake: {type: SNOWFLAKE, props: {worker-id: 1}}", `snowflake: {type: SNOWFLAKE, props: {worker-id-source: etcd, etcd-endpoints: "127.0.0.1:2379"}}`)
	}
	r, err := Parse([]byte(withEtcd(`{name: shared, limit: {type: TOKEN_BUCKET, rate: 500}, scope: cluster}`)), "rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if r.Server.Traffic[0].Scope != TrafficCluster || TrafficEtcdKeyGenerator(r) != "snowflake" {
		t.Errorf("scope %v, etcd key generator %q", r.Server.Traffic[0].Scope, TrafficEtcdKeyGenerator(r))
	}
	_, err = Parse([]byte(withEtcd(`{name: shared, limit: {type: FIXED_WINDOW, permits: 5, window: 1s}, scope: cluster}`)), "rules.yaml")
	if err == nil || !strings.Contains(err.Error(), "FIXED_WINDOW cannot be split") {
		t.Errorf("cluster fixed window: %v", err)
	}
}
