package traffic

import (
	"context"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/shardflake/shardflake/router"
)

// tokenBucket is golang.org/x/time/rate's limiter: tokens accumulate at
// rate up to burst, so a quiet period buys a burst of that size.
type tokenBucket struct {
	clock Clock
	lim   *rate.Limiter
	burst atomic.Int64 // a cluster share changes it
}

func newTokenBucket(l router.TrafficLimit, c Clock) Limiter {
	b := &tokenBucket{clock: c, lim: rate.NewLimiter(rate.Limit(l.Rate), l.Burst)}
	b.burst.Store(int64(l.Burst))
	return b
}

func (b *tokenBucket) Acquire(ctx context.Context, n int, wait time.Duration) (Permit, error) {
	now := b.clock.Now()
	res := b.lim.ReserveN(now, n)
	if !res.OK() {
		return Permit{}, ErrLimited
	}
	delay := res.DelayFrom(now)
	if delay > wait {
		res.CancelAt(now)
		return Permit{}, ErrLimited
	}
	if err := sleep(ctx, b.clock, delay); err != nil {
		res.CancelAt(b.clock.Now())
		return Permit{}, err
	}
	return Permit{N: n, Waited: delay, at: now.Add(delay), res: res}, nil
}

func (b *tokenBucket) Release(p Permit, ran bool) {
	if !ran && p.res != nil {
		p.res.CancelAt(b.clock.Now())
	}
}

func (b *tokenBucket) Capacity() int { return int(b.burst.Load()) }

// setShare gives the bucket a cluster share of its rule's rate and burst.
func (b *tokenBucket) setShare(r float64, burst int) {
	now := b.clock.Now()
	b.lim.SetLimitAt(now, rate.Limit(r))
	b.lim.SetBurstAt(now, burst)
	b.burst.Store(int64(burst))
}

func (b *tokenBucket) State() State {
	return State{Available: max(0, b.lim.TokensAt(b.clock.Now()))}
}
