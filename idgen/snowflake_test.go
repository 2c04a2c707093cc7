package idgen

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// t0 is where fake clocks start: a fixed, ordinary instant.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func newTestGen(t testing.TB, cfg Config, clock Clock, opts ...Option) *Snowflake {
	t.Helper()
	g, err := New(context.Background(), cfg, append([]Option{WithClock(clock), WithSeed(1, 2)}, opts...)...)
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

func staticConfig(dc, worker int) Config {
	c := DefaultConfig()
	c.DatacenterID, c.WorkerID = dc, worker
	return c
}

// burst is the outcome of several goroutines calling Next at once.
type burst struct {
	ids  [][]int64 // per goroutine, in the order it got them
	errs []error
}

// issueConcurrently has each of goroutines call Next perG times (stopping at
// its first error) and checks that every goroutine's ids increase and that
// no id repeats, within the burst or with earlier ones in seen.
func issueConcurrently(t *testing.T, g *Snowflake, goroutines, perG int, seen map[int64]bool) burst {
	t.Helper()
	b := burst{ids: make([][]int64, goroutines), errs: make([]error, goroutines)}
	var wg sync.WaitGroup
	for i := range goroutines {
		wg.Go(func() {
			for range perG {
				id, err := g.Next()
				if err != nil {
					b.errs[i] = err
					return
				}
				b.ids[i] = append(b.ids[i], id)
			}
		})
	}
	wg.Wait()
	for i, ids := range b.ids {
		for j, id := range ids {
			if j > 0 && id <= ids[j-1] {
				t.Fatalf("goroutine %d: id %d after %d, not increasing", i, id, ids[j-1])
			}
			if seen[id] {
				t.Fatalf("goroutine %d: duplicate id %d", i, id)
			}
			seen[id] = true
		}
	}
	return b
}

func (b burst) max() int64 {
	var m int64 = -1
	for _, ids := range b.ids {
		if len(ids) > 0 {
			m = max(m, ids[len(ids)-1])
		}
	}
	return m
}

func (b burst) min() int64 {
	var m int64 = 1<<63 - 1
	for _, ids := range b.ids {
		if len(ids) > 0 {
			m = min(m, ids[0])
		}
	}
	return m
}

func (b burst) count() int {
	n := 0
	for _, ids := range b.ids {
		n += len(ids)
	}
	return n
}

func mustDecode(t testing.TB, id int64) Parts {
	t.Helper()
	p, err := Decode(id)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConcurrentUniqueAndStrictlyOrdered(t *testing.T) {
	// One id per 20 clock reads: a few hundred per millisecond, some
	// milliseconds run out, so fresh, continued and borrowed milliseconds
	// all occur.
	clock := newTickClock(t0, 20, time.Millisecond)
	g := newTestGen(t, staticConfig(3, 17), clock)

	seen := map[int64]bool{}
	b := issueConcurrently(t, g, 8, 5000, seen)
	for _, err := range b.errs {
		if err != nil {
			t.Fatalf("Next() error = %v", err)
		}
	}

	// Issue order is the generator's lock order; record it under a lock of
	// our own and check the ids strictly increase in it.
	var mu sync.Mutex
	var order []int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 2000 {
				mu.Lock()
				id, err := g.Next()
				if err == nil {
					order = append(order, id)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(order) != 16000 {
		t.Fatalf("got %d ids, want 16000", len(order))
	}
	if order[0] <= b.max() {
		t.Errorf("first id of the second burst %d is not above the first burst's max %d", order[0], b.max())
	}
	for i := 1; i < len(order); i++ {
		if order[i] <= order[i-1] {
			t.Fatalf("issue order: id %d after %d", order[i], order[i-1])
		}
	}
	for _, id := range order {
		p := mustDecode(t, id)
		if p.Datacenter != 3 || p.Worker != 17 {
			t.Fatalf("id %d decodes to datacenter %d worker %d, want 3 17", id, p.Datacenter, p.Worker)
		}
	}
	s := g.Stats()
	if s.Generated != 56000 || s.LastID != order[len(order)-1] {
		t.Errorf("Stats() Generated %d LastID %d, want 56000 %d", s.Generated, s.LastID, order[len(order)-1])
	}
}

func TestClockBackSteps(t *testing.T) {
	tests := []struct {
		name      string
		give      time.Duration
		wantError bool
	}{
		{name: "1ms", give: time.Millisecond},
		{name: "10ms at the tolerance", give: 10 * time.Millisecond},
		{name: "10s", give: 10 * time.Second, wantError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newFakeClock(t0)
			g := newTestGen(t, staticConfig(0, 1), clock)
			seen := map[int64]bool{}

			// Fill a few milliseconds, then read the clock at t0+50ms.
			issueConcurrently(t, g, 4, 3000, seen)
			clock.Set(t0.Add(50 * time.Millisecond))
			before := issueConcurrently(t, g, 4, 100, seen)
			lastMs := mustDecode(t, before.max()).Millis

			clock.Set(t0.Add(50*time.Millisecond - tt.give))
			after := issueConcurrently(t, g, 4, 5000, seen)
			s := g.Stats()
			if s.ClockBackSteps != 1 {
				t.Errorf("ClockBackSteps = %d, want 1", s.ClockBackSteps)
			}
			if !tt.wantError {
				for _, err := range after.errs {
					if err != nil {
						t.Fatalf("Next() after a %s back-step: %v", tt.give, err)
					}
				}
				if after.min() <= before.max() {
					t.Fatalf("id %d after the back-step is not above %d", after.min(), before.max())
				}
				// Riding it out keeps issuing at the last millisecond and
				// beyond, never at the stepped-back time.
				if ms := mustDecode(t, after.min()).Millis; ms < lastMs {
					t.Errorf("first id after the back-step is at ms %d, before the last %d", ms, lastMs)
				}
				// 20000 ids need about 5 borrowed milliseconds on top of the
				// step back: the lead stays within its bound, and any wait
				// is brief (at most the step plus the max lead).
				// (Four goroutines may sleep at once; the fake clock adds up
				// their sleeps.)
				if _, slept := clock.Sleeps(); s.Lead > s.MaxLead || slept > 4*(tt.give+s.MaxLead) {
					t.Errorf("lead %s (max %s), slept %s: want the lead bounded and a brief wait", s.Lead, s.MaxLead, slept)
				}
				return
			}
			for i, err := range after.errs {
				var cb *ClockBackwardsError
				if !errors.As(err, &cb) || !errors.Is(err, ErrClockMovedBackwards) {
					t.Fatalf("goroutine %d: error = %v, want *ClockBackwardsError", i, err)
				}
				if cb.Drift != tt.give || cb.HighWater || !cb.ResumeAt.Equal(t0.Add(40*time.Millisecond)) {
					t.Errorf("error = %+v, want drift %s resuming at t0+40ms", cb, tt.give)
				}
			}
			if after.count() != 0 {
				t.Fatalf("%d ids issued with the clock %s back", after.count(), tt.give)
			}
			// Recovers by itself once the clock is within the tolerance.
			clock.Set(t0.Add(40 * time.Millisecond))
			resumed := issueConcurrently(t, g, 4, 100, seen)
			for _, err := range resumed.errs {
				if err != nil {
					t.Fatalf("Next() once the clock caught up: %v", err)
				}
			}
			if resumed.min() <= before.max() {
				t.Errorf("id %d after recovery is not above %d", resumed.min(), before.max())
			}
		})
	}
}

func TestFrozenClock(t *testing.T) {
	clock := newFakeClock(t0)
	clock.Freeze(true)
	g := newTestGen(t, staticConfig(0, 0), clock)
	seen := map[int64]bool{}
	// More than 11 ms hold, so every goroutine runs into the stall.
	b := issueConcurrently(t, g, 4, 50000, seen)
	for i, err := range b.errs {
		if !errors.Is(err, ErrClockStalled) {
			t.Fatalf("goroutine %d: error = %v, want ErrClockStalled", i, err)
		}
	}
	// It used the current millisecond and borrowed up to the max lead
	// (10 ms), each borrowed one starting below 32, then gave up.
	first, last := mustDecode(t, b.min()), mustDecode(t, b.max())
	if got := last.Millis - first.Millis; got != 10 {
		t.Errorf("ids span %d ms, want the 10 ms max lead", got)
	}
	if n := b.count(); n < 96+10*(4096-32) || n > 11*4096 {
		t.Errorf("issued %d ids on a frozen clock, want about 11 ms worth", n)
	}
	if s := g.Stats(); s.Lead != 10*time.Millisecond {
		t.Errorf("Stats().Lead = %s, want 10ms", s.Lead)
	}
	clock.Freeze(false)
	clock.Advance(time.Millisecond)
	resumed := issueConcurrently(t, g, 4, 10, seen)
	if resumed.count() != 40 || resumed.min() <= b.max() {
		t.Errorf("after the clock moved again: %d ids, first %d, want 40 above %d (errors %v)", resumed.count(), resumed.min(), b.max(), resumed.errs)
	}
}

func TestLeapForward(t *testing.T) {
	clock := newFakeClock(t0)
	g := newTestGen(t, staticConfig(1, 1), clock)
	seen := map[int64]bool{}
	before := issueConcurrently(t, g, 4, 1000, seen)
	clock.Advance(time.Hour)
	after := issueConcurrently(t, g, 4, 1000, seen)
	for _, err := range append(before.errs, after.errs...) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if after.min() <= before.max() {
		t.Errorf("id %d after the leap is not above %d", after.min(), before.max())
	}
	if got := mustDecode(t, after.min()).Time; !got.Equal(t0.Add(time.Hour)) {
		t.Errorf("first id after the leap is at %s, want %s", got, t0.Add(time.Hour))
	}
	if s := g.Stats(); s.ClockBackSteps != 0 || s.Waited != 0 {
		t.Errorf("a leap forward counted %d back-steps and waited %s", s.ClockBackSteps, s.Waited)
	}
}

func TestSequenceExhaustionBorrowsWithinMaxLead(t *testing.T) {
	// The clock moves only when the generator sleeps: pure saturation. One
	// goroutine, so the fake clock's time is exactly the time slept (with
	// several, their sleeps would add up on the fake clock though they
	// overlap in reality).
	clock := newFakeClock(t0)
	g := newTestGen(t, staticConfig(0, 0), clock)
	perMs := map[int64]int{}
	var first, prev int64 = -1, -1
	for range 200000 {
		id := nextOK(t, g)
		if first < 0 {
			first = id
		}
		if id <= prev {
			t.Fatalf("id %d after %d", id, prev)
		}
		prev = id
		p := mustDecode(t, id)
		perMs[p.Millis]++
		if lead := p.Time.Sub(clock.Now()); lead > 10*time.Millisecond {
			t.Fatalf("id at %s, %s ahead of the clock: beyond the 10 ms max lead", p.Time, lead)
		}
	}
	firstMs, lastMs := mustDecode(t, first).Millis, mustDecode(t, prev).Millis
	if lastMs-firstMs < 48 {
		t.Fatalf("200000 ids span %d ms, want at least 48", lastMs-firstMs)
	}
	for ms := firstMs + 1; ms < lastMs; ms++ {
		// Borrowed milliseconds start below 32 and run to the end.
		if perMs[ms] < 4096-32 {
			t.Errorf("borrowed ms %d holds %d ids, want at least %d", ms-firstMs, perMs[ms], 4096-32)
		}
	}
	// 200000 ids need about 49 ms; the sleeps were hysteresis-sized (lead
	// back to 5 ms), not one millisecond at a time.
	n, slept := clock.Sleeps()
	if n == 0 || slept/time.Duration(n) < 4*time.Millisecond {
		t.Errorf("%d sleeps totalling %s: want few sleeps of about 5 ms", n, slept)
	}
	if s := g.Stats(); s.Lead > s.MaxLead || s.Waited != slept {
		t.Errorf("Stats() lead %s (max %s) waited %s, want lead within max and waited %s", s.Lead, s.MaxLead, s.Waited, slept)
	}
}

func TestSequenceExhaustionConcurrent(t *testing.T) {
	clock := newFakeClock(t0)
	g := newTestGen(t, staticConfig(0, 0), clock)
	b := issueConcurrently(t, g, 4, 50000, map[int64]bool{})
	for _, err := range b.errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if b.count() != 200000 {
		t.Fatalf("issued %d ids, want 200000", b.count())
	}
	if s := g.Stats(); s.Lead > s.MaxLead || s.Generated != 200000 {
		t.Errorf("Stats() lead %s (max %s), generated %d; want the lead within max and 200000", s.Lead, s.MaxLead, s.Generated)
	}
}

func TestHorizon(t *testing.T) {
	cfg := staticConfig(0, 0)
	horizon := cfg.Layout.Horizon()
	clock := newFakeClock(horizon)
	clock.Freeze(true)
	g := newTestGen(t, cfg, clock)
	seen := map[int64]bool{}
	b := issueConcurrently(t, g, 4, 5000, seen)
	for i, err := range b.errs {
		var he *HorizonError
		if !errors.As(err, &he) || !errors.Is(err, ErrHorizonExceeded) || !he.Horizon.Equal(horizon) {
			t.Fatalf("goroutine %d: error = %v, want *HorizonError at %s", i, err, horizon)
		}
	}
	// The last millisecond is usable, the one after is not.
	if b.count() == 0 || mustDecode(t, b.max()).Millis != cfg.Layout.MaxMillis() {
		t.Errorf("issued %d ids up to %v, want the horizon millisecond used", b.count(), mustDecode(t, b.max()))
	}
	if b.max() < 0 {
		t.Errorf("negative id %d at the horizon", b.max())
	}
	clock.Set(horizon.Add(time.Hour))
	if _, err := g.Next(); !errors.Is(err, ErrHorizonExceeded) {
		t.Errorf("Next() past the horizon error = %v, want ErrHorizonExceeded", err)
	}
}

func TestBeforeEpoch(t *testing.T) {
	g := newTestGen(t, staticConfig(0, 0), newFakeClock(DefaultEpoch().Add(-time.Millisecond)))
	if _, err := g.Next(); !errors.Is(err, ErrBeforeEpoch) {
		t.Errorf("Next() error = %v, want ErrBeforeEpoch", err)
	}
}

func TestNextNBatches(t *testing.T) {
	clock := newTickClock(t0, 3, time.Millisecond)
	g := newTestGen(t, staticConfig(2, 5), clock)
	if g.MaxBatch() != 4096 {
		t.Fatalf("MaxBatch() = %d, want 4096", g.MaxBatch())
	}
	var prevLast int64 = -1
	for _, n := range []int{1, 3, 97, 98, 500, 4000, 4096, 2, 4096, 7} {
		first, err := g.NextN(n)
		if err != nil {
			t.Fatalf("NextN(%d) error = %v", n, err)
		}
		last := first + int64(n) - 1
		pf, pl := mustDecode(t, first), mustDecode(t, last)
		if pf.Millis != pl.Millis || pf.Datacenter != 2 || pl.Worker != 5 || pl.Sequence != pf.Sequence+n-1 {
			t.Errorf("NextN(%d) = %d..%d: %+v .. %+v, want one millisecond, consecutive sequence", n, first, last, pf, pl)
		}
		if first <= prevLast {
			t.Errorf("NextN(%d) first %d is not above the previous block's last %d", n, first, prevLast)
		}
		prevLast = last
	}
	for _, n := range []int{0, -1, 4097} {
		_, err := g.NextN(n)
		var be *BatchSizeError
		if !errors.As(err, &be) || !errors.Is(err, ErrBatchTooLarge) || be.Max != 4096 {
			t.Errorf("NextN(%d) error = %v, want *BatchSizeError max 4096", n, err)
		}
	}
	if s := g.Stats(); s.LastID != prevLast {
		t.Errorf("Stats().LastID = %d, want %d", s.LastID, prevLast)
	}
}

func TestClose(t *testing.T) {
	g := newTestGen(t, staticConfig(0, 0), newFakeClock(t0))
	if _, err := g.Next(); err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Next(); !errors.Is(err, ErrClosed) {
		t.Errorf("Next() after Close error = %v, want ErrClosed", err)
	}
	if err := g.Close(); err != nil {
		t.Errorf("second Close() = %v", err)
	}
}

func TestSeedsDiffer(t *testing.T) {
	// Without WithSeed every generator draws its own starts, so two
	// generators with the same clock do not move in lockstep.
	starts := func() []int {
		g, err := New(context.Background(), staticConfig(0, 0), WithClock(newTickClock(t0, 1, time.Millisecond)))
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		var out []int
		for range 20 {
			id, err := g.Next()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, mustDecode(t, id).Sequence)
		}
		return out
	}
	if a, b := starts(), starts(); slices.Equal(a, b) {
		t.Errorf("two generators drew the same 20 starts %v", a)
	}
}
