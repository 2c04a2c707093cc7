package algorithm

import (
	"strconv"
	"strings"
)

// modAlgorithm is MOD (value mod sharding-count) and HASH_MOD
// (|hashCode| mod sharding-count). Both are ShardingSphere auto algorithms:
// the number they compute is the target's numeric suffix (see
// routeCtx.addSuffix), not an index.
type modAlgorithm struct {
	algorithmBase
	count       int64
	hash        bool
	startOffset int // MOD: digits cut from the front of the value's text
	stopOffset  int // MOD: digits cut from the end
	pad         int // MOD zero-padding: suffix width, 0 when off
}

const (
	propShardingCount = "sharding-count"
	propStartOffset   = "start-offset"
	propStopOffset    = "stop-offset"
	propZeroPadding   = "zero-padding"
)

func newModAlgorithm(typ string, props map[string]string) (*modAlgorithm, error) {
	a := &modAlgorithm{algorithmBase: algorithmBase{typ: typ, props: props}, hash: typ == AlgHashMod}
	known := []string{propShardingCount}
	if !a.hash {
		known = append(known, propStartOffset, propStopOffset, propZeroPadding)
	}
	if err := checkProps(props, known...); err != nil {
		return nil, err
	}
	n, err := propInt(props, propShardingCount, -1)
	if err != nil {
		return nil, err
	}
	if n <= 0 {
		return nil, propErrorf(propShardingCount, "required, a positive integer")
	}
	a.count = n
	start, err := propInt(props, propStartOffset, 0)
	if err != nil {
		return nil, err
	}
	stop, err := propInt(props, propStopOffset, 0)
	if err != nil {
		return nil, err
	}
	if start < 0 || stop < 0 {
		return nil, propErrorf(propStartOffset, "offsets cannot be negative")
	}
	a.startOffset, a.stopOffset = int(start), int(stop)
	zero, err := propBool(props, propZeroPadding)
	if err != nil {
		return nil, err
	}
	if zero {
		a.pad = len(strconv.FormatInt(n-1, 10))
	}
	return a, nil
}

// propInt reads an integer prop; def when absent.
func propInt(props map[string]string, key string, def int64) (int64, error) {
	s, ok := props[key]
	if !ok || strings.TrimSpace(s) == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, propErrorf(key, "want an integer, got %q", s)
	}
	return n, nil
}

// AutoTablesAmount is the number of data nodes the algorithm addresses
// (sharding-count), used to generate autoTables' data nodes.
func (a *modAlgorithm) AutoTablesAmount() int { return int(a.count) }

func (a *modAlgorithm) suffixOf(x val) (int64, error) {
	if a.hash {
		h, err := x.javaHash()
		if err != nil {
			return 0, err
		}
		if h < 0 {
			h = -h
		}
		return h % a.count, nil
	}
	if a.startOffset > 0 || a.stopOffset > 0 {
		text := string(x.appendText(nil))
		if len(text)-a.stopOffset <= a.startOffset {
			return 0, errOffsets
		}
		x = val{k: vRaw, s: text[a.startOffset : len(text)-a.stopOffset]}
	}
	n, err := x.toInt()
	if err != nil {
		return 0, err
	}
	m := n % a.count
	if m < 0 {
		m += a.count // BigInteger.mod: never negative
	}
	return m, nil
}

var errOffsets = &PropError{Prop: propStartOffset, Reason: "value is shorter than start-offset + stop-offset"}

func (a *modAlgorithm) values(c *routeCtx, values []Value) error {
	for _, v := range values {
		x, err := valOf(v)
		if err != nil {
			return c.routeError(v, err.Error())
		}
		if x.k == vNull {
			continue
		}
		n, err := a.suffixOf(x)
		if err != nil {
			return c.routeError(v, err.Error())
		}
		c.addSuffix(n, a.pad)
	}
	return nil
}

// rangeOf prunes MOD ranges narrower than sharding-count; HASH_MOD and
// wider or open ranges reach every target.
func (a *modAlgorithm) rangeOf(c *routeCtx, r *Range) error {
	if a.hash || a.startOffset > 0 || a.stopOffset > 0 {
		c.addAll()
		return nil
	}
	ir, err := toIntRange(r)
	if err != nil {
		return c.routeError(r.Low, err.Error())
	}
	if ir.empty() {
		return nil
	}
	if !ir.hasLo || !ir.hasHi || uint64(ir.hi-ir.lo) >= uint64(a.count-1) {
		c.addAll()
		return nil
	}
	for x := ir.lo; ; x++ {
		m := x % a.count
		if m < 0 {
			m += a.count
		}
		c.addSuffix(m, a.pad)
		if x == ir.hi {
			return nil
		}
	}
}

// Kind is standard: MOD and HASH_MOD read one column.
func (a *modAlgorithm) Kind() StrategyKind { return StrategyStandard }

// Domain is the integers.
func (a *modAlgorithm) Domain() (Domain, string) { return Domain{Kind: DomainInt}, "" }

// routeValues and routeRange are the Algorithm methods (by value, see
// routeCtx) over values and rangeOf.
func (a *modAlgorithm) routeValues(c routeCtx, values []Value) (routeCtx, error) {
	err := a.values(&c, values)
	return c, err
}

func (a *modAlgorithm) routeRange(c routeCtx, r *Range) (routeCtx, error) {
	err := a.rangeOf(&c, r)
	return c, err
}
