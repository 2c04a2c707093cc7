package wire

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// ErrBudget means a payload could not be joined because the memory budget
// it draws on (SetBudget) is spent; the rest of it is unread, so the
// connection is no longer usable.
var ErrBudget = errors.New("wire: memory budget for long packets spent")

// Budget is memory that the connections sharing it may hold together for
// payloads joined beyond their read buffers. It is safe for concurrent
// use.
type Budget struct {
	limit int64
	used  atomic.Int64
}

// NewBudget returns a budget of limit bytes.
func NewBudget(limit int64) *Budget { return &Budget{limit: limit} }

// Used returns the bytes held now.
func (b *Budget) Used() int64 { return b.used.Load() }

// Limit returns the budget's size.
func (b *Budget) Limit() int64 { return b.limit }

// Reserve takes n bytes of the budget for memory held elsewhere, and
// reports whether they fit; give them back with Release.
func (b *Budget) Reserve(n int) bool { return b.reserve(n) }

// Release gives back n bytes taken with Reserve.
func (b *Budget) Release(n int) { b.release(n) }

func (b *Budget) reserve(n int) bool {
	if b.used.Add(int64(n)) > b.limit {
		b.used.Add(-int64(n))
		return false
	}
	return true
}

func (b *Budget) release(n int) { b.used.Add(-int64(n)) }

// keepJoined is the largest joined buffer a connection keeps between
// payloads; a larger one is given back (to its budget and the garbage
// collector) when the next payload is read, so one long statement does
// not pin its memory for the life of the connection.
const keepJoined = 256 << 10

// SetBudget makes payloads joined beyond the read buffer draw on b; one
// that does not fit is refused with ErrBudget. Call it before the first
// ReadPacket.
func (c *Conn) SetBudget(b *Budget) { c.budget = b }

// SetReadTimeouts bounds reads: idle is how long ReadPacket waits for a
// packet to begin (wait_timeout), read how long each part of a packet
// that has begun may take to arrive (net_read_timeout); 0 is no limit.
// The deadlines are cleared when ReadPacket returns, so reads elsewhere
// (Watch) are not cut by them.
func (c *Conn) SetReadTimeouts(idle, read time.Duration) {
	c.idleTimeout, c.readTimeout = idle, read
}

// grow makes room for k more bytes in c.joined, drawing on the budget.
func (c *Conn) grow(k int) error {
	if cap(c.joined)-len(c.joined) >= k {
		return nil
	}
	// Doubling keeps the copies linear and the buffer at most twice
	// what has arrived.
	size := max(2*cap(c.joined), len(c.joined)+k)
	if c.budget != nil && !c.budget.reserve(size-cap(c.joined)) {
		return fmt.Errorf("%w: %d bytes held of %d", ErrBudget, c.budget.Used(), c.budget.Limit())
	}
	grown := make([]byte, len(c.joined), size)
	copy(grown, c.joined)
	c.joined = grown
	return nil
}

// dropJoined gives back a joined buffer too large to keep.
func (c *Conn) dropJoined() {
	if cap(c.joined) <= keepJoined {
		return
	}
	if c.budget != nil {
		c.budget.release(cap(c.joined))
	}
	c.joined = nil
}

// ReleaseBudget gives back what c holds of its budget; call it when the
// connection is done.
func (c *Conn) ReleaseBudget() {
	if c.budget != nil {
		c.budget.release(cap(c.joined))
	}
	c.joined = nil
}

// deadline sets a read deadline d from now.
func (c *Conn) deadline(d time.Duration) {
	c.nc.SetReadDeadline(time.Now().Add(d))
	c.deadlineSet = true
	c.idleAt = time.Time{}
}

// idleSlack is how far past the idle timeout a client that sends nothing
// may be cut: the idle deadline is set that much later than the timeout,
// and left as it is while it still falls at least the timeout from now,
// so a session that reads commands back to back sets it once per slack
// rather than once per command.
func idleSlack(idle time.Duration) time.Duration {
	return min(idle/64, time.Second)
}

// idleDeadline makes sure the read deadline falls between the idle
// timeout and the timeout plus its slack from now.
func (c *Conn) idleDeadline() {
	now := time.Now()
	if c.deadlineSet && !c.idleAt.IsZero() && !c.idleAt.Before(now.Add(c.idleTimeout)) {
		return
	}
	c.idleAt = now.Add(c.idleTimeout + idleSlack(c.idleTimeout))
	c.nc.SetReadDeadline(c.idleAt)
	c.deadlineSet = true
}

// clearReadTimeout clears the read timeout's deadline when one is set
// (the idle deadline stays).
func (c *Conn) clearReadTimeout() {
	if c.deadlineSet && c.idleAt.IsZero() {
		c.clearDeadline()
	}
}

// clearDeadline clears a deadline set by deadline or idleDeadline.
func (c *Conn) clearDeadline() {
	if c.deadlineSet {
		c.nc.SetReadDeadline(time.Time{})
		c.deadlineSet = false
		c.idleAt = time.Time{}
	}
}
