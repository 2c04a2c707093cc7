package proxy

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

var sysbenchDirect = flag.Bool("sysbench.direct", false, "also run the sysbench smoke workloads against one MariaDB directly and log the ratio")

// sysbenchRules returns the rules section that shards sbtest1 by id over
// 2 data sources × 4 tables, the layout bench/sysbench.sh measures
// (bench/sysbench_mod_rules.yaml, which says why Math.abs): oltp_read_write's
// range queries (id BETWEEN ? AND ?) scan every data node.
func sysbenchRules(tb testing.TB) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("..", "bench", "sysbench_mod_rules.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// sysbench runs one sysbench command and returns its output.
func sysbench(t *testing.T, addr, user, password, db string, args ...string) string {
	t.Helper()
	bin := mariadbtest.RequireBinary(t, "sysbench")
	host, port, _ := net.SplitHostPort(addr)
	base := []string{"--db-driver=mysql", "--mysql-host=" + host, "--mysql-port=" + port,
		"--mysql-user=" + user, "--mysql-password=" + password, "--mysql-db=" + db,
		"--tables=1", "--table-size=10000", "--auto-inc=off", "--threads=4"}
	out, err := exec.Command(bin, append(base, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("sysbench %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

var (
	// sbErrors matches an "errors:" line of its own; sysbench 1.0.20 has
	// none (an error that is not ignored ends the run with FATAL and a
	// non-zero exit, which sysbench() fails on), later versions print one.
	sbErrors  = regexp.MustCompile(`(?m)^\s*errors:\s+(\d+)`)
	sbIgnored = regexp.MustCompile(`ignored errors:\s+(\d+)`)
	sbQueries = regexp.MustCompile(`queries:\s+\d+\s+\((\d+(?:\.\d+)?) per sec\.\)`)
)

// sysbenchResult returns errors, ignored errors and QPS of a run's output.
func sysbenchResult(t *testing.T, out string) (errs, ignored int, qps float64) {
	t.Helper()
	m1, m2, m3 := sbErrors.FindStringSubmatch(out), sbIgnored.FindStringSubmatch(out), sbQueries.FindStringSubmatch(out)
	if m2 == nil || m3 == nil {
		t.Fatalf("cannot read sysbench's report:\n%s", out)
	}
	if m1 != nil {
		errs, _ = strconv.Atoi(m1[1])
	}
	ignored, _ = strconv.Atoi(m2[1])
	qps, _ = strconv.ParseFloat(m3[1], 64)
	return errs, ignored, qps
}

// TestSysbenchSmoke runs oltp_point_select, oltp_insert and
// oltp_read_write for 10 s each through the proxy on a sharded sbtest1 (2
// data sources × 4 tables), with server-side prepared statements
// (--db-ps-mode=auto: libmariadb reads each execute's result by the column
// count the prepare announced) and without, plus oltp_read_only with them
// (its range queries scan every data node and merge), and wants zero errors.
// oltp_read_write's transactions span both data sources and can deadlock
// across them, which no single server detects: sysbench counts the lock
// wait timeouts (1205) and deadlocks (1213) as ignored errors, as it does
// on one MariaDB, and retries. The table is created and loaded through the proxy
// with sysbench's own prepare (oltp_common: CREATE TABLE, bulk INSERTs
// split over the data nodes, CREATE INDEX).
func TestSysbenchSmoke(t *testing.T) {
	// A deadlock between the two data sources lasts until a lock wait
	// times out: 2 s instead of MariaDB's 50.
	e := startEnv(t, envOptions{rules: sysbenchRules(t), server: "lockWaitTimeout: 2s"})
	run := func(addr, user, password, db, workload, mode string) float64 {
		t.Helper()
		sysbench(t, addr, user, password, db, "oltp_common", "cleanup")
		prep := "oltp_common"
		if workload == "oltp_insert" {
			prep = "oltp_insert" // empty table: inserts pick their own ids
		}
		sysbench(t, addr, user, password, db, prep, "prepare")
		out := sysbench(t, addr, user, password, db, "--time=10", "--db-ps-mode="+mode, workload, "run")
		errs, ignored, qps := sysbenchResult(t, out)
		if workload == "oltp_read_write" && ignored > 0 {
			// Deadlocks across data sources, retried by sysbench.
			t.Logf("%s %s: %d deadlocks or lock wait timeouts retried", workload, mode, ignored)
			ignored = 0
		}
		if errs != 0 || ignored != 0 {
			t.Errorf("%s %s: %d errors, %d ignored errors\n%s", workload, mode, errs, ignored, out)
		}
		return qps
	}
	for _, tt := range []struct{ workload, mode string }{
		{"oltp_point_select", "auto"}, {"oltp_point_select", "disable"},
		{"oltp_insert", "auto"}, {"oltp_insert", "disable"},
		{"oltp_read_write", "auto"}, {"oltp_read_write", "disable"},
		{"oltp_read_only", "auto"},
	} {
		workload, mode := tt.workload, tt.mode
		{
			t.Run(workload+"/"+mode, func(t *testing.T) {
				qps := run(e.addr, "app", "app-secret", "sharding_db", workload, mode)
				rows := 0
				for i := range e.backends {
					for j := range 4 {
						var n int
						if err := e.backend(t, i).QueryRow(fmt.Sprintf("SELECT COUNT(*) FROM sbtest1_%d", j)).Scan(&n); err != nil {
							t.Fatal(err)
						}
						if n == 0 {
							t.Errorf("ds_%d.sbtest1_%d is empty", i, j)
						}
						rows += n
					}
				}
				msg := fmt.Sprintf("%s %s through the proxy: %.0f QPS (%d rows over 8 data nodes)", workload, mode, qps, rows)
				if *sysbenchDirect {
					direct := run(e.backends[0].Addr(), "root", "", "ds_0", workload, mode)
					msg += fmt.Sprintf("; direct on one MariaDB: %.0f QPS; ratio %.2f", direct, qps/direct)
				}
				t.Log(msg)
			})
		}
	}
	sysbench(t, e.addr, "app", "app-secret", "sharding_db", "oltp_common", "cleanup")
}
