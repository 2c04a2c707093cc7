package proxy

import (
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// BenchmarkReadTransaction measures a short read-only transaction through
// the proxy, as sysbench's oltp_read_only runs them (without its range
// queries): BEGIN, a point SELECT on each data source, COMMIT, as text.
// What the proxy adds to the statements is what opens and ends the
// transaction's part on each data source.
//
//	go test ./proxy -run XXX -bench BenchmarkReadTransaction -benchmem
func BenchmarkReadTransaction(b *testing.B) {
	bp := startBenchProxy(b)
	c := bp.connect(b)
	cmd := func(sql string, want int) {
		c.buf = append(append(c.buf[:0], mysql.COM_QUERY), sql...)
		if rows, err := c.command(c.buf); err != nil || rows != want {
			b.Fatalf("%s: got %d rows, %v", sql, rows, err)
		}
	}
	b.ReportAllocs()
	defer cpuMeter(b)()
	for b.Loop() {
		cmd("BEGIN", -1)
		cmd("SELECT c FROM sbtest1 WHERE id=1", 1) // ds_1
		cmd("SELECT c FROM sbtest1 WHERE id=2", 1) // ds_0
		cmd("COMMIT", -1)
	}
}
