package idgen

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/shardflake/shardflake/internal/etcdtest"
)

// etcdServer is a real etcd (Debian's etcd-server) started by a test on
// free ports with a temporary data dir (internal/etcdtest).
type etcdServer struct {
	srv      *etcdtest.Server
	Endpoint string
}

// startEtcd starts etcd and waits until it answers /health. Without the
// binary the test is skipped locally and fails in CI.
func startEtcd(t *testing.T) *etcdServer {
	t.Helper()
	s := newEtcdServer(t)
	s.start()
	return s
}

// newEtcdServer prepares an etcd on free ports without starting it.
func newEtcdServer(t *testing.T) *etcdServer {
	t.Helper()
	srv := etcdtest.New(t)
	return &etcdServer{srv: srv, Endpoint: srv.Endpoint()}
}

func (s *etcdServer) start() { s.srv.Start() }

// stop kills etcd (SIGKILL: no chance to say goodbye) and waits for it.
func (s *etcdServer) stop() { s.srv.Stop() }

// tinyLayout has 1 datacenter bit and 1 worker bit: four pairs.
func tinyLayout() Layout {
	return Layout{TimeBits: 49, DatacenterBits: 1, WorkerBits: 1, SequenceBits: 12, Epoch: DefaultEpoch()}
}

func etcdConfig(endpoint, prefix string) Config {
	c := DefaultConfig()
	c.Layout = tinyLayout()
	c.Source = WorkerIDEtcd
	c.Etcd.Endpoints = []string{endpoint}
	c.Etcd.Prefix = prefix
	c.Etcd.LeaseTTL = 2 * time.Second
	c.Etcd.ClaimTimeout = 0
	c.Etcd.DialTimeout = 2 * time.Second
	return c
}

// helperEtcd claims a pair from etcd (datacenter 1 of the tiny layout:
// two pairs), prints "pair DC W", issues and prints 1000 ids, prints
// "ready", and closes the generator when its stdin closes.
func helperEtcd() int {
	cfg := etcdConfig(os.Getenv("IDGEN_ETCD_ENDPOINT"), os.Getenv("IDGEN_ETCD_PREFIX"))
	cfg.DatacenterID, cfg.Etcd.PinDatacenter = 1, true
	g, err := New(context.Background(), cfg)
	if err != nil {
		fmt.Printf("err %v\n", err)
		return 3
	}
	s := g.Stats()
	fmt.Printf("pair %d %d\n", s.DatacenterID, s.WorkerID)
	for range 1000 {
		id, err := g.Next()
		if err != nil {
			fmt.Printf("err %v\n", err)
			return 3
		}
		fmt.Printf("id %d\n", id)
	}
	fmt.Println("ready")
	io.Copy(io.Discard, bufio.NewReader(os.Stdin))
	if err := g.Close(); err != nil {
		fmt.Printf("err %v\n", err)
		return 3
	}
	fmt.Println("closed")
	return 0
}

// etcdHelper is a helper process holding a pair.
type etcdHelper struct {
	*helperProc
	pair [2]int
	ids  []int64
}

func startEtcdHelper(t *testing.T, etcd *etcdServer, prefix string) *etcdHelper {
	t.Helper()
	h := &etcdHelper{helperProc: startHelper(t, "etcd", "IDGEN_ETCD_ENDPOINT="+etcd.Endpoint, "IDGEN_ETCD_PREFIX="+prefix)}
	line, _ := h.next(t, 30*time.Second)
	if _, err := fmt.Sscanf(line, "pair %d %d", &h.pair[0], &h.pair[1]); err != nil {
		t.Fatalf("etcd helper printed %q, want \"pair DC W\"", line)
	}
	for {
		line, _ := h.next(t, 30*time.Second)
		if line == "ready" {
			return h
		}
		h.ids = append(h.ids, parseID(t, line))
	}
}

func TestEtcdPairsAcrossProcesses(t *testing.T) {
	etcd := startEtcd(t)
	const prefix = "/test/processes"
	a := startEtcdHelper(t, etcd, prefix)
	b := startEtcdHelper(t, etcd, prefix)
	if a.pair == b.pair || a.pair[0] != 1 || b.pair[0] != 1 {
		t.Fatalf("two processes got pairs %v and %v, want two distinct pairs in datacenter 1", a.pair, b.pair)
	}

	// A third generator finds both pairs of datacenter 1 taken.
	cfg := etcdConfig(etcd.Endpoint, prefix)
	cfg.DatacenterID, cfg.Etcd.PinDatacenter = 1, true
	cfg.Etcd.ClaimTimeout = 300 * time.Millisecond
	_, err := New(t.Context(), cfg)
	var taken *AllPairsTakenError
	if !errors.As(err, &taken) || !errors.Is(err, ErrAllPairsTaken) || taken.Pairs != 2 || taken.Waited < 300*time.Millisecond {
		t.Fatalf("third New() error = %v, want *AllPairsTakenError for 2 pairs after waiting 300ms", err)
	}
	t.Logf("third generator: %v", err)

	// Another one waits; when A closes (revoking its lease) it gets A's
	// pair and issues above everything A issued.
	cfg.Etcd.ClaimTimeout = 30 * time.Second
	type result struct {
		g   *Snowflake
		err error
	}
	got := make(chan result, 1)
	go func() {
		g, err := New(context.Background(), cfg, WithSeed(1, 1))
		got <- result{g, err}
	}()
	select {
	case r := <-got:
		t.Fatalf("New() returned %v, %v while every pair was taken", r.g, r.err)
	case <-time.After(200 * time.Millisecond):
	}
	a.stdin.Close()
	if line, _ := a.next(t, 30*time.Second); line != "closed" {
		t.Fatalf("helper A printed %q on close", line)
	}
	r := <-got
	if r.err != nil {
		t.Fatalf("waiting New() error = %v", r.err)
	}
	defer r.g.Close()
	// On a loaded machine an etcd request can time out during the claim:
	// the generator then starts without a pair and claims it in the
	// background (LeaseClaiming), as a proxy must.
	eventually(t, "the waiting generator holds a pair", func() bool { return r.g.Stats().LeaseState == LeaseHeld })
	if s := r.g.Stats(); [2]int{s.DatacenterID, s.WorkerID} != a.pair || s.LeaseState != LeaseHeld {
		t.Fatalf("waiting generator got pair %d/%d (%s), want A's %v", s.DatacenterID, s.WorkerID, s.LeaseState, a.pair)
	}
	first, err := r.g.Next()
	if err != nil || first <= a.ids[len(a.ids)-1] {
		t.Fatalf("first id after taking over A's pair = %d, %v; want above A's last %d", first, err, a.ids[len(a.ids)-1])
	}

	// B dies without releasing: its pair comes free when its lease
	// expires, and the next holder starts above B's mark.
	if err := b.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	g2, err := New(t.Context(), cfg)
	if err != nil {
		t.Fatalf("New() after B was killed: %v", err)
	}
	defer g2.Close()
	eventually(t, "the next generator holds a pair", func() bool { return g2.Stats().LeaseState == LeaseHeld })
	if s := g2.Stats(); [2]int{s.DatacenterID, s.WorkerID} != b.pair {
		t.Fatalf("got pair %d/%d, want B's %v", s.DatacenterID, s.WorkerID, b.pair)
	}
	if waited := time.Since(killed); waited < time.Second {
		t.Errorf("B's pair was free %s after B died, before its 2 s lease could expire", waited)
	}
	first, err = g2.Next()
	if err != nil || first <= b.ids[len(b.ids)-1] {
		t.Fatalf("first id on B's pair = %d, %v; want above B's last %d", first, err, b.ids[len(b.ids)-1])
	}
}

func TestEtcdClaimsEveryPairOnce(t *testing.T) {
	etcd := startEtcd(t)
	cfg := etcdConfig(etcd.Endpoint, "/test/every")
	pairs := map[[2]int]bool{}
	for i := range 4 {
		g, err := New(t.Context(), cfg)
		if err != nil {
			t.Fatalf("generator %d: %v", i, err)
		}
		defer g.Close()
		s := g.Stats()
		p := [2]int{s.DatacenterID, s.WorkerID}
		if pairs[p] {
			t.Fatalf("pair %v handed out twice", p)
		}
		pairs[p] = true
	}
	if _, err := New(t.Context(), cfg); !errors.Is(err, ErrAllPairsTaken) {
		t.Fatalf("fifth New() error = %v, want ErrAllPairsTaken", err)
	}
}

func TestEtcdTakeoverRespectsHighWater(t *testing.T) {
	etcd := startEtcd(t)
	cfg := etcdConfig(etcd.Endpoint, "/test/takeover")
	cfg.DatacenterID, cfg.Etcd.PinDatacenter = 0, true
	cfg.Layout = Layout{TimeBits: 51, DatacenterBits: 0, WorkerBits: 0, SequenceBits: 12, Epoch: DefaultEpoch()} // one pair

	// A's clock runs 3 s fast.
	fast := &offsetClock{}
	fast.Set(3 * time.Second)
	a, err := New(t.Context(), cfg, WithClock(fast))
	if err != nil {
		t.Fatal(err)
	}
	var lastA int64
	for range 5000 {
		if lastA, err = a.Next(); err != nil {
			t.Fatal(err)
		}
	}
	hwA := a.Stats().HighWater
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	// B's clock is right, 3 s behind A's: beyond the tolerance, so B
	// refuses until its clock reaches A's.
	b, err := New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Next()
	var cb *ClockBackwardsError
	if !errors.As(err, &cb) || !cb.HighWater || cb.Drift < 2*time.Second {
		t.Fatalf("Next() on a pair whose mark is 3 s ahead: %v, want the high-water clock error", err)
	}
	b.Close()

	// C's clock is 2.995 s fast (A's minus 5 ms, within the tolerance): it
	// takes over at once, above A's mark.
	near := &offsetClock{}
	near.Set(3*time.Second - 5*time.Millisecond)
	c, err := New(t.Context(), cfg, WithClock(near))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	first, err := c.Next()
	if err != nil || first <= lastA {
		t.Fatalf("first id after takeover = %d, %v; want above A's last %d", first, err, lastA)
	}
	p, _ := cfg.Layout.Decode(first)
	if !p.Time.After(hwA) {
		t.Errorf("first id after takeover at %s, not above A's mark %s", p.Time, hwA)
	}
}

func TestEtcdStopStopsIssuingBeforeTTL(t *testing.T) {
	etcd := startEtcd(t)
	cfg := etcdConfig(etcd.Endpoint, "/test/stop")
	g, err := New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	var lastID int64
	for issued := 0; issued < 1000; {
		id, err := g.Next()
		switch {
		case errors.Is(err, ErrLeaseLost):
			// On a loaded machine a keep-alive of the 2 s lease can come
			// back late while etcd is up; the generator then rightly stops
			// issuing until the next one gets through.
			eventually(t, "the lease renewed while etcd runs", func() bool { return g.Stats().LeaseState != LeaseLapsed })
			continue
		case err != nil:
			t.Fatal(err)
		case id <= lastID:
			t.Fatalf("id %d after %d", id, lastID)
		}
		lastID = id
		issued++
	}
	// Let a keep-alive or two go through, then kill etcd.
	eventually(t, "a keep-alive", func() bool { return g.Stats().LeaseRenewed.After(time.Now().Add(-time.Second / 2)) })
	etcd.stop()

	// lastOK is when the last successful call started: the id was issued
	// after that, so a call started at or after the deadline must fail.
	var lastOK time.Time
	var stopErr error
	for stopErr == nil {
		started := time.Now()
		id, err := g.Next()
		if err != nil {
			stopErr = err
			break
		}
		if id <= lastID {
			t.Fatalf("id %d after %d", id, lastID)
		}
		lastID, lastOK = id, started
		time.Sleep(time.Millisecond)
	}
	stoppedAt := time.Now()
	s := g.Stats()
	leaseEnd := s.LeaseRenewed.Add(s.LeaseTTL)
	t.Logf("last renewal sent %s before the stop; last id %s and refusal %s before the lease's TTL ended: %v",
		stoppedAt.Sub(s.LeaseRenewed).Round(time.Millisecond), leaseEnd.Sub(lastOK).Round(time.Millisecond),
		leaseEnd.Sub(stoppedAt).Round(time.Millisecond), stopErr)
	if !errors.Is(stopErr, ErrLeaseLost) {
		t.Fatalf("error after etcd stopped = %v, want ErrLeaseLost", stopErr)
	}
	if !lastOK.Before(s.LeaseDeadline) || !stoppedAt.Before(leaseEnd) {
		t.Errorf("last id at %s, refused at %s; want the id before the deadline %s and the refusal before the lease end %s",
			lastOK, stoppedAt, s.LeaseDeadline, leaseEnd)
	}
	if _, err := g.Next(); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("Next() after the deadline = %v, want ErrLeaseLost", err)
	}
	if s.LeaseState != LeaseLapsed {
		t.Errorf("LeaseState = %s, want lapsed", s.LeaseState)
	}

	// etcd comes back with its data: the lease survived (a restarted
	// leader extends leases), a keep-alive gets through and ids resume
	// above the earlier ones.
	etcd.start()
	eventually(t, "ids after etcd restarted", func() bool {
		id, err := g.Next()
		if err != nil {
			return false
		}
		if id <= lastID {
			t.Fatalf("id %d after restart not above %d", id, lastID)
		}
		return true
	})
	if s := g.Stats(); s.LeaseState != LeaseHeld {
		t.Errorf("LeaseState after etcd restarted = %s, want held", s.LeaseState)
	}
}

// TestEtcdUnreachableAtStart: a generator starts while etcd cannot be
// reached, refuses ids (and says so in Ready) without waiting, and issues
// as soon as etcd answers on that address.
func TestEtcdUnreachableAtStart(t *testing.T) {
	etcd := newEtcdServer(t)
	cfg := etcdConfig(etcd.Endpoint, "/test/unreachable")
	cfg.Etcd.DialTimeout = 300 * time.Millisecond
	start := time.Now()
	g, err := New(t.Context(), cfg)
	if err != nil {
		t.Fatalf("New() with etcd unreachable = %v, want a generator that claims later", err)
	}
	defer g.Close()
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("New() took %s with etcd down, want about the dial timeout", took)
	}
	begin := time.Now()
	_, err = g.Next()
	var none *NoWorkerIDError
	if !errors.As(err, &none) || !errors.Is(err, ErrLeaseLost) || !strings.Contains(err.Error(), "etcd") {
		t.Fatalf("Next() before any claim = %v, want *NoWorkerIDError naming etcd", err)
	}
	if took := time.Since(begin); took > 100*time.Millisecond {
		t.Errorf("Next() took %s to refuse, want at once", took)
	}
	if err := g.Ready(); !errors.As(err, &none) {
		t.Errorf("Ready() = %v, want *NoWorkerIDError", err)
	}
	if st := g.Stats().LeaseState; st != LeaseClaiming {
		t.Errorf("LeaseState = %s, want claiming", st)
	}

	etcd.start()
	up := time.Now()
	deadline := up.Add(15 * time.Second)
	for g.Ready() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("Ready() 15 s after etcd started: %v", g.Ready())
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("issuing %s after etcd answered", time.Since(up).Round(time.Millisecond))
	if id, err := g.Next(); err != nil || id <= 0 {
		t.Fatalf("Next() once etcd answered = %d, %v", id, err)
	}
	if st := g.Stats().LeaseState; st != LeaseHeld {
		t.Errorf("LeaseState once claimed = %s, want held", st)
	}
}

// TestEtcdRestartBehindMarkTakesUsablePair: a generator whose clock is
// ten minutes behind the mark of the first free pair claims another free
// pair and issues at once, instead of refusing until its clock catches
// up; with no other pair free it takes the one it has and Ready says why
// it cannot issue.
func TestEtcdRestartBehindMarkTakesUsablePair(t *testing.T) {
	etcd := startEtcd(t)
	cfg := etcdConfig(etcd.Endpoint, "/test/behind")
	cfg.DatacenterID, cfg.Etcd.PinDatacenter = 0, true // pairs 0/0 and 0/1
	ahead := &offsetClock{}
	ahead.Set(10 * time.Minute)
	a, err := New(t.Context(), cfg, WithClock(ahead))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Next(); err != nil {
		t.Fatal(err)
	}
	if s := a.Stats(); s.WorkerID != 0 {
		t.Fatalf("first generator took worker %d, want 0", s.WorkerID)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	b, err := New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if s := b.Stats(); s.WorkerID != 1 {
		t.Errorf("generator 10 min behind 0/0's mark took worker %d, want the free pair 0/1", s.WorkerID)
	}
	if err := b.Ready(); err != nil {
		t.Errorf("Ready() = %v, want nil", err)
	}
	if _, err := b.Next(); err != nil {
		t.Fatalf("Next() = %v, want an id at once", err)
	}

	// Only 0/0 is free now: c takes it and cannot issue; Ready says so.
	c, err := New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var cb *ClockBackwardsError
	if err := c.Ready(); !errors.As(err, &cb) || !cb.HighWater || cb.Drift < 9*time.Minute {
		t.Errorf("Ready() on a pair whose mark is 10 min ahead = %v, want the high-water clock error", err)
	}
	if _, err := c.Next(); !errors.As(err, &cb) {
		t.Errorf("Next() = %v, want the high-water clock error", err)
	}
}

func TestEtcdLeaseGoneReclaims(t *testing.T) {
	etcd := startEtcd(t)
	cfg := etcdConfig(etcd.Endpoint, "/test/reclaim")
	cfg.DatacenterID, cfg.Etcd.PinDatacenter = 0, true
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{etcd.Endpoint}, DialTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	g, err := New(t.Context(), cfg, WithEtcdClient(cli))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	var last int64
	for range 1000 {
		if last, err = g.Next(); err != nil {
			t.Fatal(err)
		}
	}
	// An operator revokes the lease (etcdctl lease revoke): the worker key
	// goes with it and another generator takes the pair at once, before
	// g's keeper notices.
	before := g.Stats()
	g.mu.Lock()
	lease := g.lease
	g.mu.Unlock()
	if _, err := cli.Revoke(t.Context(), lease); err != nil {
		t.Fatal(err)
	}
	other, err := New(t.Context(), cfg, WithEtcdClient(cli))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if s := other.Stats(); s.WorkerID != before.WorkerID {
		t.Fatalf("the freed pair went to worker %d, want %d", s.WorkerID, before.WorkerID)
	}
	// Both issue on the same pair for a moment. g cannot extend its mark
	// (the write checks the lease), and other starts above it: no overlap.
	var fromG []int64
	for range 5000 {
		if id, err := g.Next(); err == nil {
			fromG = append(fromG, id)
		}
	}
	otherFirst, err := other.Next()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range fromG {
		if id >= otherFirst {
			t.Fatalf("g issued %d on the revoked pair, not below the new holder's first id %d", id, otherFirst)
		}
	}
	t.Logf("g issued %d ids on the revoked pair, all below the new holder's", len(fromG))

	// The keeper finds the lease gone and claims the other pair of the
	// datacenter; ids continue above the earlier ones.
	eventually(t, "a new pair", func() bool {
		s := g.Stats()
		return s.LeaseState == LeaseHeld && s.WorkerID != before.WorkerID
	})
	id, err := g.Next()
	if err != nil || id <= last {
		t.Fatalf("Next() after reclaiming = %d, %v; want an id above %d", id, err, last)
	}
	if p, _ := cfg.Layout.Decode(id); p.Worker == before.WorkerID {
		t.Errorf("id %d still uses worker %d", id, before.WorkerID)
	}
}

// TestEtcdOutageResumesSoon: after etcd was down long enough for the
// client's reconnect backoff to grow, ids resume soon after etcd answers
// again, not seconds later.
func TestEtcdOutageResumesSoon(t *testing.T) {
	etcd := startEtcd(t)
	cfg := etcdConfig(etcd.Endpoint, "/test/outage")
	g, err := New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, err := g.Next(); err != nil {
		t.Fatal(err)
	}
	etcd.stop()
	eventually(t, "the lease to lapse", func() bool { return g.Ready() != nil })
	time.Sleep(4 * time.Second) // the outage lasts: reconnect attempts back off meanwhile
	etcd.start()
	up := time.Now()
	eventually(t, "ids after etcd restarted", func() bool { return g.Ready() == nil })
	took := time.Since(up)
	t.Logf("issuing again %s after etcd answered", took.Round(time.Millisecond))
	if took > 2*time.Second {
		t.Errorf("ids resumed %s after etcd answered, want within 2 s", took.Round(time.Millisecond))
	}
	if _, err := g.Next(); err != nil {
		t.Errorf("Next() after the outage: %v", err)
	}
}
