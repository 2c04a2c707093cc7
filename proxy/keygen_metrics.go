package proxy

import (
	"sort"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shardflake/shardflake/idgen"
)

// stateDescs are the metrics of SEGMENT and TICKET generators beyond the
// ids issued and the wait time they share with SNOWFLAKE.
type stateDescs struct {
	roundTrips, failures, serverUp, blockLeft, step *prometheus.Desc
}

func newStateDescs() stateDescs {
	l := []string{"generator"}
	return stateDescs{
		roundTrips: prometheus.NewDesc("shardflake_keygen_round_trips_total", "Statements the SEGMENT or TICKET key generator sent to its data sources (a TICKET INSERT of n rows costs one round trip per up to max-batch tickets).", l, nil),
		failures:   prometheus.NewDesc("shardflake_keygen_store_failures_total", "Round trips of the SEGMENT or TICKET key generator that failed.", l, nil),
		serverUp:   prometheus.NewDesc("shardflake_keygen_server_up", "1 when the ticket server (or segment data source) answered its last round trip, 0 when it is down or refused.", []string{"generator", "server"}, nil),
		blockLeft:  prometheus.NewDesc("shardflake_keygen_block_remaining", "Keys left in the SEGMENT generator's current block (the preloaded one not counted).", l, nil),
		step:       prometheus.NewDesc("shardflake_keygen_segment_step", "The SEGMENT generator's step for its next block.", l, nil),
	}
}

func (d stateDescs) describe(ch chan<- *prometheus.Desc) {
	for _, x := range []*prometheus.Desc{d.roundTrips, d.failures, d.serverUp, d.blockLeft, d.step} {
		ch <- x
	}
}

// addStaters picks the generators that report an idgen.GeneratorState.
func (c *keygenCollector) addStaters(keys map[string]idgen.KeyGenerator) {
	c.states = map[string]idgen.Stater{}
	c.stateDescs = newStateDescs()
	for name, g := range keys {
		if s, ok := g.(idgen.Stater); ok {
			c.states[name] = s
			c.stateNames = append(c.stateNames, name)
		}
	}
	sort.Strings(c.stateNames)
}

func (c *keygenCollector) collectStates(ch chan<- prometheus.Metric) {
	d := c.stateDescs
	for _, name := range c.stateNames {
		st := c.states[name].State()
		metric := func(desc *prometheus.Desc, t prometheus.ValueType, v float64) {
			ch <- prometheus.MustNewConstMetric(desc, t, v, name)
		}
		metric(c.generated, prometheus.CounterValue, float64(st.Issued))
		metric(c.waited, prometheus.CounterValue, st.Waited.Seconds())
		metric(d.roundTrips, prometheus.CounterValue, float64(st.RoundTrips))
		metric(d.failures, prometheus.CounterValue, float64(st.Failures))
		for _, srv := range st.Servers {
			up := 0.0
			if srv.Healthy {
				up = 1
			}
			ch <- prometheus.MustNewConstMetric(d.serverUp, prometheus.GaugeValue, up, name, srv.Addr)
		}
		if st.Step > 0 {
			metric(d.blockLeft, prometheus.GaugeValue, float64(max(0, st.BlockEnd-st.BlockNext+1)))
			metric(d.step, prometheus.GaugeValue, float64(st.Step))
		}
	}
}
