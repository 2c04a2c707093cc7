package traffic

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/shardflake/shardflake/config"
)

// leakyBucket lets statements through at a steady rate and never in a
// burst: each permit has its own slot, interval after the one before, and
// a statement that finds its slot in the future waits for it (or is
// refused). It is a GCRA without tolerance: next is the earliest free
// slot after every slot handed out.
//
// A waiter that gives up before its turn (KILL, its statement timeout)
// leaves a hole among the slots of the waiters behind it; the next
// statement that can wait that long takes the hole instead of a slot at
// the end, so the rate is not lost. Slots are never moved earlier and a
// hole is only taken at its own time, so the spacing holds.
type leakyBucket struct {
	clock    Clock
	interval time.Duration

	mu    sync.Mutex
	next  time.Time
	holes []slotRun // in time order, none overlapping, all before next
}

// slotRun is n consecutive slots from at.
type slotRun struct {
	at time.Time
	n  int
}

func (r slotRun) end(interval time.Duration) time.Time {
	return r.at.Add(time.Duration(r.n) * interval)
}

func newLeakyBucket(l config.TrafficLimit, c Clock) Limiter {
	return &leakyBucket{clock: c, interval: max(time.Duration(float64(time.Second)/l.Rate), 1)}
}

func (b *leakyBucket) Acquire(ctx context.Context, n int, wait time.Duration) (Permit, error) {
	now := b.clock.Now()
	b.mu.Lock()
	start, ok := b.takeHole(now, n, wait)
	if !ok {
		start = b.next
		if start.Before(now) {
			start = now
		}
		if start.Sub(now) > wait {
			b.mu.Unlock()
			return Permit{}, ErrLimited
		}
		b.next = start.Add(time.Duration(n) * b.interval)
	}
	b.mu.Unlock()
	delay := start.Sub(now)
	p := Permit{N: n, Waited: delay, at: start}
	if err := sleep(ctx, b.clock, delay); err != nil {
		b.Release(p, false)
		return Permit{}, err
	}
	return p, nil
}

// takeHole takes n slots from the earliest hole that has them within
// wait; slots whose time has passed are dropped. b.mu is held.
func (b *leakyBucket) takeHole(now time.Time, n int, wait time.Duration) (time.Time, bool) {
	kept := b.holes[:0]
	for _, h := range b.holes {
		if h.at.Before(now) {
			// The slots that began before now are gone.
			past := int((now.Sub(h.at) + b.interval - 1) / b.interval)
			h.at, h.n = h.at.Add(time.Duration(past)*b.interval), h.n-past
		}
		if h.n > 0 {
			kept = append(kept, h)
		}
	}
	clear(b.holes[len(kept):])
	b.holes = kept
	for i, h := range b.holes {
		if h.n < n || h.at.Sub(now) > wait {
			continue
		}
		if h.n == n {
			b.holes = slices.Delete(b.holes, i, i+1)
		} else {
			b.holes[i] = slotRun{at: h.at.Add(time.Duration(n) * b.interval), n: h.n - n}
		}
		return h.at, true
	}
	return time.Time{}, false
}

// Release gives back the slots of a statement that did not run: the end
// of the line moves back when they were the last ones, and slots still to
// come become a hole for the next statement that waits.
func (b *leakyBucket) Release(p Permit, ran bool) {
	if ran {
		return
	}
	now := b.clock.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	run := slotRun{at: p.at, n: p.N}
	if b.next.Equal(run.end(b.interval)) {
		b.next = p.at
		// Holes just before are now the end of the line too.
		for len(b.holes) > 0 {
			last := b.holes[len(b.holes)-1]
			if !last.end(b.interval).Equal(b.next) {
				break
			}
			b.next = last.at
			b.holes = b.holes[:len(b.holes)-1]
		}
		return
	}
	if p.at.Before(now) {
		// Its turn has begun: the slots cannot be given to another
		// without two statements in one slot.
		return
	}
	i, _ := slices.BinarySearchFunc(b.holes, run.at, func(h slotRun, at time.Time) int { return h.at.Compare(at) })
	b.holes = slices.Insert(b.holes, i, run)
	// Merge with the neighbours it touches, so a costlier statement
	// fits.
	if i+1 < len(b.holes) && run.end(b.interval).Equal(b.holes[i+1].at) {
		b.holes[i].n += b.holes[i+1].n
		b.holes = slices.Delete(b.holes, i+1, i+2)
	}
	if i > 0 && b.holes[i-1].end(b.interval).Equal(b.holes[i].at) {
		b.holes[i-1].n += b.holes[i].n
		b.holes = slices.Delete(b.holes, i, i+1)
	}
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
