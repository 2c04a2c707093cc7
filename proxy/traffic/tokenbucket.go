package traffic

import (
	"context"
	"time"

	"golang.org/x/time/rate"

	"github.com/shardflake/shardflake/router"
)

// tokenBucket is golang.org/x/time/rate's limiter: tokens accumulate at
// rate up to burst, so a quiet period buys a burst of that size.
type tokenBucket struct {
	clock Clock
	lim   *rate.Limiter
	burst int
}

func newTokenBucket(l router.TrafficLimit, c Clock) Limiter {
	return &tokenBucket{clock: c, lim: rate.NewLimiter(rate.Limit(l.Rate), l.Burst), burst: l.Burst}
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

func (b *tokenBucket) Capacity() int { return b.burst }

func (b *tokenBucket) State() State {
	return State{Available: max(0, b.lim.TokensAt(b.clock.Now()))}
}
