package merge

import (
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/shardflake/shardflake/proxy/internal/sqlvalue"
	"github.com/shardflake/shardflake/proxy/rows"
	"github.com/shardflake/shardflake/router"
)

// GROUP_CONCAT across data nodes (router.GroupConcat): each route row
// carries one argument value of its group and, without DISTINCT, how many
// of the group's rows have it; the merge sorts a group's values under the
// argument's collation and joins them.

// concatSpec is one resolved GROUP_CONCAT.
type concatSpec struct {
	arg      int // the argument column
	argType  sqlvalue.Type
	count    int // rows with the value, -1 for DISTINCT
	maxLen   int // the routes' group_concat_max_len
	sep      []byte
	desc     bool
	distinct bool
	// order are GROUP_CONCAT(x ORDER BY y, ...)'s keys on other
	// expressions than x: col indexes a value's ord.
	order []sortKey
	// ordCols are the route columns of order's keys.
	ordCols []int
	// warner takes the warning of a cut (nil: none); joined counts the
	// values this GROUP_CONCAT joined in the statement (see
	// concatResult).
	warner Warner
	joined int64
}

// concatValue is one value of a group (with its ORDER BY keys) and how
// often it occurs.
type concatValue struct {
	v   []byte
	ord rows.Row
	n   int64
}

func (p *pipeline) concatSpec(a router.Aggregate) (*concatSpec, error) {
	if a.Concat == nil || len(a.Args) != 1 {
		return nil, &InternalError{Msg: "GROUP_CONCAT without its argument column"}
	}
	arg, err := p.column(a.Args[0])
	if err != nil {
		return nil, err
	}
	maxLen, err := p.column(a.Concat.MaxLen)
	if err != nil {
		return nil, err
	}
	cs := &concatSpec{arg: arg, argType: p.types[arg], count: -1, maxLen: maxLen, sep: []byte(a.Concat.Separator), desc: a.Concat.Desc, distinct: a.Distinct, warner: warnerOf(p.ctx)}
	if cs.warner != nil {
		cs.warner.MergesConcat()
	}
	if err := cs.argType.OrderError(); err != nil {
		return nil, notMergeable("GROUP_CONCAT", p.fields[arg], err)
	}
	if !a.Distinct {
		if cs.count, err = p.column(a.Count); err != nil {
			return nil, err
		}
	}
	keys, err := p.orderKeys(a.Concat.Order, "GROUP_CONCAT ... ORDER BY")
	if err != nil {
		return nil, err
	}
	for i, k := range keys {
		cs.ordCols = append(cs.ordCols, k.col)
		k.col = i
		cs.order = append(cs.order, k)
	}
	return cs, nil
}

// addConcat adds the row's value (NULL skipped, as GROUP_CONCAT skips it).
func (s *aggSpec) addConcat(st *aggState, row rows.Row, mem *Budget, key []byte) ([]byte, error) {
	c := s.concat
	st.readLimit(row[c.maxLen])
	v := row[c.arg]
	if v == nil {
		return key, nil
	}
	n := int64(1)
	if c.count >= 0 {
		var err error
		if n, err = parseCount(row[c.count]); err != nil {
			return key, err
		}
	}
	if c.distinct {
		key = c.argType.AppendKey(key[:0], v)
	} else {
		key = append(key[:0], v...) // equal under the collation, still two values
	}
	var ord rows.Row // the ORDER BY keys, NULLs as GROUP_CONCAT sorts them
	if len(c.ordCols) > 0 {
		// The value and each ORDER BY key, each after its length and a
		// colon: read from the front, one way only.
		ord = make(rows.Row, len(c.ordCols))
		k := lengthPrefixed(nil, key)
		for i, col := range c.ordCols {
			o := row[col]
			if o == nil {
				var err error
				if o, err = nullOrderKey(c.order[i].typ); err != nil {
					return key, err
				}
			}
			ord[i] = o
			k = lengthPrefixed(k, o)
		}
		key = k
	}
	if st.values == nil {
		st.values = map[string]*concatValue{}
	}
	if cv, ok := st.values[string(key)]; ok {
		if !c.distinct {
			cv.n += n
		}
		return key, nil
	}
	if err := mem.Take(int64(2*len(key))+64, "GROUP_CONCAT"); err != nil {
		return key, err
	}
	for i, o := range ord {
		ord[i] = slices.Clone(o) // the row's bytes are the route's buffer
	}
	cv := &concatValue{v: slices.Clone(v), ord: ord, n: n}
	st.values[string(key)] = cv
	return key, nil
}

// lengthPrefixed appends b to dst after its length and a colon.
func lengthPrefixed(dst, b []byte) []byte {
	dst = strconv.AppendInt(dst, int64(len(b)), 10)
	return append(append(dst, ':'), b...)
}

// nullOrderKey is what a NULL ORDER BY key of a GROUP_CONCAT sorts as.
// MariaDB does not sort it first there, as ORDER BY does: GROUP_CONCAT
// compares its rows' keys as stored in its temporary table, where a NULL
// is the column's reset value, 0 for a number and the zero time, ” for
// a string or a date. (NULL for qty INT: 4, 2, NULL, 0 under qty DESC,
// the NULL row before the 0 row of a higher order_id.) Other types are
// refused rather than guessed.
func nullOrderKey(t sqlvalue.Type) ([]byte, error) {
	switch t.Class {
	case sqlvalue.ClassInt, sqlvalue.ClassDecimal, sqlvalue.ClassFloat:
		return []byte("0"), nil
	case sqlvalue.ClassTime:
		return []byte("00:00:00"), nil
	case sqlvalue.ClassString, sqlvalue.ClassBinary, sqlvalue.ClassDate:
		return []byte{}, nil
	}
	return nil, &NotSupportedError{What: fmt.Sprintf("GROUP_CONCAT ... ORDER BY across data nodes on a NULL %s key", t.Class)}
}

// readLimit reads group_concat_max_len v from the group's first row (the
// limit is the session's, the same on every route).
func (st *aggState) readLimit(v []byte) {
	if st.limit != 0 {
		return
	}
	st.limit = -1
	if v != nil {
		if n, err := strconv.ParseInt(string(v), 10, 64); err == nil && n > 0 {
			st.limit = n
		}
	}
}

// concatResult joins the group's values in order, cut at
// group_concat_max_len bytes (at a character boundary), or NULL when the
// group had none.
//
// A cut raises MariaDB's warning 1260, "Row N was cut by
// GROUP_CONCAT()", once per cut group. MariaDB's N is the count of
// values that GROUP_CONCAT joined in the statement, the cut one included
// (a cut group joins no more), in the order it read the groups. The merge
// counts so too (c.joined), in the order it finishes the groups: group
// key order when the routes come sorted by it, as MariaDB groups, and the
// hash's order otherwise, where N may differ from MariaDB's.
func (s *aggSpec) concatResult(st *aggState, dst []byte) ([]byte, bool) {
	c := s.concat
	if len(st.values) == 0 {
		return dst, false
	}
	vals := make([]*concatValue, 0, len(st.values))
	for _, cv := range st.values {
		vals = append(vals, cv)
	}
	slices.SortStableFunc(vals, func(a, b *concatValue) int {
		if r := compareRows(c.order, a.ord, b.ord); r != 0 {
			return r
		}
		r := c.argType.Compare(a.v, b.v)
		if r == 0 {
			r = slices.Compare(a.v, b.v) // equal under the collation: a stable order
		}
		if c.desc {
			return -r
		}
		return r
	})
	limit := st.limit
	if limit <= 0 {
		limit = 1 << 62
	}
	start := len(dst)
	first := true
	for _, cv := range vals {
		for range cv.n {
			if !first {
				dst = append(dst, c.sep...)
			}
			first = false
			dst = append(dst, cv.v...)
			c.joined++
			// A value that only fills the limit is no cut: the next
			// one may be.
			if int64(len(dst)-start) > limit {
				if c.warner != nil {
					c.warner.MergeWarning("Warning", 1260, fmt.Sprintf("Row %d was cut by GROUP_CONCAT()", c.joined))
				}
				utf8Text := s.out.Collation != nil && (s.out.Collation.Charset == "utf8mb4" || s.out.Collation.Charset == "utf8mb3")
				return cutText(dst, start+int(limit), utf8Text), true
			}
		}
	}
	return dst, true
}

// cutText cuts b at end; in UTF-8 text it moves back to the start of a
// character that would be cut in two (GROUP_CONCAT keeps whole
// characters).
func cutText(b []byte, end int, utf8Text bool) []byte {
	b = b[:end]
	if !utf8Text {
		return b
	}
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}
