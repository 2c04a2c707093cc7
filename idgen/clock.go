package idgen

import "time"

// Clock is the generator's source of time. Now's wall-clock reading becomes
// the time part of ids; lease deadlines compare Now readings too, so a real
// clock must keep Go's monotonic reading in the Times it returns (as
// time.Now does) for leases to be measured on the monotonic clock. Tests
// inject a fake clock; the kill -9 test an offset one.
type Clock interface {
	Now() time.Time
	// Sleep pauses the calling goroutine for at least d; a fake clock
	// usually advances itself by d instead.
	Sleep(d time.Duration)
}

// SystemClock is the real clock: time.Now and time.Sleep.
func SystemClock() Clock { return systemClock{} }

type systemClock struct{}

func (systemClock) Now() time.Time        { return time.Now() }
func (systemClock) Sleep(d time.Duration) { time.Sleep(d) }
