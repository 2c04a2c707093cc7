package idgen

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// memTicketServer is a ticket server: an AUTO_INCREMENT counter with an
// increment and an offset.
type memTicketServer struct {
	name     string
	mu       sync.Mutex
	inc, off int64
	last     int64
	down     bool
	calls    int
}

func (m *memTicketServer) Residue(context.Context) (int64, int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return 0, 0, errors.New("connection refused")
	}
	return m.inc, m.off, nil
}

func (m *memTicketServer) Tickets(_ context.Context, dst []int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return errors.New("connection refused")
	}
	m.calls++
	for i := range dst {
		// The smallest value above last in the server's series.
		next := m.last + 1
		for (next-m.off)%m.inc != 0 {
			next++
		}
		m.last = next
		dst[i] = next
	}
	return nil
}

func (m *memTicketServer) NextTicket(context.Context) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return 0, errors.New("connection refused")
	}
	return m.last + 1, nil
}

func (m *memTicketServer) Raise(_ context.Context, floor int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return errors.New("connection refused")
	}
	m.last = max(m.last, floor)
	return nil
}

func (m *memTicketServer) Addr() string { return m.name }

func (m *memTicketServer) setDown(d bool) {
	m.mu.Lock()
	m.down = d
	m.mu.Unlock()
}

func ticketConfig() TicketConfig {
	return TicketConfig{MaxBatch: 8, Connections: 1, Store: StoreConfig{FetchTimeout: time.Second, RetryAfter: time.Hour}}
}

func TestTicketRefusesOverlappingResidues(t *testing.T) {
	tests := []struct {
		incA, offA, incB, offB int64
		overlap                bool
	}{
		{2, 1, 2, 2, false},
		{2, 1, 2, 1, true},
		{1, 1, 2, 2, true},
		{2, 1, 4, 3, true}, // 3, 7, 11 are odd
		{4, 1, 4, 3, false},
		{3, 1, 2, 2, true}, // 4 is in both
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.incA, tt.offA, tt.incB, tt.offB), func(t *testing.T) {
			a := &memTicketServer{name: "a", inc: tt.incA, off: tt.offA}
			b := &memTicketServer{name: "b", inc: tt.incB, off: tt.offB}
			_, err := NewTicket(context.Background(), ticketConfig(), []TicketServer{a, b}, nil)
			if tt.overlap != errors.Is(err, ErrResidueOverlap) {
				t.Fatalf("error %v, want overlap %v", err, tt.overlap)
			}
			if ResiduesOverlap(tt.incA, tt.offA, tt.incB, tt.offB) != tt.overlap {
				t.Fatalf("ResiduesOverlap disagrees")
			}
		})
	}
	// offset above increment: MySQL would ignore the offset.
	_, err := NewTicket(context.Background(), ticketConfig(), []TicketServer{&memTicketServer{name: "a", inc: 2, off: 3}}, nil)
	if !errors.Is(err, ErrResidueOverlap) {
		t.Fatalf("offset 3 with increment 2: %v", err)
	}
}

func TestTicketFailoverAndNoReissue(t *testing.T) {
	a := &memTicketServer{name: "a", inc: 2, off: 1}
	b := &memTicketServer{name: "b", inc: 2, off: 2}
	cfg := ticketConfig()
	cfg.Store.RetryAfter = 0 // retry a failed server on the next call
	g, err := NewTicket(context.Background(), cfg, []TicketServer{a, b}, nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	take := func(n int) []int64 {
		t.Helper()
		dst := make([]int64, n)
		if err := g.NextKeys(dst); err != nil {
			t.Fatal(err)
		}
		for _, id := range dst {
			if seen[id] {
				t.Fatalf("ticket %d issued twice", id)
			}
			seen[id] = true
		}
		return dst
	}
	for i := 0; i < 10; i++ {
		take(1 + i%3)
	}
	if a.calls == 0 || b.calls == 0 {
		t.Fatalf("round-robin used a %d times, b %d times", a.calls, b.calls)
	}
	b.setDown(true)
	for i := 0; i < 10; i++ {
		for _, id := range take(2) {
			if id%2 != 1 {
				t.Fatalf("ticket %d with b down, want a's odd ids", id)
			}
		}
	}
	a.setDown(true)
	err = g.NextKeys(make([]int64, 1))
	if !errors.Is(err, ErrStoreUnavailable) || g.State().Err == "" {
		t.Fatalf("both down: %v, want ErrStoreUnavailable", err)
	}
	a.setDown(false)
	b.setDown(false)
	// b comes back through a background probe, which a loaded machine may
	// run only after several calls a answered: poll for one of b's even
	// tickets, never taking any ticket twice.
	deadline := time.Now().Add(10 * time.Second)
	for evens := 0; evens == 0; {
		if time.Now().After(deadline) {
			t.Fatal("b never issued again after it came back")
		}
		for _, id := range take(1) {
			if id%2 == 0 {
				evens++
			}
		}
		time.Sleep(time.Millisecond)
	}
}

func TestTicketResidueCheckedWhenServerComesUp(t *testing.T) {
	a := &memTicketServer{name: "a", inc: 2, off: 1}
	b := &memTicketServer{name: "b", inc: 2, off: 1, down: true} // misconfigured, down at start
	cfg := ticketConfig()
	cfg.Store.RetryAfter = 0
	g, err := NewTicket(context.Background(), cfg, []TicketServer{a, b}, nil)
	if err != nil {
		t.Fatalf("b was down at start, so it could not be checked: %v", err)
	}
	b.setDown(false)
	for i := 0; i < 6; i++ {
		dst := make([]int64, 1)
		if err := g.NextKeys(dst); err != nil {
			t.Fatal(err)
		}
		if dst[0]%2 != 1 {
			t.Fatal("unreachable")
		}
	}
	if b.calls != 0 {
		t.Fatalf("b issued %d times with a residue overlapping a's", b.calls)
	}
	st := g.State()
	if st.Servers[1].Healthy || st.Servers[1].Err == "" {
		t.Fatalf("b's state %+v, want refused with the overlap", st.Servers[1])
	}
}

// tableKeys is a table's keys as a TicketGuard reads them.
type tableKeys struct {
	mu   sync.Mutex
	keys []int64
}

func (tk *tableKeys) set(keys ...int64) {
	tk.mu.Lock()
	tk.keys = keys
	tk.mu.Unlock()
}

func (tk *tableKeys) guard(_ context.Context, from, inc, off int64) (int64, error) {
	tk.mu.Lock()
	defer tk.mu.Unlock()
	var best int64
	for _, k := range tk.keys {
		if k >= from && k%inc == off%inc {
			best = max(best, k)
		}
	}
	return best, nil
}

func TestTicketGuardAndAdopt(t *testing.T) {
	a := &memTicketServer{name: "a", inc: 2, off: 1}
	b := &memTicketServer{name: "b", inc: 2, off: 2}
	table := &tableKeys{keys: []int64{999, 1000}}
	g, err := NewTicket(context.Background(), ticketConfig(), []TicketServer{a, b}, table.guard)
	if err != nil {
		t.Fatal(err)
	}
	err = g.NextKeys(make([]int64, 1))
	if !errors.Is(err, ErrBelowTable) || !strings.Contains(err.Error(), "up to 999 among the keys with id % 2 = 1 and the next key would be 1") ||
		!strings.Contains(err.Error(), "up to 1000 among the keys with id % 2 = 0 and the next key would be 2") {
		t.Fatalf("got %v, want ErrBelowTable from both servers", err)
	}
	if err := g.Adopt(1000); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		dst := make([]int64, 3)
		if err := g.NextKeys(dst); err != nil {
			t.Fatal(err)
		}
		for _, id := range dst {
			if id <= 1000 {
				t.Fatalf("ticket %d after adopting 1000", id)
			}
		}
	}
}

// TestTicketGuardCountsTheServersClass: two proxies share an odd and an
// even server; the other proxy's even keys run ahead of the odd server's
// next ticket but can never meet it, so the odd server issues. A key of
// its own class at or above its next ticket still refuses it.
func TestTicketGuardCountsTheServersClass(t *testing.T) {
	a := &memTicketServer{name: "a", inc: 2, off: 1}
	b := &memTicketServer{name: "b", inc: 2, off: 2, last: 6}
	table := &tableKeys{keys: []int64{2, 4, 6}}
	g, err := NewTicket(context.Background(), ticketConfig(), []TicketServer{a, b}, table.guard)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for i := 0; i < 6; i++ {
		dst := make([]int64, 1)
		if err := g.NextKeys(dst); err != nil {
			t.Fatalf("ticket %d: %v", i, err)
		}
		seen[dst[0]%2] = true
	}
	if !seen[0] || !seen[1] {
		t.Fatalf("residues issued %v, want both servers", seen)
	}

	// A fresh generator over a reset odd server, the table holding an
	// odd key above its next ticket: the odd server is refused, the even
	// one keeps issuing.
	a2 := &memTicketServer{name: "a", inc: 2, off: 1}
	b2 := &memTicketServer{name: "b", inc: 2, off: 2, last: 6}
	table.set(2, 4, 6, 7)
	g2, err := NewTicket(context.Background(), ticketConfig(), []TicketServer{a2, b2}, table.guard)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		dst := make([]int64, 1)
		if err := g2.NextKeys(dst); err != nil || dst[0]%2 != 0 {
			t.Fatalf("ticket %d: %d, %v; want even keys only", i, dst[0], err)
		}
	}
	st := g2.State()
	if st.Servers[0].Healthy || !strings.Contains(st.Servers[0].Err, "up to 7 among the keys with id % 2 = 1") {
		t.Fatalf("odd server's state %+v, want refused naming key 7", st.Servers[0])
	}
}

// TestTicketGuardWithTwoGeneratorsWriting: two generators (two proxies)
// share the servers and write every key they issue while both start,
// the even server ahead of the odd one; neither refuses a server and no
// key is issued twice.
func TestTicketGuardWithTwoGeneratorsWriting(t *testing.T) {
	a := &memTicketServer{name: "a", inc: 2, off: 1}
	b := &memTicketServer{name: "b", inc: 2, off: 2, last: 40}
	table := &tableKeys{}
	for k := int64(2); k <= 40; k += 2 {
		table.keys = append(table.keys, k)
	}
	var gens []*Ticket
	for range 2 {
		g, err := NewTicket(context.Background(), ticketConfig(), []TicketServer{a, b}, table.guard)
		if err != nil {
			t.Fatal(err)
		}
		gens = append(gens, g)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				dst := make([]int64, 1+i%3)
				if err := gens[i%2].NextKeys(dst); err != nil {
					errs <- err
					return
				}
				table.mu.Lock()
				table.keys = append(table.keys, dst...)
				table.mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for _, k := range table.keys {
		if seen[k] {
			t.Fatalf("key %d issued twice", k)
		}
		seen[k] = true
	}
	for i, g := range gens {
		for _, st := range g.State().Servers {
			if !st.Healthy {
				t.Fatalf("generator %d: server %+v refused", i, st)
			}
		}
	}
}

func TestTicketProps(t *testing.T) {
	c, err := ParseTicketProps(map[string]string{PropURLs: "jdbc:mysql://a:1/t, jdbc:mysql://b:2/t", PropBatch: "16"})
	if err != nil || len(c.Store.URLs) != 2 || c.MaxBatch != 16 || c.Table != DefaultTicketTable || c.Stub != "a" || c.Connections != DefaultTicketConnections {
		t.Fatalf("%+v, %v", c, err)
	}
	for _, tt := range []struct {
		give map[string]string
		want string
	}{
		{map[string]string{}, "ticket prop urls: required"},
		{map[string]string{PropURLs: "x", PropBatch: "0"}, `ticket prop max-batch: "0": outside [1, 1000]`},
		{map[string]string{PropURLs: "x", PropStub: "'"}, `ticket prop stub: "'": want one character`},
		{map[string]string{PropURLs: "x", PropURL: "y"}, "ticket prop url: unknown prop"},
	} {
		_, err := ParseTicketProps(tt.give)
		if err == nil || !startsWith(err.Error(), tt.want) {
			t.Errorf("%v: %v, want %s", tt.give, err, tt.want)
		}
	}
}

// TestTicketSpreadModEight: two servers with increment 2 and offsets 1
// and 2, taken round-robin, reach all of id % 8 evenly; with one down,
// only its partner's four residues mod 8 (the odd ones) get rows, which
// the README warns about for id % 2^k sharding.
func TestTicketSpreadModEight(t *testing.T) {
	a := &memTicketServer{name: "a", inc: 2, off: 1}
	b := &memTicketServer{name: "b", inc: 2, off: 2}
	g, err := NewTicket(context.Background(), ticketConfig(), []TicketServer{a, b}, nil)
	if err != nil {
		t.Fatal(err)
	}
	spread := func(n int) [8]int {
		var counts [8]int
		dst := make([]int64, 1)
		for i := 0; i < n; i++ {
			if err := g.NextKeys(dst); err != nil {
				t.Fatal(err)
			}
			counts[dst[0]%8]++
		}
		return counts
	}
	both := spread(8000)
	for r, n := range both {
		if n < 900 || n > 1100 {
			t.Fatalf("both servers up: id %% 8 = %d got %d of 8000 (%v), want about 1000", r, n, both)
		}
	}
	b.setDown(true)
	one := spread(4000)
	for r, n := range one {
		if r%2 == 0 && n != 0 || r%2 == 1 && (n < 900 || n > 1100) {
			t.Fatalf("server b down: %v, want only the odd residues, about 1000 each", one)
		}
	}
}

// hangingTicketServer answers like memTicketServer until hang is
// closed. Then its first call fails at once with a timeout (the call in
// flight when it stopped answering, its wait cut short) and every later
// call blocks until release is closed or its context ends, as a server
// that drops packets instead of refusing connections does.
type hangingTicketServer struct {
	memTicketServer
	hang    chan struct{}
	release chan struct{}
	calls   atomic.Int64 // calls since hang was closed
}

func (h *hangingTicketServer) wait(ctx context.Context) error {
	select {
	case <-h.hang:
	default:
		return nil
	}
	if h.calls.Add(1) == 1 {
		return context.DeadlineExceeded
	}
	select {
	case <-h.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (h *hangingTicketServer) Residue(ctx context.Context) (int64, int64, error) {
	if err := h.wait(ctx); err != nil {
		return 0, 0, err
	}
	return h.memTicketServer.Residue(ctx)
}

func (h *hangingTicketServer) Tickets(ctx context.Context, dst []int64) error {
	if err := h.wait(ctx); err != nil {
		return err
	}
	return h.memTicketServer.Tickets(ctx, dst)
}

// TestTicketUnresponsiveServerCostsNoCaller: once a server that stopped
// answering has failed a call, the callers go to the other server while
// a background probe waits for it; none of them waits for the fetch
// timeout. When it answers again, a probe brings it back.
func TestTicketUnresponsiveServerCostsNoCaller(t *testing.T) {
	a := &memTicketServer{name: "a", inc: 2, off: 1}
	b := &hangingTicketServer{memTicketServer: memTicketServer{name: "b", inc: 2, off: 2},
		hang: make(chan struct{}), release: make(chan struct{})}
	cfg := ticketConfig()
	// A fetch timeout far above the test's deadline: a caller that waits
	// for b is seen as stuck, whatever the machine's load.
	cfg.Store.FetchTimeout = 5 * time.Minute
	cfg.Store.RetryAfter = 0 // b is due for a retry on every call
	g, err := NewTicket(context.Background(), cfg, []TicketServer{a, b}, nil)
	if err != nil {
		t.Fatal(err)
	}
	close(b.hang)
	calls := make(chan error, 40)
	go func() {
		var dst [1]int64
		for i := 0; i < cap(calls); i++ {
			err := g.NextKeys(dst[:])
			if err == nil && dst[0]%2 != 1 {
				err = fmt.Errorf("ticket %d from b while it does not answer", dst[0])
			}
			calls <- err
		}
	}()
	deadline := time.After(time.Minute)
	for i := 0; i < cap(calls); i++ {
		select {
		case err := <-calls:
			if err != nil {
				t.Fatal(err)
			}
		case <-deadline:
			t.Fatalf("call %d of %d is waiting for the unresponsive server", i+1, cap(calls))
		}
	}
	// A probe is waiting for b meanwhile.
	for probeDeadline := time.Now().Add(time.Minute); b.calls.Load() < 2; runtime.Gosched() {
		if time.Now().After(probeDeadline) {
			t.Fatal("b was never probed after it stopped answering")
		}
	}
	// b answers again: a probe brings it back into the rotation.
	close(b.release)
	evenDeadline := time.Now().Add(time.Minute)
	var dst [1]int64
	for {
		if err := g.NextKeys(dst[:]); err != nil {
			t.Fatal(err)
		}
		if dst[0]%2 == 0 {
			break
		}
		if time.Now().After(evenDeadline) {
			t.Fatal("b never issued again after it answered")
		}
		runtime.Gosched() // the probe finishes in its own goroutine
	}
}

// TestTicketAdoptAfterTheTableShrank: as TestSegmentAdoptAfterTheTableShrank
// for TICKET.
func TestTicketAdoptAfterTheTableShrank(t *testing.T) {
	a := &memTicketServer{name: "a", inc: 2, off: 1, last: 300}
	table := &tableKeys{keys: []int64{1<<40 + 1}}
	g, err := NewTicket(context.Background(), ticketConfig(), []TicketServer{a}, table.guard)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.NextKeys(make([]int64, 1)); !errors.Is(err, ErrBelowTable) {
		t.Fatalf("got %v, want ErrBelowTable", err)
	}
	table.set(249)
	if err := g.Adopt(250); err != nil {
		t.Fatal(err)
	}
	dst := make([]int64, 1)
	if err := g.NextKeys(dst); err != nil || dst[0] <= 250 {
		t.Fatalf("after the table shrank to 250 and ADOPT: %d, %v", dst[0], err)
	}
}
