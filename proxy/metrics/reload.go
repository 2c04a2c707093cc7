package metrics

import (
	"github.com/shardflake/shardflake/config"
)

// RulesReloaded moves shardflake_rules_info to the new rules and counts
// the reload (rulesObserver).
func (m *Metrics) RulesReloaded(rules *config.Rules, digest string) {
	m.rulesInfo.Reset()
	m.rulesInfo.WithLabelValues(rules.DatabaseName, digest).Set(1)
	m.reloads.WithLabelValues("applied").Inc()
}

// ReloadRefused counts a refused reload (rulesObserver).
func (m *Metrics) ReloadRefused() { m.reloads.WithLabelValues("refused").Inc() }
