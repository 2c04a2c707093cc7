package idgen

import (
	"sync/atomic"
	"time"
)

// Clock is the generator's source of time. Now's wall-clock reading becomes
// the time part of ids; lease deadlines are measured as differences of Now
// readings, so a real clock must keep Go's monotonic reading in the Times
// it returns (as time.Now does). Tests inject a fake clock; the kill -9
// test an offset one.
type Clock interface {
	Now() time.Time
	// Sleep pauses the calling goroutine for at least d; a fake clock
	// usually advances itself by d instead.
	Sleep(d time.Duration)
}

// SystemClock is the real clock. Its Now is time.Now; the generator reads
// it more cheaply (see systemClock.read).
func SystemClock() Clock {
	now := time.Now()
	c := &systemClock{anchor: now, anchorWall: now.UnixNano()}
	return c
}

// systemClock derives the wall clock from the monotonic clock and re-reads
// the wall clock every resync. time.Now reads both clocks (about 50 ns on
// the reference machine, most of an id's cost); time.Since on a monotonic
// Time reads only one. Linux slews both clocks alike, so between re-reads
// they differ only by a step of the wall clock, which the generator then
// sees within resync.
type systemClock struct {
	anchor     time.Time
	anchorWall int64        // anchor's Unix nanoseconds
	offset     atomic.Int64 // wall − (anchorWall + monotonic since anchor), from the last re-read
	synced     atomic.Int64 // monotonic nanoseconds since anchor at the last re-read
}

// resync is how often systemClock re-reads the wall clock.
const resync = 10 * time.Millisecond

func (c *systemClock) Now() time.Time        { return time.Now() }
func (c *systemClock) Sleep(d time.Duration) { time.Sleep(d) }

// read returns the wall clock in Unix nanoseconds and the monotonic time
// since the anchor.
func (c *systemClock) read() (wall int64, mono time.Duration) {
	mono = time.Since(c.anchor)
	if int64(mono)-c.synced.Load() >= int64(resync) {
		now := time.Now()
		m := now.Sub(c.anchor)
		c.offset.Store(now.UnixNano() - c.anchorWall - int64(m))
		c.synced.Store(int64(m))
		return now.UnixNano(), m
	}
	return c.anchorWall + int64(mono) + c.offset.Load(), mono
}

// reading is one look at the clock.
type reading struct {
	ms   int64         // wall clock, Unix milliseconds
	ns   int64         // nanoseconds into that millisecond
	mono time.Duration // monotonic time since the reader's anchor
}

// reader reads a Clock, through systemClock's fast path when it is one.
type reader struct {
	clock  Clock
	sys    *systemClock
	anchor time.Time
}

func newReader(c Clock) reader {
	if sys, ok := c.(*systemClock); ok {
		return reader{clock: c, sys: sys, anchor: sys.anchor}
	}
	return reader{clock: c, anchor: c.Now()}
}

func (r *reader) read() reading {
	if r.sys != nil {
		wall, mono := r.sys.read()
		return reading{ms: floorDiv(wall, 1e6), ns: wall - floorDiv(wall, 1e6)*1e6, mono: mono}
	}
	now := r.clock.Now()
	ms := now.UnixMilli()
	return reading{ms: ms, ns: int64(now.Nanosecond() % 1e6), mono: now.Sub(r.anchor)}
}

// at turns a monotonic reading back into a Time (with a monotonic reading
// when the clock has one), for Stats.
func (r *reader) at(mono time.Duration) time.Time { return r.anchor.Add(mono) }

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
