package idgen

import (
	"fmt"
	"time"
)

// Bit budget of an id: the sign bit stays 0 so ids are positive BIGINTs.
// A layout may use fewer (53 keeps every id exact in a JavaScript Number
// or a double).
const idBits = 63

// Limits on the fields of a Layout. Fewer than 20 time bits would run out
// within a day; more than 53 would put the horizon past what time.Time
// prints sensibly; the sequence needs at least one bit.
const (
	minTimeBits     = 20
	maxTimeBits     = 53
	minSequenceBits = 1
	maxSequenceBits = 22
)

// Layout says how an id's usable bits are split, high to low: milliseconds
// since Epoch, datacenter id, worker id, sequence. The fields add up to at
// most 63 (Bits); a Layout is a value and is never changed once validated.
type Layout struct {
	TimeBits       int
	DatacenterBits int
	WorkerBits     int
	SequenceBits   int
	// Epoch is the instant whose millisecond is time 0, whole milliseconds.
	Epoch time.Time
}

// DefaultEpoch is the default Layout's epoch, 2024-01-01T00:00:00Z.
func DefaultEpoch() time.Time { return time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC) }

// DefaultLayout is 41 bits of milliseconds since DefaultEpoch (until
// 2093-09-06), 5 datacenter bits, 5 worker bits and 12 sequence bits.
func DefaultLayout() Layout {
	return Layout{TimeBits: 41, DatacenterBits: 5, WorkerBits: 5, SequenceBits: 12, Epoch: DefaultEpoch()}
}

// Validate reports the first problem that would make ids ambiguous or
// negative: bits that add up to more than 63, a field out of range, an epoch
// before 1970 or not on a millisecond.
func (l Layout) Validate() error {
	if _, reason := l.problem(); reason != "" {
		return fmt.Errorf("%w: %s", ErrInvalidLayout, reason)
	}
	return nil
}

// problem is Validate's check, returning the prop that sets the bad field
// and what is wrong, or "" when the layout is good.
func (l Layout) problem() (prop, reason string) {
	switch {
	case l.DatacenterBits < 0:
		return PropDatacenterBits, fmt.Sprintf("%d datacenter bits", l.DatacenterBits)
	case l.WorkerBits < 0:
		return PropWorkerBits, fmt.Sprintf("%d worker bits", l.WorkerBits)
	case l.TimeBits < minTimeBits || l.TimeBits > maxTimeBits:
		return PropTimeBits, fmt.Sprintf("time bits %d outside [%d, %d]", l.TimeBits, minTimeBits, maxTimeBits)
	case l.SequenceBits < minSequenceBits || l.SequenceBits > maxSequenceBits:
		return PropSequenceBits, fmt.Sprintf("sequence bits %d outside [%d, %d]", l.SequenceBits, minSequenceBits, maxSequenceBits)
	}
	if sum := l.Bits(); sum > idBits {
		return PropTimeBits, fmt.Sprintf("time %d + datacenter %d + worker %d + sequence %d = %d bits, want at most %d (the sign bit stays 0)",
			l.TimeBits, l.DatacenterBits, l.WorkerBits, l.SequenceBits, sum, idBits)
	}
	if l.Epoch.IsZero() || l.Epoch.UnixMilli() < 0 {
		return PropEpoch, fmt.Sprintf("epoch %s is before 1970-01-01", l.Epoch.UTC().Format(time.RFC3339Nano))
	}
	if !l.Epoch.Equal(time.UnixMilli(l.Epoch.UnixMilli())) {
		return PropEpoch, fmt.Sprintf("epoch %s is not a whole millisecond", l.Epoch.UTC().Format(time.RFC3339Nano))
	}
	return "", ""
}

// Bits is how many low bits an id uses: every id is below 2^Bits.
func (l Layout) Bits() int { return l.TimeBits + l.DatacenterBits + l.WorkerBits + l.SequenceBits }

// MaxID is the largest id the layout can encode.
func (l Layout) MaxID() int64 { return 1<<l.Bits() - 1 }

// MaxMillis is the last millisecond (since Epoch) an id can carry.
func (l Layout) MaxMillis() int64 { return 1<<l.TimeBits - 1 }

// Horizon is the last instant the layout can encode; the generator returns
// ErrHorizonExceeded after it.
func (l Layout) Horizon() time.Time {
	return time.UnixMilli(l.Epoch.UnixMilli() + l.MaxMillis()).UTC()
}

// MaxDatacenter is the largest datacenter id.
func (l Layout) MaxDatacenter() int { return 1<<l.DatacenterBits - 1 }

// MaxWorker is the largest worker id.
func (l Layout) MaxWorker() int { return 1<<l.WorkerBits - 1 }

// MaxSequence is the largest sequence number within one millisecond.
func (l Layout) MaxSequence() int { return 1<<l.SequenceBits - 1 }

func (l Layout) timeShift() uint       { return uint(l.DatacenterBits + l.WorkerBits + l.SequenceBits) }
func (l Layout) datacenterShift() uint { return uint(l.WorkerBits + l.SequenceBits) }
func (l Layout) workerShift() uint     { return uint(l.SequenceBits) }

// Parts are the fields of one id.
type Parts struct {
	// Millis counts milliseconds since the layout's epoch; Time is the same
	// instant in UTC.
	Millis     int64
	Time       time.Time
	Datacenter int
	Worker     int
	Sequence   int
}

// Decode splits id into its fields. Ids are never negative; a negative id
// is ErrInvalidID.
func (l Layout) Decode(id int64) (Parts, error) {
	if id < 0 {
		return Parts{}, fmt.Errorf("%w: %d is negative", ErrInvalidID, id)
	}
	ms := id >> l.timeShift()
	return Parts{
		Millis:     ms,
		Time:       time.UnixMilli(l.Epoch.UnixMilli() + ms).UTC(),
		Datacenter: int(id>>l.datacenterShift()) & l.MaxDatacenter(),
		Worker:     int(id>>l.workerShift()) & l.MaxWorker(),
		Sequence:   int(id) & l.MaxSequence(),
	}, nil
}

// Compose builds the id of p (Millis, not Time, gives the time), checking
// that every field fits.
func (l Layout) Compose(p Parts) (int64, error) {
	switch {
	case p.Millis < 0 || p.Millis > l.MaxMillis():
		return 0, fmt.Errorf("%w: millisecond %d outside [0, %d]", ErrInvalidID, p.Millis, l.MaxMillis())
	case p.Datacenter < 0 || p.Datacenter > l.MaxDatacenter():
		return 0, fmt.Errorf("%w: datacenter %d outside [0, %d]", ErrInvalidID, p.Datacenter, l.MaxDatacenter())
	case p.Worker < 0 || p.Worker > l.MaxWorker():
		return 0, fmt.Errorf("%w: worker %d outside [0, %d]", ErrInvalidID, p.Worker, l.MaxWorker())
	case p.Sequence < 0 || p.Sequence > l.MaxSequence():
		return 0, fmt.Errorf("%w: sequence %d outside [0, %d]", ErrInvalidID, p.Sequence, l.MaxSequence())
	}
	return p.Millis<<l.timeShift() | int64(p.Datacenter)<<l.datacenterShift() |
		int64(p.Worker)<<l.workerShift() | int64(p.Sequence), nil
}

// Decode splits id with DefaultLayout.
func Decode(id int64) (Parts, error) { return DefaultLayout().Decode(id) }

// spreadRange is the width of the random range a fresh millisecond's
// sequence starts in. 1000·2^(s−10) is the largest value within 2^s that is
// a multiple of 1000 and of 2^(s−7): 4000 for 12 bits, a multiple of 2, 4,
// 8, 16, 32, 10, 100, 1000 (and 125, 250, 500, 40, 80, 160, ...). A start
// uniform over it makes id % m exactly uniform for each such m, whatever the
// time part is, which is what sends one id per second evenly to shards.
func (l Layout) spreadRange() int64 {
	if l.SequenceBits < 10 {
		return 1 << l.SequenceBits
	}
	return 1000 << (l.SequenceBits - 10)
}

// borrowRange is the width of the random range the sequence starts in when
// the generator moves to the next millisecond because the previous one ran
// out: 2^s/128 (32 for 12 bits), so saturation loses about 0.4% of the
// capacity while a strict alternation of tables still gets a random parity
// (mod 2..32) in every millisecond.
func (l Layout) borrowRange() int64 {
	if l.SequenceBits <= 7 {
		return 1
	}
	return 1 << (l.SequenceBits - 7)
}
