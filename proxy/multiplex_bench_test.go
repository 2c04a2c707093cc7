package proxy

import (
	"runtime"
	"syscall"
	"testing"
)

// switchMeter reports the process's context switches (voluntary and
// involuntary, getrusage) per iteration as csw/op: a thread that sleeps
// for want of a runnable goroutine (a wake-up to wait for) switches.
func switchMeter(b *testing.B) (report func()) {
	b.Helper()
	count := func() int64 {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			b.Fatal(err)
		}
		return ru.Nvcsw + ru.Nivcsw
	}
	start := count()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(count()-start)/float64(b.N), "csw/op")
		}
	}
}

// BenchmarkPointSelectMux measures point selects of 8 concurrent clients
// (sysbench --threads=8) with server.multiplex off and on, as text
// (--db-ps-mode=disable) and prepared (auto): on, they share 2 backend
// connections per data source.
//
//	go test ./proxy -run XXX -bench BenchmarkPointSelectMux -benchmem
func BenchmarkPointSelectMux(b *testing.B) {
	for _, mux := range []string{"off", "on"} {
		bp := startBenchProxyWith(b, "  multiplex: "+mux+"\n  multiplexConnections: 2\n")
		for _, prepared := range []bool{false, true} {
			name := "mux-" + mux + "/text"
			if prepared {
				name = "mux-" + mux + "/prepared"
			}
			b.Run(name, func(b *testing.B) {
				par := (8 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0)
				clients := make(chan *rawClient, par*runtime.GOMAXPROCS(0))
				for range cap(clients) {
					c := bp.connect(b)
					if prepared {
						c.prepare(b, "SELECT c FROM sbtest1 WHERE id=?")
					}
					clients <- c
				}
				b.ReportAllocs()
				defer cpuMeter(b)()
				defer switchMeter(b)()
				b.SetParallelism(par)
				b.RunParallel(func(pb *testing.PB) {
					c := <-clients
					defer func() { clients <- c }()
					for i := 0; pb.Next(); i++ {
						p := c.query(int64(i%benchIDs + 1))
						if prepared {
							c.buf = appendExecute(c.buf[:0], 1, int64(i%benchIDs+1))
							p = c.buf
						}
						if rows, err := c.command(p); err != nil || rows != 1 {
							b.Errorf("got %d rows, %v", rows, err)
							return
						}
					}
				})
			})
		}
	}
}
