package merge

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/shardflake/shardflake/proxy/internal/sqlvalue"
	"github.com/shardflake/shardflake/proxy/rows"
	"github.com/shardflake/shardflake/router"
)

// aggSpec is one resolved router.Aggregate.
type aggSpec struct {
	fn       router.AggregateFunc
	col      int // the aggregate's column; its value is replaced
	distinct bool
	args     []int // DISTINCT: the argument columns
	sum, cnt int   // AVG, the variance family: the partial SUM and COUNT columns
	varPop   int   // the variance family: the partial VAR_POP column
	out      sqlvalue.Type
	argTypes []sqlvalue.Type
	// exact: SUM and AVG computed as DECIMAL (their column is DECIMAL),
	// otherwise as DOUBLE.
	exact bool
	// incr is AVG's div_precision_increment: the result's scale minus
	// the sum's.
	incr int
	// negativeZero: a DOUBLE result of -0 prints as -0 (Dialect).
	negativeZero bool
	concat       *concatSpec // GROUP_CONCAT; JSON_ARRAYAGG's separator and limit
}

func (p *pipeline) aggSpecs(aggs []router.Aggregate) ([]aggSpec, error) {
	out := make([]aggSpec, len(aggs))
	for i, a := range aggs {
		col, err := p.column(a.Column)
		if err != nil {
			return nil, err
		}
		s := aggSpec{fn: a.Func, col: col, distinct: a.Distinct, out: p.types[col], negativeZero: p.dialect.NegativeZero}
		if a.Func == router.AggJSONArrayAgg {
			if a.Concat == nil {
				return nil, &InternalError{Msg: "JSON_ARRAYAGG without its group_concat_max_len column"}
			}
			maxLen, err := p.column(a.Concat.MaxLen)
			if err != nil {
				return nil, err
			}
			s.concat = &concatSpec{arg: -1, count: -1, maxLen: maxLen, sep: []byte(a.Concat.Separator)}
			out[i] = s
			continue
		}
		if a.Func == router.AggGroupConcat {
			if s.concat, err = p.concatSpec(a); err != nil {
				return nil, err
			}
			s.distinct = false
			out[i] = s
			continue
		}
		if a.VarPop != 0 {
			if err := p.varianceSpec(&s, a); err != nil {
				return nil, err
			}
			if col >= p.visible {
				// A hidden one feeds an expression or HAVING, which
				// MariaDB computes on the DOUBLE itself, not on its
				// value printed with the column's decimals:
				// ROUND(STDDEV(k), 6) of an INT k is 42.242967, not
				// the 42.2430 STDDEV(k) prints rounded again.
				s.out.Decimals = sqlvalue.NotFixedDecimals
			}
			out[i] = s
			continue
		}
		s.exact = s.out.Class == sqlvalue.ClassDecimal || s.out.Class == sqlvalue.ClassInt
		if !s.exact && s.out.Decimals == 0 && (a.Func == router.AggSum || a.Func == router.AggAvg) {
			// A DOUBLE SUM or AVG with 0 decimals has no fixed scale:
			// MariaDB says NOT_FIXED_DEC (31) for one, go-mysql-server (the
			// demo's backends) says 0 for every DOUBLE. MariaDB's 0 needs
			// a DOUBLE(M,0) column, whose sums are integral anyway, and
			// its AVG adds div_precision_increment to the scale.
			s.out.Decimals = sqlvalue.NotFixedDecimals
		}
		for _, r := range a.Args {
			c, err := p.column(r)
			if err != nil {
				return nil, err
			}
			if err := p.types[c].EqualError(); err != nil {
				return nil, notMergeable(a.Func.String()+"(DISTINCT ...)", p.fields[c], err)
			}
			s.args = append(s.args, c)
			s.argTypes = append(s.argTypes, p.types[c])
		}
		switch {
		case a.Distinct && len(s.args) == 0:
			return nil, &InternalError{Msg: fmt.Sprintf("%s(DISTINCT) without argument columns", a.Func)}
		case a.Distinct && a.Func != router.AggCount && len(s.args) != 1:
			return nil, &NotSupportedError{What: fmt.Sprintf("%s(DISTINCT ...) of several arguments across data nodes", a.Func)}
		case a.Distinct && (a.Func == router.AggMin || a.Func == router.AggMax):
			// MIN(DISTINCT x) is MIN(x).
			s.distinct = false
		}
		switch a.Func {
		case router.AggCount, router.AggSum, router.AggBitOr, router.AggBitAnd, router.AggBitXor, router.AggJSONObjectAgg:
		case router.AggMin, router.AggMax:
			// MariaDB compares ENUM and SET values by their text here
			// (unlike ORDER BY).
			if err := s.out.MinMaxError(); err != nil {
				return nil, notMergeable(a.Func.String(), p.fields[col], err)
			}
		case router.AggAvg:
			scale := 0
			if s.distinct {
				scale = s.argTypes[0].Decimals
				if s.argTypes[0].Class == sqlvalue.ClassInt {
					scale = 0
				}
			} else {
				if s.sum, err = p.column(a.Sum); err != nil {
					return nil, err
				}
				if s.cnt, err = p.column(a.Count); err != nil {
					return nil, err
				}
				scale = int(p.fields[s.sum].Decimal)
			}
			s.incr = max(int(p.fields[col].Decimal)-scale, 0)
		default:
			return nil, &NotSupportedError{What: fmt.Sprintf("the aggregate %s across data nodes", a.Func)}
		}
		out[i] = s
	}
	return out, nil
}

// aggState is one aggregate's running value within one group.
type aggState struct {
	n     int64  // COUNT, AVG's and the variance family's count
	bits  uint64 // BIT_OR, BIT_AND, BIT_XOR so far (has: a partial was seen)
	dec   sqlvalue.Decimal
	float float64 // a DOUBLE SUM or AVG's sum; the variance family's mean
	m2    float64 // the variance family: the sum of squared deviations
	has   bool    // a non-NULL SUM/AVG partial was seen
	best  []byte  // MIN/MAX so far (owned)
	seen  map[string]struct{}
	// values are GROUP_CONCAT's values so far, by key, and limit its (or
	// JSON_ARRAYAGG's) group_concat_max_len (0: not read yet, -1: none).
	values map[string]*concatValue
	limit  int64
}

// add folds one row's partial values into st.
func (s *aggSpec) add(st *aggState, row rows.Row, mem *Budget, key []byte) ([]byte, error) {
	if s.fn == router.AggJSONArrayAgg {
		return key, s.addArray(st, row, mem)
	}
	if s.concat != nil {
		return s.addConcat(st, row, mem, key)
	}
	if s.distinct {
		return s.addDistinct(st, row, mem, key)
	}
	if s.fn.Variance() {
		return key, s.addVariance(st, row)
	}
	switch s.fn {
	case router.AggCount:
		v, err := parseCount(row[s.col])
		if err != nil {
			return key, err
		}
		st.n += v
	case router.AggSum:
		return key, s.addSum(st, row[s.col], s.out)
	case router.AggAvg:
		v, err := parseCount(row[s.cnt])
		if err != nil {
			return key, err
		}
		st.n += v
		return key, s.addSum(st, row[s.sum], s.out)
	case router.AggBitOr, router.AggBitAnd, router.AggBitXor:
		return key, s.addBits(st, row[s.col])
	case router.AggJSONObjectAgg:
		return key, addObject(st, row[s.col], mem)
	case router.AggMin, router.AggMax:
		v := row[s.col]
		if v == nil {
			return key, nil
		}
		c := 0
		if st.best != nil {
			c = s.out.Compare(v, st.best)
		}
		if st.best == nil || (s.fn == router.AggMin && c < 0) || (s.fn == router.AggMax && c > 0) {
			if err := mem.Take(int64(len(v)-len(st.best)), "MIN/MAX"); err != nil {
				return key, err
			}
			st.best = append(st.best[:0], v...)
			if st.best == nil {
				st.best = []byte{}
			}
		}
	}
	return key, nil
}

// addObject adds the members of a route's JSON_OBJECTAGG v (NULL when
// the route had none) to the object in st.best, which holds "{" and the
// members so far.
func addObject(st *aggState, v []byte, mem *Budget) error {
	if len(v) < 2 || v[0] != '{' || v[len(v)-1] != '}' {
		if v == nil {
			return nil
		}
		return &InternalError{Msg: fmt.Sprintf("partial JSON_OBJECTAGG %.40q is not an object", v)}
	}
	return addMembers(st, v[1:len(v)-1], '{', ", ", mem, "JSON_OBJECTAGG")
}

// addArray adds the elements of a route's JSON_ARRAYAGG (NULL when the
// route had no row) to the array in st.best, which holds "[" and the
// elements so far. MariaDB cuts the elements at group_concat_max_len
// bytes, with a warning counting the elements it wrote in the order it
// read the rows, which the routes do not tell: an array that would be
// cut is refused, and so is a route's array that may have been cut
// there (a cut keeps at least group_concat_max_len - 3 bytes: it backs
// off to a whole character, and cuts a string one byte shorter to close
// its quote).
func (s *aggSpec) addArray(st *aggState, row rows.Row, mem *Budget) error {
	st.readLimit(row[s.concat.maxLen])
	v := row[s.col]
	if len(v) < 2 || v[0] != '[' || v[len(v)-1] != ']' {
		if v == nil {
			return nil
		}
		return &InternalError{Msg: fmt.Sprintf("partial JSON_ARRAYAGG %.40q is not an array", v)}
	}
	elements := v[1 : len(v)-1]
	if st.limit > 0 {
		if int64(len(elements)) > st.limit-4 {
			return &NotSupportedError{What: fmt.Sprintf("JSON_ARRAYAGG across data nodes where one data node's array comes within 3 bytes of group_concat_max_len (%d; that data node may have cut it)", st.limit)}
		}
		total := int64(len(elements))
		if st.best != nil {
			total += int64(len(st.best) - 1 + len(s.concat.sep))
		}
		if total > st.limit {
			return &NotSupportedError{What: fmt.Sprintf("JSON_ARRAYAGG across data nodes longer than group_concat_max_len (%d; MariaDB cuts it with a warning counting the elements in the order it read the rows, which the data nodes do not tell)", st.limit)}
		}
	}
	return addMembers(st, elements, '[', string(s.concat.sep), mem, "JSON_ARRAYAGG")
}

// addMembers appends a route's members (or elements) to the JSON object
// (or array) in st.best, which it opens with open.
func addMembers(st *aggState, members []byte, open byte, sep string, mem *Budget, what string) error {
	if len(members) == 0 {
		return nil
	}
	if err := mem.Take(int64(len(members)+len(sep)+1), what); err != nil {
		return err
	}
	if st.best == nil {
		st.best = append(st.best, open)
	} else {
		st.best = append(st.best, sep...)
	}
	st.best = append(st.best, members...)
	return nil
}

// addBits folds a partial BIT_OR, BIT_AND or BIT_XOR (a BIGINT
// UNSIGNED, never NULL) into st.
func (s *aggSpec) addBits(st *aggState, v []byte) error {
	b, err := strconv.ParseUint(string(v), 10, 64)
	if err != nil {
		return &InternalError{Msg: fmt.Sprintf("partial %s %q is not a BIGINT UNSIGNED", s.fn, v)}
	}
	switch {
	case !st.has:
		st.bits = b
	case s.fn == router.AggBitOr:
		st.bits |= b
	case s.fn == router.AggBitAnd:
		st.bits &= b
	default:
		st.bits ^= b
	}
	st.has = true
	return nil
}

// addSum adds a partial sum v (NULL skipped), read as the type of its
// column.
func (s *aggSpec) addSum(st *aggState, v []byte, typ sqlvalue.Type) error {
	if v == nil {
		return nil
	}
	if s.exact && typ.Class != sqlvalue.ClassFloat && typ.Class != sqlvalue.ClassString {
		d, err := sqlvalue.ParseDecimal(v)
		if err != nil {
			return &InternalError{Msg: fmt.Sprintf("partial %s %q is not a decimal", s.fn, v)}
		}
		st.dec = st.dec.Add(&d)
	} else {
		f, _ := sqlvalue.ParseDouble(v)
		if s.exact {
			// A DECIMAL sum of strings: MariaDB converts each to a number.
			d, err := sqlvalue.ParseDecimal(strconv.AppendFloat(nil, f, 'f', -1, 64))
			if err == nil {
				st.dec = st.dec.Add(&d)
			}
		}
		st.float += f
	}
	st.has = true
	return nil
}

// addDistinct adds the row's argument tuple unless it holds a NULL or was
// seen before in this group.
func (s *aggSpec) addDistinct(st *aggState, row rows.Row, mem *Budget, key []byte) ([]byte, error) {
	key = key[:0]
	for i, c := range s.args {
		if row[c] == nil {
			return key, nil
		}
		key = s.argTypes[i].AppendKey(key, row[c])
	}
	if st.seen == nil {
		st.seen = map[string]struct{}{}
	}
	if _, ok := st.seen[string(key)]; ok {
		return key, nil
	}
	if err := mem.Take(int64(len(key))+64, fmt.Sprintf("%s(DISTINCT ...)", s.fn)); err != nil {
		return key, err
	}
	st.seen[string(key)] = struct{}{}
	st.n++
	if s.fn == router.AggSum || s.fn == router.AggAvg {
		return key, s.addSum(st, row[s.args[0]], s.argTypes[0])
	}
	return key, nil
}

// result appends the merged value of the aggregate (nil for NULL).
func (s *aggSpec) result(st *aggState, dst []byte) ([]byte, bool) {
	switch s.fn {
	case router.AggGroupConcat:
		return s.concatResult(st, dst)
	case router.AggVarPop, router.AggVarSamp, router.AggStddevPop, router.AggStddevSamp:
		return s.varianceResult(st, dst)
	case router.AggCount:
		return strconv.AppendInt(dst, st.n, 10), true
	case router.AggSum:
		if !st.has {
			return dst, false
		}
		if s.exact {
			return st.dec.Append(dst, s.out.Decimals), true
		}
		return sqlvalue.AppendDouble(dst, signedZero(st.float, s.negativeZero), s.out.Decimals), true
	case router.AggAvg:
		if st.n == 0 || !st.has {
			return dst, false
		}
		if s.exact {
			n := sqlvalue.DecimalFromInt(st.n)
			q, _ := st.dec.Quo(&n, s.incr)
			return q.Append(dst, s.out.Decimals), true
		}
		return sqlvalue.AppendDouble(dst, signedZero(st.float/float64(st.n), s.negativeZero), s.out.Decimals), true
	case router.AggMin, router.AggMax:
		if st.best == nil {
			return dst, false
		}
		return append(dst, st.best...), true
	case router.AggJSONObjectAgg:
		if st.best == nil {
			return dst, false
		}
		return append(append(dst, st.best...), '}'), true
	case router.AggJSONArrayAgg:
		if st.best == nil {
			return dst, false
		}
		return append(append(dst, st.best...), ']'), true
	case router.AggBitOr, router.AggBitAnd, router.AggBitXor:
		bits := st.bits
		if !st.has && s.fn == router.AggBitAnd {
			// BIT_AND of no rows: every bit set.
			bits = ^uint64(0)
		}
		return strconv.AppendUint(dst, bits, 10), true
	}
	return dst, false
}

// parseCount reads a partial COUNT (a BIGINT, never NULL but tolerated).
func parseCount(v []byte) (int64, error) {
	if v == nil {
		return 0, nil
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return 0, &InternalError{Msg: fmt.Sprintf("partial count %q: %v", v, err)}
	}
	return n, nil
}

// group is one group being aggregated.
type group struct {
	first  rows.Row // the group's first row (owned): keys and other columns
	states []aggState
}

// grouper holds what both ways of grouping share.
type grouper struct {
	src     stage
	keys    []int
	keyType []sqlvalue.Type
	aggs    []aggSpec
	mem     *Budget
	n       int
	keyBuf  []byte
	out     rows.Row
	outBuf  []byte
	done    bool
}

// newGrouper returns the grouping stage over src, whose rows come sorted
// by the columns sorted (none when unsorted).
func (p *pipeline) newGrouper(src stage, g *router.Group, sorted []int) (stage, error) {
	gr := grouper{src: src, mem: p.mem, n: p.n}
	for _, k := range g.Keys {
		c, err := p.column(k)
		if err != nil {
			return nil, err
		}
		if err := p.types[c].EqualError(); err != nil {
			return nil, notMergeable("GROUP BY", p.fields[c], err)
		}
		gr.keys = append(gr.keys, c)
		gr.keyType = append(gr.keyType, p.types[c])
	}
	aggs, err := p.aggSpecs(g.Aggregates)
	if err != nil {
		return nil, err
	}
	gr.aggs = aggs
	if g.Rollup {
		if len(gr.keys) == 0 || len(sorted) < len(gr.keys) || !slices.Equal(sorted[:len(gr.keys)], gr.keys) {
			return nil, &NotSupportedError{What: "GROUP BY ... WITH ROLLUP across data nodes without the routes sorted by the group keys"}
		}
		return &rollupGrouper{grouper: gr}, nil
	}
	if g.Streamed && len(gr.keys) > 0 && groupsAdjacent(gr.keys, sorted) {
		return &streamGrouper{grouper: gr}, nil
	}
	return &hashGrouper{grouper: gr}, nil
}

// groupsAdjacent reports whether rows sorted by the columns sorted (in
// that order) keep each group's rows together: the first len(keys) sort
// columns are the group keys, in any order. Otherwise the merge groups by
// hashing even when the plan says Streamed.
func groupsAdjacent(keys, sorted []int) bool {
	if len(sorted) < len(keys) {
		return false
	}
	for _, k := range keys {
		if !slices.Contains(sorted[:len(keys)], k) {
			return false
		}
	}
	return true
}

// newGroup starts a group with row, which it copies.
func (g *grouper) newGroup(row rows.Row, what string) (*group, error) {
	first := row.Clone()
	if err := g.mem.Take(RowBytes(first)+int64(64*len(g.aggs)), what); err != nil {
		return nil, err
	}
	return &group{first: first, states: make([]aggState, len(g.aggs))}, nil
}

func (g *grouper) add(gr *group, row rows.Row, what string) error {
	for i := range g.aggs {
		var err error
		if g.keyBuf, err = g.aggs[i].add(&gr.states[i], row, g.mem, g.keyBuf); err != nil {
			var me *MemoryError
			if errors.As(err, &me) {
				me.What = what + ", " + me.What
			}
			return err
		}
	}
	return nil
}

// emit builds the output row of gr: its first row with every aggregate's
// column replaced by the merged value. first nil is the group of an
// aggregate query over no rows.
func (g *grouper) emit(gr *group) rows.Row {
	if cap(g.out) < g.n {
		g.out = make(rows.Row, g.n)
	}
	g.out = g.out[:g.n]
	if gr.first != nil {
		copy(g.out, gr.first)
	} else {
		clear(g.out)
	}
	g.outBuf = g.outBuf[:0]
	type span struct{ start, end int }
	spans := make([]span, len(g.aggs))
	nulls := make([]bool, len(g.aggs))
	for i := range g.aggs {
		start := len(g.outBuf)
		var ok bool
		g.outBuf, ok = g.aggs[i].result(&gr.states[i], g.outBuf)
		spans[i], nulls[i] = span{start, len(g.outBuf)}, !ok
	}
	for i, a := range g.aggs {
		if nulls[i] {
			g.out[a.col] = nil
			continue
		}
		v := g.outBuf[spans[i].start:spans[i].end:spans[i].end]
		if v == nil {
			v = []byte{} // an empty string, not NULL
		}
		g.out[a.col] = v
	}
	return g.out
}

// sameGroup reports whether row belongs to the group whose first row is
// first (keys equal as MariaDB's GROUP BY compares them).
func (g *grouper) sameGroup(first, row rows.Row) bool {
	for i, c := range g.keys {
		if g.keyType[i].Compare(first[c], row[c]) != 0 {
			return false
		}
	}
	return true
}

// streamGrouper aggregates rows that arrive ordered by the group keys, one
// group at a time.
type streamGrouper struct {
	grouper
	cur     *group
	held    int64 // budget cur holds
	release int64 // budget the emitted group held, freed on the next call
}

func (s *streamGrouper) Next() (rows.Row, error) {
	if s.done {
		return nil, io.EOF
	}
	s.mem.Give(s.release)
	s.release = 0
	for {
		row, err := s.src.Next()
		if errors.Is(err, io.EOF) {
			s.done = true
			if s.cur == nil {
				return nil, io.EOF
			}
			return s.emit(s.cur), nil
		}
		if err != nil {
			return nil, err
		}
		left := s.mem.left
		if s.cur != nil && s.sameGroup(s.cur.first, row) {
			err := s.add(s.cur, row, "GROUP BY")
			s.held += left - s.mem.left
			if err != nil {
				return nil, err
			}
			continue
		}
		prev := s.cur
		// The finished group's memory is free once its row is read.
		s.release, s.held = s.held, 0
		if s.cur, err = s.newGroup(row, "GROUP BY"); err != nil {
			return nil, err
		}
		err = s.add(s.cur, row, "GROUP BY")
		s.held = left - s.mem.left
		if err != nil {
			return nil, err
		}
		if prev != nil {
			return s.emit(prev), nil
		}
	}
}

// hashGrouper aggregates rows in any order: it reads all of them into
// groups held in memory (under the budget), then returns the groups in the
// order they first appeared.
type hashGrouper struct {
	grouper
	groups []*group
	next   int
	built  bool
}

func (h *hashGrouper) build() error {
	index := map[string]*group{}
	var key []byte
	for {
		row, err := h.src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		key = key[:0]
		for i, c := range h.keys {
			key = h.keyType[i].AppendKey(key, row[c])
		}
		gr, ok := index[string(key)]
		if !ok {
			if gr, err = h.newGroup(row, "GROUP BY"); err != nil {
				return err
			}
			if err := h.mem.Take(int64(len(key))+48, "GROUP BY"); err != nil {
				return err
			}
			index[string(key)] = gr
			h.groups = append(h.groups, gr)
		}
		if err := h.add(gr, row, "GROUP BY"); err != nil {
			return err
		}
	}
	if len(h.groups) == 0 && len(h.keys) == 0 {
		// An aggregate without GROUP BY answers one row even over no rows.
		h.groups = append(h.groups, &group{states: make([]aggState, len(h.aggs))})
	}
	return nil
}

func (h *hashGrouper) Next() (rows.Row, error) {
	if !h.built {
		h.built = true
		if err := h.build(); err != nil {
			return nil, err
		}
	}
	if h.next >= len(h.groups) {
		return nil, io.EOF
	}
	gr := h.groups[h.next]
	h.groups[h.next] = nil
	h.next++
	return h.emit(gr), nil
}
