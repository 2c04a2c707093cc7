package metrics

import (
	"testing"
	"time"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/router"
)

// benchRules is a layout of 4 data sources x 8 tables; the observer
// needs only the rules, no backend.
const benchRules = `databaseName: sharding_db
server:
  users: [{ user: app, password: x }]
  slowStatementThreshold: 1s
dataSources:
  ds_0: { url: "jdbc:mysql://127.0.0.1:1/ds_0", username: root }
  ds_1: { url: "jdbc:mysql://127.0.0.1:1/ds_1", username: root }
  ds_2: { url: "jdbc:mysql://127.0.0.1:1/ds_2", username: root }
  ds_3: { url: "jdbc:mysql://127.0.0.1:1/ds_3", username: root }
rules:
  - !SHARDING
    tables:
      t_order:
        actualDataNodes: ds_${0..3}.t_order_${0..7}
        databaseStrategy: { standard: { shardingColumn: user_id, shardingAlgorithmName: db } }
        tableStrategy: { standard: { shardingColumn: order_id, shardingAlgorithmName: tb } }
    shardingAlgorithms:
      db: { type: INLINE, props: { algorithm-expression: "ds_${user_id % 4}" } }
      tb: { type: INLINE, props: { algorithm-expression: "t_order_${order_id % 8}" } }
`

// BenchmarkMetricsStatement is the observer's cost per routed statement
// (counters, latency and fan-out histograms, data-node hits), from every
// goroutine at once.
func BenchmarkMetricsStatement(b *testing.B) {
	rules, err := config.Parse([]byte(benchRules), "bench-rules.yaml")
	if err != nil {
		b.Fatal(err)
	}
	m := New(rules, Options{RulesSource: []byte(benchRules)})
	nodes := rules.Table("t_order").DataNodes
	point := StatementEvent{Kind: router.KindSelect, Type: router.RouteSingle, Duration: time.Millisecond,
		Routes: []router.Route{{DataSource: nodes[5].DataSource, Nodes: nodes[5:6]}}}
	var routes []router.Route
	for i := range nodes {
		routes = append(routes, router.Route{DataSource: nodes[i].DataSource, Nodes: nodes[i : i+1]})
	}
	scatter := StatementEvent{Kind: router.KindSelect, Type: router.RouteAll, Duration: 5 * time.Millisecond, Routes: routes}
	for _, bc := range []struct {
		name string
		ev   StatementEvent
	}{{"point", point}, {"scatter32", scatter}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					m.Statement(bc.ev)
				}
			})
		})
	}
}
