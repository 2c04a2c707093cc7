package idgen

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is a settable clock. Sleep advances it by the requested time
// (as if the sleeper's time passed) unless it is frozen.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	frozen bool
	sleeps int
	slept  time.Duration
}

func newFakeClock(t time.Time) *fakeClock { return &fakeClock{now: t} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps++
	c.slept += d
	if !c.frozen {
		c.now = c.now.Add(d)
	}
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func (c *fakeClock) Freeze(frozen bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.frozen = frozen
}

func (c *fakeClock) Sleeps() (int, time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sleeps, c.slept
}

// tickClock advances by step on every every-th call of Now, simulating a
// steady request rate without locks (for benchmarks and long simulations).
// Sleep advances it too.
type tickClock struct {
	start time.Time
	every int64
	step  time.Duration
	calls atomic.Int64
	extra atomic.Int64 // nanoseconds added by Sleep
}

func newTickClock(start time.Time, every int64, step time.Duration) *tickClock {
	return &tickClock{start: start, every: every, step: step}
}

func (c *tickClock) Now() time.Time {
	n := c.calls.Add(1)
	return c.start.Add(time.Duration(n/c.every)*c.step + time.Duration(c.extra.Load()))
}

func (c *tickClock) Sleep(d time.Duration) { c.extra.Add(int64(d)) }

// offsetClock is the system clock shifted by a settable offset; shifting it
// keeps the monotonic reading, so lease deadlines stay monotonic.
type offsetClock struct {
	offset atomic.Int64
}

func (c *offsetClock) Now() time.Time        { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *offsetClock) Sleep(d time.Duration) { time.Sleep(d) }
func (c *offsetClock) Set(d time.Duration)   { c.offset.Store(int64(d)) }

func TestSystemClockTracksWallClock(t *testing.T) {
	c := SystemClock().(*systemClock)
	var lastMono time.Duration
	for n := 0; lastMono < 5*resync || n < 1000; n++ {
		before := time.Now().UnixNano()
		wall, mono := c.read()
		after := time.Now().UnixNano()
		// Without a wall-clock step the derived wall clock agrees with
		// time.Now to well within a millisecond, across re-reads.
		if wall < before-int64(time.Millisecond) || wall > after+int64(time.Millisecond) {
			t.Fatalf("read() wall %d outside [%d, %d]", wall, before, after)
		}
		if mono < lastMono {
			t.Fatalf("monotonic reading went back: %s after %s", mono, lastMono)
		}
		lastMono = mono
	}
}

func TestSystemClockSeesWallStep(t *testing.T) {
	// Simulate the wall clock stepping back an hour relative to the
	// monotonic clock by moving the anchor's wall reading: reads follow the
	// monotonic clock until the next re-read picks the step up.
	c := SystemClock().(*systemClock)
	c.anchorWall -= int64(time.Hour)
	if wall, mono := c.read(); mono < resync {
		if d := time.Duration(time.Now().UnixNano() - wall); d < 59*time.Minute {
			t.Fatalf("before a re-read the derived wall clock is %s off, want the hour", d)
		}
	}
	time.Sleep(resync)
	wall, _ := c.read()
	if d := time.Duration(time.Now().UnixNano() - wall); d > time.Millisecond || d < -time.Millisecond {
		t.Errorf("after a re-read the derived wall clock is %s off, want the step seen", d)
	}
}
