package proxy

import "github.com/prometheus/client_golang/prometheus"

// muxCollector reads the shared connections' counters (multiplex.go) at
// scrape time: how many commands each backend write carried and how many
// responses each backend read returned, on average.
type muxCollector struct {
	srv                                *Server
	commands, writes, responses, reads *prometheus.Desc
	left, bypassed, full               *prometheus.Desc
}

func newMuxCollector(srv *Server) *muxCollector {
	l := []string{"datasource"}
	return &muxCollector{
		srv:       srv,
		commands:  prometheus.NewDesc("shardflake_multiplex_commands_total", "Commands queued on the shared connections of server.multiplex (statements and the prepares they needed).", l, nil),
		writes:    prometheus.NewDesc("shardflake_multiplex_writes_total", "Writes to the shared connections; commands / writes is the commands each write carried.", l, nil),
		responses: prometheus.NewDesc("shardflake_multiplex_responses_total", "Responses read from the shared connections.", l, nil),
		reads:     prometheus.NewDesc("shardflake_multiplex_response_reads_total", "Responses of which nothing had arrived when the reader began them: each took a read of its own; responses / reads is the responses a read returned.", l, nil),
		left:      prometheus.NewDesc("shardflake_multiplex_left_total", "Statements that waited server.multiplexMaxWait on a shared connection behind another session's command out as long, and ran on a pooled connection instead.", l, nil),
		bypassed:  prometheus.NewDesc("shardflake_multiplex_bypassed_total", "Multiplexable statements that ran on a pooled connection because the oldest command on every shared connection had been out longer than server.multiplexMaxWait.", l, nil),
		full:      prometheus.NewDesc("shardflake_multiplex_full_total", "Multiplexable statements that ran on a pooled connection because every shared connection already held 8 commands (under more sessions than that, a data source's plain reads run in parallel on it as with the switch off).", l, nil),
	}
}

func (c *muxCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.commands, c.writes, c.responses, c.reads, c.left, c.bypassed, c.full} {
		ch <- d
	}
}

func (c *muxCollector) Collect(ch chan<- prometheus.Metric) {
	sn := c.srv.current()
	for _, ds := range sn.rules.DataSources {
		p := sn.pools[ds.Name]
		if p == nil {
			continue
		}
		p.mu.Lock()
		m := p.mux
		p.mu.Unlock()
		if m == nil {
			continue
		}
		count := func(d *prometheus.Desc, v int64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), ds.Name)
		}
		count(c.commands, m.commands.Load())
		count(c.writes, m.writes.Load())
		count(c.responses, m.responses.Load())
		count(c.reads, m.reads.Load())
		count(c.left, m.left.Load())
		count(c.bypassed, m.bypassed.Load())
		count(c.full, m.full.Load())
	}
}
