package traffic

import (
	"context"
	"sync"
	"time"

	"github.com/shardflake/shardflake/config"
)

// tokenBucket accumulates rate tokens a second up to burst, so a quiet
// period buys a burst of that size. A statement that waits takes its
// tokens at once (the bucket goes into debt) and sleeps until the debt
// would have been earned; one that gives up or is refused by a later rule
// puts its tokens back.
//
// golang.org/x/time/rate was the first choice, but the admit stage needs
// to take tokens and sometimes give them back, and rate.Reservation's
// CancelAt, which restores by time rather than by count, over-restores
// when reservations and cancellations interleave: 8 goroutines offering
// statements at once to a 500/s bucket (burst 25) got 2,264 to 3,072
// admitted in 2 s instead of at most 1,025. Counting tokens under one
// mutex is exact (TestRateLimitersUnderContention).
type tokenBucket struct {
	clock Clock

	mu     sync.Mutex
	rate   float64 // tokens per second
	burst  int
	tokens float64 // negative: owed to waiting statements
	last   time.Time
	// unused counts the tokens the rate made while the bucket was full,
	// which no statement took: the demand was below the rate then.
	unused float64
}

func newTokenBucket(l config.TrafficLimit, c Clock) Limiter {
	return &tokenBucket{clock: c, rate: l.Rate, burst: l.Burst, tokens: float64(l.Burst)}
}

// advance adds the tokens earned since last; b.mu is held.
func (b *tokenBucket) advance(now time.Time) {
	if !b.last.IsZero() && now.After(b.last) {
		b.fill(now.Sub(b.last).Seconds() * b.rate)
	}
	if now.After(b.last) {
		b.last = now
	}
}

func (b *tokenBucket) Acquire(ctx context.Context, n int, wait time.Duration) (Permit, error) {
	now := b.clock.Now()
	b.mu.Lock()
	b.advance(now)
	var delay time.Duration
	if short := float64(n) - b.tokens; short > 0 {
		if b.rate <= 0 {
			b.mu.Unlock()
			return Permit{}, ErrLimited
		}
		delay = time.Duration(short / b.rate * float64(time.Second))
		if delay > wait {
			b.mu.Unlock()
			return Permit{}, ErrLimited
		}
	}
	b.tokens -= float64(n)
	b.mu.Unlock()
	p := Permit{N: n, Waited: delay, at: now.Add(delay)}
	if err := sleep(ctx, b.clock, delay); err != nil {
		b.Release(p, false)
		return Permit{}, err
	}
	return p, nil
}

// fill adds n tokens up to the burst; what does not fit is unused.
// b.mu is held.
func (b *tokenBucket) fill(n float64) {
	room := max(0, float64(b.burst)-b.tokens)
	if n > room {
		b.unused += n - room
		n = room
	}
	b.tokens += n
}

// Release puts the tokens of a statement that did not run back.
func (b *tokenBucket) Release(p Permit, ran bool) {
	if ran {
		return
	}
	b.mu.Lock()
	b.advance(b.clock.Now())
	b.fill(float64(p.N))
	b.mu.Unlock()
}

func (b *tokenBucket) Capacity() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.burst
}

// setShare gives the bucket a cluster share of its rule's rate and burst.
func (b *tokenBucket) setShare(rate float64, burst int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advance(b.clock.Now())
	b.rate, b.burst = rate, burst
	b.tokens = min(b.tokens, float64(burst))
}

func (b *tokenBucket) State() State {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advance(b.clock.Now())
	return State{Available: max(0, b.tokens), Unused: b.unused}
}
