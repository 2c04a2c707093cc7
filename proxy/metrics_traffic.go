package proxy

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/proxy/traffic"
)

// trafficCollector reads the traffic rules' counters and live state at
// scrape time; the rule label is bounded by the rules file.
type trafficCollector struct {
	set                                   *traffic.Set
	admitted, delayed, rejected           *prometheus.Desc
	wait, available, inFlight, queued, on *prometheus.Desc
	share, members                        *prometheus.Desc
}

func newTrafficCollector(set *traffic.Set) *trafficCollector {
	l := []string{"rule"}
	return &trafficCollector{
		set:       set,
		admitted:  prometheus.NewDesc("shardflake_traffic_admitted_total", "Statements a traffic rule admitted (at once or after a wait), by rule.", l, nil),
		delayed:   prometheus.NewDesc("shardflake_traffic_delayed_total", "Statements a traffic rule admitted after waiting for a permit (onLimit: wait, or a concurrency queue).", l, nil),
		rejected:  prometheus.NewDesc("shardflake_traffic_rejected_total", "Statements a traffic rule refused (1226, or 1203 for a concurrency queue full or timed out).", l, nil),
		wait:      prometheus.NewDesc("shardflake_traffic_wait_seconds", "How long admitted statements waited for a traffic rule's permits (0 for most).", l, nil),
		available: prometheus.NewDesc("shardflake_traffic_available_permits", "Permits a traffic rule could grant now (tokens, window room, free concurrency slots).", l, nil),
		inFlight:  prometheus.NewDesc("shardflake_traffic_in_flight_permits", "Permits held by running statements (CONCURRENCY rules).", l, nil),
		queued:    prometheus.NewDesc("shardflake_traffic_queued_statements", "Statements waiting in a CONCURRENCY rule's queue.", l, nil),
		on:        prometheus.NewDesc("shardflake_traffic_rule_enabled", "1 for an enabled traffic rule, 0 for one disabled (DISABLE TRAFFIC RULE or disabled: true).", l, nil),
		share:     prometheus.NewDesc("shardflake_traffic_cluster_share_permits_per_second", "This proxy's share of a scope: cluster rule's rate, as of the last rebalance.", l, nil),
		members:   prometheus.NewDesc("shardflake_traffic_cluster_members", "Proxies sharing a scope: cluster rule's budget, as of the last rebalance.", l, nil),
	}
}

func (c *trafficCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.admitted, c.delayed, c.rejected, c.wait, c.available, c.inFlight, c.queued, c.on, c.share, c.members} {
		ch <- d
	}
}

func (c *trafficCollector) Collect(ch chan<- prometheus.Metric) {
	for _, r := range c.set.States() {
		counter := func(d *prometheus.Desc, v uint64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), r.Name)
		}
		gauge := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, r.Name)
		}
		counter(c.admitted, r.Admitted)
		counter(c.delayed, r.Delayed)
		counter(c.rejected, r.Rejected)
		buckets := make(map[float64]uint64, len(traffic.WaitBuckets))
		for i, b := range traffic.WaitBuckets {
			buckets[b] = r.WaitBuckets[i]
		}
		ch <- prometheus.MustNewConstHistogram(c.wait, r.WaitCount, r.WaitSum, buckets, r.Name)
		gauge(c.available, r.Available)
		gauge(c.inFlight, float64(r.InFlight))
		gauge(c.queued, float64(r.Queued))
		on := 0.0
		if r.Enabled {
			on = 1
		}
		gauge(c.on, on)
		if r.Scope == config.TrafficCluster {
			gauge(c.share, r.Share)
			gauge(c.members, float64(r.Members))
		}
	}
}
