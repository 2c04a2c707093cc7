package proxy

import (
	"testing"
	"time"
)

// TestTrafficMetrics: each rule's admitted, delayed and rejected counts,
// wait histogram and live state are on /metrics, and refusals count in
// shardflake_rate_limited_statements_total.
func TestTrafficMetrics(t *testing.T) {
	e := startOpsEnv(t, opsOptions{server: "traffic:\n" +
		"- {name: quota, match: {tables: [t_order], kinds: [select]}, limit: {type: FIXED_WINDOW, permits: 3, window: 1h}}\n" +
		"- {name: spaced, match: {tables: [t_order], kinds: [insert]}, limit: {type: LEAKY_BUCKET, rate: 2}, onLimit: wait, maxWait: 1s}"})
	e.createOrders(t)
	db := e.open(t)
	for i := range 5 {
		db.Exec("SELECT * FROM t_order WHERE user_id = 0 AND order_id = ?", i)
	}
	// Three inserts one after the other at 2/s: slots at 0, 500 and
	// 1000ms, so the second and third wait for theirs; the spacing is
	// wide enough that a loaded machine's slower inserts still come
	// before their slot.
	start := time.Now()
	for i := range 3 {
		if _, err := db.Exec("INSERT INTO t_order (order_id, user_id) VALUES (?, 0)", 100+i); err != nil {
			t.Fatal(err)
		}
	}
	if took := time.Since(start); took < 990*time.Millisecond {
		t.Errorf("three inserts at 2/s took %v, want at least 1s", took)
	}
	m := e.scrape(t)
	for series, want := range map[string]float64{
		`shardflake_traffic_admitted_total{rule="quota"}`:                   3,
		`shardflake_traffic_rejected_total{rule="quota"}`:                   2,
		`shardflake_traffic_delayed_total{rule="quota"}`:                    0,
		`shardflake_traffic_available_permits{rule="quota"}`:                0,
		`shardflake_traffic_rule_enabled{rule="quota"}`:                     1,
		`shardflake_traffic_admitted_total{rule="spaced"}`:                  3,
		`shardflake_traffic_delayed_total{rule="spaced"}`:                   2,
		`shardflake_traffic_wait_seconds_count{rule="spaced"}`:              3,
		`shardflake_traffic_wait_seconds_bucket{rule="spaced",le="0.0001"}`: 1,
		`shardflake_rate_limited_statements_total`:                          2,
		`shardflake_errors_total{code="1226"}`:                              2,
	} {
		if got, ok := m[series]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", series, got, ok, want)
		}
	}
	// Each insert's own run time shortens the next one's wait.
	if sum := m[`shardflake_traffic_wait_seconds_sum{rule="spaced"}`]; sum <= 0 || sum > 1 {
		t.Errorf("wait sum %v, want within (0, 1s]", sum)
	}
}
