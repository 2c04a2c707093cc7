package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/shardflake/shardflake/config"
)

// ruleSeries are the metric children the rules name: a hit counter per
// data node (sharded tables' data nodes, broadcast tables on every data
// source), and per data source a hit counter for tables without rules,
// the latency and the errors. Built whole for each rules snapshot and
// read without locks.
type ruleSeries struct {
	hits      map[config.DataNode]prometheus.Counter
	hitsOther map[string]prometheus.Counter
	dsLatency map[string]prometheus.Observer
	dsErrors  map[string]prometheus.Counter
}

// newRuleSeries resolves the children of rules and sets
// shardflake_rules_data_nodes to its tables.
func (m *Metrics) newRuleSeries(rules *config.Rules) *ruleSeries {
	s := &ruleSeries{
		hits:      map[config.DataNode]prometheus.Counter{},
		hitsOther: map[string]prometheus.Counter{},
		dsLatency: map[string]prometheus.Observer{},
		dsErrors:  map[string]prometheus.Counter{},
	}
	for _, ds := range rules.DataSources {
		s.hitsOther[ds.Name] = m.hitsVec.WithLabelValues(ds.Name, otherTable)
		s.dsLatency[ds.Name] = m.dsLatVec.WithLabelValues(ds.Name)
		s.dsErrors[ds.Name] = m.dsErrVec.WithLabelValues(ds.Name)
		for _, bt := range rules.BroadcastTables {
			n := config.DataNode{DataSource: ds.Name, Table: bt}
			s.hits[n] = m.hitsVec.WithLabelValues(n.DataSource, n.Table)
		}
	}
	m.nodesInfo.Reset()
	for _, t := range rules.Tables {
		for _, n := range t.DataNodes {
			s.hits[n] = m.hitsVec.WithLabelValues(n.DataSource, n.Table)
		}
		m.nodesInfo.WithLabelValues(t.Name).Set(float64(len(t.DataNodes)))
	}
	return s
}

// RulesReloaded moves shardflake_rules_info and the data node and data
// source series to the new rules (a data source or table the reload
// added gets its series now, not at the next start), and counts the
// reload (rulesObserver).
func (m *Metrics) RulesReloaded(rules *config.Rules, digest string) {
	m.series.Store(m.newRuleSeries(rules))
	m.rulesInfo.Reset()
	m.rulesInfo.WithLabelValues(rules.DatabaseName, digest).Set(1)
	m.reloads.WithLabelValues("applied").Inc()
}

// ReloadRefused counts a refused reload (rulesObserver).
func (m *Metrics) ReloadRefused() { m.reloads.WithLabelValues("refused").Inc() }
