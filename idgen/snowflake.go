package idgen

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Snowflake is a Snowflake key generator: unique per (datacenter, worker)
// pair, strictly increasing, evenly spread over id % m. It is safe for
// concurrent use; every method may be called from any goroutine.
type Snowflake struct {
	cfg     Config
	clock   Clock
	clk     reader
	epochMs int64
	maxMs   int64
	maxSeq  int64
	tsShift uint
	spread  int64 // start range of a fresh millisecond
	borrow  int64 // start range of a borrowed millisecond
	tolMs   int64
	leadMs  int64 // configured max lead
	hystMs  int64 // how far below the cap a wait brings the lead
	resMs   int64 // high-water reserve Δ

	ctx    context.Context // cancelled by Close; bounds background work
	cancel context.CancelFunc
	wg     sync.WaitGroup // background writes and the lease keeper
	etcd   *etcdSource    // nil for the static source

	mu  sync.Mutex
	rng *mrand.Rand
	// last is the millisecond of the last id issued and seq its sequence.
	last, seq int64
	// wallMax is the latest wall-clock millisecond seen, or after a restart
	// the previous holder's clock when it wrote its mark (wallFromMark).
	wallMax      int64
	wallFromMark bool
	inBackStep   bool
	// leadCap is the lead over the wall clock allowed now: leadMs, or more
	// right after adopting a high-water mark, ratcheting down to leadMs.
	leadCap int64
	// fresh makes the next millisecond start in the full spread range even
	// when it is borrowed (the first one after a restart or takeover).
	fresh bool

	dc, worker int
	pairBits   int64
	pairGen    uint64 // bumped on takeover, so a late write of the old pair is ignored

	store       markStore // nil: no persistence
	hw          int64     // durable high-water millisecond (since epoch)
	writing     bool
	writeDone   chan struct{}
	writeErr    error         // the last write's error, until a write succeeds
	writeFailed time.Duration // when it failed (monotonic)

	lease         clientv3.LeaseID
	leaseState    LeaseState
	leaseRenewed  time.Duration // monotonic, see reader
	leaseDeadline time.Duration
	leaseTTL      time.Duration
	leaseReason   string

	closed bool
	lastID int64

	generated      uint64
	backSteps      uint64
	waited         time.Duration
	highWaterWaits uint64
}

var _ KeyGenerator = (*Snowflake)(nil)

// writeRetry is how often a failing high-water write is retried.
const writeRetry = 100 * time.Millisecond

// noHighWater is the durable mark of a generator without a state file:
// nothing to persist, ever.
const noHighWater = math.MaxInt64

// Option changes how New builds a generator.
type Option func(*options)

type options struct {
	clock      Clock
	seed       [2]uint64
	seeded     bool
	etcdClient *clientv3.Client
}

// WithClock makes the generator read time from c instead of the system
// clock.
func WithClock(c Clock) Option { return func(o *options) { o.clock = c } }

// WithSeed seeds the generator's random sequence starts, for reproducible
// tests; by default they are seeded from crypto/rand.
func WithSeed(seed1, seed2 uint64) Option {
	return func(o *options) { o.seed, o.seeded = [2]uint64{seed1, seed2}, true }
}

// WithEtcdClient makes the etcd source use cli (which the caller keeps
// owning and closes after the generator) instead of dialing Etcd.Endpoints.
func WithEtcdClient(cli *clientv3.Client) Option { return func(o *options) { o.etcdClient = cli } }

// New validates cfg and returns a running generator: with a state file it
// has loaded the high-water mark; with etcd it holds a leased pair (waiting
// up to Etcd.ClaimTimeout for one) and keeps the lease alive until Close.
// ctx bounds only the start-up.
func New(ctx context.Context, cfg Config, opts ...Option) (*Snowflake, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	o := options{clock: SystemClock()}
	for _, opt := range opts {
		opt(&o)
	}
	if !o.seeded {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("snowflake: seeding: %w", err)
		}
		o.seed = [2]uint64{binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])}
	}
	l := cfg.Layout
	g := &Snowflake{
		cfg:     cfg,
		clock:   o.clock,
		clk:     newReader(o.clock),
		epochMs: l.Epoch.UnixMilli(),
		maxMs:   l.MaxMillis(),
		maxSeq:  int64(l.MaxSequence()),
		tsShift: l.timeShift(),
		spread:  l.spreadRange(),
		borrow:  l.borrowRange(),
		tolMs:   cfg.MaxTolerate.Milliseconds(),
		leadMs:  cfg.MaxLead.Milliseconds(),
		resMs:   cfg.HighWaterReserve.Milliseconds(),
		rng:     mrand.New(mrand.NewPCG(o.seed[0], o.seed[1])),
		last:    -1,
		wallMax: -1,
		fresh:   true,
		hw:      noHighWater,
	}
	g.hystMs = (g.leadMs + 1) / 2
	g.seq = g.maxSeq
	g.leadCap = g.leadMs
	g.ctx, g.cancel = context.WithCancel(context.Background())

	switch cfg.Source {
	case WorkerIDStatic:
		g.setPair(cfg.DatacenterID, cfg.WorkerID)
		if cfg.StateFile != "" {
			f := &stateFile{path: cfg.StateFile, layout: l, pair: [2]int{cfg.DatacenterID, cfg.WorkerID}}
			m, found, err := f.load()
			if err != nil {
				g.cancel()
				return nil, err
			}
			g.store, g.hw = f, -1
			if found {
				g.adoptMark(m)
			}
		}
	case WorkerIDEtcd:
		if err := g.startEtcd(ctx, o.etcdClient); err != nil {
			g.cancel()
			return nil, err
		}
	}
	return g, nil
}

func (g *Snowflake) setPair(dc, worker int) {
	l := g.cfg.Layout
	g.dc, g.worker = dc, worker
	g.pairBits = int64(dc)<<l.datacenterShift() | int64(worker)<<l.workerShift()
	g.pairGen++
}

// adoptMark makes the generator issue only above a persisted mark: its
// first millisecond is above m.HighWater, and a clock reading earlier than
// m.Wall counts as a clock step back. Called with g.mu held (or before the
// generator is shared).
func (g *Snowflake) adoptMark(m mark) {
	hw := m.HighWater - g.epochMs
	wall := m.Wall - g.epochMs
	g.hw = hw
	if hw > g.last {
		g.last, g.seq = hw, g.maxSeq
	}
	if wall > g.wallMax {
		g.wallMax, g.wallFromMark = wall, true
	}
	g.fresh = true
	// A normal restart finds the clock up to Δ (plus the lead the previous
	// holder had) behind the mark: that is a bounded lead, not an error.
	g.leadCap = max(g.leadMs, hw-wall+g.tolMs+1)
}

// MaxBatch is the largest n NextN accepts: one millisecond's sequence.
func (g *Snowflake) MaxBatch() int { return int(g.maxSeq) + 1 }

// Next returns one new id.
func (g *Snowflake) Next() (int64, error) { return g.NextN(1) }

// NextN reserves n consecutive ids, first..first+n-1, all in one
// millisecond, and returns first. It waits only when the clock is behind by
// no more than the tolerance, when the borrowed lead reached its cap, or
// while the high-water mark is being persisted; otherwise it returns one of
// the package's errors.
func (g *Snowflake) NextN(n int) (int64, error) {
	if n < 1 || n > g.MaxBatch() {
		return 0, &BatchSizeError{N: n, Max: g.MaxBatch()}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var slept time.Duration
	for {
		now := g.clk.read()
		id, wait, err := g.step(now, int64(n))
		if err != nil || wait == nil {
			return id, err
		}
		switch {
		case wait.write != nil:
			g.highWaterWaits++
			g.awaitWriteLocked(wait.write, now)
		default:
			if slept > g.stallLimit() {
				return 0, &ClockStalledError{Waited: slept}
			}
			slept += wait.sleep
			g.waited += wait.sleep
			g.mu.Unlock()
			g.clock.Sleep(wait.sleep)
			g.mu.Lock()
		}
	}
}

// awaitWriteLocked waits, with g.mu released, for a high-water write to
// finish, or under a lease only until the lease deadline: a write stuck on
// an unreachable etcd must not hold the caller past the point where the
// answer is ErrLeaseLost anyway.
func (g *Snowflake) awaitWriteLocked(done chan struct{}, now reading) {
	if g.etcd == nil {
		g.mu.Unlock()
		<-done
		g.mu.Lock()
		return
	}
	timer := time.NewTimer(g.leaseDeadline - now.mono)
	g.mu.Unlock()
	select {
	case <-done:
	case <-timer.C:
	}
	timer.Stop()
	g.mu.Lock()
}

// stallLimit is how long one call sleeps in total before it decides the
// clock is not moving: far more than any wait a moving clock needs.
func (g *Snowflake) stallLimit() time.Duration {
	return time.Duration(g.tolMs+g.leadCap)*time.Millisecond + time.Second
}

// waitFor is what step asks NextN to do before trying again.
type waitFor struct {
	sleep time.Duration
	write chan struct{} // wait for this high-water write to finish
}

// step issues n ids at wall-clock time now, or says what to wait for.
func (g *Snowflake) step(now reading, n int64) (int64, *waitFor, error) {
	if g.closed {
		return 0, nil, ErrClosed
	}
	if g.etcd != nil {
		if err := g.leaseUsableLocked(now); err != nil {
			return 0, nil, err
		}
	}
	ms := now.ms - g.epochMs
	if ms < 0 {
		return 0, nil, fmt.Errorf("%w: %s is before %s", ErrBeforeEpoch,
			time.UnixMilli(now.ms).UTC().Format(timeFormat), g.cfg.Layout.Epoch.UTC().Format(timeFormat))
	}
	if ms < g.wallMax {
		if !g.inBackStep {
			g.inBackStep = true
			g.backSteps++
		}
		if drift := g.wallMax - ms; drift > g.tolMs {
			return 0, nil, &ClockBackwardsError{
				Drift:     time.Duration(drift) * time.Millisecond,
				Tolerance: g.cfg.MaxTolerate,
				HighWater: g.wallFromMark,
				ResumeAt:  time.UnixMilli(g.epochMs + g.wallMax - g.tolMs).UTC(),
			}
		}
	} else {
		g.wallMax, g.wallFromMark, g.inBackStep = ms, false, false
	}

	var t, start int64
	switch {
	case ms > g.last:
		// A new wall-clock millisecond: start anywhere in the spread range,
		// unless the last one was full for this request, i.e. the generator
		// is saturated and only fell behind for a moment (descheduled, a
		// sleep overshoot): then start as a borrowed millisecond would, or
		// each such moment would cost half a millisecond's capacity.
		width := g.spread
		if g.seq+n > g.maxSeq && !g.fresh {
			width = g.borrow
		}
		t, start = ms, g.randomStart(width, n)
	case g.seq+n <= g.maxSeq:
		t, start = g.last, g.seq+1
	default:
		// The millisecond ran out (or the clock is behind it): borrow the
		// next one if the lead stays within the cap, else wait until the
		// lead is well below the cap so the next waits are rare.
		t = g.last + 1
		if t-ms > g.leadCap {
			target := g.leadCap - g.hystMs
			sleep := time.Duration(t-target-ms)*time.Millisecond - time.Duration(now.ns)
			return 0, &waitFor{sleep: max(sleep, time.Millisecond/10)}, nil
		}
		width := g.borrow
		if g.fresh {
			width = g.spread
		}
		start = g.randomStart(width, n)
	}
	if t > g.maxMs {
		return 0, nil, &HorizonError{Horizon: g.cfg.Layout.Horizon()}
	}
	if t > g.hw {
		// The first write waits; once writes fail, calls fail fast with the
		// last error while a retry runs in the background (at most every
		// writeRetry), so a dead disk or etcd does not hang every INSERT.
		failed := g.writeErr
		switch {
		case g.writing && failed == nil:
		case g.writing, failed != nil && now.mono-g.writeFailed < writeRetry:
			return 0, nil, failed
		default:
			g.startWriteLocked(t, ms)
			if failed != nil {
				return 0, nil, failed
			}
		}
		return 0, &waitFor{write: g.writeDone}, nil
	}

	id := t<<g.tsShift | g.pairBits | start
	g.last, g.seq, g.fresh, g.lastID = t, start+n-1, false, id+n-1
	g.generated += uint64(n)
	if lead := t - ms; g.leadCap > g.leadMs && lead < g.leadCap {
		g.leadCap = max(g.leadMs, lead)
	}
	if g.store != nil && !g.writing && t > g.hw-g.resMs/2 && (g.writeErr == nil || now.mono-g.writeFailed >= writeRetry) {
		// Reserve the next window before it is reached, so issuing rarely
		// waits for an fsync or an etcd round trip.
		g.startWriteLocked(t, ms)
	}
	return id, nil, nil
}

// randomStart picks where a new millisecond's sequence starts: uniform in
// [0, width), narrowed so the n ids fit; a narrowed range stays a multiple
// of the borrow range, keeping id % 2..32 exact for large batches.
func (g *Snowflake) randomStart(width, n int64) int64 {
	if room := g.maxSeq + 2 - n; width > room {
		width = room
		if width >= g.borrow {
			width -= width % g.borrow
		}
	}
	if width <= 1 {
		return 0
	}
	return g.rng.Int64N(width)
}

// startWriteLocked persists, in the background, a mark Δ beyond the wall
// clock and at least one millisecond beyond the one being issued. It does
// not reserve Δ beyond a borrowed millisecond: after a restart the lead is
// up to hw − wall, and a crash loop would otherwise add Δ to it each time.
func (g *Snowflake) startWriteLocked(t, ms int64) {
	target := max(t+1, ms+g.resMs)
	m := mark{HighWater: g.epochMs + target, Wall: g.epochMs + ms}
	done := make(chan struct{})
	g.writing, g.writeDone = true, done
	store, gen := g.store, g.pairGen
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		err := store.store(g.ctx, m)
		g.mu.Lock()
		defer g.mu.Unlock()
		if gen == g.pairGen {
			if err != nil {
				g.writeErr, g.writeFailed = err, g.clk.read().mono
			} else {
				g.writeErr = nil
				g.hw = max(g.hw, target)
			}
		}
		g.writing = false
		close(done)
	}()
}

// Close stops the generator: later calls return ErrClosed, background work
// ends, and an etcd lease is revoked so the pair is free at once (its
// high-water mark stays). Close waits for a high-water write in flight.
func (g *Snowflake) Close() error {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return nil
	}
	g.closed = true
	g.mu.Unlock()
	g.cancel()
	g.wg.Wait()
	if g.etcd != nil {
		return g.etcd.release(g)
	}
	return nil
}
