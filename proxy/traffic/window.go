package traffic

import (
	"context"
	"sync"
	"time"
)

// windowCounter counts permits in buckets of size, aligned to the Unix
// epoch, and admits while every window of span buckets stays within
// limit. The fixed window is one bucket per window; the sliding window
// several. Buckets after the current one hold permits reserved by
// statements that wait for them.
type windowCounter struct {
	clock Clock
	size  time.Duration // of one bucket
	span  int64         // buckets per window
	limit int

	mu     sync.Mutex
	counts []bucketCount // ascending bucket index; none older than a window
}

type bucketCount struct {
	idx int64
	n   int
}

func (w *windowCounter) index(t time.Time) int64 { return t.UnixNano() / int64(w.size) }

func (w *windowCounter) start(idx int64) time.Time { return time.Unix(0, idx*int64(w.size)) }

// prune drops buckets no window that contains cur counts.
func (w *windowCounter) prune(cur int64) {
	i := 0
	for i < len(w.counts) && w.counts[i].idx <= cur-w.span {
		i++
	}
	if i > 0 {
		w.counts = append(w.counts[:0], w.counts[i:]...)
	}
}

// sum counts the permits of the window that ends with bucket end.
func (w *windowCounter) sum(end int64) int {
	s := 0
	for _, c := range w.counts {
		if c.idx > end-w.span && c.idx <= end {
			s += c.n
		}
	}
	return s
}

// fits reports whether n more permits in bucket b keep every window that
// holds b within the limit (the windows that end in later buckets count
// permits reserved there).
func (w *windowCounter) fits(b int64, n int) bool {
	last := b
	if k := len(w.counts); k > 0 {
		last = max(b, min(w.counts[k-1].idx, b+w.span-1))
	}
	for end := b; end <= last; end++ {
		if w.sum(end)+n > w.limit {
			return false
		}
	}
	return true
}

func (w *windowCounter) add(b int64, n int) {
	for i := range w.counts {
		if w.counts[i].idx == b {
			w.counts[i].n += n
			return
		}
		if w.counts[i].idx > b {
			w.counts = append(w.counts, bucketCount{})
			copy(w.counts[i+1:], w.counts[i:])
			w.counts[i] = bucketCount{idx: b, n: n}
			return
		}
	}
	w.counts = append(w.counts, bucketCount{idx: b, n: n})
}

func (w *windowCounter) Acquire(ctx context.Context, n int, wait time.Duration) (Permit, error) {
	now := w.clock.Now()
	w.mu.Lock()
	cur := w.index(now)
	w.prune(cur)
	b, at := cur, now
	for !w.fits(b, n) {
		b++
		at = w.start(b)
		if at.Sub(now) > wait {
			w.mu.Unlock()
			return Permit{}, ErrLimited
		}
	}
	w.add(b, n)
	w.mu.Unlock()
	p := Permit{N: n, Waited: at.Sub(now), at: at, slot: b}
	if err := sleep(ctx, w.clock, p.Waited); err != nil {
		w.Release(p, false)
		return Permit{}, err
	}
	return p, nil
}

// Release takes back the permits of a statement that did not run from
// the bucket that counted them, while that bucket is still counted.
func (w *windowCounter) Release(p Permit, ran bool) {
	if ran {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := range w.counts {
		if w.counts[i].idx == p.slot {
			w.counts[i].n = max(0, w.counts[i].n-p.N)
			return
		}
	}
}

func (w *windowCounter) Capacity() int { return w.limit }

func (w *windowCounter) State() State {
	now := w.clock.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	return State{Available: float64(max(0, w.limit-w.sum(w.index(now))))}
}
