package proxy

import (
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shardflake/shardflake/idgen"
	"github.com/shardflake/shardflake/proxy/metrics"
)

// attachMetrics adds to m the collectors that read srv at scrape time.
func (srv *Server) attachMetrics(m *metrics.Metrics) error {
	cs := []prometheus.Collector{newPoolCollector(srv), newKeygenCollector(srv.keys)}
	if srv.current().rw != nil {
		cs = append(cs, newReadwriteCollector(srv.current().rw))
	}
	cs = append(cs, newTrafficCollector(srv.traffic), newXACollector(srv.xa), newMuxCollector(srv), newDeadlockCollector(&srv.deadlocks))
	return m.Attach(cs...)
}

// foundRowsSuffix marks, in PoolStats.DataSource, the pool of connections
// opened with CLIENT_FOUND_ROWS for clients that asked for it.
const foundRowsSuffix = " (found rows)"

// poolCollector reads Server.PoolStats at scrape time.
type poolCollector struct {
	srv                                   *Server
	known                                 map[string]bool
	open, inUse, idle, waiting, max, upDs *prometheus.Desc
	tls                                   *prometheus.Desc
}

func newPoolCollector(srv *Server) *poolCollector {
	labels := []string{"datasource", "pool"}
	c := &poolCollector{
		srv:     srv,
		known:   map[string]bool{},
		open:    prometheus.NewDesc("shardflake_pool_open_connections", "Backend connections open or being opened, by data source and pool (default, or found_rows for clients that asked for CLIENT_FOUND_ROWS).", labels, nil),
		inUse:   prometheus.NewDesc("shardflake_pool_in_use_connections", "Backend connections held by a statement or transaction.", labels, nil),
		idle:    prometheus.NewDesc("shardflake_pool_idle_connections", "Backend connections idle in the pool.", labels, nil),
		waiting: prometheus.NewDesc("shardflake_pool_waiting_connections", "Connections that statements are waiting for because the pool is at maxPoolSize.", labels, nil),
		max:     prometheus.NewDesc("shardflake_pool_max_connections", "The pool's maxPoolSize.", labels, nil),
		tls:     prometheus.NewDesc("shardflake_datasource_tls", "1 when the proxy's last login to the data source was encrypted (TLS), 0 when plain or before the first; mode is its sslMode.", []string{"datasource", "mode"}, nil),
		upDs:    prometheus.NewDesc("shardflake_datasource_up", "1 unless the proxy saw the data source fail to connect and has not reached it since (statements to it fail at once while 0); /readyz probes actively.", []string{"datasource"}, nil),
	}
	for _, ds := range srv.current().rules.DataSources {
		c.known[ds.Name] = true
	}
	return c
}

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.open, c.inUse, c.idle, c.waiting, c.max, c.upDs, c.tls} {
		ch <- d
	}
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	for _, st := range c.srv.PoolStats() {
		ds, pool := st.DataSource, "default"
		if name, ok := strings.CutSuffix(ds, foundRowsSuffix); ok {
			ds, pool = name, "found_rows"
		}
		if !c.known[ds] {
			continue
		}
		gauge := func(d *prometheus.Desc, v int) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), ds, pool)
		}
		gauge(c.open, st.Open)
		gauge(c.inUse, st.InUse)
		gauge(c.idle, st.Idle)
		gauge(c.waiting, st.Waiting)
		gauge(c.max, st.Max)
		if pool == "default" {
			up := 1.0
			if st.Down != nil {
				up = 0
			}
			ch <- prometheus.MustNewConstMetric(c.upDs, prometheus.GaugeValue, up, ds)
			encrypted := 0.0
			if st.Encrypted {
				encrypted = 1
			}
			ch <- prometheus.MustNewConstMetric(c.tls, prometheus.GaugeValue, encrypted, ds, st.TLSMode)
		}
	}
}

// statser is a key generator that reports its state (idgen.Snowflake).
type statser interface {
	Stats() idgen.Stats
}

// keygenCollector reads the key generators' Stats at scrape time.
type keygenCollector struct {
	names []string // sorted
	gens  map[string]statser

	generated, backSteps, waited, hwWaits  *prometheus.Desc
	lead, maxLead, worker, dc, highWater   *prometheus.Desc
	leaseState, leaseRemaining, leaseTTLDs *prometheus.Desc
	ready                                  *prometheus.Desc
	// SEGMENT and TICKET generators (keygen_metrics.go).
	states     map[string]idgen.Stater
	stateNames []string
	stateDescs stateDescs
}

// leaseStates are every idgen.LeaseState, for the state-set gauge.
var leaseStates = []idgen.LeaseState{idgen.LeaseNone, idgen.LeaseHeld, idgen.LeaseRenewing, idgen.LeaseLapsed, idgen.LeaseLost, idgen.LeaseReleased, idgen.LeaseClaiming}

func newKeygenCollector(keys map[string]idgen.KeyGenerator) *keygenCollector {
	l := []string{"generator"}
	c := &keygenCollector{
		gens:           map[string]statser{},
		generated:      prometheus.NewDesc("shardflake_keygen_ids_generated_total", "Ids the key generator issued, by keyGenerators name.", l, nil),
		backSteps:      prometheus.NewDesc("shardflake_keygen_clock_back_steps_total", "Times the key generator saw the wall clock go back.", l, nil),
		waited:         prometheus.NewDesc("shardflake_keygen_wait_seconds_total", "Time callers waited for the key generator: SNOWFLAKE sleeping for the clock (lead at its cap, or a clock step back within tolerance), SEGMENT and TICKET waiting for their data sources.", l, nil),
		hwWaits:        prometheus.NewDesc("shardflake_keygen_high_water_waits_total", "Calls that waited for the high-water mark to be persisted.", l, nil),
		lead:           prometheus.NewDesc("shardflake_keygen_lead_seconds", "How far the last id's time is ahead of the wall clock (milliseconds borrowed when a millisecond's sequence ran out).", l, nil),
		maxLead:        prometheus.NewDesc("shardflake_keygen_max_lead_seconds", "The lead the key generator may borrow (max-lead-milliseconds).", l, nil),
		worker:         prometheus.NewDesc("shardflake_keygen_worker_id", "The worker id the key generator issues ids with.", l, nil),
		dc:             prometheus.NewDesc("shardflake_keygen_datacenter_id", "The datacenter id the key generator issues ids with.", l, nil),
		highWater:      prometheus.NewDesc("shardflake_keygen_high_water_timestamp_seconds", "The persisted high-water mark as a Unix time; 0 without a state file or etcd.", l, nil),
		leaseState:     prometheus.NewDesc("shardflake_keygen_lease_state", "1 for the worker-id lease state the key generator is in (none: a static pair), 0 for the others.", []string{"generator", "state"}, nil),
		leaseRemaining: prometheus.NewDesc("shardflake_keygen_lease_remaining_seconds", "Time until the key generator stops issuing unless its etcd lease is renewed (etcd source only).", l, nil),
		leaseTTLDs:     prometheus.NewDesc("shardflake_keygen_lease_ttl_seconds", "The etcd lease's TTL (etcd source only).", l, nil),
		ready:          prometheus.NewDesc("shardflake_keygen_ready", "1 while the key generator can issue a key now, 0 while it cannot (no worker id, lease lost, clock behind its high-water mark); /readyz names the cause.", l, nil),
	}
	for name, g := range keys {
		if s, ok := g.(statser); ok {
			c.gens[name] = s
			c.names = append(c.names, name)
		}
	}
	sort.Strings(c.names)
	c.addStaters(keys)
	return c
}

func (c *keygenCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.generated, c.backSteps, c.waited, c.hwWaits, c.lead, c.maxLead,
		c.worker, c.dc, c.highWater, c.leaseState, c.leaseRemaining, c.leaseTTLDs, c.ready} {
		ch <- d
	}
	c.stateDescs.describe(ch)
}

func (c *keygenCollector) Collect(ch chan<- prometheus.Metric) {
	c.collectStates(ch)
	for _, name := range c.names {
		st := c.gens[name].Stats()
		metric := func(d *prometheus.Desc, t prometheus.ValueType, v float64) {
			ch <- prometheus.MustNewConstMetric(d, t, v, name)
		}
		metric(c.generated, prometheus.CounterValue, float64(st.Generated))
		metric(c.backSteps, prometheus.CounterValue, float64(st.ClockBackSteps))
		metric(c.waited, prometheus.CounterValue, st.Waited.Seconds())
		metric(c.hwWaits, prometheus.CounterValue, float64(st.HighWaterWaits))
		metric(c.lead, prometheus.GaugeValue, st.Lead.Seconds())
		metric(c.maxLead, prometheus.GaugeValue, st.MaxLead.Seconds())
		metric(c.worker, prometheus.GaugeValue, float64(st.WorkerID))
		metric(c.dc, prometheus.GaugeValue, float64(st.DatacenterID))
		hw := 0.0
		if !st.HighWater.IsZero() {
			hw = float64(st.HighWater.UnixMilli()) / 1000
		}
		metric(c.highWater, prometheus.GaugeValue, hw)
		for _, s := range leaseStates {
			v := 0.0
			if s == st.LeaseState {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(c.leaseState, prometheus.GaugeValue, v, name, s.String())
		}
		if r, ok := c.gens[name].(interface{ Ready() error }); ok {
			ready := 1.0
			if r.Ready() != nil {
				ready = 0
			}
			metric(c.ready, prometheus.GaugeValue, ready)
		}
		if st.Source == idgen.WorkerIDEtcd {
			metric(c.leaseRemaining, prometheus.GaugeValue, max(time.Until(st.LeaseDeadline), 0).Seconds())
			metric(c.leaseTTLDs, prometheus.GaugeValue, st.LeaseTTL.Seconds())
		}
	}
}
