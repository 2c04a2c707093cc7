package idgen

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Errors a generator or the configuration returns. Match them with
// errors.Is; the typed errors below carry the details and match their
// sentinel too. Every message starts with "snowflake:" and names the cause,
// so the proxy can pass it to the client as MySQL error 1105 unchanged.
var (
	// ErrInvalidConfig: a rules-file prop or Config field is wrong (PropError).
	ErrInvalidConfig = errors.New("snowflake: invalid configuration")
	// ErrInvalidLayout: the layout's bits do not add up or are out of range.
	ErrInvalidLayout = errors.New("snowflake: invalid layout")
	// ErrInvalidID: an id cannot be decoded or composed with the layout.
	ErrInvalidID = errors.New("snowflake: invalid id")
	// ErrClockMovedBackwards: the wall clock is further behind than the
	// tolerance allows (ClockBackwardsError).
	ErrClockMovedBackwards = errors.New("snowflake: clock moved backwards")
	// ErrClockStalled: the generator had to wait for the clock, and the clock
	// did not advance (ClockStalledError).
	ErrClockStalled = errors.New("snowflake: clock stalled")
	// ErrBeforeEpoch: the wall clock reads a time before the layout's epoch.
	ErrBeforeEpoch = errors.New("snowflake: clock is before the epoch")
	// ErrHorizonExceeded: the next id's time does not fit the layout's time
	// bits (HorizonError).
	ErrHorizonExceeded = errors.New("snowflake: time horizon exceeded")
	// ErrBatchTooLarge: NextN was asked for more keys than one millisecond
	// holds, or fewer than one (BatchSizeError).
	ErrBatchTooLarge = errors.New("snowflake: bad batch size")
	// ErrLeaseLost: the etcd lease on the worker id has lapsed or is gone, so
	// issuing could duplicate another holder's ids (LeaseLostError).
	ErrLeaseLost = errors.New("snowflake: worker-id lease lost")
	// ErrAllPairsTaken: every (datacenter, worker) pair is leased by another
	// generator (AllPairsTakenError).
	ErrAllPairsTaken = errors.New("snowflake: all worker ids are taken")
	// ErrHighWater: the high-water mark could not be loaded or persisted.
	ErrHighWater = errors.New("snowflake: high-water mark")
	// ErrClosed: the generator was closed.
	ErrClosed = errors.New("snowflake: generator closed")
)

// PropError is a bad rules-file prop: its name, the value as written and
// what is wrong with it.
type PropError struct {
	// Type is the generator type the prop belongs to; "" means SNOWFLAKE.
	Type   string
	Prop   string
	Value  string
	Reason string
	// Err is a more specific sentinel (ErrInvalidLayout), or nil.
	Err error
}

// Error names the prop first, so a rules-file error points at it.
func (e *PropError) Error() string {
	typ := "snowflake"
	if e.Type != "" {
		typ = strings.ToLower(e.Type)
	}
	if e.Value == "" {
		return fmt.Sprintf("%s prop %s: %s", typ, e.Prop, e.Reason)
	}
	return fmt.Sprintf("%s prop %s: %q: %s", typ, e.Prop, e.Value, e.Reason)
}

// Is makes a PropError match ErrInvalidConfig.
func (e *PropError) Is(target error) bool { return target == ErrInvalidConfig }

// Unwrap returns the more specific sentinel, if any.
func (e *PropError) Unwrap() error { return e.Err }

// ClockBackwardsError says how far the wall clock is behind the last time
// the generator saw (or, after a restart or a takeover, behind the
// persisted high-water mark) and when keys resume.
type ClockBackwardsError struct {
	Drift     time.Duration
	Tolerance time.Duration
	// HighWater is set when the reference is a persisted high-water mark
	// rather than a time this generator read itself.
	HighWater bool
	// ResumeAt is the wall-clock time from which the generator issues again.
	ResumeAt time.Time
}

// Error describes the cause for a client.
func (e *ClockBackwardsError) Error() string {
	what := "clock moved backwards by"
	if e.HighWater {
		what = "clock is behind the persisted high-water mark by"
	}
	return fmt.Sprintf("snowflake: %s %d ms (tolerance %d ms); keys resume when the clock reaches %s",
		what, e.Drift.Milliseconds(), e.Tolerance.Milliseconds(), e.ResumeAt.UTC().Format(timeFormat))
}

// Is makes a ClockBackwardsError match ErrClockMovedBackwards.
func (e *ClockBackwardsError) Is(target error) bool { return target == ErrClockMovedBackwards }

// ClockStalledError says how long the generator waited for a clock that did
// not move.
type ClockStalledError struct {
	Waited time.Duration
}

// Error describes the cause for a client.
func (e *ClockStalledError) Error() string {
	return fmt.Sprintf("snowflake: waited %d ms for the clock to advance and it did not", e.Waited.Milliseconds())
}

// Is makes a ClockStalledError match ErrClockStalled.
func (e *ClockStalledError) Is(target error) bool { return target == ErrClockStalled }

// HorizonError names the layout's last representable instant.
type HorizonError struct {
	Horizon time.Time
}

// Error describes the cause for a client.
func (e *HorizonError) Error() string {
	return fmt.Sprintf("snowflake: time horizon %s exceeded; widen time-bits or move the epoch",
		e.Horizon.UTC().Format(timeFormat))
}

// Is makes a HorizonError match ErrHorizonExceeded.
func (e *HorizonError) Is(target error) bool { return target == ErrHorizonExceeded }

// BatchSizeError is a NextN request outside [1, Max].
type BatchSizeError struct {
	N, Max int
}

// Error describes the cause for a client.
func (e *BatchSizeError) Error() string {
	return fmt.Sprintf("snowflake: batch of %d keys outside [1, %d]", e.N, e.Max)
}

// Is makes a BatchSizeError match ErrBatchTooLarge.
func (e *BatchSizeError) Is(target error) bool { return target == ErrBatchTooLarge }

// LeaseLostError says which worker id's lease is no longer safe to use and
// why.
type LeaseLostError struct {
	Datacenter, Worker int
	Reason             string
}

// Error describes the cause for a client.
func (e *LeaseLostError) Error() string {
	return fmt.Sprintf("snowflake: worker-id lease on datacenter %d worker %d lost: %s", e.Datacenter, e.Worker, e.Reason)
}

// Is makes a LeaseLostError match ErrLeaseLost.
func (e *LeaseLostError) Is(target error) bool { return target == ErrLeaseLost }

// AllPairsTakenError says how many (datacenter, worker) pairs exist and that
// other generators hold all of them.
type AllPairsTakenError struct {
	Pairs  int
	Prefix string
	Waited time.Duration
}

// Error describes the cause for a client.
func (e *AllPairsTakenError) Error() string {
	return fmt.Sprintf("snowflake: all %d (datacenter, worker) pairs under etcd prefix %s are leased by other generators (waited %d ms)",
		e.Pairs, e.Prefix, e.Waited.Milliseconds())
}

// Is makes an AllPairsTakenError match ErrAllPairsTaken.
func (e *AllPairsTakenError) Is(target error) bool { return target == ErrAllPairsTaken }

// timeFormat is how errors, stats and the id command print instants: UTC
// with millisecond precision.
const timeFormat = "2006-01-02T15:04:05.000Z07:00"
