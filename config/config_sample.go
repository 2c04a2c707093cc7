package config

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Sharding columns are sampled to validate rules (every row reaches exactly
// one data node; which data nodes no row reaches) and to simulate a key
// distribution for the check command. A column's domain says what values
// make sense for it.

type domainKind int

const (
	domainInt  domainKind = iota + 1 // integers (MOD, ranges, arithmetic inline expressions)
	domainTime                       // date-times (INTERVAL, AUTO_INTERVAL)
)

type columnDomain struct {
	kind domainKind
	// ranged integers (BOUNDARY_RANGE, VOLUME_RANGE): random values fall in
	// [ilo, ihi), samples include points around each boundary.
	ranged   bool
	ilo, ihi int64
	points   []int64
	layout   string    // Go layout values are written in (domainTime)
	lo, hi   time.Time // the algorithm's span (domainTime)
	interval *intervalAlgorithm
	auto     *autoIntervalAlgorithm
}

// columnDomains returns the domain of each sharding column, or why the
// table cannot be sampled (a hint strategy, an inline expression that uses
// its column as text, a column two algorithms read differently).
func (t *TableRule) columnDomains() (map[string]columnDomain, string) {
	doms := map[string]columnDomain{}
	for _, s := range []*Strategy{t.DatabaseStrategy, t.TableStrategy} {
		if s == nil {
			continue
		}
		if s.Kind == StrategyHint {
			return nil, "a hint strategy routes by hint values only"
		}
		var dom columnDomain
		switch a := s.Algorithm.(type) {
		case *inlineAlgorithm:
			if !a.expr.numeric() {
				return nil, fmt.Sprintf("expression %s uses its column as text, not as a number", a.expr.src)
			}
			dom = columnDomain{kind: domainInt}
		case *modAlgorithm:
			dom = columnDomain{kind: domainInt}
		case *rangeAlgorithm:
			dom = rangedDomain(a.bounds)
		case *intervalAlgorithm:
			dom = columnDomain{kind: domainTime, layout: a.layout, lo: a.starts[0], hi: a.end, interval: a}
		case *autoIntervalAlgorithm:
			// partition 0 ends at lower, each later one is sharding-seconds wide
			step := time.Duration(a.seconds) * time.Second
			dom = columnDomain{kind: domainTime, layout: "2006-01-02 15:04:05", lo: a.lower.Add(-step), hi: a.lower.Add(time.Duration(a.amount-1) * step), auto: a}
		default:
			return nil, "algorithm " + s.AlgorithmName + " cannot be sampled"
		}
		for _, c := range s.Columns {
			prev, ok := doms[c]
			switch {
			case ok && (prev.kind != dom.kind || prev.layout != dom.layout):
				return nil, "column " + c + " is read as two different kinds of value"
			case !ok || dom.ranged && !prev.ranged:
				doms[c] = dom
			}
		}
	}
	return doms, ""
}

// rangedDomain spreads random values over the partitions of a range
// algorithm: from one average partition width below the first boundary to
// one above the last, so each partition gets its share.
func rangedDomain(bounds []int64) columnDomain {
	first, last := bounds[0], bounds[len(bounds)-1]
	width := int64(1)
	if len(bounds) > 1 {
		width = max((last-first)/int64(len(bounds)-1), 1)
	} else if first != 0 {
		width = max(first, -first)
	}
	d := columnDomain{kind: domainInt, ranged: true, ilo: first - width, ihi: last + width}
	for _, b := range bounds {
		d.points = append(d.points, b-1, b, b+1)
	}
	d.points = append(d.points, d.ilo, d.ihi)
	return d
}

// numeric reports whether every column the expression reads is an operand
// of arithmetic or .hashCode(), so sampling it with integers is meaningful.
func (t *template) numeric() bool {
	for _, p := range t.parts {
		if p.node != nil && !p.node.numericUse(false) {
			return false
		}
	}
	return true
}

func (n *exprNode) numericUse(inArith bool) bool {
	switch n.op {
	case opVar:
		return inArith
	case opInt, opStr:
		return true
	case opHash:
		return n.a.numericUse(true)
	case opAdd:
		text := n.a.op == opStr || n.b.op == opStr
		return n.a.numericUse(!text) && n.b.numericUse(!text)
	case opNeg, opAbs:
		return n.a.numericUse(true)
	}
	ok := true
	if n.a != nil {
		ok = ok && n.a.numericUse(true)
	}
	if n.b != nil {
		ok = ok && n.b.numericUse(true)
	}
	return ok
}

// samples returns the values validation routes for a column: for integers
// 0..4095 and values spread over every magnitude up to 2^62; for date-times
// points in and around each window or partition.
func (cd columnDomain) samples(rng *rand.Rand) []Value {
	var out []Value
	switch cd.kind {
	case domainInt:
		for i := int64(0); i < 4096; i++ {
			out = append(out, i)
		}
		for b := 12; b <= 62; b++ {
			for i := 0; i < 32; i++ {
				out = append(out, rng.Int64N(int64(1)<<b))
			}
		}
		for _, p := range cd.points {
			out = append(out, p)
		}
	case domainTime:
		if a := cd.interval; a != nil {
			for i, s := range a.starts {
				end := a.windowEnd(i)
				for _, t := range []time.Time{s, s.Add(end.Sub(s) / 2), end.Add(-time.Second)} {
					out = append(out, t.Format(cd.layout))
				}
			}
		}
		if a := cd.auto; a != nil {
			step := time.Duration(a.seconds) * time.Second
			out = append(out, a.lower.Add(-time.Hour).Format(cd.layout))
			for k := int64(0); k < a.amount; k++ {
				s := a.lower.Add(time.Duration(k) * step)
				for _, t := range []time.Time{s, s.Add(step / 2), s.Add(step - time.Second)} {
					out = append(out, t.Format(cd.layout))
				}
			}
		}
	}
	return out
}

// random returns one uniformly random value of the domain: a non-negative
// int64 (for a range algorithm, one around its boundaries), or a time
// between the algorithm's bounds.
func (cd columnDomain) random(rng *rand.Rand) Value {
	if cd.ranged && cd.ihi > cd.ilo {
		return cd.ilo + rng.Int64N(cd.ihi-cd.ilo)
	}
	if cd.kind == domainTime {
		span := cd.hi.Sub(cd.lo)
		if span <= 0 {
			return cd.lo.Format(cd.layout)
		}
		return cd.lo.Add(time.Duration(rng.Int64N(int64(span)))).Format(cd.layout)
	}
	return rng.Int64N(1 << 62)
}

// Distribution is how many of a number of simulated rows each data node
// of a table receives.
type Distribution struct {
	Table string
	Rows  int
	// Counts[i] is the rows data node DataNodes[i] received.
	Counts []int
	// KeyColumn is the sharding column the key generator filled, "" when
	// the key column is not a sharding column or no generator was given.
	KeyColumn string
	// RandomColumns are the sharding columns given uniformly random values
	// (non-negative integers, or date-times within the algorithm's bounds).
	RandomColumns []string
}

// Simulate routes rows through the table's strategies and counts the rows
// per data node. key, when not nil, fills the table's key column (a
// generator's next key); every other sharding column gets a random value
// from rng. The table must be sampleable: no hint strategy, and inline
// expressions that read their columns as numbers.
func (t *TableRule) Simulate(rows int, key func() (int64, error), rng *rand.Rand) (*Distribution, error) {
	doms, why := t.columnDomains()
	if why != "" {
		return nil, fmt.Errorf("table %s cannot be simulated: %s", t.Name, why)
	}
	dist := &Distribution{Table: t.Name, Rows: rows, Counts: make([]int, len(t.DataNodes))}
	cols := t.ShardingColumns()
	for _, c := range cols {
		if c == t.KeyColumn && key != nil && doms[c].kind == domainInt {
			dist.KeyColumn = c
		} else {
			dist.RandomColumns = append(dist.RandomColumns, c)
		}
	}
	index := make(map[DataNode]int, len(t.DataNodes))
	for i, n := range t.DataNodes {
		index[n] = i
	}
	conds := make(map[string]ColumnCondition, len(cols))
	vals := make([]Value, len(cols))
	for i := 0; i < rows; i++ {
		for j, c := range cols {
			if c == dist.KeyColumn {
				k, err := key()
				if err != nil {
					return nil, fmt.Errorf("generate key: %w", err)
				}
				vals[j] = k
			} else {
				vals[j] = doms[c].random(rng)
			}
			conds[c] = ColumnCondition{Column: c, Values: vals[j : j+1 : j+1]}
		}
		nodes, err := t.Route(conds)
		if err != nil {
			return nil, err
		}
		if len(nodes) != 1 {
			return nil, fmt.Errorf("table %s: a row with %s reaches %d data nodes", t.Name, rowString(cols, vals), len(nodes))
		}
		dist.Counts[index[nodes[0]]]++
	}
	return dist, nil
}

// rowString prints column values as "a=1, b=2".
func rowString(cols []string, vals []Value) string {
	s := ""
	for i, c := range cols {
		if i > 0 {
			s += ", "
		}
		s += c + "=" + FormatValue(vals[i])
	}
	return s
}
