package merge

import (
	"errors"
	"io"

	"github.com/shardflake/shardflake/proxy/rows"
)

// rollupGrouper aggregates rows that arrive ordered by the group keys, as
// streamGrouper does, and answers GROUP BY ... WITH ROLLUP: besides each
// group it keeps one group per shorter prefix of the keys (levels[L] for
// the first L keys; levels[n] is the group itself), fed the same rows.
// When a row changes the keys from index d on, the groups of the prefixes
// longer than d are finished and emitted, longest first, each with the
// keys past its prefix NULL: MariaDB's order. Over no rows there is no
// grand total, as in MariaDB.
type rollupGrouper struct {
	grouper
	levels []*group
	held   []int64 // budget each level's group holds
	// queue holds the finished groups to emit, in order.
	queue   []finished
	release int64 // budget of the emitted group, freed on the next call
}

// finished is a group of a level with all its rows, and the budget it
// holds.
type finished struct {
	gr    *group
	level int
	held  int64
}

func (r *rollupGrouper) Next() (rows.Row, error) {
	r.mem.Give(r.release)
	r.release = 0
	for len(r.queue) == 0 {
		if r.done {
			return nil, io.EOF
		}
		row, err := r.src.Next()
		if errors.Is(err, io.EOF) {
			r.done = true
			if r.levels != nil {
				r.finish(0)
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		if r.levels == nil {
			r.levels = make([]*group, len(r.keys)+1)
			r.held = make([]int64, len(r.keys)+1)
			if err := r.open(0, row); err != nil {
				return nil, err
			}
		} else if d := r.firstChange(row); d < len(r.keys) {
			r.finish(d + 1)
			if err := r.open(d+1, row); err != nil {
				return nil, err
			}
		}
		for level, gr := range r.levels {
			left := r.mem.left
			err := r.add(gr, row, "GROUP BY ... WITH ROLLUP")
			r.held[level] += left - r.mem.left
			if err != nil {
				return nil, err
			}
		}
	}
	f := r.queue[0]
	r.queue[0] = finished{}
	r.queue = r.queue[1:]
	r.release = f.held
	out := r.emit(f.gr)
	for _, c := range r.keys[f.level:] {
		out[c] = nil
	}
	return out, nil
}

// firstChange returns the index of the first key in which row differs
// from the current group, len(keys) when it belongs to it.
func (r *rollupGrouper) firstChange(row rows.Row) int {
	first := r.levels[len(r.keys)].first
	for i, c := range r.keys {
		if r.keyType[i].Compare(first[c], row[c]) != 0 {
			return i
		}
	}
	return len(r.keys)
}

// finish queues the groups of the levels from the group itself down to
// prefix length from, which have all their rows.
func (r *rollupGrouper) finish(from int) {
	for level := len(r.keys); level >= from; level-- {
		r.queue = append(r.queue, finished{gr: r.levels[level], level: level, held: r.held[level]})
		r.levels[level], r.held[level] = nil, 0
	}
}

// open starts new groups with row for the levels from prefix length from
// up.
func (r *rollupGrouper) open(from int, row rows.Row) error {
	for level := from; level < len(r.levels); level++ {
		left := r.mem.left
		gr, err := r.newGroup(row, "GROUP BY ... WITH ROLLUP")
		r.held[level] += left - r.mem.left
		if err != nil {
			return err
		}
		r.levels[level] = gr
	}
	return nil
}
