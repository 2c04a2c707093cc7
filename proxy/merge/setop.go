package merge

import (
	"errors"
	"io"

	"github.com/shardflake/shardflake/proxy/internal/sqlvalue"
	"github.com/shardflake/shardflake/proxy/rows"
	"github.com/shardflake/shardflake/router"
)

// setOpFilter passes the rows of a set operation's first branch that
// every other branch holds (INTERSECT) or that none does (EXCEPT),
// comparing rows by their visible columns' keys as DISTINCT does (the
// columns' collations, NULL equal to NULL). It reads the other branches
// whole before the first row. Under DISTINCT, which drops the duplicates
// after it, a row is kept whenever the others hold it (or do not); under
// ALL each row the others hold is matched once: INTERSECT ALL keeps a
// first-branch row while every other branch has a copy left and uses one
// of each, EXCEPT ALL drops it while some other branch has a copy left
// and uses that one. MariaDB counts ALL's copies in a temporary table of
// one row per key, so every copy it returns is the first row of its key
// it read ('new' for 'NEW' under a case-insensitive collation): so are
// the filter's (reps), of the first branch's rows in the order it reads
// them.
type setOpFilter struct {
	first     rows.Stream
	others    []rows.Stream
	intersect bool
	all       bool
	types     []sqlvalue.Type
	mem       *Budget
	counts    []map[string]int
	reps      map[string]rows.Row
	key       []byte
}

func newSetOpFilter(op router.SetOperator, all bool, streams []rows.Stream, types []sqlvalue.Type, mem *Budget) *setOpFilter {
	return &setOpFilter{first: streams[0], others: streams[1:], intersect: op == router.SetOpIntersect, all: all, types: types, mem: mem}
}

func (f *setOpFilter) rowKey(row rows.Row) string {
	f.key = f.key[:0]
	for i, t := range f.types {
		f.key = t.AppendKey(f.key, row[i])
	}
	return string(f.key)
}

func (f *setOpFilter) readOthers() error {
	f.counts = make([]map[string]int, 0, len(f.others))
	for _, s := range f.others {
		counts := map[string]int{}
		for {
			row, err := s.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
			k := f.rowKey(row)
			if n, ok := counts[k]; ok {
				counts[k] = n + 1
				continue
			}
			if err := f.mem.Take(int64(len(k))+48, "INTERSECT or EXCEPT"); err != nil {
				return err
			}
			counts[k] = 1
		}
		f.counts = append(f.counts, counts)
	}
	return nil
}

// keep reports whether the first branch's row of key k is in the
// result, using the copies it matches under ALL.
func (f *setOpFilter) keep(k string) bool {
	if f.intersect {
		for _, c := range f.counts {
			if c[k] == 0 {
				return false
			}
		}
		if f.all {
			for _, c := range f.counts {
				c[k]--
			}
		}
		return true
	}
	for _, c := range f.counts {
		if n := c[k]; n > 0 {
			if f.all {
				c[k] = n - 1
			}
			return false
		}
	}
	return true
}

func (f *setOpFilter) Next() (rows.Row, error) {
	if f.counts == nil {
		if err := f.readOthers(); err != nil {
			return nil, err
		}
	}
	for {
		row, err := f.first.Next()
		if err != nil {
			return nil, err
		}
		k := f.rowKey(row)
		if !f.keep(k) {
			continue
		}
		if !f.all {
			return row, nil
		}
		if rep, ok := f.reps[k]; ok {
			return rep.Clone(), nil // later stages may fill columns in place
		}
		if f.reps == nil {
			f.reps = map[string]rows.Row{}
		}
		// The branches' rows are held whole already (runSetOp reads each
		// into memory under the same budget): the first of a value is
		// kept as it is, and only its key is counted.
		if err := f.mem.Take(int64(len(k))+48, "INTERSECT ALL or EXCEPT ALL"); err != nil {
			return nil, err
		}
		f.reps[k] = row
		return row.Clone(), nil
	}
}
