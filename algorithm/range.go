package algorithm

import (
	"sort"
	"strconv"
	"strings"
)

// rangeAlgorithm is BOUNDARY_RANGE and VOLUME_RANGE: partitions of the
// integer line, numbered from 0. Like MOD they are auto algorithms: the
// partition number is the target's numeric suffix.
//
// bounds holds the partitions' lower bounds from partition 1 on: partition
// 0 is (-inf, bounds[0]), partition i is [bounds[i-1], bounds[i]), the last
// is [bounds[len-1], +inf).
type rangeAlgorithm struct {
	algorithmBase
	bounds []int64
}

const (
	propShardingRanges = "sharding-ranges"
	propRangeLower     = "range-lower"
	propRangeUpper     = "range-upper"
	propShardingVolume = "sharding-volume"
)

// maxPartitions bounds the partitions a range or interval algorithm may
// define, so a typo is an error rather than an out-of-memory.
const maxPartitions = 1 << 16

func newBoundaryRangeAlgorithm(_ string, props map[string]string) (*rangeAlgorithm, error) {
	if err := checkProps(props, propShardingRanges); err != nil {
		return nil, err
	}
	a := &rangeAlgorithm{algorithmBase: algorithmBase{typ: AlgBoundaryRange, props: props}}
	raw := strings.TrimSpace(props[propShardingRanges])
	if raw == "" {
		return nil, propErrorf(propShardingRanges, "required: a comma-separated list of integers")
	}
	for _, f := range strings.Split(raw, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil {
			return nil, propErrorf(propShardingRanges, "%q is not an integer", strings.TrimSpace(f))
		}
		a.bounds = append(a.bounds, n)
	}
	sort.Slice(a.bounds, func(i, j int) bool { return a.bounds[i] < a.bounds[j] })
	for i := 1; i < len(a.bounds); i++ {
		if a.bounds[i] == a.bounds[i-1] {
			return nil, propErrorf(propShardingRanges, "boundary %d appears twice", a.bounds[i])
		}
	}
	if len(a.bounds) >= maxPartitions {
		return nil, propErrorf(propShardingRanges, "more than %d partitions", maxPartitions)
	}
	return a, nil
}

func newVolumeRangeAlgorithm(_ string, props map[string]string) (*rangeAlgorithm, error) {
	if err := checkProps(props, propRangeLower, propRangeUpper, propShardingVolume); err != nil {
		return nil, err
	}
	a := &rangeAlgorithm{algorithmBase: algorithmBase{typ: AlgVolumeRange, props: props}}
	var lu [3]int64
	for i, k := range []string{propRangeLower, propRangeUpper, propShardingVolume} {
		if strings.TrimSpace(props[k]) == "" {
			return nil, propErrorf(k, "required")
		}
		n, err := propInt(props, k, 0)
		if err != nil {
			return nil, err
		}
		lu[i] = n
	}
	lower, upper, volume := lu[0], lu[1], lu[2]
	if volume <= 0 {
		return nil, propErrorf(propShardingVolume, "must be positive")
	}
	if upper-lower < volume {
		return nil, propErrorf(propRangeUpper, "range-upper - range-lower must be at least sharding-volume")
	}
	parts := (upper - lower + volume - 1) / volume
	if parts >= maxPartitions {
		return nil, propErrorf(propShardingVolume, "more than %d partitions", maxPartitions)
	}
	for i := int64(0); i < parts; i++ {
		a.bounds = append(a.bounds, lower+i*volume)
	}
	a.bounds = append(a.bounds, upper)
	return a, nil
}

// AutoTablesAmount is the number of partitions.
func (a *rangeAlgorithm) AutoTablesAmount() int { return len(a.bounds) + 1 }

// partition returns the partition holding x.
func (a *rangeAlgorithm) partition(x int64) int64 {
	return int64(sort.Search(len(a.bounds), func(i int) bool { return a.bounds[i] > x }))
}

func (a *rangeAlgorithm) values(c *routeCtx, values []Value) error {
	for _, v := range values {
		x, err := valOf(v)
		if err != nil {
			return c.routeError(v, err.Error())
		}
		if x.k == vNull {
			continue
		}
		n, err := x.toInt()
		if err != nil {
			return c.routeError(v, err.Error())
		}
		c.addSuffix(a.partition(n), 0)
	}
	return nil
}

func (a *rangeAlgorithm) rangeOf(c *routeCtx, r *Range) error {
	ir, err := toIntRange(r)
	if err != nil {
		return c.routeError(r.Low, err.Error())
	}
	if ir.empty() {
		return nil
	}
	first, last := int64(0), int64(len(a.bounds))
	if ir.hasLo {
		first = a.partition(ir.lo)
	}
	if ir.hasHi {
		last = a.partition(ir.hi)
	}
	for p := first; p <= last; p++ {
		c.addSuffix(p, 0)
	}
	return nil
}

// Kind is standard: the ranges read one column.
func (a *rangeAlgorithm) Kind() StrategyKind { return StrategyStandard }

// Domain is the integers around the boundaries.
func (a *rangeAlgorithm) Domain() (Domain, string) { return rangedDomain(a.bounds), "" }

// routeValues and routeRange are the Algorithm methods (by value, see
// routeCtx) over values and rangeOf.
func (a *rangeAlgorithm) routeValues(c routeCtx, values []Value) (routeCtx, error) {
	err := a.values(&c, values)
	return c, err
}

func (a *rangeAlgorithm) routeRange(c routeCtx, r *Range) (routeCtx, error) {
	err := a.rangeOf(&c, r)
	return c, err
}
