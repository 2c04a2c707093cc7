package idgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// etcdSource leases (datacenter, worker) pairs from etcd.
//
// Keys, under Etcd.Prefix:
//
//	workers/DC/W  the holder's description, attached to its lease: the pair
//	              is taken exactly while this key exists
//	hw/DC/W       the pair's high-water mark (JSON), never attached to a
//	              lease, so it outlives every holder; written only in a
//	              transaction that checks workers/DC/W still carries the
//	              writer's lease
//
// A claim is one transaction: if workers/DC/W was never created (its
// CreateRevision is 0), put it with the new lease and read hw/DC/W. So two
// generators never hold one pair, and the new holder sees the last mark the
// previous holder could have written.
type etcdSource struct {
	cli       *clientv3.Client
	ownClient bool
	cfg       Config
	clk       *reader
}

// claim is a pair won from etcd.
type claim struct {
	dc, worker int
	lease      clientv3.LeaseID
	ttl        time.Duration
	sent       time.Duration // when the grant was sent (monotonic, see reader)
	deadline   time.Duration // stop issuing here unless renewed
	mark       mark
	found      bool // the pair had a mark from an earlier holder
}

func (s *etcdSource) workersPrefix() string { return s.cfg.Etcd.Prefix + "/workers/" }

func (s *etcdSource) workerKey(dc, worker int) string {
	return s.workersPrefix() + strconv.Itoa(dc) + "/" + strconv.Itoa(worker)
}

func (s *etcdSource) markKey(dc, worker int) string {
	return s.cfg.Etcd.Prefix + "/hw/" + strconv.Itoa(dc) + "/" + strconv.Itoa(worker)
}

// margin is how long before the lease could expire at etcd the generator
// stops issuing. Deadlines are measured from before the request was sent,
// so the round trip is already on the safe side; the margin covers clock
// rate differences and scheduling delay between the check and the issue.
func (s *etcdSource) margin(ttl time.Duration) time.Duration {
	return max(ttl/10, 100*time.Millisecond)
}

// pairs lists the pairs this generator may claim, in claim order.
func (s *etcdSource) pairs() [][2]int {
	l := s.cfg.Layout
	dcs := []int{s.cfg.DatacenterID}
	if !s.cfg.Etcd.PinDatacenter {
		dcs = dcs[:0]
		for dc := 0; dc <= l.MaxDatacenter(); dc++ {
			dcs = append(dcs, dc)
		}
	}
	var out [][2]int
	for _, dc := range dcs {
		for w := 0; w <= l.MaxWorker(); w++ {
			out = append(out, [2]int{dc, w})
		}
	}
	return out
}

// rpc bounds one etcd call.
func (s *etcdSource) rpc(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.cfg.Etcd.DialTimeout)
}

// errNoFreePair is tryClaim's "every pair was taken at revision rev".
type errNoFreePair struct{ rev int64 }

func (e *errNoFreePair) Error() string { return "no free pair" }

// claim takes a free pair, waiting up to Etcd.ClaimTimeout for one to be
// released when all are taken.
func (s *etcdSource) claim(ctx context.Context) (claim, error) {
	begin := time.Now()
	for {
		c, err := s.tryClaim(ctx)
		var nf *errNoFreePair
		if !errors.As(err, &nf) {
			return c, err
		}
		left := s.cfg.Etcd.ClaimTimeout - time.Since(begin)
		if left <= 0 {
			return claim{}, &AllPairsTakenError{Pairs: len(s.pairs()), Prefix: s.cfg.Etcd.Prefix, Waited: time.Since(begin)}
		}
		// Watch from just after the scan, so a release between the scan and
		// the watch is not missed.
		wctx, cancel := context.WithTimeout(clientv3.WithRequireLeader(ctx), left)
		wch := s.cli.Watch(wctx, s.workersPrefix(), clientv3.WithPrefix(), clientv3.WithFilterPut(), clientv3.WithRev(nf.rev+1))
		select {
		case <-wch:
		case <-wctx.Done():
		}
		cancel()
		if err := ctx.Err(); err != nil {
			return claim{}, fmt.Errorf("snowflake: waiting for a free worker id: %w", err)
		}
	}
}

// tryClaim grants a lease and claims the first free pair with it, or
// returns *errNoFreePair (after revoking the unused lease).
func (s *etcdSource) tryClaim(ctx context.Context) (claim, error) {
	ttl := s.cfg.Etcd.LeaseTTL
	sent := s.clk.read().mono
	rctx, cancel := s.rpc(ctx)
	grant, err := s.cli.Grant(rctx, int64(ttl/time.Second))
	cancel()
	if err != nil {
		return claim{}, fmt.Errorf("snowflake: etcd lease grant: %w", err)
	}
	granted := time.Duration(grant.TTL) * time.Second
	rctx, cancel = s.rpc(ctx)
	taken, err := s.cli.Get(rctx, s.workersPrefix(), clientv3.WithPrefix(), clientv3.WithKeysOnly())
	cancel()
	if err != nil {
		s.revoke(grant.ID)
		return claim{}, fmt.Errorf("snowflake: etcd scan of %s: %w", s.workersPrefix(), err)
	}
	held := make(map[string]bool, len(taken.Kvs))
	for _, kv := range taken.Kvs {
		held[string(kv.Key)] = true
	}
	holder := holderInfo()
	pairs, err := s.usableFirst(ctx, s.pairs(), held)
	if err != nil {
		s.revoke(grant.ID)
		return claim{}, err
	}
	for _, p := range pairs {
		key := s.workerKey(p[0], p[1])
		if held[key] {
			continue
		}
		rctx, cancel = s.rpc(ctx)
		resp, err := s.cli.Txn(rctx).
			If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
			Then(clientv3.OpPut(key, holder, clientv3.WithLease(grant.ID)), clientv3.OpGet(s.markKey(p[0], p[1]))).
			Commit()
		cancel()
		if err != nil {
			s.revoke(grant.ID)
			return claim{}, fmt.Errorf("snowflake: etcd claim of %s: %w", key, err)
		}
		if !resp.Succeeded {
			continue // another generator won this pair since the scan
		}
		c := claim{dc: p[0], worker: p[1], lease: grant.ID, ttl: granted, sent: sent,
			deadline: sent + granted - s.margin(granted)}
		if kvs := resp.Responses[1].GetResponseRange().Kvs; len(kvs) > 0 {
			var m markJSON
			if err := json.Unmarshal(kvs[0].Value, &m); err != nil {
				s.revoke(grant.ID)
				return claim{}, fmt.Errorf("%w: etcd key %s is corrupt: %w", ErrHighWater, s.markKey(p[0], p[1]), err)
			}
			c.mark, c.found = m.toMark(), true
		}
		return c, nil
	}
	s.revoke(grant.ID)
	return claim{}, &errNoFreePair{rev: taken.Header.Revision}
}

// holderInfo describes this process in the worker key, for operators
// looking at etcd.
func holderInfo() string {
	host, _ := os.Hostname()
	b, _ := json.Marshal(map[string]any{"host": host, "pid": os.Getpid(), "since": time.Now().UTC().Format(timeFormat)})
	return string(b)
}

// revoke drops a lease, best effort: if it fails the lease expires by
// itself after its TTL.
func (s *etcdSource) revoke(id clientv3.LeaseID) {
	ctx, cancel := s.rpc(context.Background())
	defer cancel()
	_, _ = s.cli.Revoke(ctx, id)
}

// etcdMarks is the markStore of a leased pair.
type etcdMarks struct {
	src        *etcdSource
	dc, worker int
	lease      clientv3.LeaseID
}

// markJSON is the value of hw/DC/W.
type markJSON struct {
	HighWaterUnixMs int64 `json:"highWaterUnixMs"`
	WallUnixMs      int64 `json:"wallUnixMs"`
}

func (m *markJSON) toMark() mark { return mark{HighWater: m.HighWaterUnixMs, Wall: m.WallUnixMs} }

func (e *etcdMarks) store(ctx context.Context, m mark) error {
	b, _ := json.Marshal(markJSON{HighWaterUnixMs: m.HighWater, WallUnixMs: m.Wall})
	rctx, cancel := e.src.rpc(ctx)
	defer cancel()
	resp, err := e.src.cli.Txn(rctx).
		If(clientv3.Compare(clientv3.LeaseValue(e.src.workerKey(e.dc, e.worker)), "=", e.lease)).
		Then(clientv3.OpPut(e.src.markKey(e.dc, e.worker), string(b))).
		Commit()
	if err != nil {
		return fmt.Errorf("%w: etcd write of %s: %w", ErrHighWater, e.src.markKey(e.dc, e.worker), err)
	}
	if !resp.Succeeded {
		return &LeaseLostError{Datacenter: e.dc, Worker: e.worker, Reason: "the worker key no longer carries this generator's lease"}
	}
	return nil
}

// startEtcd connects, claims a pair and starts the keeper.
func (g *Snowflake) startEtcd(ctx context.Context, cli *clientv3.Client) error {
	src := &etcdSource{cli: cli, cfg: g.cfg, clk: &g.clk}
	if cli == nil {
		var err error
		src.cli, err = clientv3.New(clientv3.Config{
			Endpoints:   g.cfg.Etcd.Endpoints,
			DialTimeout: g.cfg.Etcd.DialTimeout,
			DialOptions: reconnectSoon(),
		})
		if err != nil {
			return fmt.Errorf("snowflake: etcd client for %v: %w", g.cfg.Etcd.Endpoints, err)
		}
		src.ownClient = true
	}
	c, err := src.claim(ctx)
	if err != nil && claimLater(ctx, err) {
		// Start without a pair: statements that need no key are served,
		// and keys are issued once etcd answers (claimInBackground).
		g.etcd = src
		g.leaseState, g.leaseReason = LeaseClaiming, err.Error()
		g.wg.Add(1)
		go g.claimInBackground()
		return nil
	}
	if err != nil {
		if src.ownClient {
			src.cli.Close()
		}
		return err
	}
	g.etcd = src
	g.adoptClaim(c)
	g.wg.Add(1)
	go g.keepLease()
	return nil
}

// adoptClaim switches the generator to a newly claimed pair. Its ids must
// be above the previous holder's mark and above every id this generator
// issued with another pair, so the next id is in a later millisecond than
// both. Called with g.mu held (or before the generator is shared).
func (g *Snowflake) adoptClaim(c claim) {
	g.setPair(c.dc, c.worker)
	g.lease, g.leaseTTL, g.leaseRenewed, g.leaseDeadline = c.lease, c.ttl, c.sent, c.deadline
	g.leaseState, g.leaseReason = LeaseHeld, ""
	g.store = &etcdMarks{src: g.etcd, dc: c.dc, worker: c.worker, lease: c.lease}
	g.hw = -1
	g.seq = g.maxSeq
	g.fresh = true
	if c.found {
		g.adoptMark(c.mark)
	}
}

// leaseUsableLocked says whether ids may be issued at now under the lease.
func (g *Snowflake) leaseUsableLocked(now reading) error {
	switch g.leaseState {
	case LeaseClaiming:
		return &NoWorkerIDError{Reason: g.leaseReason}
	case LeaseLost, LeaseReleased:
		return &LeaseLostError{Datacenter: g.dc, Worker: g.worker, Reason: g.leaseReason}
	}
	if now.mono >= g.leaseDeadline {
		reason := "not renewed in time, it may expire at etcd"
		if g.leaseReason != "" {
			reason += " (" + g.leaseReason + ")"
		}
		return &LeaseLostError{Datacenter: g.dc, Worker: g.worker, Reason: reason}
	}
	return nil
}

func (g *Snowflake) leaseStateLocked(now reading) LeaseState {
	if (g.leaseState == LeaseHeld || g.leaseState == LeaseRenewing) && now.mono >= g.leaseDeadline {
		return LeaseLapsed
	}
	return g.leaseState
}

// keepLease renews the lease every third of its TTL, moving the deadline
// only on a confirmed renewal; when etcd says the lease is gone it claims a
// pair again. It runs until Close.
func (g *Snowflake) keepLease() {
	defer g.wg.Done()
	src := g.etcd
	g.mu.Lock()
	lease, ttl := g.lease, g.leaseTTL
	g.mu.Unlock()
	interval := ttl / 3
	timer := time.NewTimer(interval)
	defer timer.Stop()
	for {
		select {
		case <-g.ctx.Done():
			return
		case <-timer.C:
		}
		next := interval
		sent := g.clk.read().mono
		rctx, cancel := context.WithTimeout(g.ctx, interval)
		resp, err := src.cli.KeepAliveOnce(rctx, lease)
		cancel()
		switch {
		case err == nil && resp.TTL > 0:
			granted := time.Duration(resp.TTL) * time.Second
			g.mu.Lock()
			if d := sent + granted - src.margin(granted); d > g.leaseDeadline {
				g.leaseRenewed, g.leaseDeadline = sent, d
			}
			g.leaseState, g.leaseReason = LeaseHeld, ""
			g.mu.Unlock()
		case g.ctx.Err() != nil:
			return
		case src.leaseGone(g.ctx, lease, resp, err):
			g.mu.Lock()
			g.leaseState, g.leaseReason = LeaseLost, "etcd no longer has the lease; claiming a worker id again"
			g.mu.Unlock()
			src.revoke(lease) // in case it lingers: free the old pair at once
			c, ok := g.reclaim()
			if !ok {
				return
			}
			lease, ttl, interval = c.lease, c.ttl, c.ttl/3
			next = interval
		default:
			g.mu.Lock()
			g.leaseState, g.leaseReason = LeaseRenewing, "keep-alive failed: "+err.Error()
			g.mu.Unlock()
			next = interval / 3 // retry sooner while the deadline still allows it
		}
		timer.Reset(next)
	}
}

// leaseGone says whether a failed keep-alive means the lease no longer
// exists (rather than etcd being slow or unreachable). TimeToLive reports
// an expired lease as -1; 0 means less than a second left, still ours.
func (s *etcdSource) leaseGone(ctx context.Context, lease clientv3.LeaseID, resp *clientv3.LeaseKeepAliveResponse, err error) bool {
	if err == nil {
		return resp.TTL <= 0
	}
	rctx, cancel := s.rpc(ctx)
	defer cancel()
	ttl, terr := s.cli.TimeToLive(rctx, lease)
	return terr == nil && ttl.TTL < 0
}

// reclaim claims a pair again after the lease was lost, retrying until it
// succeeds or the generator is closed.
func (g *Snowflake) reclaim() (claim, bool) {
	for {
		c, err := g.etcd.claim(g.ctx)
		if err == nil {
			g.mu.Lock()
			if g.closed {
				g.mu.Unlock()
				g.etcd.revoke(c.lease)
				return claim{}, false
			}
			g.adoptClaim(c)
			g.mu.Unlock()
			return c, true
		}
		g.mu.Lock()
		g.leaseReason = "claiming a worker id again: " + err.Error()
		g.mu.Unlock()
		select {
		case <-g.ctx.Done():
			return claim{}, false
		case <-time.After(reclaimRetry):
		}
	}
}

// release revokes the lease so the pair is free at once; the mark stays.
func (s *etcdSource) release(g *Snowflake) error {
	g.mu.Lock()
	lease := g.lease
	g.leaseState = LeaseReleased
	g.leaseReason = "generator closed"
	g.mu.Unlock()
	var err error
	if lease != 0 { // 0: closed while still claiming
		ctx, cancel := s.rpc(context.Background())
		_, err = s.cli.Revoke(ctx, lease)
		cancel()
	}
	if s.ownClient {
		if cerr := s.cli.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("snowflake: releasing the worker-id lease: %w", err)
	}
	return nil
}
