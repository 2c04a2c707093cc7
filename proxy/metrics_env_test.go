package proxy

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/internal/mariadbtest"
	"github.com/shardflake/shardflake/proxy/keygen"
	"github.com/shardflake/shardflake/proxy/metrics"
)

// opsEnv is a proxy with Metrics and its OpsServer, in front of MariaDB
// servers, on loopback ports for one test. Its data sources use databases
// of their own (prefix_0, prefix_1) so that the tests of the statement
// counters see no other test's tables.
type opsEnv struct {
	*testEnv
	metrics *metrics.Metrics
	ops     *OpsServer
	opsAddr string
	logs    *lockedBuffer // JSON log records (the slow-statement log)
	dbs     []string      // databases of ds_0, ds_1
}

type opsOptions struct {
	server   string                // extra lines for the server: section
	backends []*mariadbtest.Server // default: the shared servers
	prefix   string                // database prefix; default "ops"
	keyProps string                // the snowflake generator's props; default worker 3 of datacenter 1
	// rules, when set, is the whole rules file (its data sources must be
	// on backends, databases prefix_N).
	rules string
}

// opsRulesYAML is the test rules over databases prefix_N, with the key
// generator on worker 3 of datacenter 1 (the admin statements show them).
func opsRulesYAML(backends []*mariadbtest.Server, server, prefix string) string {
	return opsRulesWithKeys(backends, server, prefix, "")
}

// opsRulesWithKeys is opsRulesYAML with the generator's props (a flow
// mapping) in place of worker 3 of datacenter 1 unless keyProps is "".
func opsRulesWithKeys(backends []*mariadbtest.Server, server, prefix, keyProps string) string {
	if keyProps == "" {
		keyProps = "{ worker-id: 3, datacenter-id: 1 }"
	}
	rules := strings.Replace(defaultTestRules, "{ worker-id: 1 }", keyProps, 1)
	return rulesYAMLOn(backends, server, rules, prefix)
}

func startOpsEnv(t *testing.T, opts opsOptions) *opsEnv {
	t.Helper()
	backends := opts.backends
	if backends == nil {
		backends = sharedServers(t)
	}
	prefix := opts.prefix
	if prefix == "" {
		prefix = "ops"
	}
	var dbs []string
	for i, b := range backends {
		db := fmt.Sprintf("%s_%d", prefix, i)
		b.Exec(t, "", "CREATE DATABASE IF NOT EXISTS `"+db+"`")
		dbs = append(dbs, db)
	}
	src := []byte(opsRulesWithKeys(backends, opts.server, prefix, opts.keyProps))
	if opts.rules != "" {
		src = []byte(opts.rules)
	}
	rules, err := config.Parse(src, "ops-rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	keys, closeKeys, err := keygen.Open(context.Background(), rules)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeKeys() })
	logs := &lockedBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	m := metrics.New(rules, metrics.Options{Logger: log, RulesSource: src})
	srv, err := New(Config{Rules: rules, Keys: keys, Logger: log, Observer: m})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := NewOpsServer(srv, m)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ol, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	opsDone := make(chan error, 1)
	go func() { opsDone <- ops.Serve(ol) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; err != ErrServerClosed {
			t.Errorf("Serve: %v", err)
		}
		ops.Shutdown(context.Background())
		if err := <-opsDone; err != http.ErrServerClosed {
			t.Errorf("OpsServer.Serve: %v", err)
		}
	})
	te := &testEnv{srv: srv, addr: l.Addr().String(), backends: backends, rules: rules, direct: map[int]*sql.DB{}, t: t}
	return &opsEnv{testEnv: te, metrics: m, ops: ops, opsAddr: ol.Addr().String(), logs: logs, dbs: dbs}
}

// createOrders makes t_order_0/1 and t_dict on both data sources,
// directly on the backends, so that no statement goes through the proxy.
func (e *opsEnv) createOrders(t *testing.T) {
	t.Helper()
	for i, b := range e.backends {
		stmts := []string{"DROP TABLE IF EXISTS t_dict", "CREATE TABLE t_dict (code VARCHAR(16) PRIMARY KEY, label VARCHAR(64))"}
		for j := range 2 {
			stmts = append(stmts,
				fmt.Sprintf("DROP TABLE IF EXISTS t_order_%d", j),
				fmt.Sprintf("CREATE TABLE t_order_%d (order_id BIGINT NOT NULL PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32))", j))
		}
		b.Exec(t, e.dbs[i], stmts...)
	}
}

// get fetches path from the OpsServer.
func (e *opsEnv) get(t *testing.T, path string) (int, []byte) {
	t.Helper()
	resp, err := http.Get("http://" + e.opsAddr + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

// scrape reads /metrics into series -> value; series are written as
// client_golang writes them (labels sorted by name), see series.
func (e *opsEnv) scrape(t *testing.T) map[string]float64 {
	t.Helper()
	code, body := e.get(t, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: HTTP %d: %s", code, body)
	}
	return parseExposition(t, body)
}

func parseExposition(t *testing.T, body []byte) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			t.Fatalf("bad exposition line %q", line)
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("bad exposition line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

// metricNames returns the metric families a /metrics body declares.
func metricNames(body []byte) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(string(body), "\n") {
		if f := strings.Fields(line); len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			out[f[2]] = f[3]
		}
	}
	return out
}

// series formats a series key as /metrics writes it: name{a="x",b="y"}
// with the labels sorted by name, except a histogram's le, which comes
// last. kv alternates label names and values.
func series(name string, kv ...string) string {
	if len(kv) == 0 {
		return name
	}
	type pair struct{ k, v string }
	var ps []pair
	for i := 0; i+1 < len(kv); i += 2 {
		ps = append(ps, pair{kv[i], kv[i+1]})
	}
	sort.Slice(ps, func(i, j int) bool {
		if (ps[i].k == "le") != (ps[j].k == "le") {
			return ps[j].k == "le"
		}
		return ps[i].k < ps[j].k
	})
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = fmt.Sprintf("%s=%q", p.k, p.v)
	}
	return name + "{" + strings.Join(parts, ",") + "}"
}

// lockedBuffer is an io.Writer for logs written from many goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// execAll runs statements in turn on c (a connection or a pool), failing
// the test on an error.
func execAll(t *testing.T, c interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := c.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// queryAll runs a query and reads every row, failing the test on error.
func queryAll(t *testing.T, c *sql.Conn, q string) int {
	t.Helper()
	rows, err := c.QueryContext(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}
