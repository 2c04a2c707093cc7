package idgen

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// memSegments is one segment row shared by several generators, as a
// table row is shared by several proxies.
type memSegments struct {
	mu      sync.Mutex
	max     int64
	fetches int
	steps   []int64
	down    bool
	gate    chan struct{} // when set, Fetch waits for it
}

func (m *memSegments) Fetch(ctx context.Context, step int64) (int64, error) {
	if m.gate != nil {
		<-m.gate
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return 0, errors.New("connection refused")
	}
	m.fetches++
	m.steps = append(m.steps, step)
	m.max += step
	return m.max, nil
}

func (m *memSegments) Raise(ctx context.Context, floor int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return errors.New("connection refused")
	}
	m.max = max(m.max, floor)
	return nil
}

func (m *memSegments) Addr() string { return "mem/segments" }

func (m *memSegments) setDown(d bool) {
	m.mu.Lock()
	m.down = d
	m.mu.Unlock()
}

func segmentConfig(step int64) SegmentConfig {
	return SegmentConfig{Step: step, MaxStep: 64 * step, SegmentDuration: time.Hour,
		Store: StoreConfig{FetchTimeout: time.Second, RetryAfter: time.Hour}}
}

func TestSegmentUniqueAcrossGeneratorsAndContiguous(t *testing.T) {
	store := &memSegments{}
	gens := []*Segment{NewSegment(segmentConfig(10), store, nil), NewSegment(segmentConfig(10), store, nil)}
	var mu sync.Mutex
	seen := map[int64]bool{}
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(g *Segment, n int) {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				first, err := g.NextN(n)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for k := first; k < first+int64(n); k++ {
					if seen[k] {
						t.Errorf("key %d issued twice", k)
					}
					seen[k] = true
				}
				mu.Unlock()
			}
		}(gens[w%2], 1+w%4)
	}
	wg.Wait()
	if want := 300 * 2 * (1 + 2 + 3 + 4); len(seen) != want {
		t.Fatalf("%d keys, want %d", len(seen), want)
	}
	// A new generator on the same row (a restart) starts above all of them.
	g := NewSegment(segmentConfig(10), store, nil)
	first, err := g.NextN(1)
	if err != nil {
		t.Fatal(err)
	}
	for k := range seen {
		if k >= first {
			t.Fatalf("restarted generator issued %d, not above the earlier %d", first, k)
		}
	}
}

func TestSegmentStepAdaptsWithinBounds(t *testing.T) {
	store := &memSegments{}
	cfg := segmentConfig(4)
	cfg.MaxStep = 16
	g := NewSegment(cfg, store, nil)
	for i := 0; i < 200; i++ {
		if _, err := g.NextN(1); err != nil {
			t.Fatal(err)
		}
	}
	// The last keys may have started a preload: the store has seen its
	// fetch before the generator counts its round trip. Wait for the two
	// to agree (a generator that miscounts never does).
	var steps []int64
	pollUntil(t, func() bool {
		store.mu.Lock()
		steps = append(steps[:0], store.steps...)
		store.mu.Unlock()
		return g.State().RoundTrips == uint64(len(steps))
	})
	if steps[0] != 4 || steps[len(steps)-1] != 16 {
		t.Fatalf("steps %v: want 4 first, doubling to the max-step 16", steps)
	}
	for _, s := range steps {
		if s < 4 || s > 16 {
			t.Fatalf("step %d outside [4, 16]: %v", s, steps)
		}
	}
	if st := g.State(); st.Step != 16 || st.Issued != 200 {
		t.Fatalf("state %+v", st)
	}
}

func TestSegmentPreloadsAndDrainsWhenStoreDown(t *testing.T) {
	store := &memSegments{}
	g := NewSegment(segmentConfig(100), store, nil)
	if _, err := g.NextN(20); err != nil { // block 1..100, preload starts
		t.Fatal(err)
	}
	pollUntil(t, func() bool { return g.State().NextBlockEnd != 0 })
	if st := g.State(); st.BlockEnd != 100 || st.NextBlockEnd != 200 || st.Step != 200 {
		t.Fatalf("state %+v: want block ..100, a preloaded block ..200 and the step doubled for the next", st)
	}
	store.setDown(true)
	issued := 20
	var err error
	for ; err == nil; issued++ {
		_, err = g.NextN(1)
	}
	issued-- // the failed call
	if issued != 200 {
		t.Fatalf("issued %d keys before failing, want every buffered key (200)", issued)
	}
	if !errors.Is(err, ErrStoreUnavailable) || g.State().Err == "" {
		t.Fatalf("error %v (state %q), want ErrStoreUnavailable naming the cause", err, g.State().Err)
	}
}

func TestSegmentGuardRefusesBelowTableAndAdopt(t *testing.T) {
	store := &memSegments{}
	tableMax := int64(5000)
	guard := func(context.Context) (int64, error) { return tableMax, nil }
	g := NewSegment(segmentConfig(100), store, guard)
	_, err := g.NextN(1)
	var ae *AdoptError
	if !errors.As(err, &ae) || ae.TableMax != 5000 || ae.Next != 1 {
		t.Fatalf("got %v, want an AdoptError: table holds 5000, next 1", err)
	}
	if err := g.Adopt(tableMax); err != nil {
		t.Fatal(err)
	}
	first, err := g.NextN(3)
	if err != nil || first <= 5000 {
		t.Fatalf("after adopting 5000: first %d, %v", first, err)
	}
	// Another generator on the same row starts above the floor too.
	g2 := NewSegment(segmentConfig(100), store, guard)
	if k, err := g2.NextN(1); err != nil || k <= 5000 {
		t.Fatalf("second generator: %d, %v", k, err)
	}
}

func TestSegmentProps(t *testing.T) {
	c, err := ParseSegmentProps(map[string]string{PropURL: "jdbc:mysql://h:1/ids", PropStep: "50", PropMaxStep: "5000", PropBizTag: "orders"})
	if err != nil || c.Step != 50 || c.MaxStep != 5000 || c.BizTag != "orders" || c.Table != DefaultSegmentTable || c.Store.FetchTimeout != DefaultFetchTimeout {
		t.Fatalf("%+v, %v", c, err)
	}
	for _, tt := range []struct {
		give map[string]string
		want string
	}{
		{map[string]string{}, "segment prop url: required"},
		{map[string]string{PropURL: "x", PropStep: "0"}, `segment prop step: "0": outside [1, 1073741824]`},
		{map[string]string{PropURL: "x", PropTable: "a;b"}, `segment prop table: "a;b": want a plain table name`},
		{map[string]string{PropURL: "x", "urls": "y"}, "segment prop urls: unknown prop"},
		{map[string]string{PropURL: "x", PropFetchTimeout: "1"}, `segment prop fetch-timeout-milliseconds: "1": outside [10, 60000]`},
	} {
		_, err := ParseSegmentProps(tt.give)
		if err == nil || !startsWith(err.Error(), tt.want) {
			t.Errorf("%v: %v, want %s", tt.give, err, tt.want)
		}
	}
}

func startsWith(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

func pollUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 5s")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestSegmentAdoptAfterTheTableShrank: a generator refused because a row
// written behind its back held a large key; that row is deleted, and
// ADOPT, which reads the table's largest key now, lets it issue above
// that, not above the deleted row's key it saw before.
func TestSegmentAdoptAfterTheTableShrank(t *testing.T) {
	store := &memSegments{max: 300}
	tableMax := int64(1 << 40)
	guard := func(context.Context) (int64, error) { return tableMax, nil }
	cfg := segmentConfig(100)
	cfg.Store.RetryAfter = 0
	g := NewSegment(cfg, store, guard)
	if _, err := g.NextN(1); !errors.Is(err, ErrBelowTable) {
		t.Fatalf("got %v, want ErrBelowTable", err)
	}
	tableMax = 250 // the row with key 2^40 is deleted
	if err := g.Adopt(tableMax); err != nil {
		t.Fatal(err)
	}
	if k, err := g.NextN(1); err != nil || k <= 250 {
		t.Fatalf("after the table shrank to 250 and ADOPT: %d, %v", k, err)
	}
}
