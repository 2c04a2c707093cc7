package proxy

import "sync"

// boundedMap is what the server learns per statement shape and keeps
// until DDL may have made it stale (result columns, collations, joined
// routes' columns): safe for concurrent use by every session, and
// bounded: at max entries it starts over, so a workload of more shapes
// than that relearns them instead of growing without end.
type boundedMap[K comparable, V any] struct {
	mu  sync.Mutex
	max int
	m   map[K]V
}

func newBoundedMap[K comparable, V any](max int) *boundedMap[K, V] {
	return &boundedMap[K, V]{max: max, m: map[K]V{}}
}

func (b *boundedMap[K, V]) get(k K) (V, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	v, ok := b.m[k]
	return v, ok
}

func (b *boundedMap[K, V]) put(k K, v V) {
	b.update(k, func(old *V) { *old = v })
}

// update changes k's entry in place (the zero V when there is none).
func (b *boundedMap[K, V]) update(k K, f func(*V)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	v, ok := b.m[k]
	if !ok && len(b.m) >= b.max {
		b.m = map[K]V{}
	}
	f(&v)
	b.m[k] = v
}

// clear forgets every entry (DDL ran).
func (b *boundedMap[K, V]) clear() {
	b.mu.Lock()
	b.m = map[K]V{}
	b.mu.Unlock()
}
