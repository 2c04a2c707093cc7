package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-sql-driver/mysql"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/shardflake/shardflake/internal/etcdtest"
	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// fleetEnv is etcd, one MariaDB with ds_0 and ds_1, and proxies started
// as processes of the binary, each with its own rules file in cluster
// mode on the same prefix.
type fleetEnv struct {
	t       *testing.T
	etcd    *etcdtest.Server
	cli     *clientv3.Client
	backend *mariadbtest.Server
	prefix  string
	dir     string
}

// fleetProxy is one proxy of a fleetEnv.
type fleetProxy struct {
	*process
	addr, metrics, file string
}

func startFleetEnv(t *testing.T) *fleetEnv {
	t.Helper()
	e := &fleetEnv{t: t, etcd: etcdtest.New(t), prefix: "/sf-" + strings.ToLower(t.Name()), dir: t.TempDir()}
	e.etcd.Start()
	e.backend = mariadbtest.Start(t, mariadbtest.Options{Databases: []string{"ds_0", "ds_1"}})
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{e.etcd.Endpoint()}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	e.cli = cli
	return e
}

// rules is a rules file for a proxy on addr and metrics; extra is added
// to server.users, algorithm is t_order's database algorithm.
func (e *fleetEnv) rules(addr, metrics, extraUsers, algorithm string) string {
	if algorithm == "" {
		algorithm = "{ type: MOD, props: { sharding-count: 2 } }"
	}
	return fmt.Sprintf(`databaseName: sharding_db
server:
  listen: %s
  metricsListen: %s
  users:
  - { user: app, password: secret, rulesAdmin: true }
  - { user: other, password: other-secret }%s
  cluster: { endpoints: [%s], prefix: %s, leaseTTL: 2s }
dataSources:
  ds_0: { url: "mysql://%s/ds_0", username: root, password: "" }
  ds_1: { url: "mysql://%s/ds_1", username: root, password: "" }
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order
      databaseStrategy: { standard: { shardingColumn: user_id, shardingAlgorithmName: db_mod } }
  shardingAlgorithms:
    db_mod: %s
`, addr, metrics, extraUsers, e.etcd.Endpoint(), e.prefix, e.backend.Addr(), e.backend.Addr(), algorithm)
}

// start runs a proxy whose local file is src (with its addresses).
func (e *fleetEnv) start(name string, src func(addr, metrics string) string) *fleetProxy {
	e.t.Helper()
	p := &fleetProxy{addr: freeAddr(e.t), metrics: freeAddr(e.t), file: filepath.Join(e.dir, name+".yaml")}
	if err := os.WriteFile(p.file, []byte(src(p.addr, p.metrics)), 0o600); err != nil {
		e.t.Fatal(err)
	}
	p.process = start(e.t, ".", "serve", "--config", p.file)
	waitListening(e.t, p.process, p.addr)
	waitListening(e.t, p.process, p.metrics)
	return p
}

func (p *fleetProxy) db(t *testing.T, user, password string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", user+":"+password+"@tcp("+p.addr+")/sharding_db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// digest reads the digest of shardflake_rules_info from the metrics.
func (p *fleetProxy) digest() string {
	resp, err := http.Get("http://" + p.metrics + "/metrics")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`shardflake_rules_info\{[^}]*digest="([0-9a-f]+)"`).FindSubmatch(b)
	if m == nil {
		return ""
	}
	return string(m[1])
}

func (p *fleetProxy) metric(name string) string {
	resp, err := http.Get("http://" + p.metrics + "/metrics")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindSubmatch(b)
	if m == nil {
		return ""
	}
	return string(m[1])
}

func textDigest(src string) string {
	sum := sha256.Sum256([]byte(src))
	return hex.EncodeToString(sum[:8])
}

// computeNodes runs SHOW COMPUTE NODES: instance id -> column -> value.
func computeNodes(t *testing.T, db *sql.DB) map[string]map[string]string {
	t.Helper()
	rows, err := db.Query("SHOW COMPUTE NODES")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	out := map[string]map[string]string{}
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for i, c := range cols {
			m[c] = vals[i].String
		}
		out[m["instance_id"]] = m
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// waitFor polls cond every 10 ms until it holds or within passes, and
// returns how long it took.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > within {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}

// TestClusterRulesConverge: the first proxy of a fleet seeds etcd with
// its file (and says so); the second takes the rules from etcd, not from
// its own file. A rules text written to etcd reaches both (equal
// digests, the new user logs in on both); a SIGHUP of one proxy shares
// its file with the other; a text that would move rows is refused by
// both with the reason (SHOW COMPUTE NODES, the log, the metric) and the
// rules in force stay.
func TestClusterRulesConverge(t *testing.T) {
	e := startFleetEnv(t)
	p1 := e.start("p1", func(a, m string) string { return e.rules(a, m, "", "") })
	p2 := e.start("p2", func(a, m string) string {
		return e.rules(a, m, "\n  - { user: local, password: local-secret }", "")
	})
	if !strings.Contains(p1.output(), "seeded them from the local file") {
		t.Fatalf("p1 does not say it seeded etcd:\n%s", p1.output())
	}
	if !strings.Contains(p2.output(), "rules read from etcd") {
		t.Fatalf("p2 does not say it read the rules from etcd:\n%s", p2.output())
	}
	seeded, err := os.ReadFile(p1.file)
	if err != nil {
		t.Fatal(err)
	}
	if d1, d2 := p1.digest(), p2.digest(); d1 != textDigest(string(seeded)) || d2 != d1 {
		t.Fatalf("digests after start: p1 %s, p2 %s, p1's file %s", d1, d2, textDigest(string(seeded)))
	}
	if err := p2.db(t, "local", "local-secret").Ping(); err == nil {
		t.Fatal("p2 served its own file's user: the fleet's rules are etcd's")
	}
	admin := p1.db(t, "app", "secret")
	nodes := computeNodes(t, admin)
	if len(nodes) != 2 {
		t.Fatalf("SHOW COMPUTE NODES lists %d nodes, want 2: %v", len(nodes), nodes)
	}
	prefixes := map[string]bool{}
	for id, n := range nodes {
		if n["status"] != "ready" || n["mode_type"] != "Cluster" || n["rules_digest"] != p1.digest() {
			t.Errorf("node %s: %v", id, n)
		}
		prefixes[n["conn_id_prefix"]] = true
	}
	if len(prefixes) != 2 {
		t.Errorf("the two proxies share a connection-id prefix: %v", nodes)
	}

	// A change written to etcd.
	changed := e.rules(p1.addr, p1.metrics, "\n  - { user: ops, password: ops-secret }", "")
	want := textDigest(changed)
	ctx := context.Background()
	if _, err := e.cli.Put(ctx, e.prefix+"/rules", changed); err != nil {
		t.Fatal(err)
	}
	took := waitFor(t, 10*time.Second, "both proxies on the rules written to etcd", func() bool {
		return p1.digest() == want && p2.digest() == want
	})
	t.Logf("a rules change written to etcd: both proxies report digest %s after %s", want, took.Round(time.Millisecond))
	if err := p2.db(t, "ops", "ops-secret").Ping(); err != nil {
		t.Fatalf("the user the etcd rules added, on p2: %v", err)
	}

	// SIGHUP of p1 shares its file.
	hup := e.rules(p1.addr, p1.metrics, "\n  - { user: hup, password: hup-secret }", "")
	if err := os.WriteFile(p1.file, []byte(hup), 0o600); err != nil {
		t.Fatal(err)
	}
	p1.cmd.Process.Signal(syscall.SIGHUP)
	took = waitFor(t, 10*time.Second, "p2 on the file p1 reloaded on SIGHUP", func() bool {
		return p2.digest() == textDigest(hup)
	})
	t.Logf("SIGHUP of p1: p2 reports its digest after %s", took.Round(time.Millisecond))

	// A change that would move rows is refused everywhere.
	if _, err := admin.Exec("CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id BIGINT)"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec("INSERT INTO t_order VALUES (1, 1), (2, 2)"); err != nil {
		t.Fatal(err)
	}
	moving := e.rules(p1.addr, p1.metrics, "\n  - { user: hup, password: hup-secret }", `{ type: INLINE, props: { algorithm-expression: "ds_${user_id % 2}" } }`)
	if _, err := e.cli.Put(ctx, e.prefix+"/rules", moving); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "both proxies refuse the row-moving change", func() bool {
		return p1.metric("shardflake_cluster_rules_refused_total") == "1" && p2.metric("shardflake_cluster_rules_refused_total") == "1"
	})
	for _, p := range []*fleetProxy{p1, p2} {
		if d := p.digest(); d != textDigest(hup) {
			t.Errorf("digest after a refused change: %s, want %s", d, textDigest(hup))
		}
		if v := p.metric("shardflake_cluster_rules_in_sync"); v != "0" {
			t.Errorf("shardflake_cluster_rules_in_sync = %q after a refused change, want 0", v)
		}
		if out := p.output(); !strings.Contains(out, "the rules written to etcd were refused") || !strings.Contains(out, "reshard first") {
			t.Errorf("the refusal is not logged with its reason:\n%s", out)
		}
	}
	waitFor(t, 5*time.Second, "the refusal's reason in SHOW COMPUTE NODES", func() bool {
		for _, n := range computeNodes(t, admin) {
			if !strings.Contains(n["note"], "reshard first") {
				return false
			}
		}
		return true
	})
}

// TestClusterKillAcrossProxies: connection ids carry their proxy's
// prefix and agree between the greeting, CONNECTION_ID() and SHOW
// PROCESSLIST; KILL QUERY sent through one proxy cancels a SELECT
// SLEEP running on the other; another user's KILL is refused there
// (1095), an unknown id is 1094.
func TestClusterKillAcrossProxies(t *testing.T) {
	e := startFleetEnv(t)
	p1 := e.start("p1", func(a, m string) string { return e.rules(a, m, "", "") })
	p2 := e.start("p2", func(a, m string) string { return e.rules(a, m, "", "") })

	// The greeting's id is CONNECTION_ID() and a PROCESSLIST row.
	c, err := client.Connect(p1.addr, "app", "secret", "sharding_db")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r, err := c.Execute("SELECT CONNECTION_ID()")
	if err != nil {
		t.Fatal(err)
	}
	id, _ := r.GetUint(0, 0)
	if id != uint64(c.GetConnectionID()) {
		t.Fatalf("CONNECTION_ID() %d, greeting %d", id, c.GetConnectionID())
	}
	r, err = c.Execute("SHOW PROCESSLIST")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for i := range r.RowNumber() {
		if v, _ := r.GetUint(i, 0); v == id {
			found = true
		}
	}
	if !found {
		t.Fatalf("SHOW PROCESSLIST has no row for connection %d", id)
	}

	sleeper := p1.db(t, "app", "secret")
	sleeper.SetMaxOpenConns(1)
	var sleepID uint64
	if err := sleeper.QueryRow("SELECT CONNECTION_ID()").Scan(&sleepID); err != nil {
		t.Fatal(err)
	}
	killer := p2.db(t, "app", "secret")
	var ownID uint64
	if err := killer.QueryRow("SELECT CONNECTION_ID()").Scan(&ownID); err != nil {
		t.Fatal(err)
	}
	if sleepID>>22 == ownID>>22 {
		t.Fatalf("connections %d (p1) and %d (p2) have the same prefix", sleepID, ownID)
	}
	other := p2.db(t, "other", "other-secret")
	var me *mysql.MySQLError
	if _, err := other.Exec(fmt.Sprintf("KILL QUERY %d", sleepID)); !errors.As(err, &me) || me.Number != 1095 {
		t.Fatalf("another user's KILL through p2: %v, want 1095", err)
	}
	if _, err := other.Exec(fmt.Sprintf("KILL QUERY %d", sleepID|0x3fffff)); !errors.As(err, &me) || me.Number != 1094 {
		t.Fatalf("KILL of an unknown id: %v, want 1094", err)
	}

	done := make(chan error, 1)
	start := time.Now()
	go func() {
		var v int
		done <- sleeper.QueryRow("SELECT SLEEP(30)").Scan(&v)
	}()
	waitFor(t, 10*time.Second, "the SLEEP running on p1", func() bool {
		rows, err := p1.db(t, "app", "secret").Query("SHOW PROCESSLIST")
		if err != nil {
			return false
		}
		defer rows.Close()
		for rows.Next() {
			var cid uint64
			var user, host, cmd string
			var db, state, info sql.NullString
			var tm int64
			var progress float64
			if rows.Scan(&cid, &user, &host, &db, &cmd, &tm, &state, &info, &progress) == nil && cid == sleepID && cmd == "Query" {
				return true
			}
		}
		return false
	})
	if _, err := killer.Exec(fmt.Sprintf("KILL QUERY %d", sleepID)); err != nil {
		t.Fatalf("KILL QUERY %d through p2: %v", sleepID, err)
	}
	select {
	case err := <-done:
		if !errors.As(err, &me) || me.Number != 1317 {
			t.Fatalf("the killed SLEEP: %v, want 1317", err)
		}
		t.Logf("KILL QUERY through p2 ended the SLEEP on p1 after %s", time.Since(start).Round(time.Millisecond))
	case <-time.After(10 * time.Second):
		t.Fatal("the SLEEP on p1 still runs 10 s after KILL QUERY through p2")
	}
	if err := sleeper.Ping(); err != nil {
		t.Fatalf("the killed query's connection: %v", err)
	}
	if !strings.Contains(p1.output(), "KILL from another compute node") {
		t.Errorf("p1 does not log the forwarded KILL:\n%s", p1.output())
	}
}
