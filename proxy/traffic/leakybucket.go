package traffic

import (
	"context"
	"sync"
	"time"

	"github.com/shardflake/shardflake/config"
)

// leakyBucket lets statements through at a steady rate and never in a
// burst: each permit has its own slot, interval after the one before, and
// a statement that finds its slot in the future waits for it (or is
// refused). It is a GCRA without tolerance: next is the earliest free
// slot.
type leakyBucket struct {
	clock    Clock
	interval time.Duration

	mu   sync.Mutex
	next time.Time
}

func newLeakyBucket(l config.TrafficLimit, c Clock) Limiter {
	return &leakyBucket{clock: c, interval: max(time.Duration(float64(time.Second)/l.Rate), 1)}
}

func (b *leakyBucket) Acquire(ctx context.Context, n int, wait time.Duration) (Permit, error) {
	now := b.clock.Now()
	b.mu.Lock()
	start := b.next
	if start.Before(now) {
		start = now
	}
	delay := start.Sub(now)
	if delay > wait {
		b.mu.Unlock()
		return Permit{}, ErrLimited
	}
	b.next = start.Add(time.Duration(n) * b.interval)
	b.mu.Unlock()
	p := Permit{N: n, Waited: delay, at: start}
	if err := sleep(ctx, b.clock, delay); err != nil {
		b.Release(p, false)
		return Permit{}, err
	}
	return p, nil
}

// Release gives the slots of a statement that did not run back when no
// later statement took the slots after them.
func (b *leakyBucket) Release(p Permit, ran bool) {
	if ran {
		return
	}
	b.mu.Lock()
	if b.next.Equal(p.at.Add(time.Duration(p.N) * b.interval)) {
		b.next = p.at
	}
	b.mu.Unlock()
}

// Capacity is unbounded: a costly statement takes that many slots.
func (b *leakyBucket) Capacity() int { return 1 << 20 }

func (b *leakyBucket) State() State {
	now := b.clock.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.next.After(now) {
		return State{}
	}
	return State{Available: 1}
}
