package algorithm

import (
	"math/rand/v2"
	"time"
)

// Sharding columns are sampled to validate rules (every row reaches exactly
// one data node; which data nodes no row reaches) and to simulate a key
// distribution for the check command. A column's Domain, which its
// algorithm gives, says what values make sense for it.

// DomainKind is the kind of value a sharding column holds.
type DomainKind int

// Domain kinds.
const (
	DomainInt  DomainKind = iota + 1 // integers (MOD, ranges, arithmetic inline expressions)
	DomainTime                       // date-times (INTERVAL, AUTO_INTERVAL)
)

// Domain is the values sampling feeds one sharding column.
type Domain struct {
	Kind DomainKind
	// Ranged integers (BOUNDARY_RANGE, VOLUME_RANGE): random values fall
	// in [ilo, ihi), samples include points around each boundary.
	Ranged bool
	// Layout is the Go layout date-times are written in (DomainTime).
	Layout   string
	ilo, ihi int64
	points   []int64
	lo, hi   time.Time // the algorithm's span (DomainTime)
	// times returns the date-times samples include (DomainTime).
	times func() []time.Time
}

// rangedDomain spreads random values over the partitions of a range
// algorithm: from one average partition width below the first boundary to
// one above the last, so each partition gets its share.
func rangedDomain(bounds []int64) Domain {
	first, last := bounds[0], bounds[len(bounds)-1]
	width := int64(1)
	if len(bounds) > 1 {
		width = max((last-first)/int64(len(bounds)-1), 1)
	} else if first != 0 {
		width = max(first, -first)
	}
	d := Domain{Kind: DomainInt, Ranged: true, ilo: first - width, ihi: last + width}
	for _, b := range bounds {
		d.points = append(d.points, b-1, b, b+1)
	}
	d.points = append(d.points, d.ilo, d.ihi)
	return d
}

// Samples returns the values validation routes for a column: for integers
// 0..4095 and values spread over every magnitude up to 2^62; for date-times
// points in and around each window or partition.
func (d Domain) Samples(rng *rand.Rand) []Value {
	var out []Value
	switch d.Kind {
	case DomainInt:
		for i := int64(0); i < 4096; i++ {
			out = append(out, i)
		}
		for b := 12; b <= 62; b++ {
			for i := 0; i < 32; i++ {
				out = append(out, rng.Int64N(int64(1)<<b))
			}
		}
		for _, p := range d.points {
			out = append(out, p)
		}
	case DomainTime:
		if d.times != nil {
			for _, t := range d.times() {
				out = append(out, t.Format(d.Layout))
			}
		}
	}
	return out
}

// Random returns one uniformly random value of the domain: a non-negative
// int64 (for a range algorithm, one around its boundaries), or a time
// between the algorithm's bounds.
func (d Domain) Random(rng *rand.Rand) Value {
	if d.Ranged && d.ihi > d.ilo {
		return d.ilo + rng.Int64N(d.ihi-d.ilo)
	}
	if d.Kind == DomainTime {
		span := d.hi.Sub(d.lo)
		if span <= 0 {
			return d.lo.Format(d.Layout)
		}
		return d.lo.Add(time.Duration(rng.Int64N(int64(span)))).Format(d.Layout)
	}
	return rng.Int64N(1 << 62)
}
