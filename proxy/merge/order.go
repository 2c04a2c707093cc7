package merge

import (
	"bytes"
	"container/heap"
	"errors"
	"io"
	"slices"

	"github.com/shardflake/shardflake/proxy/internal/sqlvalue"
	"github.com/shardflake/shardflake/proxy/rows"
)

// distinctFilter passes a row only if no earlier row had equal visible
// columns (equal as MariaDB's DISTINCT compares: strings by collation,
// NULLs equal). It remembers one key per distinct row, under the budget.
type distinctFilter struct {
	src   stage
	types []sqlvalue.Type // the visible columns'
	mem   *Budget
	seen  map[string]struct{}
	key   []byte
}

func (d *distinctFilter) Next() (rows.Row, error) {
	if d.seen == nil {
		d.seen = map[string]struct{}{}
	}
	for {
		row, err := d.src.Next()
		if err != nil {
			return nil, err
		}
		d.key = d.key[:0]
		for i, t := range d.types {
			d.key = t.AppendKey(d.key, row[i])
		}
		if _, ok := d.seen[string(d.key)]; ok {
			continue
		}
		if err := d.mem.Take(int64(len(d.key))+48, "DISTINCT"); err != nil {
			return nil, err
		}
		d.seen[string(d.key)] = struct{}{}
		return row, nil
	}
}

// sortedDistinct is distinctFilter for input sorted on every visible
// column (and nothing else before them): rows with equal visible columns
// arrive one after the other, so a row is a duplicate exactly when it
// equals the last row passed. It keeps that one row instead of a key per
// distinct row, and compares with early exit instead of weighing every
// string in full (SELECT DISTINCT c ... ORDER BY c over 100 rows spent
// most of its merge time building collation keys).
type sortedDistinct struct {
	src   stage
	types []sqlvalue.Type // the visible columns'
	last  rows.Row        // the last row passed, a copy; nil before the first
	buf   []byte
}

func (d *sortedDistinct) Next() (rows.Row, error) {
	for {
		row, err := d.src.Next()
		if err != nil {
			return nil, err
		}
		if d.last != nil && d.equalLast(row) {
			continue
		}
		d.keep(row)
		return row, nil
	}
}

// equalLast reports whether row's visible columns equal the last row's as
// DISTINCT compares them (the same Compare the sort used).
func (d *sortedDistinct) equalLast(row rows.Row) bool {
	for i, t := range d.types {
		a, b := d.last[i], row[i]
		if (a == nil) != (b == nil) {
			return false
		}
		if bytes.Equal(a, b) {
			continue
		}
		if t.Compare(a, b) != 0 {
			return false
		}
	}
	return true
}

// keep copies row's visible columns into d's own buffer: row is only
// valid until the next read of its stream.
func (d *sortedDistinct) keep(row rows.Row) {
	if d.last == nil {
		d.last = make(rows.Row, len(d.types))
	}
	if d.buf == nil {
		// Never nil, so that an empty string stays non-NULL.
		d.buf = make([]byte, 0, 128)
	}
	d.buf = d.buf[:0]
	for i := range d.types {
		if row[i] != nil {
			d.buf = append(d.buf, row[i]...)
		}
	}
	off := 0
	for i := range d.types {
		if row[i] == nil {
			d.last[i] = nil
			continue
		}
		n := len(row[i])
		d.last[i] = d.buf[off : off+n : off+n]
		off += n
	}
}

// sortedOnVisible reports whether rows sorted on sorted (column indexes,
// most significant first) have equal visible columns next to each other:
// every sort column is visible and every visible column is sorted on.
func sortedOnVisible(sorted []int, visible int) bool {
	if len(sorted) == 0 {
		return false
	}
	covered := make([]bool, visible)
	for _, c := range sorted {
		if c < 0 || c >= visible {
			return false
		}
		covered[c] = true
	}
	for _, ok := range covered {
		if !ok {
			return false
		}
	}
	return true
}

// memSort orders its input in memory (stably: equal rows keep their
// arrival order). With a LIMIT it keeps only the offset+count best rows
// seen so far, so ORDER BY ... LIMIT after grouping holds no more than
// that.
type memSort struct {
	src   stage
	keys  []sortKey
	bound int64 // rows to keep; -1 for all
	mem   *Budget
	rows  []seqRow
	next  int
	built bool
}

// seqRow is a held row and its arrival number, the tie-breaker that makes
// the sort stable.
type seqRow struct {
	row rows.Row
	seq int64
}

func newMemSort(src stage, keys []sortKey, offset, count int64, mem *Budget) *memSort {
	bound := int64(-1)
	if count >= 0 {
		bound = offset + count
		if bound < 0 { // overflow: as good as no bound
			bound = -1
		}
	}
	return &memSort{src: src, keys: keys, bound: bound, mem: mem}
}

func (m *memSort) cmp(a, b seqRow) int {
	if c := compareRows(m.keys, a.row, b.row); c != 0 {
		return c
	}
	switch {
	case a.seq < b.seq:
		return -1
	case a.seq > b.seq:
		return 1
	}
	return 0
}

// worstFirst is a max-heap of the kept rows, the one that would be
// dropped first on top.
type worstFirst struct{ m *memSort }

func (w worstFirst) Len() int           { return len(w.m.rows) }
func (w worstFirst) Less(i, j int) bool { return w.m.cmp(w.m.rows[i], w.m.rows[j]) > 0 }
func (w worstFirst) Swap(i, j int)      { w.m.rows[i], w.m.rows[j] = w.m.rows[j], w.m.rows[i] }
func (w worstFirst) Push(x any)         { w.m.rows = append(w.m.rows, x.(seqRow)) }
func (w worstFirst) Pop() any {
	n := len(w.m.rows) - 1
	x := w.m.rows[n]
	w.m.rows = w.m.rows[:n]
	return x
}

func (m *memSort) build() error {
	if m.bound == 0 {
		return nil
	}
	h := worstFirst{m}
	var seq int64
	for {
		row, err := m.src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		seq++
		if m.bound > 0 && int64(len(m.rows)) >= m.bound {
			// Full: keep the row only if it beats the worst kept one.
			if m.cmp(seqRow{row, seq}, m.rows[0]) >= 0 {
				continue
			}
			m.mem.Give(RowBytes(m.rows[0].row))
			c := row.Clone()
			if err := m.mem.Take(RowBytes(c), "ORDER BY"); err != nil {
				return err
			}
			m.rows[0] = seqRow{c, seq}
			heap.Fix(h, 0)
			continue
		}
		c := row.Clone()
		if err := m.mem.Take(RowBytes(c)+16, "ORDER BY"); err != nil {
			return err
		}
		if m.bound > 0 {
			heap.Push(h, seqRow{c, seq})
		} else {
			m.rows = append(m.rows, seqRow{c, seq})
		}
	}
	slices.SortFunc(m.rows, m.cmp)
	return nil
}

func (m *memSort) Next() (rows.Row, error) {
	if !m.built {
		m.built = true
		if err := m.build(); err != nil {
			return nil, err
		}
	}
	if m.next >= len(m.rows) {
		return nil, io.EOF
	}
	r := m.rows[m.next].row
	m.rows[m.next].row = nil
	m.next++
	return r, nil
}
