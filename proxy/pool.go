package proxy

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-mysql-org/go-mysql/client"

	"github.com/shardflake/shardflake/config"
)

// Pool defaults for settings the rules file leaves at zero.
const (
	defaultMaxPoolSize    = 50
	defaultConnectTimeout = 5 * time.Second
	defaultIdleTimeout    = 10 * time.Minute
	defaultMaxLifetime    = 30 * time.Minute
	defaultWaitTimeout    = 30 * time.Second
	// pingAfterIdle: a connection idle longer is pinged before it is
	// handed out, so a backend restart costs no statement.
	pingAfterIdle = 5 * time.Second
	// probeMin and probeMax bound the interval at which a data source
	// that is down is probed.
	probeMin = 200 * time.Millisecond
	probeMax = 2 * time.Second
	// maintainEvery is how often idle connections are checked.
	maintainEvery = 10 * time.Second
)

// pool holds the connections to one data source. While the data source is
// down (a connection attempt failed), the pool fails requests at once and
// probes it in the background until it answers again.
type pool struct {
	name      string
	ds        config.DataSource
	foundRows bool
	max       int
	minIdle   int

	connectTimeout time.Duration
	idleTimeout    time.Duration
	maxLifetime    time.Duration
	waitTimeout    time.Duration
	log            *slog.Logger
	// schemaGen counts DDL through the proxy; a connection's prepared
	// statements from an older generation are closed (backendstmt.go).
	// The Server shares its counter with every pool.
	schemaGen *atomic.Uint64
	// version is the server version the data source announced at its
	// last login ("" before the first).
	version atomic.Pointer[string]
	// tls and tlsErr are the connections' TLS settings (backendtls.go) or
	// why they could not be built; tlsState is the last login's
	// encryption ("TLS 1.3", "off"; nil before the first).
	tls      *tls.Config
	tlsErr   error
	tlsState atomic.Pointer[string]
	// baseline is the SET every new connection runs, and every reset one
	// again: backendBaseline and the rules' session settings.
	baseline string

	mu   sync.Mutex
	idle []*backendConn // most recently used last
	open int            // idle, in use and being dialed
	// reserved is capacity promised to woken waiters that have not
	// taken it yet, so a newcomer cannot take it first.
	reserved int
	waiters  []*poolWaiter // FIFO
	down     error         // non-nil while the data source is down
	probing  bool
	closed   bool
	// closeReason is why a pool closed before shutdown (a reload's
	// grace period ended; snapshot.go); "" for shutdown.
	closeReason string
	// mux is the shared connections of server.multiplex (multiplex.go),
	// made on first use; they are not counted in open.
	mux *muxSet
	// snapshots counts the live rules snapshots that use the pool.
	snapshots atomic.Int64
	done      chan struct{}
	wg        sync.WaitGroup
}

type poolWaiter struct {
	n     int
	ready chan struct{}
}

func newPool(ds config.DataSource, foundRows bool, log *slog.Logger) *pool {
	return newPoolWith(ds, foundRows, log, backendBaseline)
}

// poolBaseline is the SET assignments every backend connection of srv's
// data sources starts with: backendBaseline, and server.lockWaitTimeout
// as innodb_lock_wait_timeout when set.
func poolBaseline(srv config.Server) string {
	b := backendBaseline
	if lw := srv.LockWaitTimeout; lw > 0 {
		b += ", innodb_lock_wait_timeout = " + strconv.FormatInt(int64(lw/time.Second), 10)
	}
	return b
}

// newPoolWith is newPool with the baseline settings of its connections.
func newPoolWith(ds config.DataSource, foundRows bool, log *slog.Logger, baseline string) *pool {
	p := &pool{
		baseline:       baseline,
		name:           ds.Name,
		ds:             ds,
		foundRows:      foundRows,
		max:            ds.MaxPoolSize,
		minIdle:        ds.MinPoolSize,
		connectTimeout: ds.ConnectionTimeout,
		idleTimeout:    ds.IdleTimeout,
		maxLifetime:    ds.MaxLifetime,
		waitTimeout:    max(defaultWaitTimeout, ds.ConnectionTimeout),
		log:            log.With("datasource", ds.Name),
		schemaGen:      new(atomic.Uint64),
		done:           make(chan struct{}),
	}
	p.tls, p.tlsErr = ds.TLSConfig()
	if p.max <= 0 {
		p.max = defaultMaxPoolSize
	}
	p.minIdle = min(max(p.minIdle, 0), p.max)
	if p.connectTimeout <= 0 {
		p.connectTimeout = defaultConnectTimeout
	}
	if p.idleTimeout <= 0 {
		p.idleTimeout = defaultIdleTimeout
	}
	if p.maxLifetime <= 0 {
		p.maxLifetime = defaultMaxLifetime
	}
	p.wg.Add(1)
	go p.maintain()
	return p
}

// PoolStats is a snapshot of one pool, for metrics and SHOW STORAGE UNITS.
type PoolStats struct {
	DataSource string
	Open       int // connections open or being opened
	Idle       int
	InUse      int
	Waiting    int // requests waiting for a connection
	Max        int
	Down       error // why the data source is considered down; nil when up
	// TLSMode is the data source's sslMode (tlsMode); Encrypted says the
	// last login used TLS.
	TLSMode   string
	Encrypted bool
}

func (p *pool) stats() PoolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	w := 0
	for _, x := range p.waiters {
		w += x.n
	}
	st := PoolStats{DataSource: p.name, Open: p.open, Idle: len(p.idle), InUse: p.open - len(p.idle), Waiting: w, Max: p.max, Down: p.down, TLSMode: p.tlsMode()}
	if s := p.tlsState.Load(); s != nil && *s != "off" {
		st.Encrypted = true
	}
	return st
}

// serverVersion returns the version the data source's server announced,
// "" before the first connection.
func (p *pool) serverVersion() string {
	if v := p.version.Load(); v != nil {
		return *v
	}
	return ""
}

// available is how many connections a request could have now.
func (p *pool) available() int { return len(p.idle) + p.max - p.open - p.reserved }

// get returns n connections (n is capped at the pool size), waiting in
// line while the pool is exhausted, up to the wait timeout or ctx.
func (p *pool) get(ctx context.Context, n int) ([]*backendConn, error) {
	n = min(max(n, 1), p.max)
	p.mu.Lock()
	if err := p.unavailable(); err != nil {
		p.mu.Unlock()
		return nil, err
	}
	if len(p.waiters) > 0 || p.available() < n {
		w := &poolWaiter{n: n, ready: make(chan struct{})}
		p.waiters = append(p.waiters, w)
		p.mu.Unlock()
		timer := time.NewTimer(p.waitTimeout)
		defer timer.Stop()
		var err error
		select {
		case <-w.ready:
		case <-ctx.Done():
			err = context.Cause(ctx)
		case <-timer.C:
			err = &DataSourceError{DataSource: p.name, Err: fmt.Errorf("no connection free after %s (maxPoolSize %d)", p.waitTimeout, p.max)}
		case <-p.done:
			err = &DataSourceError{DataSource: p.name, Err: net.ErrClosed}
		}
		p.mu.Lock()
		if err != nil {
			select {
			case <-w.ready:
				// Woken just as it gave up: hand the capacity on.
				p.reserved -= w.n
			default:
				p.removeWaiter(w)
			}
			p.wakeLocked()
			p.mu.Unlock()
			return nil, err
		}
		p.reserved -= w.n
		if err := p.unavailable(); err != nil {
			p.wakeLocked()
			p.mu.Unlock()
			return nil, err
		}
	}
	// The head waiter (or a request with no one waiting) has room now.
	conns := make([]*backendConn, 0, n)
	for len(conns) < n && len(p.idle) > 0 {
		bc := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		conns = append(conns, bc)
	}
	dials := n - len(conns)
	p.open += dials
	p.wakeLocked()
	p.mu.Unlock()

	// Check connections that sat idle long enough for the backend to
	// have gone away (a restart) before a statement depends on them.
	for i := 0; i < len(conns); i++ {
		bc := conns[i]
		if time.Since(bc.lastUsed) < pingAfterIdle && time.Since(bc.created) < p.maxLifetime {
			continue
		}
		if time.Since(bc.created) < p.maxLifetime && bc.ping(p.connectTimeout) == nil {
			continue
		}
		p.discard(bc)
		p.mu.Lock()
		p.open++
		p.mu.Unlock()
		conns = append(conns[:i], conns[i+1:]...)
		i--
		dials++
	}
	for ; dials > 0; dials-- {
		bc, err := p.dial(ctx)
		if err != nil {
			p.mu.Lock()
			p.open -= dials
			p.wakeLocked()
			p.mu.Unlock()
			p.put(conns...)
			return nil, err
		}
		conns = append(conns, bc)
	}
	return conns, nil
}

// unavailable returns the error for a data source that is down or a pool
// that is closed. p.mu must be held.
func (p *pool) unavailable() error {
	if p.closed {
		if p.closeReason != "" {
			return &DataSourceError{DataSource: p.name, Err: errors.New(p.closeReason)}
		}
		return &DataSourceError{DataSource: p.name, Err: errors.New("proxy is shutting down")}
	}
	if p.down != nil {
		return &DataSourceError{DataSource: p.name, Err: p.down}
	}
	return nil
}

func (p *pool) removeWaiter(w *poolWaiter) {
	for i, x := range p.waiters {
		if x == w {
			p.waiters = append(p.waiters[:i], p.waiters[i+1:]...)
			return
		}
	}
}

// wakeLocked lets the head waiter go when its request fits, or when the
// data source went down (it then fails at once). p.mu must be held.
func (p *pool) wakeLocked() {
	if len(p.waiters) == 0 {
		return
	}
	w := p.waiters[0]
	if p.available() >= w.n || p.down != nil || p.closed {
		p.waiters = p.waiters[1:]
		p.reserved += w.n
		close(w.ready)
	}
}

// dial opens a connection; a failure marks the data source down.
func (p *pool) dial(ctx context.Context) (*backendConn, error) {
	bc, err := dialBackend(ctx, p)
	if err == nil {
		return bc, nil
	}
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	p.markDown(err)
	return nil, &DataSourceError{DataSource: p.name, Err: err}
}

// markDown records that the data source does not answer, drops the idle
// connections (they went with it) and starts probing.
func (p *pool) markDown(err error) {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.open -= len(idle)
	wasDown := p.down != nil
	p.down = err
	startProbe := !p.probing && !p.closed
	if startProbe {
		p.probing = true
		p.wg.Add(1)
	}
	for len(p.waiters) > 0 {
		p.wakeLocked()
	}
	p.mu.Unlock()
	for _, bc := range idle {
		bc.close()
	}
	if !wasDown {
		p.log.Warn("data source down", "err", errLine(err))
	}
	if startProbe {
		go p.probe()
	}
}

// probe dials the data source until it answers, then marks it up.
func (p *pool) probe() {
	defer p.wg.Done()
	wait := probeMin
	for {
		select {
		case <-p.done:
			return
		case <-time.After(wait):
		}
		bc, err := dialBackend(context.Background(), p)
		if err != nil {
			p.mu.Lock()
			p.down = err
			p.mu.Unlock()
			wait = min(wait*2, probeMax)
			continue
		}
		p.mu.Lock()
		p.down = nil
		p.probing = false
		if p.closed || p.open >= p.max {
			p.mu.Unlock()
			bc.close()
		} else {
			p.open++
			p.idle = append(p.idle, bc)
			p.wakeLocked()
			p.mu.Unlock()
		}
		p.log.Info("data source up again")
		return
	}
}

// dropIdle closes the pool's idle connections: after a connection broke
// mid-statement they are likely broken too (a restart), and the next
// request dials afresh.
func (p *pool) dropIdle() {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.open -= len(idle)
	p.wakeLocked()
	p.mu.Unlock()
	for _, bc := range idle {
		bc.close()
	}
}

// put gives connections back. Broken ones, ones past their lifetime and
// ones left inside a transaction are closed instead.
func (p *pool) put(conns ...*backendConn) {
	for _, bc := range conns {
		if bc != nil && bc.carriesState {
			// Another session must find neither the temporary tables nor
			// the locks of the one that used it.
			bc.carriesState = false
			if !bc.broken {
				bc.nc.SetDeadline(time.Now().Add(p.connectTimeout))
				if bc.reset() != nil {
					bc.broken = true
				}
				bc.nc.SetDeadline(time.Time{})
			}
		}
	}
	now := time.Now()
	var drop []*backendConn
	p.mu.Lock()
	for _, bc := range conns {
		if bc == nil {
			continue
		}
		if bc.broken || p.closed || now.Sub(bc.created) > p.maxLifetime || bc.inTransaction() {
			drop = append(drop, bc)
			p.open--
			continue
		}
		bc.lastUsed = now
		p.idle = append(p.idle, bc)
	}
	p.wakeLocked()
	p.mu.Unlock()
	for _, bc := range drop {
		bc.close()
	}
}

// redial replaces bc, which get handed out and which turned out closed
// by the backend before any statement went out on it, with a new
// connection in the same place of the pool's count, as get does with an
// idle connection that fails its ping. get pings only connections idle
// for pingAfterIdle: the backend can close one sooner (a session's SET
// SESSION wait_timeout stays on the connection that ran it, which then
// sits idle in the pool).
func (p *pool) redial(ctx context.Context, bc *backendConn) (*backendConn, error) {
	bc.close()
	nb, err := p.dial(ctx)
	if err != nil {
		p.mu.Lock()
		p.open--
		p.wakeLocked()
		p.mu.Unlock()
		return nil, err
	}
	return nb, nil
}

// discard closes a connection that is not coming back.
func (p *pool) discard(bc *backendConn) {
	bc.close()
	p.mu.Lock()
	p.open--
	p.wakeLocked()
	p.mu.Unlock()
}

// killQuery stops the statement running on backend connection id, through
// a connection of its own (the pool may be exhausted, and the kill must
// not wait behind the statement it kills).
func (p *pool) killQuery(id uint32) {
	c, err := p.adminConn()
	if err != nil {
		p.log.Warn("KILL QUERY: cannot connect", "backend_conn", id, "err", errLine(err))
		return
	}
	defer c.Close()
	if _, err := c.Execute("KILL QUERY " + strconv.FormatUint(uint64(id), 10)); err != nil {
		p.log.Debug("KILL QUERY failed", "backend_conn", id, "err", errLine(err))
	}
}

// adminConn opens a connection of its own to p's server, outside the
// pool, for what must not wait for a pooled connection (KILL QUERY,
// the lock waits of deadlockDetector); its reads and writes time out
// after the pool's connectTimeout.
func (p *pool) adminConn() (*client.Conn, error) {
	addr := net.JoinHostPort(p.ds.Host, strconv.Itoa(p.ds.Port))
	ctx, cancel := context.WithTimeout(context.Background(), p.connectTimeout)
	defer cancel()
	dialer := &net.Dialer{Timeout: p.connectTimeout}
	return client.ConnectWithDialer(ctx, "tcp", addr, p.ds.User, p.ds.Password, "", dialer.DialContext, func(c *client.Conn) error {
		c.ReadTimeout = p.connectTimeout
		c.WriteTimeout = p.connectTimeout
		return nil
	})
}

// maintain closes idle connections past their idle timeout or lifetime
// and keeps minIdle connections ready.
func (p *pool) maintain() {
	defer p.wg.Done()
	ticker := time.NewTicker(maintainEvery)
	defer ticker.Stop()
	p.fill()
	for {
		select {
		case <-p.done:
			return
		case <-ticker.C:
		}
		now := time.Now()
		var drop []*backendConn
		p.mu.Lock()
		keep := p.idle[:0]
		for i, bc := range p.idle {
			// The oldest-used come first; keep minIdle of the newest.
			left := len(p.idle) - i
			if now.Sub(bc.created) > p.maxLifetime || (now.Sub(bc.lastUsed) > p.idleTimeout && left > p.minIdle) {
				drop = append(drop, bc)
				continue
			}
			keep = append(keep, bc)
		}
		p.idle = keep
		p.open -= len(drop)
		p.wakeLocked()
		p.mu.Unlock()
		for _, bc := range drop {
			bc.close()
		}
		p.fill()
	}
}

// fill opens connections until minIdle are idle.
func (p *pool) fill() {
	for {
		p.mu.Lock()
		if p.closed || p.down != nil || len(p.idle) >= p.minIdle || p.open >= p.max {
			p.mu.Unlock()
			return
		}
		p.open++
		p.mu.Unlock()
		bc, err := dialBackend(context.Background(), p)
		if err != nil {
			p.mu.Lock()
			p.open--
			p.mu.Unlock()
			p.markDown(err)
			return
		}
		p.put(bc)
	}
}

// close shuts the pool: idle connections close now, connections in use
// close when they are given back.
func (p *pool) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	close(p.done)
	idle := p.idle
	p.idle = nil
	p.open -= len(idle)
	for len(p.waiters) > 0 {
		p.wakeLocked()
	}
	mux := p.mux
	p.mu.Unlock()
	for _, bc := range idle {
		bc.close()
	}
	if mux != nil {
		mux.close()
	}
	p.wg.Wait()
}
