package traffic

import (
	"context"
	"sync"
	"time"

	"github.com/shardflake/shardflake/config"
)

// concurrency limits the permits in flight: a statement holds its permits
// until it ends. When none are free a statement waits in a FIFO queue of
// at most queue statements, each for at most its wait (the rule's
// queueTimeout); a full queue refuses at once.
type concurrency struct {
	clock    Clock
	max      int
	queueMax int

	mu       sync.Mutex
	inFlight int
	queue    []*waiter
}

type waiter struct {
	n       int
	ready   chan struct{}
	granted bool
}

func newConcurrency(l config.TrafficLimit, c Clock) Limiter {
	return &concurrency{clock: c, max: l.MaxInFlight, queueMax: l.Queue}
}

func (c *concurrency) Acquire(ctx context.Context, n int, wait time.Duration) (Permit, error) {
	c.mu.Lock()
	if len(c.queue) == 0 && c.inFlight+n <= c.max {
		c.inFlight += n
		c.mu.Unlock()
		return Permit{N: n}, nil
	}
	if len(c.queue) >= c.queueMax {
		c.mu.Unlock()
		return Permit{}, ErrQueueFull
	}
	if wait <= 0 {
		c.mu.Unlock()
		return Permit{}, ErrQueueTimeout
	}
	w := &waiter{n: n, ready: make(chan struct{})}
	c.queue = append(c.queue, w)
	c.mu.Unlock()
	start := c.clock.Now()
	t := c.clock.NewTimer(wait)
	defer t.Stop()
	var err error
	select {
	case <-w.ready:
		return Permit{N: n, Waited: c.clock.Now().Sub(start)}, nil
	case <-t.C():
		err = ErrQueueTimeout
	case <-ctx.Done():
		err = context.Cause(ctx)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if w.granted {
		// Granted as the wait ended: the statement runs.
		return Permit{N: n, Waited: c.clock.Now().Sub(start)}, nil
	}
	for i, q := range c.queue {
		if q == w {
			c.queue = append(c.queue[:i], c.queue[i+1:]...)
			break
		}
	}
	c.grant()
	return Permit{}, err
}

// grant lets the waiters at the head of the queue in while their permits
// fit.
func (c *concurrency) grant() {
	for len(c.queue) > 0 && c.inFlight+c.queue[0].n <= c.max {
		w := c.queue[0]
		c.queue[0] = nil
		c.queue = c.queue[1:]
		c.inFlight += w.n
		w.granted = true
		close(w.ready)
	}
}

func (c *concurrency) Release(p Permit, _ bool) {
	c.mu.Lock()
	c.inFlight -= p.N
	c.grant()
	c.mu.Unlock()
}

func (c *concurrency) Capacity() int { return c.max }

func (c *concurrency) State() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return State{Available: float64(c.max - c.inFlight), InFlight: c.inFlight, Queued: len(c.queue)}
}
