package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/router"
)

// Read/write splitting (!READWRITE_SPLITTING): a group is one data source
// to the router and to the rest of the proxy, whose pool (Server.pools)
// connects to the group's primary. At execution, a plan the router marked
// router.AccessRead may go to one of the group's replicas instead; every
// other plan, and reads that must see what only the primary has, stay on
// the primary. The replicas have pools of their own, kept here, and a
// monitor (readwrite_monitor.go) that excludes a replica that is stopped,
// lagging or unreachable. Read-your-writes (readwrite_gtid.go) makes a
// replica read wait until the replica has applied the session's (or the
// user's) last write, or go to the primary.
//
// A primary that fails is not replaced: there is no promotion. Writes and
// primary-only reads on its group fail with an error that says so, and
// plain reads go on on the replicas.

// readwriteSplit is the server's read/write groups.
type readwriteSplit struct {
	groups map[string]*rwGroup // by group name (the data source)
	order  []*rwGroup          // the rules' order
	users  *causalUsers        // causalReads USER's last writes
	log    *slog.Logger
	done   chan struct{}
	wg     sync.WaitGroup
	// snapshots counts the live rules snapshots that use the groups
	// (snapshot.go); the last one to die closes them.
	snapshots atomic.Int64
}

// rwGroup is one group at run time.
type rwGroup struct {
	cfg      *config.ReadwriteGroup
	lb       config.LoadBalancer
	replicas []*replica
	// primaryProbe is a pool of the group's primary that only the
	// monitor uses, to log in and out: it tells a replica whose primary
	// is gone (it keeps serving) from one whose replication broke.
	primaryProbe *pool
	// primaryReads counts the reads of AccessRead plans that went to the
	// primary (no replica qualified, a causal wait timed out, a
	// transaction's strategy).
	primaryReads atomic.Uint64
}

// replica is one read data source of a group with what the monitor last
// found.
type replica struct {
	name   string
	group  string
	pool   *pool
	weight float64

	healthy atomic.Bool
	// probed is set once the monitor's first probe has ended.
	probed atomic.Bool
	// lag is Seconds_Behind_Master at the last probe; -1 when unknown
	// (NULL, or no probe answered).
	lag atomic.Int64
	// gtid is the replica's gtid_slave_pos at the last probe.
	gtid atomic.Pointer[gtidPos]
	// reason says why the replica is excluded; nil while healthy.
	reason atomic.Pointer[string]
	// note says how a healthy replica serves when that is not the usual
	// way (its primary is unreachable); nil otherwise.
	note       atomic.Pointer[string]
	reads      atomic.Uint64
	exclusions atomic.Uint64 // times it went from healthy to excluded
	causalWait atomic.Uint64 // MASTER_GTID_WAITs run on it
	causalMiss atomic.Uint64 // of which timed out
}

// newReadwriteSplit builds the groups of rules, nil when there are none,
// and starts their monitors.
func newReadwriteSplit(rules *config.Rules, log *slog.Logger, baseline string, schemaGen *atomic.Uint64) *readwriteSplit {
	if len(rules.ReadwriteGroups) == 0 {
		return nil
	}
	rw := &readwriteSplit{groups: map[string]*rwGroup{}, users: newCausalUsers(), log: log, done: make(chan struct{})}
	for i := range rules.ReadwriteGroups {
		cfg := &rules.ReadwriteGroups[i]
		probeDS := cfg.Primary
		probeDS.MinPoolSize = 0 // it only logs in and out: no idle connections
		g := &rwGroup{cfg: cfg, lb: cfg.NewLoadBalancer(), primaryProbe: newPoolWith(probeDS, false, log, baseline)}
		for _, rc := range cfg.Replicas {
			p := newPoolWith(rc.DataSource, false, log, baseline)
			p.schemaGen = schemaGen
			rp := &replica{name: rc.Name, group: cfg.Name, pool: p, weight: rc.Weight}
			rp.lag.Store(-1)
			why := "not probed yet"
			rp.reason.Store(&why)
			g.replicas = append(g.replicas, rp)
		}
		rw.groups[cfg.Name] = g
		rw.order = append(rw.order, g)
	}
	rw.snapshots.Store(1)
	rw.startMonitors()
	return rw
}

// close stops the monitors and closes the replicas' pools.
func (rw *readwriteSplit) close() {
	if rw == nil {
		return
	}
	select {
	case <-rw.done:
		return
	default:
	}
	close(rw.done)
	rw.wg.Wait()
	for _, g := range rw.order {
		g.primaryProbe.close()
		for _, rp := range g.replicas {
			rp.pool.close()
		}
	}
}

// group returns the group named ds, nil for a plain data source.
func (rw *readwriteSplit) group(ds string) *rwGroup {
	if rw == nil {
		return nil
	}
	return rw.groups[ds]
}

// candidates returns the indexes of the replicas that may serve reads.
func (g *rwGroup) candidates() []int {
	var out []int
	for i, rp := range g.replicas {
		if rp.serving() {
			out = append(out, i)
		}
	}
	return out
}

// serving reports whether the replica may take reads: the monitor finds
// it healthy and its pool is not marked down (a dial for a read failed;
// the pool probes until it answers).
func (rp *replica) serving() bool {
	return rp.healthy.Load() && !rp.pool.isDown()
}

// NoReplicaError: whenNoReplica FAIL, and no replica of the group may
// serve a read. The client sees 1105 (HY000).
type NoReplicaError struct {
	Group   string
	Reasons []string // per replica, why it is excluded
}

func (e *NoReplicaError) Error() string {
	return fmt.Sprintf("no replica of readwrite group %s may serve this read (%s) and whenNoReplica is FAIL", e.Group, strings.Join(e.Reasons, "; "))
}

// Unwrap makes the error a DataSourceError for the boundary (1105).
func (e *NoReplicaError) Unwrap() error {
	return &DataSourceError{DataSource: e.Group, Err: errors.New("no replica available")}
}

// PrimaryDownError: the primary of a group does not answer. shardflake
// promotes no replica, so what needs the primary fails until it is back.
type PrimaryDownError struct {
	Group, Primary string
	Err            error
}

func (e *PrimaryDownError) Error() string {
	return fmt.Sprintf("primary %s of readwrite group %s is unavailable (%v); shardflake does not promote a replica: writes and reads that need the primary fail until it is back, plain reads go on on the replicas", e.Primary, e.Group, e.Err)
}

func (e *PrimaryDownError) Unwrap() error { return e.Err }

// reasons lists why each replica is excluded, for errors.
func (g *rwGroup) reasons() []string {
	var out []string
	for _, rp := range g.replicas {
		why := ""
		if p := rp.reason.Load(); p != nil {
			why = *p
		}
		if rp.pool.isDown() && why == "" {
			why = "unreachable"
		}
		if why == "" {
			why = "healthy"
		}
		out = append(out, rp.name+": "+why)
	}
	return out
}

// rwSession is a session's read/write splitting state.
type rwSession struct {
	// pending: the session wrote to the group since its position there
	// was last read; pos: the primary's position after its writes.
	pending map[string]bool
	pos     map[string]gtidPos
	// fixed is the replica of transactionalReadQueryStrategy FIXED for
	// the transaction txn (the identity of its connection map).
	fixed    map[string]int
	fixedTxn uintptr
}

// readwriteSource wraps src for plan when the plan touches a read/write
// group: reads may go to a replica, writes are recorded for
// read-your-writes. It returns src unchanged otherwise.
func (s *Session) readwriteSource(plan *router.Plan, src connSource, inTxn bool) connSource {
	rw := s.srv.rw
	if rw == nil {
		return src
	}
	for _, r := range plan.Routes {
		if rw.groups[r.DataSource] != nil {
			return &rwSource{s: s, rw: rw, inner: src, plan: plan, inTxn: inTxn}
		}
	}
	return src
}

// rwSource is a connSource that sends a read plan's routes on a group to
// a replica.
type rwSource struct {
	s     *Session
	rw    *readwriteSplit
	inner connSource
	plan  *router.Plan
	inTxn bool
	// mu guards what release changes: lanes release in parallel.
	mu sync.Mutex
	// onReplica are the connections taken from replicas, by connection.
	onReplica map[*backendConn]*replica
	// broke is set when a replica connection broke during the statement.
	broke bool
	// retried: the statement already ran again after a replica broke.
	retried bool
}

func (rs *rwSource) acquire(ctx context.Context, ds string, n int) ([]*backendConn, error) {
	g := rs.rw.groups[ds]
	if g == nil {
		return rs.inner.acquire(ctx, ds, n)
	}
	if rs.plan.Access == router.AccessRead {
		bcs, ok, err := rs.fromReplica(ctx, g, rs.s.srv.connsPerQuery(n))
		if ok {
			return bcs, err
		}
		g.primaryReads.Add(1)
	}
	bcs, err := rs.inner.acquire(ctx, ds, n)
	var dse *DataSourceError
	if err != nil && errors.As(err, &dse) && !dse.Lost {
		return nil, &PrimaryDownError{Group: g.cfg.Name, Primary: g.cfg.Primary.Name, Err: err}
	}
	return bcs, err
}

// fromReplica takes n connections to a replica of g for a read; ok is
// false when the read must go to the primary instead.
func (rs *rwSource) fromReplica(ctx context.Context, g *rwGroup, n int) ([]*backendConn, bool, error) {
	s := rs.s
	ds := g.cfg.Name
	if s.state.pinNext || s.pinnedConn(ds) != nil {
		return nil, false, nil // the session's state lives (or will) on the primary
	}
	fixed := -1
	if rs.inTxn {
		switch {
		case g.cfg.TransactionalReads == config.TransactionalPrimary, s.txn.written[ds]:
			return nil, false, nil
		case g.cfg.TransactionalReads == config.TransactionalFixed:
			fixed = s.fixedReplica(ds)
		}
	}
	want, err := s.causalPosition(ctx, g)
	var my *mysql.MyError
	switch {
	case errors.As(err, &my):
		// The primary answered but has no MariaDB GTID position (1193 on
		// MySQL): reads after writes stay on the primary.
		return nil, false, nil
	case err != nil:
		return nil, true, err
	}
	cands := g.candidates()
	if fixed >= 0 {
		if !containsInt(cands, fixed) {
			return nil, false, nil // its replica left: the primary keeps the transaction's reads consistent
		}
		cands = []int{fixed}
	}
	if want != nil {
		// A replica already known to have the writes needs no wait.
		var covered []int
		for _, c := range cands {
			if have := g.replicas[c].gtid.Load(); have != nil && have.covers(want) {
				covered = append(covered, c)
			}
		}
		if len(covered) > 0 {
			cands = covered
		} else if g.cfg.CausalTimeout <= 0 {
			return nil, false, nil
		}
	}
	for len(cands) > 0 {
		i := g.lb.Pick(cands)
		rp := g.replicas[i]
		cands = removeInt(cands, i)
		bcs, err := rp.pool.get(ctx, n)
		if err != nil {
			if ctx.Err() != nil {
				return nil, true, err
			}
			continue // down: another replica, or the primary
		}
		if err := rs.prepareReplica(ctx, bcs, rp, want, g.cfg.CausalTimeout); err != nil {
			rp.pool.put(bcs...)
			switch {
			case ctx.Err() != nil:
				return nil, true, context.Cause(ctx)
			case errors.Is(err, errCausalTimeout):
				return nil, false, nil
			}
			continue
		}
		if fixed < 0 && rs.inTxn && g.cfg.TransactionalReads == config.TransactionalFixed {
			s.rw.fixed[ds] = i
		}
		if rs.onReplica == nil {
			rs.onReplica = map[*backendConn]*replica{}
		}
		for _, bc := range bcs {
			rs.onReplica[bc] = rp
			s.held.add(bc)
		}
		rp.reads.Add(1)
		return bcs, true, nil
	}
	if g.cfg.WhenNoReplica == config.NoReplicaFail && g.probed() {
		return nil, true, &NoReplicaError{Group: ds, Reasons: g.reasons()}
	}
	return nil, false, nil
}

// probed reports whether the monitor has probed every replica of g at
// least once: until then, a read that finds no replica goes to the
// primary even with whenNoReplica FAIL, so that a proxy just started
// does not fail reads.
func (g *rwGroup) probed() bool {
	for _, rp := range g.replicas {
		if !rp.probed.Load() {
			return false
		}
	}
	return true
}

// prepareReplica applies the session's settings to replica connections
// and, for read-your-writes, waits on the first until the replica has
// applied want.
func (rs *rwSource) prepareReplica(ctx context.Context, bcs []*backendConn, rp *replica, want gtidPos, timeout time.Duration) error {
	settings := rs.s.vars.sql()
	for _, bc := range bcs {
		if err := bc.apply(settings); err != nil {
			return err
		}
		rs.s.carryMode(bc)
	}
	if want == nil {
		return nil
	}
	if have := rp.gtid.Load(); have != nil && have.covers(want) {
		return nil
	}
	rp.causalWait.Add(1)
	stop := bcs[0].watch(ctx) // the client's KILL or timeout ends the wait
	caught, err := masterGTIDWait(bcs[0], want, timeout)
	stop()
	if err != nil {
		return err
	}
	if !caught {
		rp.causalMiss.Add(1)
		return errCausalTimeout
	}
	rp.reached(want)
	return nil
}

// reached records that the replica has applied want (a MASTER_GTID_WAIT
// returned), so the session's next reads need no wait before the
// monitor's next probe.
func (rp *replica) reached(want gtidPos) {
	for {
		old := rp.gtid.Load()
		next := gtidPos{}
		if old != nil {
			for d, g := range *old {
				next[d] = g
			}
		}
		for d, g := range want {
			if h, ok := next[d]; !ok || h.seq < g.seq {
				next[d] = g
			}
		}
		if rp.gtid.CompareAndSwap(old, &next) {
			return
		}
	}
}

var errCausalTimeout = errors.New("replica did not reach the session's position in time")

func (rs *rwSource) release(bc *backendConn) {
	rs.mu.Lock()
	rp, ok := rs.onReplica[bc]
	if ok {
		lost := bc.broken
		if lost {
			rs.broke = true
			rp.markExcluded("connection lost during a read")
		}
		rs.mu.Unlock()
		if lost {
			// The replica most likely died: its idle connections went
			// with it, and the first read after it is back must not
			// find one.
			rp.pool.dropIdle()
		}
		if rs.s.held.remove(bc) {
			bc.pool.put(bc)
		}
		return
	}
	if rs.plan.Access != router.AccessRead && !rs.inTxn {
		// Autocommit writes (and a statement guard's commit) are done:
		// the next read must see them.
		for _, r := range rs.plan.Routes {
			if g := rs.rw.groups[r.DataSource]; g != nil && bc.pool.name == g.cfg.Name {
				rs.s.readwriteWrote(g)
			}
		}
	}
	rs.mu.Unlock()
	rs.inner.release(bc)
}

// retryable reports whether a read that failed on a replica may run once
// more: a replica connection was lost (not cancelled: a KILL or timeout
// is the client's) before the result began, so nothing reached the
// client. The lost replica is excluded by then, so the retry goes to
// another replica, or as whenNoReplica says.
func (rs *rwSource) retryable(err error) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	var dse *DataSourceError
	if err == nil || !rs.broke || rs.retried || !errors.As(err, &dse) || !dse.Lost {
		return false
	}
	rs.retried, rs.broke, rs.onReplica = true, false, nil
	return true
}

// fixedReplica returns the replica FIXED chose for this transaction on
// ds, -1 before its first read.
func (s *Session) fixedReplica(ds string) int {
	st := &s.rw
	id := reflect.ValueOf(s.txn.conns).Pointer()
	if st.fixed == nil || st.fixedTxn != id {
		st.fixed, st.fixedTxn = map[string]int{}, id
	}
	if i, ok := st.fixed[ds]; ok {
		return i
	}
	return -1
}

// readwriteWrote records a committed write to group g.
func (s *Session) readwriteWrote(g *rwGroup) {
	switch g.cfg.CausalReads {
	case config.CausalSession:
		if s.rw.pending == nil {
			s.rw.pending = map[string]bool{}
		}
		s.rw.pending[g.cfg.Name] = true
	case config.CausalUser:
		s.srv.rw.users.wrote(s.user, g.cfg.Name)
	}
}

// readwriteCommitted records the writes of a committed transaction
// (written: its data sources that it wrote to).
func (s *Session) readwriteCommitted(written map[string]bool) {
	for ds := range written {
		if g := s.srv.rw.group(ds); g != nil {
			s.readwriteWrote(g)
		}
	}
}

func containsInt(list []int, x int) bool {
	for _, v := range list {
		if v == x {
			return true
		}
	}
	return false
}

func removeInt(list []int, x int) []int {
	out := make([]int, 0, len(list))
	for _, v := range list {
		if v != x {
			out = append(out, v)
		}
	}
	return out
}

// isDown reports whether the pool's data source is marked down.
func (p *pool) isDown() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.down != nil || p.closed
}
