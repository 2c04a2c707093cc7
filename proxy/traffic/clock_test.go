package traffic

import (
	"context"
	"sync"
	"testing"
	"time"
)

// fakeClock is a Clock the test advances; its timers fire as it passes
// their time.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	c    *fakeClock
	when time.Time
	ch   chan time.Time
	done bool
}

func newFakeClock() *fakeClock {
	// Aligned to a second, so window boundaries are where the tests say.
	return &fakeClock{now: time.Unix(1_800_000_000, 0)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTimer(d time.Duration) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, when: c.now.Add(d), ch: make(chan time.Time, 1)}
	if d <= 0 {
		t.done = true
		t.ch <- c.now
		return t
	}
	c.timers = append(c.timers, t)
	return t
}

func (t *fakeTimer) C() <-chan time.Time { return t.ch }

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.done
	t.done = true
	return was
}

// Advance moves the time on by d and fires the timers due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	keep := c.timers[:0]
	for _, t := range c.timers {
		switch {
		case t.done:
		case !t.when.After(c.now):
			t.done = true
			t.ch <- c.now
		default:
			keep = append(keep, t)
		}
	}
	c.timers = keep
}

// waiting counts timers not yet fired or stopped.
func (c *fakeClock) waiting() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.timers {
		if !t.done {
			n++
		}
	}
	return n
}

// waitFor polls until n timers wait on c (a goroutine reached its wait).
func (c *fakeClock) waitFor(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for c.waiting() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d timers wait, want %d", c.waiting(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

type acquired struct {
	p   Permit
	err error
}

// acquireAsync runs Acquire on its own goroutine.
func acquireAsync(ctx context.Context, l Limiter, n int, wait time.Duration) <-chan acquired {
	ch := make(chan acquired, 1)
	go func() {
		p, err := l.Acquire(ctx, n, wait)
		ch <- acquired{p, err}
	}()
	return ch
}
