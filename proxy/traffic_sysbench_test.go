package proxy

import (
	"math"
	"net"
	"os/exec"
	"regexp"
	"strconv"
	"testing"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

var sbTotalTime = regexp.MustCompile(`total time:\s+(\d+(?:\.\d+)?)s`)

// sysbenchRun runs sysbench's oltp_point_select on sbtest1 for 10 s with
// threads threads and the extra args; safe on any goroutine.
func sysbenchRun(bin, addr, user, password string, threads int, args ...string) (string, error) {
	host, port, _ := net.SplitHostPort(addr)
	base := []string{"--db-driver=mysql", "--mysql-host=" + host, "--mysql-port=" + port,
		"--mysql-user=" + user, "--mysql-password=" + password, "--mysql-db=sharding_db",
		"--tables=1", "--table-size=10000", "--auto-inc=off", "--threads=" + strconv.Itoa(threads), "--time=10"}
	out, err := exec.Command(bin, append(append(base, args...), "oltp_point_select", "run")...).CombinedOutput()
	return string(out), err
}

// TestTrafficSysbenchRate runs sysbench oltp_point_select through the
// proxy as app (8 threads, 1226 ignored and retried) under a 500/s token
// bucket on app's SELECTs, while user other runs the same workload
// unlimited: app's admitted rate holds 500/s within 5%, and other gets no
// error and more than app's limit.
func TestTrafficSysbenchRate(t *testing.T) {
	bin := mariadbtest.RequireBinary(t, "sysbench")
	e := startEnv(t, envOptions{rules: sysbenchRules, server: "traffic:\n" +
		"- {name: app_rate, match: {users: [app], kinds: [select]}, limit: {type: TOKEN_BUCKET, rate: 500, burst: 25}}"})
	sysbench(t, e.addr, "other", "other-secret", "sharding_db", "oltp_common", "cleanup")
	sysbench(t, e.addr, "other", "other-secret", "sharding_db", "oltp_common", "prepare")
	t.Cleanup(func() { sysbench(t, e.addr, "other", "other-secret", "sharding_db", "oltp_common", "cleanup") })

	before := e.srv.traffic.States()[0]
	type result struct {
		out string
		err error
	}
	otherDone := make(chan result, 1)
	go func() {
		out, err := sysbenchRun(bin, e.addr, "other", "other-secret", 2)
		otherDone <- result{out, err}
	}()
	out, err := sysbenchRun(bin, e.addr, "app", "app-secret", 8, "--mysql-ignore-errors=1226")
	if err != nil {
		t.Fatalf("sysbench as app: %v\n%s", err, out)
	}
	after := e.srv.traffic.States()[0]
	other := <-otherDone
	if other.err != nil {
		t.Fatalf("sysbench as other (no error ignored): %v\n%s", other.err, other.out)
	}
	m := sbTotalTime.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no total time in sysbench's report:\n%s", out)
	}
	secs, _ := strconv.ParseFloat(m[1], 64)
	admitted := float64(after.Admitted - before.Admitted)
	rate := admitted / secs
	_, ignored, _ := sysbenchResult(t, out)
	otherErrs, otherIgnored, otherQPS := sysbenchResult(t, other.out)
	t.Logf("app: %.0f statements admitted in %.2fs = %.1f/s (limit 500/s), %d refused (sysbench ignored %d); other: %.0f QPS, %d errors",
		admitted, secs, rate, after.Rejected-before.Rejected, ignored, otherQPS, otherErrs+otherIgnored)
	if math.Abs(rate-500)/500 > 0.05 {
		t.Errorf("admitted %.1f/s, want 500/s within 5%%", rate)
	}
	if ignored == 0 || after.Rejected == before.Rejected {
		t.Errorf("nothing refused (%d ignored): the workload did not reach the limit", ignored)
	}
	if otherErrs+otherIgnored != 0 || otherQPS <= 500 {
		t.Errorf("other user: %.0f QPS, %d errors; want no error and more than app's 500/s", otherQPS, otherErrs+otherIgnored)
	}
}
