package proxy

import (
	"math"
	"net"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"

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
// bucket on app's SELECTs (a statement waits up to 10ms for a token, as
// Guava's tryAcquire(1, 10ms), so a client that is not scheduled for a
// moment does not lose its turn; 8 threads want 16ms of tokens at once,
// so some are refused), while user other runs the same workload
// unlimited: app's admitted rate holds 500/s within 5%, and other gets no
// error.
func TestTrafficSysbenchRate(t *testing.T) {
	bin := mariadbtest.RequireBinary(t, "sysbench")
	e := startEnv(t, envOptions{rules: sysbenchRules, server: "traffic:\n" +
		"- {name: app_rate, match: {users: [app], kinds: [select]}, limit: {type: TOKEN_BUCKET, rate: 500, burst: 50}, onLimit: wait, maxWait: 10ms}"})
	sysbench(t, e.addr, "other", "other-secret", "sharding_db", "oltp_common", "cleanup")
	sysbench(t, e.addr, "other", "other-secret", "sharding_db", "oltp_common", "prepare")
	t.Cleanup(func() { sysbench(t, e.addr, "other", "other-secret", "sharding_db", "oltp_common", "cleanup") })

	before := e.srv.traffic.States()[0]
	// The rate is measured by the proxy's own count over the middle of
	// the run (from 2 s to 9 s), where the bucket's initial burst is
	// spent and sysbench's start and end do not count.
	type sample struct {
		at       time.Time
		admitted uint64
	}
	samples := make(chan [2]sample, 1)
	go func() {
		var s [2]sample
		time.Sleep(2 * time.Second)
		s[0] = sample{time.Now(), e.srv.traffic.States()[0].Admitted}
		time.Sleep(7 * time.Second)
		s[1] = sample{time.Now(), e.srv.traffic.States()[0].Admitted}
		samples <- s
	}()
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
	s := <-samples
	secs := s[1].at.Sub(s[0].at).Seconds()
	admitted := float64(s[1].admitted - s[0].admitted)
	rate := admitted / secs
	m := sbTotalTime.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no total time in sysbench's report:\n%s", out)
	}
	total, _ := strconv.ParseFloat(m[1], 64)
	_, ignored, _ := sysbenchResult(t, out)
	otherErrs, otherIgnored, otherQPS := sysbenchResult(t, other.out)
	t.Logf("app: %.0f admitted from 2 s to 9 s = %.1f/s (limit 500/s); whole run: %d admitted (%d after a wait), %d refused (sysbench ignored %d) in %.2fs; other: %.0f QPS, %d errors",
		admitted, rate, after.Admitted-before.Admitted, after.Delayed-before.Delayed, after.Rejected-before.Rejected, ignored, total, otherQPS, otherErrs+otherIgnored)
	if math.Abs(rate-500)/500 > 0.05 {
		t.Errorf("admitted %.1f/s, want 500/s within 5%%", rate)
	}
	if ignored == 0 || after.Rejected == before.Rejected || after.Delayed == before.Delayed {
		t.Errorf("%d refused (%d ignored), %d delayed: the workload did not reach the limit", after.Rejected-before.Rejected, ignored, after.Delayed-before.Delayed)
	}
	// The other user shares the proxy's CPU with app's refused retries,
	// so its rate depends on the machine; it must see no error at all.
	if otherErrs+otherIgnored != 0 || otherQPS == 0 {
		t.Errorf("other user: %.0f QPS, %d errors; want no error", otherQPS, otherErrs+otherIgnored)
	}
}
