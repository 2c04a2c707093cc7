package proxy

import (
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/prometheus/client_golang/prometheus"
)

// ReplicaHealth is one replica as the monitor last found it, for /readyz.
type ReplicaHealth struct {
	Group   string `json:"group"`
	Name    string `json:"name"`
	Address string `json:"address"`
	Healthy bool   `json:"healthy"`
	// LagSeconds is Seconds_Behind_Master; -1 when unknown.
	LagSeconds int64 `json:"lagSeconds"`
	// Reason says why the replica is excluded from reads, or how a
	// healthy one serves when its primary is unreachable.
	Reason string `json:"reason,omitempty"`
}

// health reports every replica, and a line per excluded one: a replica
// that is down degrades reads (they go to the other replicas or the
// primary) but leaves the proxy ready.
func (rw *readwriteSplit) health() ([]ReplicaHealth, []string) {
	if rw == nil {
		return nil, nil
	}
	var out []ReplicaHealth
	var degraded []string
	for _, g := range rw.order {
		for _, rp := range g.replicas {
			h := ReplicaHealth{Group: g.cfg.Name, Name: rp.name, Address: rp.pool.ds.Addr(), Healthy: rp.serving(), LagSeconds: rp.lag.Load()}
			if !h.Healthy {
				h.Reason = rp.why()
				degraded = append(degraded, "replica "+rp.name+" of "+g.cfg.Name+" is excluded from reads: "+h.Reason)
			} else if note := rp.note.Load(); note != nil {
				h.Reason = *note
			}
			out = append(out, h)
		}
	}
	return out, degraded
}

func (rp *replica) why() string {
	if p := rp.reason.Load(); p != nil {
		return *p
	}
	if rp.pool.isDown() {
		return "unreachable"
	}
	return ""
}

// unitName is the storage unit name of data source ds for SHOW STORAGE
// UNITS: a group's primary under its own name.
func (rw *readwriteSplit) unitName(ds string) string {
	if g := rw.group(ds); g != nil {
		return g.cfg.Primary.Name
	}
	return ds
}

// replicaUnits are SHOW STORAGE UNITS' rows of the replicas, with the
// monitor's health rather than a fresh login.
func (rw *readwriteSplit) replicaUnits() []Row {
	if rw == nil {
		return nil
	}
	var rows []Row
	for _, g := range rw.order {
		for _, rp := range g.replicas {
			state, detail := "up", any(nil)
			if !rp.serving() {
				state, detail = "excluded", rp.why()
			}
			rows = append(rows, storageUnitRow(rp.name, rp.pool, rp.pool.stats(), "true", state, detail))
		}
	}
	return rows
}

// readwriteRules is SHOW READWRITE_SPLITTING RULES: ShardingSphere's
// columns, then shardflake's settings.
func (srv sessionServer) readwriteRules() ([]*mysql.Field, []Row) {
	cols := stringColumns("name", "write_storage_unit_name", "read_storage_unit_names", "transactional_read_query_strategy",
		"load_balancer_type", "load_balancer_props", "max_replication_lag", "when_no_replica", "causal_reads", "causal_timeout", "causal_window")
	var rows []Row
	for _, g := range srv.rules.ReadwriteGroups {
		names := make([]string, len(g.Replicas))
		for i, r := range g.Replicas {
			names[i] = r.Name
		}
		lag := "none"
		if g.MaxReplicationLag > 0 {
			lag = g.MaxReplicationLag.String()
		}
		rows = append(rows, rowOf(g.Name, g.Primary.Name, strings.Join(names, ","), g.TransactionalReads.String(),
			g.LoadBalancer.Type, propList(g.LoadBalancer.Props), lag, g.WhenNoReplica.String(), g.CausalReads.String(),
			g.CausalTimeout.String(), g.CausalWindow.String()))
	}
	return cols, rows
}

// readwriteStatus is SHOW READWRITE_SPLITTING STATUS: one row per
// storage unit of each group, with its role, health, lag, weight and the
// reads it served.
func (srv sessionServer) readwriteStatus() ([]*mysql.Field, []Row) {
	cols := stringColumns("group", "storage_unit", "role", "health", "detail")
	cols = append(cols, intColumn("lag_seconds"), stringColumn("weight"), uintColumn("reads"), uintColumn("exclusions"),
		uintColumn("causal_waits"), uintColumn("causal_timeouts"), stringColumn("gtid_position"))
	rw := srv.rw
	if rw == nil {
		return cols, nil
	}
	var rows []Row
	for _, g := range rw.order {
		p := srv.pools[g.cfg.Name]
		health, detail := "up", any(nil)
		if p.isDown() {
			health, detail = "down", "primary unreachable; no replica is promoted"
		}
		rows = append(rows, rowOf(g.cfg.Name, g.cfg.Primary.Name, "primary", health, detail, nil, nil, g.primaryReads.Load(), nil, nil, nil, nil))
		for _, rp := range g.replicas {
			health, detail := "up", any(nil)
			if !rp.serving() {
				health, detail = "excluded", rp.why()
			} else if note := rp.note.Load(); note != nil {
				detail = *note
			}
			lag := any(nil)
			if l := rp.lag.Load(); l >= 0 {
				lag = l
			}
			pos := any(nil)
			if gp := rp.gtid.Load(); gp != nil {
				pos = gp.String()
			}
			rows = append(rows, rowOf(g.cfg.Name, rp.name, "replica", health, detail, lag,
				strconv.FormatFloat(rp.weight, 'g', -1, 64), rp.reads.Load(), rp.exclusions.Load(),
				rp.causalWait.Load(), rp.causalMiss.Load(), pos))
		}
	}
	return cols, rows
}

// readwriteCollector exports the replicas' state at scrape time.
type readwriteCollector struct {
	rw                                                       *readwriteSplit
	reads, lag, excluded, exclusions, waits, misses, primary *prometheus.Desc
}

func newReadwriteCollector(rw *readwriteSplit) *readwriteCollector {
	l := []string{"group", "replica"}
	return &readwriteCollector{
		rw:         rw,
		reads:      prometheus.NewDesc("shardflake_replica_reads_total", "Reads a replica of a read/write group served.", l, nil),
		lag:        prometheus.NewDesc("shardflake_replica_lag_seconds", "The replica's Seconds_Behind_Master at the last probe; -1 when unknown (replication stopped, unreachable).", l, nil),
		excluded:   prometheus.NewDesc("shardflake_replica_excluded", "1 while the replica is excluded from reads (stopped, lagging beyond maxReplicationLag, unreachable).", l, nil),
		exclusions: prometheus.NewDesc("shardflake_replica_exclusions_total", "Times the replica went from serving reads to excluded.", l, nil),
		waits:      prometheus.NewDesc("shardflake_replica_causal_waits_total", "MASTER_GTID_WAITs run on the replica for read-your-writes.", l, nil),
		misses:     prometheus.NewDesc("shardflake_replica_causal_timeouts_total", "Of those, waits that timed out (the read went to the primary).", l, nil),
		primary:    prometheus.NewDesc("shardflake_readwrite_primary_reads_total", "Plain reads of a read/write group that the primary served (no replica qualified, a causal wait timed out, the transaction's strategy).", []string{"group"}, nil),
	}
}

func (c *readwriteCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.reads, c.lag, c.excluded, c.exclusions, c.waits, c.misses, c.primary} {
		ch <- d
	}
}

func (c *readwriteCollector) Collect(ch chan<- prometheus.Metric) {
	for _, g := range c.rw.order {
		ch <- prometheus.MustNewConstMetric(c.primary, prometheus.CounterValue, float64(g.primaryReads.Load()), g.cfg.Name)
		for _, rp := range g.replicas {
			m := func(d *prometheus.Desc, t prometheus.ValueType, v float64) {
				ch <- prometheus.MustNewConstMetric(d, t, v, g.cfg.Name, rp.name)
			}
			excluded := 0.0
			if !rp.serving() {
				excluded = 1
			}
			m(c.reads, prometheus.CounterValue, float64(rp.reads.Load()))
			m(c.lag, prometheus.GaugeValue, float64(rp.lag.Load()))
			m(c.excluded, prometheus.GaugeValue, excluded)
			m(c.exclusions, prometheus.CounterValue, float64(rp.exclusions.Load()))
			m(c.waits, prometheus.CounterValue, float64(rp.causalWait.Load()))
			m(c.misses, prometheus.CounterValue, float64(rp.causalMiss.Load()))
		}
	}
}
