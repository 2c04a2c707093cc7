package traffic

import (
	"context"
	"errors"
	"time"

	"github.com/shardflake/shardflake/config"
)

// Limiter is one rule's limit algorithm and its state. It is safe for
// concurrent use.
type Limiter interface {
	// Acquire takes n permits (1 <= n <= Capacity()) now or, when it
	// cannot, waits for them at most wait (0: it refuses at once) and
	// never past ctx's end. It refuses with ErrLimited, ErrQueueFull or
	// ErrQueueTimeout, or returns ctx's cause; a refused Acquire holds
	// nothing.
	Acquire(ctx context.Context, n int, wait time.Duration) (Permit, error)
	// Release ends what Acquire granted once the statement is done. ran
	// is false when the statement never ran (a later rule refused it):
	// the permits then go back where the algorithm allows it.
	Release(p Permit, ran bool)
	// Capacity is the most permits one Acquire may ask for; a statement
	// that costs more is charged this much (a scatter wider than a
	// bucket could never pass otherwise).
	Capacity() int
	// State is the limiter's live state.
	State() State
}

// Permit is what Acquire granted.
type Permit struct {
	N      int
	Waited time.Duration
	// at is when the permits count (after the wait); slot is the
	// algorithm's own bookkeeping (a window's bucket).
	at   time.Time
	slot int64
}

// State is a limiter's live state, for SHOW TRAFFIC RULES.
type State struct {
	// Available is how many permits could be taken now.
	Available float64
	// InFlight and Queued are a concurrency limit's statements.
	InFlight, Queued int
	// Unused is how many permits a token bucket's rate made while the
	// bucket was full, so that no statement took them: the demand was
	// below the rate for that long. It only grows; 0 for the other
	// algorithms.
	Unused float64
}

// Reasons a limiter refuses.
var (
	// ErrLimited: no permit now, or none within the wait.
	ErrLimited = errors.New("traffic: over the limit")
	// ErrQueueFull: a concurrency limit is reached and its queue is full.
	ErrQueueFull = errors.New("traffic: concurrency queue full")
	// ErrQueueTimeout: a statement waited its queueTimeout in a
	// concurrency queue.
	ErrQueueTimeout = errors.New("traffic: concurrency queue timeout")
)

// builders make a limiter per limit type (config.TrafficLimitKeys lists
// each type's parameters). Adding an algorithm is a file and a line here.
var builders = map[string]func(config.TrafficLimit, Clock) Limiter{
	"TOKEN_BUCKET":   newTokenBucket,
	"LEAKY_BUCKET":   newLeakyBucket,
	"SLIDING_WINDOW": newSlidingWindow,
	"FIXED_WINDOW":   newFixedWindow,
	"CONCURRENCY":    newConcurrency,
}

// NewLimiter builds the limiter of l on clock c.
func NewLimiter(l config.TrafficLimit, c Clock) (Limiter, error) {
	b, ok := builders[l.Type]
	if !ok {
		return nil, errors.New("traffic: unknown limit type " + l.Type)
	}
	return b(l, c), nil
}
