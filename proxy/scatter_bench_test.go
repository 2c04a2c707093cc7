package proxy

import (
	"strconv"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// BenchmarkScatterRange measures sysbench's simple range SELECT (oltp
// read_only, --skip_trx=on) through the proxy: a 100-id range on the
// sharding column under the id % 8 layout is a scatter over all 8 data
// nodes, each statement outside a transaction, so every one takes its
// backend connections from the pools and gives them back. The backends
// answer from memory (fakeRangeRows rows per physical table), so what is
// measured is the proxy's own cost per multi-route statement: routing,
// acquisition, fan out, merge. text sends COM_QUERY (sysbench --db-ps-mode=disable),
// prepared COM_STMT_EXECUTE of one statement prepared once (auto).
//
//	go test ./proxy -run XXX -bench BenchmarkScatterRange -benchmem
func BenchmarkScatterRange(b *testing.B) {
	bp := startBenchProxy(b)
	check := func(b *testing.B, rows int, err error) {
		if err != nil {
			b.Fatal(err)
		}
		if rows != 8*fakeRangeRows {
			b.Fatalf("got %d rows, want %d", rows, 8*fakeRangeRows)
		}
	}
	b.Run("text", func(b *testing.B) {
		c := bp.connect(b)
		b.ReportAllocs()
		defer cpuMeter(b)()
		for i := 0; b.Loop(); i++ {
			id := int64(i%benchIDs + 1)
			c.buf = append(c.buf[:0], mysql.COM_QUERY)
			c.buf = append(c.buf, "SELECT c FROM sbtest1 WHERE id BETWEEN "...)
			c.buf = strconv.AppendInt(c.buf, id, 10)
			c.buf = append(c.buf, " AND "...)
			c.buf = strconv.AppendInt(c.buf, id+99, 10)
			rows, err := c.command(c.buf)
			check(b, rows, err)
		}
	})
	b.Run("prepared", func(b *testing.B) {
		c := bp.connect(b)
		id := c.prepare(b, "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?")
		b.ReportAllocs()
		defer cpuMeter(b)()
		for i := 0; b.Loop(); i++ {
			lo := int64(i%benchIDs + 1)
			c.buf = appendExecute(c.buf[:0], id, lo, lo+99)
			rows, err := c.command(c.buf)
			check(b, rows, err)
		}
	})
}
