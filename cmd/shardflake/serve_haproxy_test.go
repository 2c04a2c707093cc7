package main

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shardflake/shardflake/internal/haproxytest"
)

// startHAProxy runs deploy/haproxy/haproxy.cfg with its frontend on a
// free port and its two servers on ps.
func startHAProxy(t *testing.T, ps ...*fleetProxy) (listen string, out *haproxytest.Output) {
	t.Helper()
	servers := make([]haproxytest.Server, len(ps))
	for i, p := range ps {
		servers[i] = haproxytest.Server{MySQL: p.addr, Ops: p.metrics}
	}
	listen = freeAddr(t)
	return listen, haproxytest.Start(t, listen, servers...)
}

// TestClusterBehindHAProxy: two proxy processes of one fleet behind
// HAProxy (the example configuration). Connections through HAProxy reach
// both (their connection ids' prefixes say which); DRAIN COMPUTE NODE of
// one sent to the other sends new connections to the other only while
// the drained one's session keeps working, RESUME undoes it; a rules change
// written to etcd converges on both; after kill -9 of one, HAProxy marks
// it down within 2 s, every new connection goes to the other, and the
// dead proxy leaves SHOW COMPUTE NODES when its lease expires.
func TestClusterBehindHAProxy(t *testing.T) {
	e := startFleetEnv(t)
	p1 := e.start("p1", func(a, m string) string { return e.rules(a, m, "", "") })
	p2 := e.start("p2", func(a, m string) string { return e.rules(a, m, "", "") })
	listen, hpOut := startHAProxy(t, p1, p2)

	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = "app", "secret", "tcp", listen, "sharding_db"
	cfg.Timeout = 2 * time.Second
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxIdleConns(0)
	// prefixOf opens a connection through HAProxy and returns the prefix
	// of its connection id (which proxy took it).
	prefixOf := func() (uint64, error) {
		var id uint64
		err := db.QueryRow("SELECT CONNECTION_ID()").Scan(&id)
		return id >> 22, err
	}
	seen := map[uint64]bool{}
	waitFor(t, 15*time.Second, "connections through HAProxy reach both proxies", func() bool {
		if p, err := prefixOf(); err == nil {
			seen[p] = true
		}
		return len(seen) == 2
	})
	admin := p1.db(t, "app", "secret")
	nodes := computeNodes(t, admin)
	var p1Prefix, p2ID string
	for id, n := range nodes {
		if n["mysql_address"] == p1.addr {
			p1Prefix = n["conn_id_prefix"]
		}
		if n["mysql_address"] == p2.addr {
			p2ID = id
		}
	}
	if len(nodes) != 2 || p1Prefix == "" || p2ID == "" {
		t.Fatalf("SHOW COMPUTE NODES: %v", nodes)
	}

	// DRAIN COMPUTE NODE 'p2' sent to p1: HAProxy stops sending new
	// connections to p2, whose session keeps working; RESUME undoes it.
	held, err := p2.db(t, "app", "secret").Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if _, err := admin.Exec("DRAIN COMPUTE NODE '" + p2ID + "'"); err != nil {
		t.Fatalf("DRAIN COMPUTE NODE of p2 through p1: %v", err)
	}
	if n := computeNodes(t, admin)[p2ID]; n["status"] != "draining" {
		t.Errorf("p2 after DRAIN through p1: %v", n)
	}
	drainAt := time.Now()
	for !strings.Contains(hpOut.String(), "shardflake-2 is DOWN") {
		if time.Since(drainAt) > 10*time.Second {
			t.Fatalf("HAProxy did not take the drained proxy out:\n%s", hpOut.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("DRAIN COMPUTE NODE of p2 through p1: HAProxy took p2 out after %s", time.Since(drainAt).Round(10*time.Millisecond))
	for i := range 10 {
		if p, err := prefixOf(); err != nil || fmt.Sprint(p) != p1Prefix {
			t.Fatalf("connection %d after the drain: prefix %d, %v; want p1's %s", i, p, err, p1Prefix)
		}
	}
	for i := range 5 {
		if err := held.PingContext(t.Context()); err != nil {
			t.Fatalf("p2's session after the drain (%d): %v", i, err)
		}
	}
	var me *mysql.MySQLError
	if _, err := admin.Exec("DRAIN COMPUTE NODE 'nosuch'"); !errors.As(err, &me) || me.Number != 1105 || !strings.Contains(me.Message, "Unknown compute node 'nosuch'") {
		t.Fatalf("DRAIN of an unknown node: %v", err)
	}
	if _, err := admin.Exec("RESUME COMPUTE NODE '" + p2ID + "'"); err != nil {
		t.Fatal(err)
	}
	t.Logf("resumed at %s", time.Since(drainAt).Round(10*time.Millisecond))
	seen = map[uint64]bool{}
	waitFor(t, 10*time.Second, "connections reach p2 again after RESUME", func() bool {
		if p, err := prefixOf(); err == nil {
			seen[p] = true
		}
		return len(seen) == 2
	})
	held.Close()
	t.Logf("p2 back at %s", time.Since(drainAt).Round(10*time.Millisecond))

	changed := e.rules(p1.addr, p1.metrics, "\n  - { user: ops, password: ops-secret }", "")
	if _, err := e.cli.Put(t.Context(), e.prefix+"/rules", changed); err != nil {
		t.Fatal(err)
	}
	took := waitFor(t, 10*time.Second, "both proxies on the rules written to etcd", func() bool {
		return p1.digest() == textDigest(changed) && p2.digest() == textDigest(changed)
	})
	t.Logf("rules written to etcd: equal digests on both after %s", took.Round(time.Millisecond))

	// kill -9 of p2.
	// The drain marked it down once already.
	downs := strings.Count(hpOut.String(), "shardflake-2 is DOWN")
	killed := time.Now()
	p2.cmd.Process.Kill()
	for strings.Count(hpOut.String(), "shardflake-2 is DOWN") == downs {
		if time.Since(killed) > 10*time.Second {
			t.Fatalf("HAProxy did not mark the killed proxy down:\n%s", hpOut.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	down := time.Since(killed)
	if down > 2*time.Second {
		t.Errorf("HAProxy marked the killed proxy down after %s, want within 2 s", down)
	}
	t.Logf("kill -9: HAProxy marked the proxy down after %s", down.Round(10*time.Millisecond))
	for i := range 10 {
		p, err := prefixOf()
		if err != nil {
			t.Fatalf("connection %d after the kill: %v", i, err)
		}
		if fmt.Sprint(p) != p1Prefix {
			t.Fatalf("connection %d after the kill went to prefix %d, want p1's %s", i, p, p1Prefix)
		}
	}
	waitFor(t, 15*time.Second, "the killed proxy leaves SHOW COMPUTE NODES", func() bool {
		return len(computeNodes(t, admin)) == 1
	})
	t.Logf("the killed proxy left SHOW COMPUTE NODES %s after the kill (lease TTL 2 s)", (time.Since(killed)).Round(100*time.Millisecond))
}
