package idgen

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
)

// SegmentStore is where a SEGMENT generator takes its blocks: one row of a
// table (biz_tag, max_id). The proxy implements it over a backend
// connection; idgen only decides when to ask.
type SegmentStore interface {
	// Fetch raises the stored maximum by step in one statement and
	// returns the new maximum: the keys (max-step, max] are then this
	// generator's alone, whatever other proxies fetch.
	Fetch(ctx context.Context, step int64) (max int64, err error)
	// Raise makes the stored maximum at least floor.
	Raise(ctx context.Context, floor int64) error
	// Addr names the data source and row, for errors and state.
	Addr() string
}

// Guard returns the largest key the tables a generator fills already
// hold (MAX(key) over every physical table), 0 when they are empty. A
// SEGMENT generator calls it before issuing its first key and refuses to
// issue while a table holds a key at or above the next one (a TICKET
// generator has its own, per server: TicketGuard).
type Guard func(ctx context.Context) (int64, error)

// SEGMENT props beyond the data source's.
const (
	PropTable           = "table"
	PropBizTag          = "biz-tag"
	PropStep            = "step"
	PropMaxStep         = "max-step"
	PropSegmentDuration = "segment-duration-seconds"
)

// SEGMENT defaults: a block of 1000 keys to start, doubling while a block
// lasts less than the segment duration, at most 1,000,000 (Leaf's bound).
const (
	DefaultSegmentTable    = "shardflake_segments"
	DefaultStep            = 1000
	DefaultMaxStep         = 1_000_000
	DefaultSegmentDuration = 15 * time.Minute
)

// SegmentConfig is a SEGMENT generator's configuration.
type SegmentConfig struct {
	Store StoreConfig
	// Table and BizTag are the row: BizTag defaults to the generator's
	// name (the proxy fills it in).
	Table, BizTag string
	// Step is the first block's size and the smallest; MaxStep the
	// largest. MaxBatch is Step, so a statement's keys always fit one
	// fresh block.
	Step, MaxStep int64
	// SegmentDuration is how long a block should last: a block used up
	// faster doubles the step, one lasting more than twice as long
	// halves it.
	SegmentDuration time.Duration
}

var identRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$]{0,63}$`)

// ParseSegmentProps reads a SEGMENT generator's props.
func ParseSegmentProps(props map[string]string) (SegmentConfig, error) {
	p, err := readProps(TypeSegment, props, []string{PropURL, PropUsername, PropPassword, PropTable, PropBizTag,
		PropStep, PropMaxStep, PropSegmentDuration, PropFetchTimeout, PropRetryAfter})
	if err != nil {
		return SegmentConfig{}, err
	}
	c := SegmentConfig{Table: DefaultSegmentTable, Step: DefaultStep, MaxStep: DefaultMaxStep, SegmentDuration: DefaultSegmentDuration}
	c.Store = p.store(TypeSegment, PropURL)
	if v, ok := props[PropTable]; ok {
		c.Table = strings.TrimSpace(v)
		if !identRe.MatchString(c.Table) {
			p.fail(PropTable, v, "want a plain table name")
		}
	}
	c.BizTag = strings.TrimSpace(props[PropBizTag])
	if len(c.BizTag) > 128 {
		p.fail(PropBizTag, c.BizTag, "longer than 128 characters")
	}
	c.Step = int64(p.int(PropStep, int(c.Step)))
	c.MaxStep = int64(p.int(PropMaxStep, int(c.MaxStep)))
	c.SegmentDuration = time.Duration(p.int(PropSegmentDuration, int(c.SegmentDuration/time.Second))) * time.Second
	switch {
	case c.Step < 1 || c.Step > 1<<30:
		p.fail(PropStep, fmt.Sprint(c.Step), fmt.Sprintf("outside [1, %d]", 1<<30))
	case c.MaxStep < c.Step || c.MaxStep > 1<<40:
		p.fail(PropMaxStep, fmt.Sprint(c.MaxStep), fmt.Sprintf("outside [step, %d]", int64(1)<<40))
	case c.SegmentDuration <= 0 || c.SegmentDuration > 24*time.Hour:
		p.fail(PropSegmentDuration, fmt.Sprint(int64(c.SegmentDuration/time.Second)), "outside [1, 86400]")
	}
	if p.err != nil {
		return SegmentConfig{}, typed(TypeSegment, p.err)
	}
	return c, nil
}

func checkSegment(props map[string]string) error {
	_, err := ParseSegmentProps(props)
	return err
}

// Errors of the SEGMENT and TICKET generators; the typed errors below
// match them with errors.Is.
var (
	// ErrStoreUnavailable: the data source that holds the generator's
	// state did not answer, and no keys are left in memory.
	ErrStoreUnavailable = errors.New("key generator: data source unavailable")
	// ErrBelowTable: a table already holds keys at or above the
	// generator's next key (AdoptError).
	ErrBelowTable = errors.New("key generator: next key not above the table's largest")
)

// StoreError says which data source failed and why.
type StoreError struct {
	Type, Addr string
	Err        error
}

// Error describes the cause for a client.
func (e *StoreError) Error() string {
	return fmt.Sprintf("%s: %s: %v", strings.ToLower(e.Type), e.Addr, e.Err)
}

// Is makes a StoreError match ErrStoreUnavailable.
func (e *StoreError) Is(target error) bool { return target == ErrStoreUnavailable }

// Unwrap returns the driver's error.
func (e *StoreError) Unwrap() error { return e.Err }

// AdoptError says that a table holds keys the generator could issue.
type AdoptError struct {
	Type     string
	TableMax int64
	Next     int64
	// Class is a TICKET server's residue class ("id % 2 = 1"): only
	// its keys were counted.
	Class string
}

// Error describes the cause and the remedy.
func (e *AdoptError) Error() string {
	among := ""
	if e.Class != "" {
		among = " among the keys with " + e.Class
	}
	return fmt.Sprintf("%s: refusing to issue: the table already holds keys up to %d%s and the next key would be %d; run ADOPT SHARDING KEY GENERATOR FOR <table> to move the generator above it",
		strings.ToLower(e.Type), e.TableMax, among, e.Next)
}

// Is makes an AdoptError match ErrBelowTable.
func (e *AdoptError) Is(target error) bool { return target == ErrBelowTable }

// block is the keys [next, end): the zero block is empty.
type block struct{ next, end int64 }

func (b block) left() int64 { return max(0, b.end-b.next) }

// Segment is Meituan Leaf's segment mode: keys come from blocks taken
// from a table row in one statement each, the next block is fetched in
// the background once a tenth of the current one is used, and the step
// adapts to how fast blocks are used up. A restart loses the rest of its
// blocks (a gap), never reissues. It is safe for concurrent use.
type Segment struct {
	cfg   SegmentConfig
	store SegmentStore
	guard Guard

	mu      sync.Mutex
	cur     block
	curSize int64
	nxt     block
	loading chan struct{} // non-nil while a fetch runs; closed when it ends
	step    int64
	fetched time.Time // when the last block arrived
	floor   int64
	err     error
	errAt   time.Time
	// guarded: the guard ran and guardMax is the table's largest key
	// then; checked: the first key issued was above it; refused: it was
	// not, or the guard failed (until refusedAt + RetryAfter).
	guarded   bool
	guardMax  int64
	checked   bool
	refused   error
	refusedAt time.Time
	closed    bool

	issued, roundTrips, failures uint64
	waited                       time.Duration
}

// NewSegment builds a SEGMENT generator; it fetches nothing until the
// first key is asked for. guard may be nil (no table to protect).
func NewSegment(cfg SegmentConfig, store SegmentStore, guard Guard) *Segment {
	return &Segment{cfg: cfg, store: store, guard: guard, step: cfg.Step}
}

// MaxBatch is the smallest block: a statement's keys always fit one.
func (g *Segment) MaxBatch() int { return int(g.cfg.Step) }

// NextN returns the first of n consecutive keys from one block.
func (g *Segment) NextN(n int) (int64, error) {
	if n < 1 || n > g.MaxBatch() {
		return 0, &BatchSizeError{N: n, Max: g.MaxBatch()}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for {
		if g.closed {
			return 0, ErrClosed
		}
		if g.refused != nil && time.Since(g.refusedAt) < g.cfg.Store.RetryAfter {
			return 0, g.refused
		}
		if g.guard != nil && !g.guarded {
			// Before the first block: keys other proxies issue from the
			// same row after this snapshot are above it anyway, so only
			// keys written by something else can be at or above it.
			if err := g.guardLocked(); err != nil {
				return 0, err
			}
			continue
		}
		if g.cur.left() >= int64(n) {
			if !g.checked && g.guard != nil {
				if g.cur.next <= g.guardMax {
					g.refused, g.refusedAt = &AdoptError{Type: TypeSegment, TableMax: g.guardMax, Next: g.cur.next}, time.Now()
					g.guarded = false // check again after RetryAfter
					return 0, g.refused
				}
				g.checked = true
			}
			first := g.cur.next
			g.cur.next += int64(n)
			g.issued += uint64(n)
			if g.nxt.left() == 0 && g.loading == nil && g.cur.left()*10 < g.curSize*9 && (g.err == nil || time.Since(g.errAt) >= g.cfg.Store.RetryAfter) {
				g.startFetchLocked()
			}
			return first, nil
		}
		if g.nxt.left() > 0 {
			if g.nxt.next == g.cur.end && g.cur.left() > 0 {
				g.cur.end = g.nxt.end
				g.curSize += g.nxt.left()
			} else {
				g.cur, g.curSize = g.nxt, g.nxt.left()
			}
			g.nxt = block{}
			continue
		}
		if g.loading != nil {
			ch := g.loading
			start := time.Now()
			g.mu.Unlock()
			<-ch
			g.mu.Lock()
			g.waited += time.Since(start)
			if g.err != nil && g.nxt.left() == 0 {
				return 0, g.err
			}
			continue
		}
		if g.err != nil && time.Since(g.errAt) < g.cfg.Store.RetryAfter {
			return 0, g.err
		}
		g.startFetchLocked()
	}
}

// guardLocked runs the guard with g.mu released and keeps the table's
// largest key; the first key issued is compared with it.
func (g *Segment) guardLocked() error {
	g.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), g.cfg.Store.FetchTimeout)
	tableMax, err := g.guard(ctx)
	cancel()
	g.mu.Lock()
	if err != nil {
		g.refused, g.refusedAt = fmt.Errorf("segment: checking the table's largest key before the first key: %w", err), time.Now()
		return g.refused
	}
	g.guardMax, g.guarded, g.refused = tableMax, true, nil
	return nil
}

func (g *Segment) startFetchLocked() {
	ch := make(chan struct{})
	g.loading = ch
	step, floor := g.step, g.floor
	go g.fetch(ch, step, floor)
}

// fetch takes one block of step keys; a block at or below the adopted
// floor is discarded after raising the stored maximum.
func (g *Segment) fetch(done chan struct{}, step, floor int64) {
	ctx, cancel := context.WithTimeout(context.Background(), g.cfg.Store.FetchTimeout)
	defer cancel()
	var trips uint64
	mx, err := g.store.Fetch(ctx, step)
	trips++
	if err == nil && mx-step < floor {
		if err = g.store.Raise(ctx, floor); err == nil {
			mx, err = g.store.Fetch(ctx, step)
			trips += 2
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	defer close(done)
	g.loading = nil
	g.roundTrips += trips
	if err != nil {
		g.failures++
		g.err, g.errAt = &StoreError{Type: TypeSegment, Addr: g.store.Addr(), Err: err}, time.Now()
		return
	}
	g.err = nil
	b := block{next: max(mx-step+1, g.floor+1), end: mx + 1}
	if b.left() == 0 {
		return
	}
	if g.cur.left() == 0 {
		g.cur, g.curSize = b, b.left()
	} else {
		g.nxt = b
	}
	now := time.Now()
	if !g.fetched.IsZero() {
		switch lasted := now.Sub(g.fetched); {
		case lasted < g.cfg.SegmentDuration && g.step*2 <= g.cfg.MaxStep:
			g.step *= 2
		case lasted > 2*g.cfg.SegmentDuration && g.step/2 >= g.cfg.Step:
			g.step /= 2
		}
	}
	g.fetched = now
}

// Adopt moves the generator above floor: blocks in memory lose their keys
// at or below it and the stored maximum is raised, so every proxy that
// fetches afterwards starts above it too.
func (g *Segment) Adopt(floor int64) error {
	g.mu.Lock()
	if floor > g.floor {
		g.floor = floor
	}
	g.cur.next = max(g.cur.next, g.floor+1)
	g.nxt.next = max(g.nxt.next, g.floor+1)
	g.refused, g.checked = nil, false
	// floor is the tables' largest key as ADOPT read it just now: rows
	// deleted since the guard ran no longer count.
	g.guardMax, g.guarded = floor, true
	g.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), g.cfg.Store.FetchTimeout)
	defer cancel()
	if err := g.store.Raise(ctx, floor); err != nil {
		return &StoreError{Type: TypeSegment, Addr: g.store.Addr(), Err: err}
	}
	return nil
}

// Close makes later calls fail with ErrClosed.
func (g *Segment) Close() error {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	return nil
}

// State is a snapshot for admin statements and metrics.
func (g *Segment) State() GeneratorState {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := GeneratorState{Issued: g.issued, RoundTrips: g.roundTrips, Failures: g.failures, Waited: g.waited,
		BlockNext: g.cur.next, BlockEnd: g.cur.end - 1, Step: g.step, Floor: g.floor}
	if g.nxt.left() > 0 {
		s.NextBlockEnd = g.nxt.end - 1
	}
	srv := ServerState{Addr: g.store.Addr(), Healthy: g.err == nil}
	if g.err != nil {
		srv.Err = g.err.Error()
	}
	s.Servers = []ServerState{srv}
	switch {
	case g.refused != nil:
		s.Err = g.refused.Error()
	case g.err != nil && g.cur.left() == 0 && g.nxt.left() == 0:
		s.Err = g.err.Error()
	}
	return s
}
