package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shardflake/shardflake/internal/haproxytest"
)

// TestHAProxyExample runs HAProxy with the example configuration in
// front of two proxies: connections go to both; after DRAIN COMPUTE NODE
// of the first, new connections go to the second while the first's
// session keeps working; once the second is closed as by kill -9 (its
// listeners gone), HAProxy marks it down within 2 s and new connections
// go to the first again after RESUME COMPUTE NODE.
func TestHAProxyExample(t *testing.T) {
	a := startOpsEnv(t, opsOptions{server: reloadUsers, prefix: "hapa"})
	b := startOpsEnv(t, opsOptions{server: reloadUsers, prefix: "hapb"})
	listen := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	hpOut := haproxytest.Start(t, listen, haproxytest.Server{MySQL: a.addr, Ops: a.opsAddr}, haproxytest.Server{MySQL: b.addr, Ops: b.opsAddr})

	cfgDSN := mysql.NewConfig()
	cfgDSN.User, cfgDSN.Passwd, cfgDSN.Net, cfgDSN.Addr, cfgDSN.DBName = "app", "app-secret", "tcp", listen, "sharding_db"
	cfgDSN.Timeout = 2 * time.Second
	db, err := sql.Open("mysql", cfgDSN.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxIdleConns(0)
	ctx := context.Background()
	// connect opens a connection through HAProxy and keeps it open.
	var held []*sql.Conn
	t.Cleanup(func() {
		for _, c := range held {
			c.Close()
		}
	})
	connect := func() error {
		c, err := db.Conn(ctx)
		if err == nil {
			err = c.PingContext(ctx)
		}
		if err != nil {
			if c != nil {
				c.Close()
			}
			return err
		}
		held = append(held, c)
		return nil
	}
	// Both proxies up (HAProxy's first checks pass), then connections
	// spread over both.
	deadline := time.Now().Add(10 * time.Second)
	for connect() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("no connection through HAProxy:\n%s", hpOut.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	for a.srv.Clients() == 0 || b.srv.Clients() == 0 {
		if err := connect(); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) || len(held) > 20 {
			t.Fatalf("connections did not reach both proxies: %d and %d", a.srv.Clients(), b.srv.Clients())
		}
		time.Sleep(100 * time.Millisecond)
	}

	// DRAIN the first: HAProxy's checks see 503 and stop sending it
	// connections; its sessions keep working.
	admin, err := a.open(t).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	execAll(t, admin, "DRAIN COMPUTE NODE")
	drained := time.Now()
	waitDown := func(what string, down func() bool) {
		t.Helper()
		for !down() {
			if time.Since(drained) > 5*time.Second {
				t.Fatalf("%s: still getting connections after 5 s:\n%s", what, hpOut.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// Marked down: 5 new connections in a row all land on the second.
	waitDown("drained proxy", func() bool {
		before := a.srv.Clients()
		for range 5 {
			if err := connect(); err != nil {
				t.Fatalf("a connection while the first proxy drains: %v", err)
			}
		}
		return a.srv.Clients() == before
	})
	t.Logf("HAProxy stopped sending connections to the drained proxy %v after DRAIN", time.Since(drained).Round(10*time.Millisecond))
	for i, c := range held {
		if err := c.PingContext(ctx); err != nil {
			t.Fatalf("session %d after the drain: %v", i, err)
		}
	}

	// RESUME the first, then the second dies: its listeners close at
	// once (as kill -9 would close them), and HAProxy marks it down.
	ups := strings.Count(hpOut.String(), "shardflake-1 is UP")
	execAll(t, admin, "RESUME COMPUTE NODE")
	// HAProxy takes the first back after two good checks; until then the
	// second is its only server, and a connection to it once it died
	// would have nowhere to go.
	for strings.Count(hpOut.String(), "shardflake-1 is UP") == ups {
		if time.Since(drained) > 10*time.Second {
			t.Fatalf("HAProxy did not take the resumed proxy back:\n%s", hpOut.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.srv.Close()
	b.ops.Shutdown(ctx)
	drained = time.Now()
	var failed int
	waitDown("dead proxy", func() bool {
		for range 5 {
			if err := connect(); err != nil {
				failed++
				return false
			}
		}
		return true
	})
	for !strings.Contains(hpOut.String(), "shardflake-2 is DOWN") {
		if time.Since(drained) > 5*time.Second {
			t.Fatalf("HAProxy did not mark the dead proxy down:\n%s", hpOut.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	took := time.Since(drained)
	if took > 2*time.Second {
		t.Errorf("HAProxy took %v to mark the dead proxy down, want under 2 s", took)
	}
	if failed > 0 {
		t.Errorf("%d connection attempts failed while the dead proxy was not marked down yet (option redispatch should send them on)", failed)
	}
	t.Logf("dead proxy marked down after %v", took.Round(10*time.Millisecond))
}
