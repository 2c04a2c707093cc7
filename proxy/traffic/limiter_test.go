package traffic

import (
	"context"
	"errors"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardflake/shardflake/config"
)

func mustLimiter(t *testing.T, l config.TrafficLimit, c Clock) Limiter {
	t.Helper()
	lim, err := NewLimiter(l, c)
	if err != nil {
		t.Fatal(err)
	}
	return lim
}

// offer tries one permit without waiting every step for d and returns
// the times the limiter admitted one.
func offer(t *testing.T, c *fakeClock, l Limiter, step, d time.Duration) []time.Time {
	t.Helper()
	var got []time.Time
	for end := c.Now().Add(d); c.Now().Before(end); c.Advance(step) {
		if _, err := l.Acquire(context.Background(), 1, 0); err == nil {
			got = append(got, c.Now())
		} else if !errors.Is(err, ErrLimited) {
			t.Fatalf("Acquire: %v", err)
		}
	}
	return got
}

// maxIn is the most admissions any interval of length span holds.
func maxIn(times []time.Time, span time.Duration) int {
	best, j := 0, 0
	for i := range times {
		for times[i].Sub(times[j]) >= span {
			j++
		}
		best = max(best, i-j+1)
	}
	return best
}

func countIn(times []time.Time, from, to time.Time) int {
	n := 0
	for _, at := range times {
		if !at.Before(from) && at.Before(to) {
			n++
		}
	}
	return n
}

func TestTokenBucketBurstThenRate(t *testing.T) {
	c := newFakeClock()
	l := mustLimiter(t, config.TrafficLimit{Type: "TOKEN_BUCKET", Rate: 100, Burst: 20}, c)
	start := c.Now()
	// 25 at once: the full bucket passes.
	burst := 0
	for range 25 {
		if _, err := l.Acquire(context.Background(), 1, 0); err == nil {
			burst++
		}
	}
	if burst != 20 {
		t.Errorf("25 at once admitted %d, want the burst 20", burst)
	}
	// Offered every 100µs (10,000/s) for 3s: the rate.
	got := offer(t, c, l, 100*time.Microsecond, 3*time.Second)
	for s := 1; s < 3; s++ {
		from := start.Add(time.Duration(s) * time.Second)
		if n := countIn(got, from, from.Add(time.Second)); n < 99 || n > 101 {
			t.Errorf("second %d admitted %d, want 100 (the rate)", s, n)
		}
	}
	// A quiet second refills the bucket to its burst, not beyond.
	c.Advance(time.Second)
	got = offer(t, c, l, 10*time.Microsecond, time.Millisecond)
	if len(got) != 20 {
		t.Errorf("after a quiet second %d admitted at once, want the burst 20", len(got))
	}
	if s := l.State(); s.Available > 1 {
		t.Errorf("state after the burst: %+v, want about 0 available", s)
	}
}

// TestTokenBucketCountsUnusedPermits: the tokens the rate makes while the
// bucket is full are counted as unused, and only those; a rate test
// reads them to know whether its offered load kept up with the limit.
func TestTokenBucketCountsUnusedPermits(t *testing.T) {
	c := newFakeClock()
	l := mustLimiter(t, config.TrafficLimit{Type: "TOKEN_BUCKET", Rate: 100, Burst: 10}, c)
	unused := func(want float64, when string) {
		t.Helper()
		if got := l.State().Unused; math.Abs(got-want) > 1e-6 {
			t.Errorf("%s: %.3f unused, want %.3f", when, got, want)
		}
	}
	unused(0, "at the start")
	// Full from the start: 100ms of rate (10 tokens) has no room.
	c.Advance(100 * time.Millisecond)
	unused(10, "after 100ms full")
	// Offered faster than the rate for 1s: every token is taken.
	offer(t, c, l, time.Millisecond, time.Second)
	unused(10, "under a load above the rate")
	// Less than a token is left. 50ms quiet add 5; the next 100ms fill
	// the bucket and waste the rest.
	left := l.State().Available
	if left >= 1 {
		t.Fatalf("%.2f tokens left after a load above the rate", left)
	}
	c.Advance(50 * time.Millisecond)
	unused(10, "while the bucket refills")
	c.Advance(100 * time.Millisecond)
	unused(15+left, "once it is full again")
	// A statement that did not run gives its tokens back; what does not
	// fit is unused too.
	p, err := l.Acquire(context.Background(), 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	c.Advance(20 * time.Millisecond)
	l.Release(p, false)
	unused(17+left, "after 4 tokens came back into 2 free places")
}

func TestLeakyBucketSpacesStatements(t *testing.T) {
	c := newFakeClock()
	l := mustLimiter(t, config.TrafficLimit{Type: "LEAKY_BUCKET", Rate: 50}, c)
	got := offer(t, c, l, 100*time.Microsecond, 2*time.Second)
	if len(got) < 99 || len(got) > 100 {
		t.Errorf("admitted %d in 2s, want 100 (50/s)", len(got))
	}
	for i := 1; i < len(got); i++ {
		if gap := got[i].Sub(got[i-1]); gap < 20*time.Millisecond {
			t.Fatalf("admissions %d and %d %v apart, want at least 20ms (no burst)", i-1, i, gap)
		}
	}
	// After a quiet period it still lets only one through at once.
	c.Advance(5 * time.Second)
	if got := offer(t, c, l, 10*time.Microsecond, 10*time.Millisecond); len(got) != 1 {
		t.Errorf("after 5s quiet %d admitted within 10ms, want 1 (no burst)", len(got))
	}
}

func TestLeakyBucketWaitersGetTheirSlots(t *testing.T) {
	c := newFakeClock()
	l := mustLimiter(t, config.TrafficLimit{Type: "LEAKY_BUCKET", Rate: 10}, c)
	if _, err := l.Acquire(context.Background(), 1, 0); err != nil {
		t.Fatal(err)
	}
	// Three statements queue for the next slots: 100, 200, 300ms.
	var chans []<-chan acquired
	for i := range 3 {
		chans = append(chans, acquireAsync(context.Background(), l, 1, time.Second))
		c.waitFor(t, i+1)
	}
	// A fourth would wait 400ms: over its maxWait of 350ms.
	if _, err := l.Acquire(context.Background(), 1, 350*time.Millisecond); !errors.Is(err, ErrLimited) {
		t.Fatalf("fourth: %v, want ErrLimited", err)
	}
	c.Advance(300 * time.Millisecond)
	for i, ch := range chans {
		r := <-ch
		if r.err != nil {
			t.Fatal(r.err)
		}
		if want := time.Duration(i+1) * 100 * time.Millisecond; r.p.Waited != want {
			t.Errorf("waiter %d waited %v, want %v", i, r.p.Waited, want)
		}
	}
}

// TestLeakyBucketReusesAGivenUpSlot: a waiter that gives up before its
// turn, behind other waiters, leaves its slot to the next statement that
// can wait for it, and the statements stay spaced by the interval.
func TestLeakyBucketReusesAGivenUpSlot(t *testing.T) {
	c := newFakeClock()
	l := mustLimiter(t, config.TrafficLimit{Type: "LEAKY_BUCKET", Rate: 10}, c)
	start := c.Now()
	if _, err := l.Acquire(context.Background(), 1, 0); err != nil {
		t.Fatal(err)
	}
	// Waiters for the slots at 100, 200 (it will give up) and 300ms.
	a := acquireAsync(context.Background(), l, 1, time.Second)
	c.waitFor(t, 1)
	ctx, cancel := context.WithCancelCause(context.Background())
	b := acquireAsync(ctx, l, 1, time.Second)
	c.waitFor(t, 2)
	cc := acquireAsync(context.Background(), l, 1, time.Second)
	c.waitFor(t, 3)
	gaveUp := errors.New("killed")
	cancel(gaveUp)
	if r := <-b; !errors.Is(r.err, gaveUp) {
		t.Fatalf("the waiter that gave up: %+v", r)
	}
	c.Advance(50 * time.Millisecond)
	// The hole at 200ms is 150ms away: not for a statement that cannot
	// wait, but for one that waits 160ms.
	if _, err := l.Acquire(context.Background(), 1, 0); !errors.Is(err, ErrLimited) {
		t.Fatalf("no wait at 50ms: %v, want ErrLimited", err)
	}
	d := acquireAsync(context.Background(), l, 1, 160*time.Millisecond)
	c.waitFor(t, 3)
	// The end of the line is still 400ms; a last waiter that gives up
	// gives it back.
	ctx, cancel = context.WithCancelCause(context.Background())
	e := acquireAsync(ctx, l, 1, time.Second)
	c.waitFor(t, 4)
	cancel(gaveUp)
	if r := <-e; !errors.Is(r.err, gaveUp) {
		t.Fatalf("the last waiter that gave up: %+v", r)
	}
	f := acquireAsync(context.Background(), l, 1, time.Second)
	c.waitFor(t, 4)
	c.Advance(350 * time.Millisecond)
	var at []time.Duration
	for i, ch := range []<-chan acquired{a, d, cc, f} {
		r := <-ch
		if r.err != nil {
			t.Fatalf("waiter %d: %v", i, r.err)
		}
		at = append(at, r.p.at.Sub(start))
	}
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond, 400 * time.Millisecond}
	if !slices.Equal(at, want) {
		t.Errorf("admitted at %v, want %v (every slot used, 100ms apart)", at, want)
	}
}

func TestFixedWindowBoundaryLetsTwiceTheLimit(t *testing.T) {
	c := newFakeClock()
	fixed := mustLimiter(t, config.TrafficLimit{Type: "FIXED_WINDOW", Permits: 100, Window: time.Second}, c)
	sliding := mustLimiter(t, config.TrafficLimit{Type: "SLIDING_WINDOW", Permits: 100, Window: time.Second, SubWindows: 10}, c)
	// Quiet until 900ms into the window, then a flood for 200ms.
	c.Advance(900 * time.Millisecond)
	var fixedGot, slidingGot []time.Time
	for end := c.Now().Add(200 * time.Millisecond); c.Now().Before(end); c.Advance(100 * time.Microsecond) {
		if _, err := fixed.Acquire(context.Background(), 1, 0); err == nil {
			fixedGot = append(fixedGot, c.Now())
		}
		if _, err := sliding.Acquire(context.Background(), 1, 0); err == nil {
			slidingGot = append(slidingGot, c.Now())
		}
	}
	// The fixed window's count starts over at the boundary: 2N within
	// 200ms, though no aligned window holds more than N.
	if len(fixedGot) != 200 {
		t.Errorf("fixed window admitted %d around the boundary, want 200 (2N)", len(fixedGot))
	}
	// The sliding window still counts the first 100 after the boundary.
	if len(slidingGot) != 100 {
		t.Errorf("sliding window admitted %d around the boundary, want 100 (N)", len(slidingGot))
	}
}

func TestSlidingWindowAdmittedPerWindow(t *testing.T) {
	c := newFakeClock()
	l := mustLimiter(t, config.TrafficLimit{Type: "SLIDING_WINDOW", Permits: 200, Window: time.Second, SubWindows: 10}, c)
	start := c.Now()
	got := offer(t, c, l, 200*time.Microsecond, 4*time.Second)
	for s := range 4 {
		from := start.Add(time.Duration(s) * time.Second)
		if n := countIn(got, from, from.Add(time.Second)); n != 200 {
			t.Errorf("second %d admitted %d, want 200", s, n)
		}
	}
	// Any window's length holds at most N plus one sub-window's worth.
	if m := maxIn(got, time.Second); m > 220 {
		t.Errorf("%d admitted within one window's length, want at most 220", m)
	}
}

func TestFixedWindowPerPeriod(t *testing.T) {
	c := newFakeClock()
	l := mustLimiter(t, config.TrafficLimit{Type: "FIXED_WINDOW", Permits: 30, Window: time.Minute}, c)
	start := c.Now()
	got := offer(t, c, l, 10*time.Millisecond, 3*time.Minute)
	for m := range 3 {
		from := start.Add(time.Duration(m) * time.Minute)
		if n := countIn(got, from, from.Add(time.Minute)); n != 30 {
			t.Errorf("minute %d admitted %d, want 30", m, n)
		}
	}
}

func TestWindowWaitsForTheNextBucket(t *testing.T) {
	c := newFakeClock()
	l := mustLimiter(t, config.TrafficLimit{Type: "FIXED_WINDOW", Permits: 2, Window: 100 * time.Millisecond}, c)
	for range 2 {
		if _, err := l.Acquire(context.Background(), 1, 0); err != nil {
			t.Fatal(err)
		}
	}
	c.Advance(30 * time.Millisecond)
	if _, err := l.Acquire(context.Background(), 1, 50*time.Millisecond); !errors.Is(err, ErrLimited) {
		t.Fatalf("a wait shorter than the window's end: %v, want ErrLimited", err)
	}
	ch := acquireAsync(context.Background(), l, 2, 80*time.Millisecond)
	c.waitFor(t, 1)
	// The next window is full of that reservation.
	if _, err := l.Acquire(context.Background(), 1, 80*time.Millisecond); !errors.Is(err, ErrLimited) {
		t.Fatalf("over a reserved window: %v, want ErrLimited", err)
	}
	c.Advance(70 * time.Millisecond)
	if r := <-ch; r.err != nil || r.p.Waited != 70*time.Millisecond {
		t.Fatalf("waiter: %+v, want admitted after 70ms", r)
	}
}

func TestTokenBucketMaxWait(t *testing.T) {
	c := newFakeClock()
	l := mustLimiter(t, config.TrafficLimit{Type: "TOKEN_BUCKET", Rate: 10, Burst: 1}, c)
	if _, err := l.Acquire(context.Background(), 1, 0); err != nil {
		t.Fatal(err)
	}
	// The next token comes in 100ms.
	if _, err := l.Acquire(context.Background(), 1, 99*time.Millisecond); !errors.Is(err, ErrLimited) {
		t.Fatalf("maxWait 99ms: %v, want ErrLimited", err)
	}
	ch := acquireAsync(context.Background(), l, 1, 150*time.Millisecond)
	c.waitFor(t, 1)
	c.Advance(99 * time.Millisecond)
	select {
	case r := <-ch:
		t.Fatalf("admitted after 99ms: %+v", r)
	default:
	}
	c.Advance(time.Millisecond)
	if r := <-ch; r.err != nil || r.p.Waited != 100*time.Millisecond {
		t.Fatalf("waiter: %+v, want admitted after 100ms", r)
	}
	// A wait the context ends gives its token back.
	ctx, cancel := context.WithCancelCause(context.Background())
	ch = acquireAsync(ctx, l, 1, time.Second)
	c.waitFor(t, 1)
	stop := errors.New("killed")
	cancel(stop)
	if r := <-ch; !errors.Is(r.err, stop) {
		t.Fatalf("cancelled wait: %v, want its cause", r.err)
	}
	c.Advance(100 * time.Millisecond)
	if _, err := l.Acquire(context.Background(), 1, 0); err != nil {
		t.Fatalf("after the cancelled wait's token came back: %v", err)
	}
}

func TestConcurrencyQueueAndTimeout(t *testing.T) {
	c := newFakeClock()
	l := mustLimiter(t, config.TrafficLimit{Type: "CONCURRENCY", MaxInFlight: 2, Queue: 1, QueueTimeout: 100 * time.Millisecond}, c)
	ctx := context.Background()
	p1, err := l.Acquire(ctx, 1, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Acquire(ctx, 1, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	queued := acquireAsync(ctx, l, 1, 100*time.Millisecond)
	c.waitFor(t, 1)
	if s := l.State(); s.InFlight != 2 || s.Queued != 1 {
		t.Fatalf("state %+v, want 2 in flight, 1 queued", s)
	}
	if _, err := l.Acquire(ctx, 1, 100*time.Millisecond); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("fourth: %v, want ErrQueueFull", err)
	}
	c.Advance(40 * time.Millisecond)
	l.Release(p1, true)
	r := <-queued
	if r.err != nil || r.p.Waited != 40*time.Millisecond {
		t.Fatalf("queued statement: %+v, want admitted after 40ms", r)
	}
	// Both slots are taken again: the next one times out in the queue.
	queued = acquireAsync(ctx, l, 1, 100*time.Millisecond)
	c.waitFor(t, 1)
	c.Advance(100 * time.Millisecond)
	if r := <-queued; !errors.Is(r.err, ErrQueueTimeout) {
		t.Fatalf("timed out: %v, want ErrQueueTimeout", r.err)
	}
	if s := l.State(); s.InFlight != 2 || s.Queued != 0 {
		t.Fatalf("state %+v, want 2 in flight, none queued", s)
	}
	// A queue of 0 refuses at once.
	none := mustLimiter(t, config.TrafficLimit{Type: "CONCURRENCY", MaxInFlight: 1}, c)
	if _, err := none.Acquire(ctx, 1, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := none.Acquire(ctx, 1, 0); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("no queue: %v, want ErrQueueFull", err)
	}
}

// TestRateLimitersUnderContention offers statements from 8 goroutines at
// once, on the wall clock, some waiting and giving up (a context that
// ends) and some refused by a later rule (Release unran): no algorithm
// admits more than its rate allows over the time measured.
func TestRateLimitersUnderContention(t *testing.T) {
	tests := []struct {
		limit config.TrafficLimit
		most  func(secs float64) float64
	}{
		{config.TrafficLimit{Type: "TOKEN_BUCKET", Rate: 500, Burst: 25}, func(s float64) float64 { return 500*s + 25 }},
		{config.TrafficLimit{Type: "LEAKY_BUCKET", Rate: 500}, func(s float64) float64 { return 500*s + 1 }},
		// An interval of s seconds touches at most floor(s/0.2)+2 windows
		// aligned to the clock.
		{config.TrafficLimit{Type: "SLIDING_WINDOW", Permits: 100, Window: 200 * time.Millisecond, SubWindows: 4}, func(s float64) float64 { return 100 * (math.Floor(s/0.2) + 2) }},
		{config.TrafficLimit{Type: "FIXED_WINDOW", Permits: 100, Window: 200 * time.Millisecond}, func(s float64) float64 { return 100 * (math.Floor(s/0.2) + 2) }},
	}
	for _, tt := range tests {
		t.Run(tt.limit.Type, func(t *testing.T) {
			l := mustLimiter(t, tt.limit, SystemClock())
			var ran atomic.Int64
			var wg sync.WaitGroup
			start := time.Now()
			end := start.Add(time.Second)
			for g := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; time.Now().Before(end); i++ {
						wait := time.Duration(0)
						ctx, cancel := context.WithCancel(context.Background())
						if g%2 == 1 {
							// Waits up to 5ms; every third gives up after 1ms.
							wait = 5 * time.Millisecond
							if i%3 == 0 {
								ctx, cancel = context.WithTimeout(context.Background(), time.Millisecond)
							}
						}
						p, err := l.Acquire(ctx, 1, wait)
						cancel()
						if err != nil {
							continue
						}
						if i%5 == 0 {
							l.Release(p, false) // a later rule refused it
							continue
						}
						ran.Add(1)
						l.Release(p, true)
					}
				}()
			}
			wg.Wait()
			secs := time.Since(start).Seconds()
			if got, most := float64(ran.Load()), tt.most(secs); got > most {
				t.Errorf("%.0f ran in %.2fs, want at most %.0f", got, secs, most)
			} else {
				t.Logf("%.0f ran in %.2fs (at most %.0f)", got, secs, most)
			}
		})
	}
}
