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
	"github.com/shardflake/shardflake/proxy/traffic"
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

// rateWindow is one measurement of app's admitted rate: the proxy's own
// count over the time between two reads of it, and the permits the rate
// made that no statement took (the offered load was below the limit).
type rateWindow struct {
	secs, admitted, unused float64
	// whole is the rule's state over the whole sysbench run.
	before, after    traffic.RuleState
	appOut, otherOut string
}

func (w rateWindow) rate() float64 { return w.admitted / w.secs }

// keptUp reports whether the offered load kept the bucket empty: no more
// than 2% of the window's permits went unused. A window where it did not
// measures the machine, not the limit.
func (w rateWindow) keptUp() bool { return w.unused <= 0.02*500*w.secs }

// measureSysbenchRate runs sysbench oltp_point_select for 10 s as app (8
// threads, 1226 ignored) and as other (2 threads at 200/s, no error
// ignored) at once, and measures app's admitted rate from the proxy's counters over 6 s
// that start 1 s after the bucket first refused a statement (its burst is
// spent and every thread is running) and end before sysbench does.
func measureSysbenchRate(t *testing.T, e *testEnv, bin string) rateWindow {
	t.Helper()
	rule := func() traffic.RuleState { return e.srv.traffic.States()[0] }
	w := rateWindow{before: rule()}
	type result struct {
		out string
		err error
	}
	appDone, otherDone := make(chan result, 1), make(chan result, 1)
	go func() {
		// At a steady 200/s: enough to see it untouched, without taking
		// the CPU the proxy needs to offer app's bucket its rate.
		out, err := sysbenchRun(bin, e.addr, "other", "other-secret", 2, "--rate=200")
		otherDone <- result{out, err}
	}()
	go func() {
		out, err := sysbenchRun(bin, e.addr, "app", "app-secret", 8, "--mysql-ignore-errors=1226")
		appDone <- result{out, err}
	}()
	wait := func(d time.Duration) bool {
		select {
		case <-time.After(d):
			return true
		case r := <-appDone:
			appDone <- r
			return false
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for rule().Rejected == w.before.Rejected && time.Now().Before(deadline) {
		if !wait(5 * time.Millisecond) {
			break
		}
	}
	var at [2]time.Time
	var st [2]traffic.RuleState
	ran := wait(time.Second)
	at[0], st[0] = time.Now(), rule()
	ran = ran && wait(6*time.Second)
	at[1], st[1] = time.Now(), rule()
	app, other := <-appDone, <-otherDone
	if app.err != nil {
		t.Fatalf("sysbench as app: %v\n%s", app.err, app.out)
	}
	if other.err != nil {
		t.Fatalf("sysbench as other (no error ignored): %v\n%s", other.err, other.out)
	}
	if !ran {
		t.Fatalf("sysbench as app ended before the 7 s of the measurement (no refusal within 30 s?):\n%s", app.out)
	}
	w.secs = at[1].Sub(at[0]).Seconds()
	w.admitted = float64(st[1].Admitted - st[0].Admitted)
	w.unused = st[1].Unused - st[0].Unused
	w.after, w.appOut, w.otherOut = rule(), app.out, other.out
	return w
}

// TestTrafficSysbenchRate runs sysbench oltp_point_select through the
// proxy as app (8 threads, 1226 ignored and retried) under a 500/s token
// bucket on app's SELECTs (a statement waits up to 10ms for a token, as
// Guava's tryAcquire(1, 10ms), so a client that is not scheduled for a
// moment does not lose its turn; 8 threads want 16ms of tokens at once,
// so some are refused), while user other runs the same workload
// unlimited: app's admitted rate holds 500/s within 5%, and other gets no
// error. On a loaded machine the proxy may not get the CPU to offer the
// bucket 500 statements a second; the bucket then fills and counts the
// tokens nobody took (unused), and such a window is measured once more.
// starvedTries is how many windows a rate test measures at most: a window
// is measured again only when it fell short while its offered load fell
// behind (permits went unused: the machine, not the limit), which on a
// loaded two-core machine can happen several times in a row.
const starvedTries = 4

func TestTrafficSysbenchRate(t *testing.T) {
	bin := mariadbtest.RequireBinary(t, "sysbench")
	e := startEnv(t, envOptions{rules: sysbenchRules(t), server: "traffic:\n" +
		"- {name: app_rate, match: {users: [app], kinds: [select]}, limit: {type: TOKEN_BUCKET, rate: 500, burst: 50}, onLimit: wait, maxWait: 10ms}"})
	sysbench(t, e.addr, "other", "other-secret", "sharding_db", "oltp_common", "cleanup")
	sysbench(t, e.addr, "other", "other-secret", "sharding_db", "oltp_common", "prepare")
	t.Cleanup(func() { sysbench(t, e.addr, "other", "other-secret", "sharding_db", "oltp_common", "cleanup") })

	within5 := func(rate float64) bool { return math.Abs(rate-500)/500 <= 0.05 }
	var w rateWindow
	for try := 1; try <= starvedTries; try++ {
		w = measureSysbenchRate(t, e, bin)
		m := sbTotalTime.FindStringSubmatch(w.appOut)
		if m == nil {
			t.Fatalf("no total time in sysbench's report:\n%s", w.appOut)
		}
		_, ignored, _ := sysbenchResult(t, w.appOut)
		otherErrs, otherIgnored, otherQPS := sysbenchResult(t, w.otherOut)
		t.Logf("try %d: app: %.0f admitted in %.2f s = %.1f/s (limit 500/s), %.0f permits unused; whole run: %d admitted (%d after a wait), %d refused (sysbench ignored %d) in %ss; other: %.0f QPS, %d errors",
			try, w.admitted, w.secs, w.rate(), w.unused, w.after.Admitted-w.before.Admitted, w.after.Delayed-w.before.Delayed,
			w.after.Rejected-w.before.Rejected, ignored, m[1], otherQPS, otherErrs+otherIgnored)
		// The other user shares the proxy's CPU with app's refused
		// retries, so its rate depends on the machine (it asks 200/s);
		// it must see no error at all.
		if otherErrs+otherIgnored != 0 || otherQPS == 0 {
			t.Errorf("other user: %.0f QPS, %d errors; want no error", otherQPS, otherErrs+otherIgnored)
		}
		if ignored == 0 || w.after.Rejected == w.before.Rejected || w.after.Delayed == w.before.Delayed {
			t.Errorf("%d refused (%d ignored), %d delayed: the workload did not reach the limit", w.after.Rejected-w.before.Rejected, ignored, w.after.Delayed-w.before.Delayed)
		}
		// Only a window short of the rate whose offered load fell behind
		// is measured again: one over the rate, or short of it while the
		// load kept up, is the limit's fault.
		if within5(w.rate()) || w.rate() > 500 || w.keptUp() {
			break
		}
		t.Logf("try %d: the offered load fell below the limit (%.0f of %.0f permits unused)", try, w.unused, 500*w.secs)
	}
	if !within5(w.rate()) {
		t.Errorf("admitted %.1f/s (%.0f permits unused), want 500/s within 5%%", w.rate(), w.unused)
	}
}
