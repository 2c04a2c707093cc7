package metrics

import (
	"errors"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	dto "github.com/prometheus/client_model/go"

	"github.com/shardflake/shardflake/config"
)

// gather returns the value of every series of the registry, keyed by
// name and label values ("name{v1,v2}"); histograms give their count.
func gather(t *testing.T, m *Metrics) map[string]float64 {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, s := range mf.GetMetric() {
			key := mf.GetName() + "{"
			for i, l := range s.GetLabel() {
				if i > 0 {
					key += ","
				}
				key += l.GetValue()
			}
			key += "}"
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				out[key] = s.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				out[key] = s.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				out[key] = float64(s.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

// TestRouteEvents checks what a route's run counts, from the facts its
// event carries: a route that got no connection is an error of its data
// source but no latency, a cancelled one neither an error nor (when it got
// no connection either) a latency.
func TestRouteEvents(t *testing.T) {
	rules, err := config.Parse([]byte(benchRules), "bench-rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		give        RouteEvent
		wantLatency float64
		wantErrors  float64
	}{
		{"success", RouteEvent{DataSource: "ds_1", Duration: time.Millisecond}, 1, 0},
		{"a backend error", RouteEvent{DataSource: "ds_1", Duration: time.Millisecond, Err: mysql.NewError(1146, "no table")}, 1, 1},
		{"no connection", RouteEvent{DataSource: "ds_1", Err: errors.New("down"), Unreached: true}, 0, 1},
		{"cancelled", RouteEvent{DataSource: "ds_1", Duration: time.Millisecond, Err: errors.New("killed"), Cancelled: true}, 1, 0},
		{"cancelled waiting for a connection", RouteEvent{DataSource: "ds_1", Err: errors.New("killed"), Unreached: true, Cancelled: true}, 0, 0},
		{"a data source the rules do not name", RouteEvent{DataSource: "ds_9", Err: errors.New("x")}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(rules, Options{RulesSource: []byte(benchRules)})
			m.Route(tt.give)
			got := gather(t, m)
			if v := got["shardflake_datasource_duration_seconds{ds_1}"]; v != tt.wantLatency {
				t.Errorf("latency observations %v, want %v", v, tt.wantLatency)
			}
			if v := got["shardflake_datasource_errors_total{ds_1}"]; v != tt.wantErrors {
				t.Errorf("errors %v, want %v", v, tt.wantErrors)
			}
		})
	}
}

// TestAttachOnce checks that one Metrics describes one server.
func TestAttachOnce(t *testing.T) {
	rules, err := config.Parse([]byte(benchRules), "bench-rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := New(rules, Options{RulesSource: []byte(benchRules)})
	if err := m.Attach(); err != nil {
		t.Fatal(err)
	}
	if err := m.Attach(); !errors.Is(err, ErrAttached) {
		t.Fatalf("second Attach: %v, want ErrAttached", err)
	}
}
