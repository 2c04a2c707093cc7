//go:build unix

package idgen

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user plus system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measure runs body and reports ids/s over wall time and CPU ns per id
// (sleeping costs no CPU, so at saturation cpu-ns/id is what an id costs,
// clock reading included).
func measure(b *testing.B, idsPerOp int, body func()) {
	b.Helper()
	b.ReportAllocs()
	cpu0, wall0 := cpuTime(b), time.Now()
	b.ResetTimer()
	body()
	b.StopTimer()
	wall, cpu := time.Since(wall0), cpuTime(b)-cpu0
	ids := float64(b.N * idsPerOp)
	b.ReportMetric(ids/wall.Seconds(), "ids/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/ids, "cpu-ns/id")
}

func benchGen(b *testing.B, clock Clock) *Snowflake {
	b.Helper()
	return newTestGen(b, staticConfig(0, 1), clock)
}

// unsaturatedGen is a generator on the system clock whose cap cannot bind:
// 22 sequence bits hold 4M ids per millisecond, far more than one core
// can ask for, so every call takes the unsaturated path (a fresh random
// start per millisecond, then consecutive ids) and ns/op is the CPU cost of
// an id, clock reading included.
func unsaturatedGen(b *testing.B) *Snowflake {
	b.Helper()
	cfg := staticConfig(0, 0)
	cfg.Layout = Layout{TimeBits: 41, SequenceBits: 22, Epoch: DefaultEpoch()}
	return newTestGen(b, cfg, SystemClock())
}

// BenchmarkNext measures one goroutine on the system clock. "saturated"
// uses the default layout: the generator is faster than 4096 ids/ms, so it
// runs at the layout's cap (4.096M ids/s less the random starts of
// borrowed milliseconds) and ids/s is the sustained throughput; run it with
// -benchtime=5s or more. "unsaturated" is unsaturatedGen.
func BenchmarkNext(b *testing.B) {
	b.Run("saturated", func(b *testing.B) {
		g := benchGen(b, SystemClock())
		measure(b, 1, func() {
			for range b.N {
				if _, err := g.Next(); err != nil {
					b.Fatal(err)
				}
			}
		})
		s := g.Stats()
		b.ReportMetric(float64(s.Waited.Microseconds())/1e3/b.Elapsed().Seconds(), "slept-ms/s")
	})
	b.Run("unsaturated", func(b *testing.B) {
		g := unsaturatedGen(b)
		measure(b, 1, func() {
			for range b.N {
				if _, err := g.Next(); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}

// BenchmarkNextParallel is BenchmarkNext with GOMAXPROCS goroutines
// sharing one generator.
func BenchmarkNextParallel(b *testing.B) {
	b.Run("saturated", func(b *testing.B) {
		g := benchGen(b, SystemClock())
		measure(b, 1, func() {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := g.Next(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	})
	b.Run("unsaturated", func(b *testing.B) {
		g := unsaturatedGen(b)
		measure(b, 1, func() {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := g.Next(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	})
}

// BenchmarkNextN10 issues blocks of ten (a ten-row INSERT) at saturation.
func BenchmarkNextN10(b *testing.B) {
	g := benchGen(b, SystemClock())
	measure(b, 10, func() {
		for range b.N {
			if _, err := g.NextN(10); err != nil {
				b.Fatal(err)
			}
		}
	})
}
