package metrics

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/router"
)

// Metrics is the proxy's Prometheus instrumentation and slow-statement
// log. It is an Observer (pass it as proxy.Config.Observer) and owns a
// private registry: nothing is registered globally, so tests and several
// proxies in one process do not collide. proxy.OpsServer serves the
// registry on /metrics and adds, through Attach, the collectors that read
// a server at scrape time (pools, key generators).
//
// Every label value is bounded by the rules file: statement kind, route
// type, result, data source and physical table names from the rules, and
// MySQL error numbers. SQL text and client addresses never become labels.
// Metrics is safe for concurrent use.
type Metrics struct {
	reg  *prometheus.Registry
	slow slowLog

	// Pre-resolved children, indexed by label position, so that a
	// statement costs a few array lookups and atomic adds.
	statements [numKinds][numRoutes][2]prometheus.Counter
	latency    [numKinds][numRoutes]prometheus.Observer
	fanout     [numKinds][numRoutes]prometheus.Observer
	slowCount  [numKinds][numRoutes]prometheus.Counter
	// series are the children that follow the rules in force (data
	// nodes, data sources), replaced whole by a reload
	// (reload.go); the vectors they come from stay.
	series    atomic.Pointer[ruleSeries]
	hitsVec   *prometheus.CounterVec
	dsLatVec  *prometheus.HistogramVec
	dsErrVec  *prometheus.CounterVec
	nodesInfo *prometheus.GaugeVec

	errors      *prometheus.CounterVec
	clients     prometheus.Gauge
	accepted    prometheus.Counter
	panics      prometheus.Counter
	rateLimited prometheus.Counter
	// rulesInfo and reloads follow the rules in force (reload.go).
	rulesInfo *prometheus.GaugeVec
	reloads   *prometheus.CounterVec

	attached bool // Attach added a server's collectors
}

// Options tune New.
type Options struct {
	// Logger receives the slow-statement log; nil discards it.
	Logger *slog.Logger
	// RulesSource is the rules file's content, hashed into
	// shardflake_rules_info; nil reads Rules.File.
	RulesSource []byte
}

// Label values of the bounded label sets.
const (
	numKinds  = 6 // select insert update delete ddl other
	numRoutes = 4 // single multi all broadcast

	resultOK    = "ok"
	resultError = "error"
	// otherTable labels hits on tables without rules (single tables on
	// the default data source): their names come from clients' SQL, so
	// they are not labels.
	otherTable = "_other"
)

var (
	kindLabels  = [numKinds]string{"select", "insert", "update", "delete", "ddl", "other"}
	routeLabels = [numRoutes]string{"single", "multi", "all", "broadcast"}
)

// kindIndex maps a statement kind to its label position; SHOW statements
// routed to a data node count as other.
func kindIndex(k router.StatementKind) int {
	switch k {
	case router.KindSelect:
		return 0
	case router.KindInsert:
		return 1
	case router.KindUpdate:
		return 2
	case router.KindDelete:
		return 3
	case router.KindDDL:
		return 4
	}
	return 5
}

// routeIndex maps a route type to its label position; a plan without a
// type reaches one data source.
func routeIndex(t router.RouteType) int {
	switch t {
	case router.RouteMulti:
		return 1
	case router.RouteAll:
		return 2
	case router.RouteBroadcast:
		return 3
	}
	return 0
}

// Histogram buckets.
var (
	// statementBuckets span a point select on a local network (well under
	// a millisecond) to a scatter that times out.
	statementBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}
	// fanoutBuckets are data nodes per statement: powers of two up to the
	// largest layouts in use (64 data sources x 16 tables).
	fanoutBuckets = []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}
)

// New builds the instrumentation for a proxy serving rules.
func New(rules *config.Rules, opts Options) *Metrics {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	reg := prometheus.NewRegistry()
	m := &Metrics{
		reg:  reg,
		slow: slowLog{threshold: rules.Server.SlowStatementThreshold, log: log},
	}
	statements := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "shardflake_statements_total",
		Help: "Statements routed to data sources, by statement kind, route type (single: one data node; multi: several; all: every data node of the tables; broadcast: every data source) and result (ok or error). Statements the proxy answers itself (SET, USE, SHOW TABLES, admin statements) are not counted.",
	}, []string{"kind", "route", "result"})
	latency := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "shardflake_statement_duration_seconds",
		Help:    "Time from a routed statement's start to its last result packet written, by statement kind and route type.",
		Buckets: statementBuckets,
	}, []string{"kind", "route"})
	fanout := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "shardflake_statement_fanout_data_nodes",
		Help:    "Data nodes (physical tables) one routed statement reached, by statement kind and route type.",
		Buckets: fanoutBuckets,
	}, []string{"kind", "route"})
	slow := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "shardflake_slow_statements_total",
		Help: "Routed statements that took server.slowStatementThreshold or longer (each is logged with its fingerprint), by statement kind and route type.",
	}, []string{"kind", "route"})
	hits := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "shardflake_data_node_hits_total",
		Help: "Statements that reached each data node: datasource and physical table from the rules (table=\"" + otherTable + "\" sums tables without rules). An even spread over a table's data nodes means even sharding.",
	}, []string{"datasource", "table"})
	dsLatency := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "shardflake_datasource_duration_seconds",
		Help:    "Time from sending one route's SQL to a data source to its first response, by data source.",
		Buckets: statementBuckets,
	}, []string{"datasource"})
	dsErrors := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "shardflake_datasource_errors_total",
		Help: "Routes that failed on a data source (its own error, a lost or refused connection), by data source.",
	}, []string{"datasource"})
	m.errors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "shardflake_errors_total",
		Help: "Error packets sent to clients, by MySQL error number.",
	}, []string{"code"})
	m.clients = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "shardflake_client_connections",
		Help: "Client connections open now (past the handshake).",
	})
	m.accepted = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "shardflake_client_connections_total",
		Help: "Client connections that passed the handshake since start.",
	})
	m.panics = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "shardflake_panics_total",
		Help: "Panics recovered in client connections (each answered 1105 and logged with its stack).",
	})
	m.rateLimited = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "shardflake_rate_limited_statements_total",
		Help: "Statements refused by a rate or concurrency limit (errors 1226 and 1203: server.traffic rules, shardflake_traffic_rejected_total by rule, or a data source's own user limits).",
	})
	info := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "shardflake_rules_info",
		Help: "The rules file in use: its logical database and the first 16 hex digits of its SHA-256 (digest); always 1.",
	}, []string{"database", "digest"})
	nodes := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "shardflake_rules_data_nodes",
		Help: "Data nodes each sharded logical table has in the rules (divide its hits by this for the even share).",
	}, []string{"logical_table"})

	m.rulesInfo = info
	m.reloads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "shardflake_rules_reloads_total",
		Help: "Rules reloads since start (SIGHUP, RELOAD RULES), by result: applied or refused (the rules in force then stayed).",
	}, []string{"result"})
	m.reloads.WithLabelValues("applied")
	m.reloads.WithLabelValues("refused")
	reg.MustRegister(statements, latency, fanout, slow, hits, dsLatency, dsErrors, m.errors,
		m.clients, m.accepted, m.panics, m.rateLimited, info, nodes, m.reloads,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	// Every series of the bounded sets exists from the start, at 0, so
	// rate() and dashboards work before the first statement.
	for k, kl := range kindLabels {
		for r, rl := range routeLabels {
			m.statements[k][r][0] = statements.WithLabelValues(kl, rl, resultOK)
			m.statements[k][r][1] = statements.WithLabelValues(kl, rl, resultError)
			m.latency[k][r] = latency.WithLabelValues(kl, rl)
			m.fanout[k][r] = fanout.WithLabelValues(kl, rl)
			m.slowCount[k][r] = slow.WithLabelValues(kl, rl)
		}
	}
	m.hitsVec, m.dsLatVec, m.dsErrVec, m.nodesInfo = hits, dsLatency, dsErrors, nodes
	m.series.Store(m.newRuleSeries(rules))
	info.WithLabelValues(rules.DatabaseName, RulesDigest(rules, opts.RulesSource)).Set(1)
	return m
}

// RulesDigest identifies the rules file's content (src, or the file when
// src is nil) in shardflake_rules_info; the proxy's reloads and fleet
// compare rules by the same digest. It is "unknown" when the file cannot
// be read.
func RulesDigest(rules *config.Rules, src []byte) string {
	if src == nil {
		b, err := os.ReadFile(rules.File)
		if err != nil {
			return "unknown"
		}
		src = b
	}
	sum := sha256.Sum256(src)
	return hex.EncodeToString(sum[:8])
}

// Registry returns the registry the metrics live in, to serve or gather.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// ErrAttached is returned by Attach when the Metrics already describe a
// server: one registry describes one proxy.
var ErrAttached = errors.New("proxy: these Metrics are already attached to a server")

// Attach registers the collectors that read a server at scrape time
// (pools, key generators, replicas, traffic limits, XA), once.
func (m *Metrics) Attach(cs ...prometheus.Collector) error {
	if m.attached {
		return ErrAttached
	}
	for _, c := range cs {
		if err := m.reg.Register(c); err != nil {
			return err
		}
	}
	m.attached = true
	return nil
}

// ClientConnected counts a client connection that passed the handshake.
func (m *Metrics) ClientConnected() {
	m.clients.Inc()
	m.accepted.Inc()
}

// ClientDisconnected counts a client connection that ended.
func (m *Metrics) ClientDisconnected() { m.clients.Dec() }

// Statement records one routed statement: its count, latency, fan-out,
// the data nodes it hit, and the slow-statement log.
func (m *Metrics) Statement(ev StatementEvent) {
	k, r := kindIndex(ev.Kind), routeIndex(ev.Type)
	res := 0
	if ev.Code != 0 {
		res = 1
	}
	m.statements[k][r][res].Inc()
	m.latency[k][r].Observe(ev.Duration.Seconds())
	fan := m.countHits(ev.Routes)
	m.fanout[k][r].Observe(float64(fan))
	if m.slow.isSlow(ev.Duration) {
		m.slowCount[k][r].Inc()
		m.slow.record(ev, fan)
	}
}

// countHits counts a hit on each data node of the routes and returns
// how many there were; a route that names no data node (a statement
// without tables, run on the default data source) counts as one. The
// router gives each data node its own route, so only a route's own list
// (a join's tables) can repeat one.
func (m *Metrics) countHits(routes []router.Route) int {
	fan := 0
	series := m.series.Load()
	for i := range routes {
		nodes := routes[i].Nodes
		if len(nodes) == 0 {
			fan++
			continue
		}
	nodes:
		for j, n := range nodes {
			for _, x := range nodes[:j] {
				if x == n {
					continue nodes
				}
			}
			fan++
			if c, ok := series.hits[n]; ok {
				c.Inc()
			} else if c, ok := series.hits[config.DataNode{DataSource: n.DataSource, Table: strings.ToLower(n.Table)}]; ok {
				c.Inc()
			} else if c, ok := series.hitsOther[n.DataSource]; ok {
				c.Inc()
			}
		}
	}
	return fan
}

// Route records one route's run on its data source. A route that got no
// connection (the data source is down, the pool exhausted) counts as an
// error but not in the latency, which it never reached.
func (m *Metrics) Route(ev RouteEvent) {
	series := m.series.Load()
	if o, ok := series.dsLatency[ev.DataSource]; ok && !ev.Unreached {
		o.Observe(ev.Duration.Seconds())
	}
	if ev.Err != nil && !ev.Cancelled {
		if c, ok := series.dsErrors[ev.DataSource]; ok {
			c.Inc()
		}
	}
}

// Error counts an error packet sent to a client.
func (m *Metrics) Error(code uint16) {
	m.errors.WithLabelValues(strconv.Itoa(int(code))).Inc()
	if code == mysql.ER_USER_LIMIT_REACHED || code == mysql.ER_TOO_MANY_USER_CONNECTIONS {
		m.rateLimited.Inc()
	}
}

// Panic counts a panic recovered in a client connection.
func (m *Metrics) Panic() { m.panics.Inc() }

var _ Observer = (*Metrics)(nil)
