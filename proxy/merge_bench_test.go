package proxy

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// The scatter benchmarks stream a SELECT over 1,000,000 rows sharded over
// 2 data sources x 4 tables (databases mb_0, mb_1 on the shared servers)
// through the proxy running as its own process (the built binary,
// shardflake serve), so that its memory is measured from
// /proc/PID/status: VmHWM (peak resident set) minus the VmRSS it had idle
// after start-up and one small scatter query. The same query on an
// unsharded copy (mb_ref.t_big) directly on a MariaDB gives the ratio.
//
//	go test -run '^$' -bench 'Scatter' -benchtime 3x ./proxy/

const benchRows = 1_000_000

const benchTable = `(
  id BIGINT NOT NULL PRIMARY KEY,
  user_id INT NOT NULL,
  note VARCHAR(32) NOT NULL,
  amount DECIMAL(12,2) NOT NULL
)`

var benchLoad struct {
	once sync.Once
	err  error
}

// loadBenchTables fills the physical tables directly on the backends
// (server-side INSERT ... SELECT from the sequence engine), not through
// the proxy.
func loadBenchTables(b *testing.B, backends []*mariadbtest.Server) {
	b.Helper()
	benchLoad.once.Do(func() {
		rows := func(where string) string {
			return fmt.Sprintf("SELECT seq, seq %% 1000, CONCAT('note-', seq %% 977), (seq %% 100003) / 100 FROM seq_0_to_%d WHERE %s", benchRows-1, where)
		}
		run := func(s *mariadbtest.Server, stmts ...string) error {
			db, err := s.DB("mysql") // any database: the sequence tables need one

			if err != nil {
				return err
			}
			defer db.Close()
			for _, q := range stmts {
				if _, err := db.Exec(q); err != nil {
					return fmt.Errorf("%s: %w", q, err)
				}
			}
			return nil
		}
		for ds := range 2 {
			stmts := []string{fmt.Sprintf("DROP DATABASE IF EXISTS mb_%d", ds), fmt.Sprintf("CREATE DATABASE mb_%d", ds)}
			for t := range 4 {
				name := fmt.Sprintf("mb_%d.t_big_%d", ds, t)
				stmts = append(stmts, "CREATE TABLE "+name+" "+benchTable,
					fmt.Sprintf("INSERT INTO %s %s", name, rows(fmt.Sprintf("seq %% 1000 %% 2 = %d AND seq %% 4 = %d", ds, t))))
			}
			if benchLoad.err = run(backends[ds], stmts...); benchLoad.err != nil {
				return
			}
		}
		benchLoad.err = run(backends[0], "DROP DATABASE IF EXISTS mb_ref", "CREATE DATABASE mb_ref",
			"CREATE TABLE mb_ref.t_big "+benchTable, "INSERT INTO mb_ref.t_big "+rows("1"))
	})
	if benchLoad.err != nil {
		b.Fatal(benchLoad.err)
	}
}

// proxyProcess is shardflake serve running as a child process.
type proxyProcess struct {
	cmd  *exec.Cmd
	addr string
	db   *sql.DB
}

func freeAddr(b *testing.B) string {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startProxyProcess builds the binary and serves the benchmark rules.
func startProxyProcess(b *testing.B, backends []*mariadbtest.Server) *proxyProcess {
	b.Helper()
	dir := b.TempDir()
	bin := filepath.Join(dir, "shardflake")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/shardflake/shardflake/cmd/shardflake").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	var ds strings.Builder
	for i, s := range backends[:2] {
		fmt.Fprintf(&ds, "  ds_%d: { url: \"jdbc:mysql://%s/mb_%d\", username: root, password: \"\", maxPoolSize: 16 }\n", i, s.Addr(), i)
	}
	addr := freeAddr(b)
	rules := fmt.Sprintf(`databaseName: bench_db
server:
  listen: %s
  users:
    - { user: app, password: app-secret }
dataSources:
%srules:
  - !SHARDING
    tables:
      t_big:
        actualDataNodes: ds_${0..1}.t_big_${0..3}
        databaseStrategy: { standard: { shardingColumn: user_id, shardingAlgorithmName: user_db } }
        tableStrategy: { standard: { shardingColumn: id, shardingAlgorithmName: id_table } }
    shardingAlgorithms:
      user_db:  { type: INLINE, props: { algorithm-expression: "ds_${user_id %% 2}" } }
      id_table: { type: INLINE, props: { algorithm-expression: "t_big_${id %% 4}" } }
`, addr, ds.String())
	file := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(file, []byte(rules), 0o600); err != nil {
		b.Fatal(err)
	}
	p := &proxyProcess{cmd: exec.Command(bin, "serve", "--config", file), addr: addr}
	p.cmd.Stderr = os.Stderr
	if err := p.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		p.cmd.Process.Signal(os.Interrupt)
		p.cmd.Wait()
	})
	cfg := gomysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = "app", "app-secret", "tcp", addr, "bench_db"
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	deadline := time.Now().Add(30 * time.Second)
	for db.Ping() != nil {
		if time.Now().After(deadline) {
			b.Fatalf("the proxy at %s did not come up", addr)
		}
		time.Sleep(20 * time.Millisecond) // polling a child process's start
	}
	p.db = db
	return p
}

// memStatus returns VmRSS and VmHWM of a process in bytes.
func memStatus(b *testing.B, pid int) (rss, hwm int64) {
	b.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(fields[1], 10, 64)
		switch fields[0] {
		case "VmRSS:":
			rss = kb << 10
		case "VmHWM:":
			hwm = kb << 10
		}
	}
	return rss, hwm
}

// drainRows runs q and reads every row, returning how many.
func drainRows(b *testing.B, db *sql.DB, q string) int {
	b.Helper()
	rows, err := db.QueryContext(context.Background(), q)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			b.Fatal(err)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	return n
}

// benchScatter measures q through the proxy process and qDirect on the
// unsharded table directly; scanned is the rows the data nodes return
// for one run (what rows/s counts), want the rows the client gets.
func benchScatter(b *testing.B, q, qDirect string, scanned, want int) {
	backends := sharedServers(b)
	loadBenchTables(b, backends)
	p := startProxyProcess(b, backends)
	// Idle: started, connected, one small scatter query done.
	if n := drainRows(b, p.db, "SELECT id FROM t_big ORDER BY id LIMIT 5"); n != 5 {
		b.Fatalf("warm-up returned %d rows", n)
	}
	idle, idleHWM := memStatus(b, p.cmd.Process.Pid)
	direct := backends[0].Open(b, "mb_ref")

	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if n := drainRows(b, p.db, q); n != want {
			b.Fatalf("got %d rows, want %d", n, want)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	_, hwm := memStatus(b, p.cmd.Process.Pid)

	directStart := time.Now()
	for range b.N {
		if n := drainRows(b, direct, qDirect); n != want {
			b.Fatalf("direct: got %d rows, want %d", n, want)
		}
	}
	directElapsed := time.Since(directStart)

	rate := float64(scanned) * float64(b.N) / elapsed.Seconds()
	directRate := float64(scanned) * float64(b.N) / directElapsed.Seconds()
	above := float64(hwm-idle) / (1 << 20)
	b.ReportMetric(rate, "rows/s")
	b.ReportMetric(directRate, "direct-rows/s")
	b.ReportMetric(rate/directRate, "ratio")
	b.ReportMetric(above, "MiB-peak-above-idle")
	b.ReportMetric(float64(idle)/(1<<20), "MiB-idle")
	b.Logf("%s: %.0f rows/s through the proxy, %.0f rows/s direct (ratio %.2f); proxy RSS idle %.1f MiB (peak so far %.1f), peak after %.1f MiB (%.1f MiB above idle)",
		q, rate, directRate, rate/directRate, float64(idle)/(1<<20), float64(idleHWM)/(1<<20), float64(hwm)/(1<<20), above)
	if above >= 64 {
		b.Errorf("the proxy's peak RSS was %.1f MiB above idle, want under 64 MiB", above)
	}
}

// BenchmarkScatterStream streams every row of the sharded table.
func BenchmarkScatterStream(b *testing.B) {
	benchScatter(b, "SELECT id, user_id, note, amount FROM t_big", "SELECT id, user_id, note, amount FROM t_big", benchRows, benchRows)
}

// BenchmarkScatterDeepPage pages deep into an ordered scatter: every data
// node returns up to 900,010 rows (here all of its 125,000), the k-way
// merge skips 900,000 and returns 10.
func BenchmarkScatterDeepPage(b *testing.B) {
	q := "SELECT id, note FROM t_big ORDER BY id LIMIT 10 OFFSET 900000"
	benchScatter(b, q, q, benchRows, 10)
}
