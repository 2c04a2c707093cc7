package proxy

import (
	"testing"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/proxy/metrics"
)

// TestReloadAddsMetricSeries: a data source and a table a reload adds
// get their series at once: the statement routed to the new data node
// counts in shardflake_data_node_hits_total and the new data source's
// latency, and shardflake_rules_data_nodes names the new table.
func TestReloadAddsMetricSeries(t *testing.T) {
	e := startReloadEnv(t, "rlm", false, envOptions{})
	e.backends[0].Exec(t, "rlm_x", "DROP TABLE IF EXISTS t_extra", "CREATE TABLE t_extra (id BIGINT PRIMARY KEY, v VARCHAR(20))")
	rules, err := config.Load(e.path)
	if err != nil {
		t.Fatal(err)
	}
	m := metrics.New(rules, metrics.Options{})
	e.srv.obs = m
	if got := gathered(t, m, "shardflake_data_node_hits_total", "datasource", "ds_x"); got != -1 {
		t.Fatalf("ds_x has a series before the reload: %v", got)
	}
	e.write(t, e.yaml(e.extraDS(), extraTable))
	c := e.conn(t)
	execAll(t, c, "RELOAD RULES", "INSERT INTO t_extra (id, v) VALUES (1, 'metrics')")
	if got := gathered(t, m, "shardflake_data_node_hits_total", "table", "t_extra"); got != 1 {
		t.Errorf("shardflake_data_node_hits_total{table=t_extra} = %v, want 1", got)
	}
	if got := gathered(t, m, "shardflake_rules_data_nodes", "logical_table", "t_extra"); got != 1 {
		t.Errorf("shardflake_rules_data_nodes{logical_table=t_extra} = %v, want 1", got)
	}
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var observed uint64
	for _, mf := range mfs {
		if mf.GetName() != "shardflake_datasource_duration_seconds" {
			continue
		}
		for _, s := range mf.GetMetric() {
			for _, l := range s.GetLabel() {
				if l.GetName() == "datasource" && l.GetValue() == "ds_x" {
					observed = s.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	if observed == 0 {
		t.Error("no latency observed for ds_x, the data source the reload added")
	}
}
