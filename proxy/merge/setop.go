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
// whole before the first row; the DISTINCT after it drops duplicates.
type setOpFilter struct {
	first     rows.Stream
	others    []rows.Stream
	intersect bool
	types     []sqlvalue.Type
	mem       *Budget
	sets      []map[string]struct{}
	key       []byte
}

func newSetOpFilter(op router.SetOperator, streams []rows.Stream, types []sqlvalue.Type, mem *Budget) *setOpFilter {
	return &setOpFilter{first: streams[0], others: streams[1:], intersect: op == router.SetOpIntersect, types: types, mem: mem}
}

func (f *setOpFilter) rowKey(row rows.Row) string {
	f.key = f.key[:0]
	for i, t := range f.types {
		f.key = t.AppendKey(f.key, row[i])
	}
	return string(f.key)
}

func (f *setOpFilter) readOthers() error {
	for _, s := range f.others {
		set := map[string]struct{}{}
		for {
			row, err := s.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
			k := f.rowKey(row)
			if _, ok := set[k]; ok {
				continue
			}
			if err := f.mem.Take(int64(len(k))+48, "INTERSECT or EXCEPT"); err != nil {
				return err
			}
			set[k] = struct{}{}
		}
		f.sets = append(f.sets, set)
	}
	return nil
}

func (f *setOpFilter) Next() (rows.Row, error) {
	if f.sets == nil {
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
		keep := true
		for _, set := range f.sets {
			if _, ok := set[k]; ok != f.intersect {
				keep = false
				break
			}
		}
		if keep {
			return row, nil
		}
	}
}
