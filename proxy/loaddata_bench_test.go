package proxy

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/proxy/keygen"
)

// BenchmarkLoadDataSharded loads a file of SHARDFLAKE_LOAD_ROWS rows
// (1,000,000 by default) with LOAD DATA LOCAL INFILE directly into one
// MariaDB table and, in the same run, through the proxy into sharded
// table t_ld (two data sources, four physical tables, keys generated),
// and reports rows/s of each, the ratio, and the peak Go heap and peak
// RSS of the process while the proxy loads: the proxy streams the file,
// so memory stays bounded by its batches, not by the file.
//
//	go test -run '^$' -bench BenchmarkLoadDataSharded -benchtime 1x ./proxy/
func BenchmarkLoadDataSharded(b *testing.B) {
	lines := 1000000
	if v, err := strconv.Atoi(os.Getenv("SHARDFLAKE_LOAD_ROWS")); err == nil && v > 0 {
		lines = v
	}
	backends := sharedServers(b)[:2]
	path := filepath.Join(b.TempDir(), "rows.csv")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := range lines {
		fmt.Fprintf(w, "%d,name%d,%d,\"some text, row %d\"\n", i, i%1000, i, i)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	st, _ := os.Stat(path)
	load := fmt.Sprintf("LOAD DATA LOCAL INFILE '%s' INTO TABLE t_ld FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' (user_id, name, n, note)", path)

	rules, err := config.Parse([]byte(rulesYAML(backends, "", loadRules)), "bench-rules.yaml")
	if err != nil {
		b.Fatal(err)
	}
	keys, closeKeys, err := keygen.Open(context.Background(), rules)
	if err != nil {
		b.Fatal(err)
	}
	defer closeKeys()
	srv, err := New(Config{Rules: rules, Keys: keys, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	defer func() {
		srv.Close()
		<-done
	}()
	backends[0].Exec(b, "", "CREATE DATABASE IF NOT EXISTS ldbench")
	rates := map[string]float64{}
	for _, side := range []struct{ name, dsn, key string }{
		{"direct", backends[0].DSN("ldbench") + "&allowAllFiles=true", " AUTO_INCREMENT"},
		{"proxy", "app:app-secret@tcp(" + l.Addr().String() + ")/sharding_db?allowAllFiles=true", ""},
	} {
		b.Run(side.name, func(b *testing.B) {
			db, err := sql.Open("mysql", side.dsn)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			for range b.N {
				b.StopTimer()
				for _, q := range []string{"DROP TABLE IF EXISTS t_ld", "CREATE TABLE t_ld " + fmt.Sprintf(loadTable, side.key)} {
					if _, err := db.Exec(q); err != nil {
						b.Fatal(err)
					}
				}
				runtime.GC()
				stop := sampleHeap()
				b.StartTimer()
				res, err := db.Exec(load)
				b.StopTimer()
				peak := stop()
				if err != nil {
					b.Fatal(err)
				}
				if n, _ := res.RowsAffected(); n != int64(lines) {
					b.Fatalf("%d rows", n)
				}
				if side.name == "proxy" {
					b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
				}
				b.StartTimer()
			}
			rate := float64(lines) * float64(b.N) / b.Elapsed().Seconds()
			rates[side.name] = rate
			b.ReportMetric(rate, "rows/s")
			b.ReportMetric(0, "ns/op")
			db.Exec("DROP TABLE IF EXISTS t_ld")
		})
	}
	if rates["direct"] > 0 {
		b.Logf("%d rows (%d MB file): direct %.0f rows/s, proxy %.0f rows/s (%.2fx of direct); process peak RSS %s",
			lines, st.Size()>>20, rates["direct"], rates["proxy"], rates["proxy"]/rates["direct"], peakRSS())
	}
}

// sampleHeap samples the Go heap in use every 5ms until stop, which
// returns the peak.
func sampleHeap() (stop func() uint64) {
	var peak atomic.Uint64
	quit := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var ms runtime.MemStats
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-quit:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(quit)
		<-finished
		return peak.Load()
	}
}

// peakRSS is the process's VmHWM from /proc, "" where there is none.
func peakRSS() string {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
