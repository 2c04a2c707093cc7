package merge

import (
	"errors"
	"fmt"
	"io"

	"github.com/shardflake/shardflake/proxy/rows"
)

// sortMerge is the streaming k-way merge of routes that each return their
// rows in the same order: a binary heap of the routes' current rows, the
// least on top. It holds one row per route and copies none: the row it
// returns is the route's own, and that route advances only on the next
// call. Ties keep route order, so the merge is stable across routes.
type sortMerge struct {
	keys    []sortKey
	cursors []*cursor
	heap    []int // indexes into cursors, a min-heap
	last    int   // cursor whose row was returned last; -1 before the first
	started bool
}

// cursor is one route's position.
type cursor struct {
	s   rows.Stream
	row rows.Row
	// prev holds the sort-key values of the route's previous row, to check
	// that the route's order agrees with the merge's comparison.
	prev    rows.Row
	prevBuf []byte
	hasPrev bool
}

func newSortMerge(streams []rows.Stream, keys []sortKey) *sortMerge {
	m := &sortMerge{keys: keys, last: -1}
	for _, s := range streams {
		m.cursors = append(m.cursors, &cursor{s: s, prev: make(rows.Row, len(s.Columns()))})
	}
	return m
}

func (m *sortMerge) less(i, j int) bool {
	a, b := m.cursors[i], m.cursors[j]
	if c := compareRows(m.keys, a.row, b.row); c != 0 {
		return c < 0
	}
	return i < j
}

func (m *sortMerge) down(pos int) {
	h := m.heap
	for {
		l := 2*pos + 1
		if l >= len(h) {
			return
		}
		small := l
		if r := l + 1; r < len(h) && m.less(h[r], h[l]) {
			small = r
		}
		if !m.less(h[small], h[pos]) {
			return
		}
		h[pos], h[small] = h[small], h[pos]
		pos = small
	}
}

func (m *sortMerge) up(pos int) {
	h := m.heap
	for pos > 0 {
		parent := (pos - 1) / 2
		if !m.less(h[pos], h[parent]) {
			return
		}
		h[pos], h[parent] = h[parent], h[pos]
		pos = parent
	}
}

// advance reads cursor i's next row; it reports false at the route's end.
func (m *sortMerge) advance(i int) (bool, error) {
	c := m.cursors[i]
	if c.row != nil {
		c.remember(m.keys)
	}
	row, err := c.s.Next()
	if errors.Is(err, io.EOF) {
		c.row = nil
		c.s.Close()
		return false, nil
	}
	if err != nil {
		return false, err
	}
	c.row = row
	if c.hasPrev && compareRows(m.keys, c.prev, row) > 0 {
		return false, m.outOfOrder(c, row)
	}
	return true, nil
}

// remember copies the sort-key values of the cursor's row, which the
// route is about to overwrite.
func (c *cursor) remember(keys []sortKey) {
	c.prevBuf = c.prevBuf[:0]
	for _, k := range keys {
		if v := c.row[k.col]; v != nil {
			c.prevBuf = append(c.prevBuf, v...)
		}
	}
	off := 0
	for _, k := range keys {
		v := c.row[k.col]
		if v == nil {
			c.prev[k.col] = nil
			continue
		}
		if len(v) == 0 {
			c.prev[k.col] = []byte{} // an empty string, not NULL
			continue
		}
		c.prev[k.col] = c.prevBuf[off : off+len(v) : off+len(v)]
		off += len(v)
	}
	c.hasPrev = true
}

// outOfOrder is the error for a route whose rows contradict the merge's
// comparison: most likely a string column whose collation is not the one
// its column definition implies. Answering would put rows out of order.
func (m *sortMerge) outOfOrder(c *cursor, row rows.Row) error {
	for _, k := range m.keys {
		if cmp := k.typ.Compare(c.prev[k.col], row[k.col]); cmp != 0 {
			coll := ""
			if k.typ.Collation != nil {
				coll = fmt.Sprintf(" with collation %s", k.typ.Collation)
			}
			return &NotSupportedError{What: fmt.Sprintf(
				"ORDER BY across data nodes on a column the merge compares differently from MariaDB: a data node sent %q before %q, which the merge compares as %s%s (give the column a collation the merge knows, or add conditions on the sharding columns that pick one data node)",
				c.prev[k.col], row[k.col], k.typ.Class, coll)}
		}
	}
	return &InternalError{Msg: "rows out of order with equal keys"}
}

func (m *sortMerge) Next() (rows.Row, error) {
	if !m.started {
		m.started = true
		for i := range m.cursors {
			ok, err := m.advance(i)
			if err != nil {
				return nil, err
			}
			if ok {
				m.heap = append(m.heap, i)
				m.up(len(m.heap) - 1)
			}
		}
	} else if m.last >= 0 {
		ok, err := m.advance(m.last)
		if err != nil {
			return nil, err
		}
		if ok {
			m.down(0)
		} else {
			n := len(m.heap) - 1
			m.heap[0] = m.heap[n]
			m.heap = m.heap[:n]
			if n > 0 {
				m.down(0)
			}
		}
	}
	if len(m.heap) == 0 {
		m.last = -1
		return nil, io.EOF
	}
	m.last = m.heap[0]
	return m.cursors[m.last].row, nil
}
