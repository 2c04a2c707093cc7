package proxy

import (
	"context"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/internal/mariadbtest"
	"github.com/shardflake/shardflake/proxy/metrics"
)

// TestReloadUnderSysbench runs sysbench oltp_read_write (prepared
// statements, transactions over both data sources) through the proxy for
// 15 s while the test swaps two equivalent rules files every 2 s (they
// differ in a setting and in the data sources' pool size, so each reload
// opens new pools and retires the old ones), taking turns between the
// reload SIGHUP runs (Server.Reload), RELOAD RULES and a write of the
// rules to the fleet's etcd (the proxy is a fleet member, so the first
// two also publish what they applied there): sysbench must see no error,
// every reload must apply, and the metrics must count them.
func TestReloadUnderSysbench(t *testing.T) {
	bin := mariadbtest.RequireBinary(t, "sysbench")
	e := startReloadEnvWith(t, "rls", sysbenchRules(t), false, envOptions{})
	rules, err := config.Load(e.path)
	if err != nil {
		t.Fatal(err)
	}
	m := metrics.New(rules, metrics.Options{})
	e.srv.obs = m
	variants := []string{
		e.yaml("", "", "metricsListen: 127.0.0.1:1", "metricsListen: 127.0.0.1:1\n  slowStatementThreshold: 5s\n  lockWaitTimeout: 2s"),
		// New pools for every data source: the old ones close once the
		// transactions on them end.
		strings.ReplaceAll(e.yaml("", "", "metricsListen: 127.0.0.1:1", "metricsListen: 127.0.0.1:1\n  slowStatementThreshold: 6s\n  lockWaitTimeout: 2s"), "maxPoolSize: 20", "maxPoolSize: 21"),
	}
	e.write(t, variants[0])
	ctx := context.Background()
	cli, key := joinTestFleet(t, e.srv, rules, []byte(variants[0]))
	if _, err := e.srv.Reload(ctx, false); err != nil {
		t.Fatal(err)
	}
	sysbench(t, e.addr, "app", "app-secret", "sharding_db", "oltp_common", "cleanup")
	sysbench(t, e.addr, "app", "app-secret", "sharding_db", "oltp_common", "prepare")
	t.Cleanup(func() { sysbench(t, e.addr, "app", "app-secret", "sharding_db", "oltp_common", "cleanup") })

	host, port, _ := net.SplitHostPort(e.addr)
	cmd := exec.Command(bin, "--db-driver=mysql", "--mysql-host="+host, "--mysql-port="+port,
		"--mysql-user=app", "--mysql-password=app-secret", "--mysql-db=sharding_db",
		"--tables=1", "--table-size=10000", "--auto-inc=off", "--threads=4",
		"--time=15", "--db-ps-mode=auto", "oltp_read_write", "run")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	admin := e.conn(t)
	reloads := 0
	var etcdTook []time.Duration
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	var runErr error
loop:
	for {
		select {
		case runErr = <-done:
			break loop
		case <-tick.C:
			reloads++
			e.write(t, variants[reloads%2])
			before := e.srv.RulesDigest()
			switch reloads % 3 {
			case 1:
				if _, err := e.srv.Reload(ctx, false); err != nil {
					t.Errorf("reload %d (SIGHUP's): %v", reloads, err)
				}
			case 2:
				if _, err := admin.ExecContext(ctx, "RELOAD RULES"); err != nil {
					t.Errorf("reload %d (RELOAD RULES): %v", reloads, err)
				}
			case 0:
				put := time.Now()
				if _, err := cli.Put(ctx, key, variants[reloads%2]); err != nil {
					t.Fatalf("reload %d (etcd): %v", reloads, err)
				}
				for e.srv.RulesDigest() == before && time.Since(put) < 5*time.Second {
					time.Sleep(5 * time.Millisecond)
				}
				etcdTook = append(etcdTook, time.Since(put))
			}
			if e.srv.RulesDigest() == before {
				t.Errorf("reload %d left the digest %s", reloads, before)
			}
		}
	}
	if runErr != nil {
		t.Fatalf("sysbench: %v\n%s", runErr, out.String())
	}
	errs, ignored, qps := sysbenchResult(t, out.String())
	if errs != 0 {
		t.Errorf("%d sysbench errors across %d reloads\n%s", errs, reloads, out.String())
	}
	if ignored > 0 {
		// Deadlocks across data sources, retried by sysbench (as in
		// TestSysbenchSmoke).
		t.Logf("%d deadlocks or lock wait timeouts retried", ignored)
	}
	if len(etcdTook) == 0 || reloads < 6 {
		t.Fatalf("only %d reloads in the run", reloads)
	}
	applied, refused := e.srv.Reloads()
	if applied != int64(reloads+1) || refused != 0 {
		t.Errorf("reloads applied %d, refused %d; want %d, 0", applied, refused, reloads+1)
	}
	if got := gathered(t, m, "shardflake_rules_reloads_total", "result", "applied"); got != float64(reloads+1) {
		t.Errorf("shardflake_rules_reloads_total{result=applied} = %v, want %d", got, reloads+1)
	}
	if got := gathered(t, m, "shardflake_rules_info", "digest", e.srv.RulesDigest()); got != 1 {
		t.Errorf("shardflake_rules_info of the digest in force = %v, want 1", got)
	}
	t.Logf("oltp_read_write across %d reloads: %.0f QPS, %d errors, %d retried deadlocks; etcd writes in force after %v", reloads, qps, errs, ignored, etcdTook)
}

// gathered returns the value of metric name's series whose label has
// value; -1 when there is none.
func gathered(t *testing.T, m *metrics.Metrics, name, label, value string) float64 {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, s := range mf.GetMetric() {
			for _, l := range s.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					if c := s.GetCounter(); c != nil {
						return c.GetValue()
					}
					return s.GetGauge().GetValue()
				}
			}
		}
	}
	return -1
}
