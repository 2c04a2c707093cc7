package algorithm

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// routeCtx collects the targets one Route call selects, as a bit set over
// available, so the result keeps available's order without sorting and,
// for up to 256 targets, without allocating. It lives on Route's stack:
// the Algorithm methods take and return it by value, because a pointer
// passed through an interface would move it to the heap on every route.
type routeCtx struct {
	s         *Strategy
	available []string
	small     [4]uint64 // the set for up to 256 targets
	big       []uint64  // the set above 256 targets
	missing   TargetMode
}

// init prepares an empty set. (The set is not a slice of small: a pointer
// into itself would move the context to the heap.)
func (c *routeCtx) init(s *Strategy, available []string) {
	c.s = s
	c.available = available
	if n := (len(available) + 63) / 64; n > len(c.small) {
		c.big = make([]uint64, n)
	}
}

func (c *routeCtx) add(i int) {
	if c.big != nil {
		c.big[i/64] |= 1 << (i % 64)
		return
	}
	c.small[i/64] |= 1 << (i % 64)
}

// word returns the w-th 64 targets' bits.
func (c *routeCtx) word(w int) uint64 {
	if c.big != nil {
		return c.big[w]
	}
	return c.small[w]
}

func (c *routeCtx) addAll() {
	for i := range c.available {
		c.add(i)
	}
}

// addName selects the available target spelled name and reports whether
// there is one.
func (c *routeCtx) addName(name []byte) bool {
	for i, a := range c.available {
		if a == string(name) {
			c.add(i)
			return true
		}
	}
	return false
}

// addSuffix selects the target an auto algorithm numbers n: the strategy's
// prefix followed by n left-padded with '0' to its suffix length, as
// ShardingSphere's DataNodeInfo does. A number with no such target in
// available adds nothing (its data node is on another data source).
func (c *routeCtx) addSuffix(n int64, minWidth int) {
	var buf [64]byte
	b := append(buf[:0], c.s.prefix...)
	var digits [20]byte
	d := strconv.AppendInt(digits[:0], n, 10)
	width := max(c.s.suffixLen, minWidth)
	for pad := width - len(d); pad > 0; pad-- {
		b = append(b, '0')
	}
	b = append(b, d...)
	c.addName(b)
}

// addEndsWith selects every available target ending in suffix, as
// ShardingSphere's INTERVAL algorithm matches table suffixes.
func (c *routeCtx) addEndsWith(suffix string) {
	for i, a := range c.available {
		if strings.HasSuffix(a, suffix) {
			c.add(i)
		}
	}
}

// result returns the selected targets in available's order: nil when none,
// a sub-slice of available when they are contiguous, else a new slice.
func (c *routeCtx) result() []string {
	first, last, count := -1, -1, 0
	words := (len(c.available) + 63) / 64
	for w := 0; w < words; w++ {
		word := c.word(w)
		if word == 0 {
			continue
		}
		if first < 0 {
			first = w*64 + bits.TrailingZeros64(word)
		}
		last = w*64 + 63 - bits.LeadingZeros64(word)
		count += bits.OnesCount64(word)
	}
	if count == 0 {
		return nil
	}
	if last-first+1 == count {
		return c.available[first : last+1 : last+1]
	}
	out := make([]string, 0, count)
	for w := 0; w < words; w++ {
		for word := c.word(w); word != 0; {
			i := bits.TrailingZeros64(word)
			word &^= 1 << i
			out = append(out, c.available[w*64+i])
		}
	}
	return out
}

// values routes exact values through the strategy's algorithm.
func (c *routeCtx) values(values []Value) (err error) {
	*c, err = c.s.Algorithm.routeValues(*c, values)
	return err
}

// rangeOf routes a range through the strategy's algorithm.
func (c *routeCtx) rangeOf(r *Range) (err error) {
	*c, err = c.s.Algorithm.routeRange(*c, r)
	return err
}

// complex routes a complex strategy; all reports that every target is
// possible (a sharding column without a condition, or an algorithm that
// cannot read several columns).
func (c *routeCtx) complex(conds map[string]ColumnCondition) (all bool, err error) {
	a, ok := c.s.Algorithm.(complexAlgorithm)
	if !ok {
		return true, nil
	}
	*c, all, err = a.routeComplex(*c, conds)
	return all, err
}

func columnList(cols []string) string { return strings.Join(cols, ",") }

// routeError is the 1235 error for a value that cannot be routed; it names
// the value, the column and the algorithm.
func (c *routeCtx) routeError(v Value, why string) error {
	return errNotSupported("cannot route %s = %s with sharding algorithm %s (%s): %s",
		columnList(c.s.Columns), FormatValue(v), c.s.AlgorithmName, c.s.Algorithm.Type(), why)
}

// FormatValue prints a value as SQL would, for error messages.
func FormatValue(v Value) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return strconv.Quote(x)
	case []byte:
		return strconv.Quote(string(x))
	}
	return fmt.Sprint(v)
}

// intRange is a range of integers after reading a Range's bounds the way
// MySQL compares them with a BIGINT column.
type intRange struct {
	lo, hi       int64
	hasLo, hasHi bool
}

// empty reports a range no integer satisfies.
func (r intRange) empty() bool { return r.hasLo && r.hasHi && r.lo > r.hi }

// toIntRange converts a Range to the integers it contains: an exclusive
// or non-integral low bound rounds up, a high one rounds down.
func toIntRange(r *Range) (intRange, error) {
	var out intRange
	if r.Low != nil {
		f, i, exact, err := numberOf(r.Low)
		if err != nil {
			return out, err
		}
		out.hasLo = true
		switch {
		case exact && r.LowInclusive:
			out.lo = i
		case exact:
			if i == math.MaxInt64 {
				return intRange{lo: 1, hi: 0, hasLo: true, hasHi: true}, nil
			}
			out.lo = i + 1
		default:
			c := math.Ceil(f)
			if c == f && !r.LowInclusive {
				c++
			}
			out.lo = clampFloat(c)
		}
	}
	if r.High != nil {
		f, i, exact, err := numberOf(r.High)
		if err != nil {
			return out, err
		}
		out.hasHi = true
		switch {
		case exact && r.HighInclusive:
			out.hi = i
		case exact:
			if i == math.MinInt64 {
				return intRange{lo: 1, hi: 0, hasLo: true, hasHi: true}, nil
			}
			out.hi = i - 1
		default:
			fl := math.Floor(f)
			if fl == f && !r.HighInclusive {
				fl--
			}
			out.hi = clampFloat(fl)
		}
	}
	return out, nil
}

func clampFloat(f float64) int64 {
	switch {
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// numberOf reads a bound as a number: exactly (i, exact) when it is an
// integer, else as the float f.
func numberOf(v Value) (f float64, i int64, exact bool, err error) {
	x, err := valOf(v)
	if err != nil {
		return 0, 0, false, err
	}
	switch x.k {
	case vInt:
		return float64(x.i), x.i, true, nil
	case vFloat:
		return x.f, 0, false, nil
	case vRaw:
		s := strings.TrimSpace(x.s)
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return float64(i), i, true, nil
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f, 0, false, nil
		}
		i, err := mysqlInt(x.s)
		return float64(i), i, true, err
	}
	return 0, 0, false, errNullValue
}
