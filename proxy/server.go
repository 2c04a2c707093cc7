package proxy

import (
	"context"
	"errors"
	"fmt"

	"log/slog"
	"net"
	"runtime/debug"

	"sync"
	"sync/atomic"
	"time"

	"github.com/go-mysql-org/go-mysql/server"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/idgen"
	"github.com/shardflake/shardflake/proxy/internal/wire"
	"github.com/shardflake/shardflake/proxy/metrics"
	"github.com/shardflake/shardflake/proxy/traffic"
)

// ErrServerClosed is returned by Serve after Shutdown or Close.
var ErrServerClosed = errors.New("proxy: server closed")

// Config is what a Server needs. The command line builds it from a rules
// file; tests build it by hand.
type Config struct {
	// Rules is the loaded rules file; its server: section sets the
	// listener's behaviour and its data sources the backends.
	Rules *config.Rules
	// Keys are the key generators by keyGenerators name (see
	// KeyGenerators); the server builds its router with them.
	Keys map[string]idgen.KeyGenerator
	// Planner replaces the router, for tests of the server alone; nil
	// means a router built from Rules and Keys.
	Planner Planner
	// Logger receives the proxy's logs; nil discards them.
	Logger *slog.Logger
	// Merger combines multi-route SELECT results; nil means a
	// ResultMerger with the rules' maxScatterRows.
	Merger Merger
	// Observer is told about statements, routes and errors (metrics);
	// nil means none.
	Observer Observer
	// PlanCacheSize bounds the plans cached by SQL text; 0 means 4096.
	PlanCacheSize int
	// RulesSource is the rules file's text, for its digest; nil reads
	// Rules.File.
	RulesSource []byte
}

// Server is a MySQL server that routes every statement through the
// planner to the data sources. It is safe for concurrent use.
type Server struct {
	// snap is the rules snapshot in force (snapshot.go); sessions reach
	// the one they hold as s.srv.rules, s.srv.pool and so on.
	snap atomic.Pointer[snapshot]
	// fixedPlanner and fixedMerger are Config's, used by every snapshot
	// when set; planCacheSize sizes each snapshot's plan cache.
	fixedPlanner  Planner
	fixedMerger   Merger
	planCacheSize int
	// reloadMu serializes reloads (reload.go); reloads counts them.
	reloadMu  sync.Mutex
	reloads   reloadCounts
	loader    RulesLoader   // reads the rules for a reload; nil: rulesFile
	rulesFile string        // Config.Rules.File
	grace     time.Duration // a replaced snapshot's grace period

	keys  map[string]idgen.KeyGenerator // for metrics, health and admin statements
	log   *slog.Logger
	obs   Observer
	mysql *server.Server
	auth  *authHandler

	mu        sync.Mutex
	listeners map[net.Listener]bool
	sessions  map[uint32]*Session
	clients   atomic.Int64
	shutdown  atomic.Bool
	draining  atomic.Bool // DRAIN COMPUTE NODE: /readyz answers 503
	sessWG    sync.WaitGroup
	started   time.Time
	questions atomic.Int64

	// schemaGen counts DDL run through the proxy; the pools share it.
	schemaGen atomic.Uint64
	versions  versions // the version announced when the rules set none

	traffic *traffic.Set     // server.traffic's limits
	cluster *traffic.Cluster // shares the cluster rules' budgets; nil without
	// What clients that have not logged in may hold, and the memory of
	// long commands (admission.go, limits.go).
	handshakes    *handshakes
	loginFailures *loginFailures
	packetBudget  *wire.Budget

	// xa coordinates transactions over several data sources in
	// transactionMode xa and recovers their in-doubt branches (xa.go).
	xa *xaCoordinator
	// deadlocks ends deadlocks that cross data sources (deadlock.go).
	deadlocks deadlockDetector

	// live are the snapshots not dead yet (snapshot_live.go).
	live liveSnapshots
	// node and connIDs are this proxy as a compute node; fleet is its
	// membership of a fleet on etcd, nil when standalone (fleet.go).
	node     nodeIdentity
	connIDs  connIDs
	fleetRef atomic.Pointer[Fleet]

	// beforeStatement, when set, runs before each statement of a
	// session, once it is classified (the door, door.go: runStatement);
	// tests use it to inject failures.
	beforeStatement func(sql string)
}

// New builds a server from cfg. It opens no connection yet: pools dial
// their data sources on first use (and keep minPoolSize connections from
// then on).
func New(cfg Config) (*Server, error) {
	if cfg.Rules == nil {
		return nil, errors.New("proxy: Config needs Rules")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ms, err := newMySQLServer(cfg.Rules.Server)
	if err != nil {
		return nil, err
	}
	s := &Server{
		rulesFile:     cfg.Rules.File,
		fixedPlanner:  cfg.Planner,
		fixedMerger:   cfg.Merger,
		planCacheSize: cfg.PlanCacheSize,
		keys:          cfg.Keys,
		log:           log,
		obs:           cfg.Observer,
		mysql:         ms,
		auth:          newAuthHandler(cfg.Rules.Server.Users, cfg.Rules.Server.AuthPlugin, log),
		listeners:     map[net.Listener]bool{},
		sessions:      map[uint32]*Session{},
		started:       time.Now(),
		handshakes:    &handshakes{},
		loginFailures: newLoginFailures(loginThrottle),
	}
	s.auth.failures = s.loginFailures
	if s.traffic, err = traffic.New(cfg.Rules.Server.Traffic, nil); err != nil {
		return nil, err
	}
	if s.obs == nil {
		s.obs = nopObserver{}
	}
	sn, err := s.newSnapshot(cfg.Rules, metrics.RulesDigest(cfg.Rules, cfg.RulesSource), nil)
	if err != nil {
		return nil, err
	}
	s.live.add(sn)
	s.snap.Store(sn)
	if w := s.workerID(); w > 0 {
		s.connIDs.prefix.Store(uint32(w))
	}
	s.xa = newXACoordinator(s)
	s.handshakes.max = s.limits().MaxHandshakes
	s.packetBudget = wire.NewBudget(s.limits().PacketMemoryBytes)
	if s.cluster, err = startTrafficCluster(cfg.Rules, s.traffic); err != nil {
		return nil, err
	}
	return s, nil
}

// PoolStats returns a snapshot of every backend pool, for metrics and
// health checks.
func (s *Server) PoolStats() []PoolStats {
	sn := s.current()
	var out []PoolStats
	for _, ds := range sn.rules.DataSources {
		out = append(out, sn.pools[ds.Name].stats())
	}
	sn.poolsMu.Lock()
	defer sn.poolsMu.Unlock()
	for _, ds := range sn.rules.DataSources {
		if p, ok := sn.foundRows[ds.Name]; ok {
			st := p.stats()
			st.DataSource += " (found rows)"
			out = append(out, st)
		}
	}
	return out
}

// Clients returns the number of client connections.
func (s *Server) Clients() int { return int(s.clients.Load()) }

// ListenAndServe listens on the rules file's server.listen address.
func (s *Server) ListenAndServe() error {
	l, err := net.Listen("tcp", s.current().rules.Server.Listen)
	if err != nil {
		return err
	}
	return s.Serve(l)
}

// Serve accepts connections on l until Shutdown or Close, in the manner
// of net/http: shutdown is checked first, temporary accept errors back
// off, every connection gets its own goroutine.
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	if s.shutdown.Load() {
		s.mu.Unlock()
		l.Close()
		return ErrServerClosed
	}
	s.listeners[l] = true
	s.mu.Unlock()
	s.xa.rec.start(l.Addr().String())
	s.deadlocks.start(s)
	defer func() {
		s.mu.Lock()
		delete(s.listeners, l)
		s.mu.Unlock()
		l.Close()
	}()
	var delay time.Duration
	for {
		nc, err := l.Accept()
		if err != nil {
			if s.shutdown.Load() {
				return ErrServerClosed
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			s.log.Warn("accept failed; retrying", "err", errLine(err), "delay", delay)
			time.Sleep(delay)
			continue
		}
		delay = 0
		s.sessWG.Add(1)
		go s.serveConn(nc)
	}
}

// serveConn runs one client connection from handshake to close. It
// counts as a handshake until it has logged in and as a session (under
// maxConnections) from then on (admission.go).
func (s *Server) serveConn(nc net.Conn) {
	defer s.sessWG.Done()
	if max := s.current().rules.Server.MaxConnections; max > 0 && s.clients.Load() >= int64(max) {
		// MySQL answers the greeting itself with the error.
		refuse(nc, ErrTooManyConnections)
		return
	}
	if s.shutdown.Load() {
		refuse(nc, ErrShuttingDown)
		return
	}
	sess := newSession(s)
	defer func() {
		if r := recover(); r != nil {
			s.obs.Panic()
			s.log.Error("panic in handshake", "panic", r, "stack", string(debug.Stack()))
			nc.Close()
		}
	}()
	sc, release, err := s.login(nc, sess)
	if err != nil {
		s.log.Debug("handshake failed", "remote", nc.RemoteAddr().String(), "err", errLine(err))
		nc.Close()
		return
	}
	defer release()
	sess.attach(sc)
	if !s.register(sess) {
		sess.wc.ResetSeq()
		sess.writeErr(ErrShuttingDown)
		sess.wc.Flush()
		sess.close()
		return
	}
	defer s.unregister(sess)
	s.obs.ClientConnected()
	defer s.obs.ClientDisconnected()
	sess.run()
}

// refuse answers a connection that will not be served with an error
// packet in place of the greeting.
func refuse(nc net.Conn, err error) {
	defer nc.Close()
	nc.SetWriteDeadline(time.Now().Add(time.Second))
	m := mysqlError(err)
	w := wire.NewConn(nc)
	w.WritePacket(wire.AppendErr(nil, m.Code, m.State, m.Message))
	w.Flush()
}

func (s *Server) register(sess *Session) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shutdown.Load() {
		return false
	}
	s.sessions[sess.id] = sess
	return true
}

func (s *Server) unregister(sess *Session) {
	s.mu.Lock()
	delete(s.sessions, sess.id)
	s.mu.Unlock()
}

// session returns the session with connection id id.
func (s *Server) session(id uint64) *Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id > 0xffffffff {
		return nil
	}
	return s.sessions[uint32(id)]
}

// sessionList returns the sessions registered now.
func (s *Server) sessionList() []*Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	sessions := make([]*Session, 0, len(s.sessions))
	for _, sess := range s.sessions {
		sessions = append(sessions, sess)
	}
	return sessions
}

// Shutdown stops accepting connections, closes idle client connections,
// lets statements in flight finish and then closes their connections,
// and finally closes the backend pools. When ctx ends first, the
// remaining statements are cancelled and their connections closed.
func (s *Server) Shutdown(ctx context.Context) error {
	s.shutdown.Store(true)
	s.pokeFleet()
	s.mu.Lock()
	for l := range s.listeners {
		l.Close()
	}
	s.handshakes.closeAll()
	s.mu.Unlock()
	s.deadlocks.close()
	for _, sess := range s.sessionList() {
		sess.closeIfIdle()
	}
	done := make(chan struct{})
	go func() {
		s.sessWG.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
		s.mu.Lock()
		for _, sess := range s.sessions {
			sess.kill(ErrShuttingDown)
		}
		s.mu.Unlock()
		<-done
	}
	s.xa.rec.close()
	s.closePools()
	if s.cluster != nil {
		s.cluster.Close()
	}
	return err
}

// Close closes every listener and connection at once.
func (s *Server) Close() error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s.Shutdown(ctx)
	return nil
}

func (s *Server) closePools() {
	sn := s.current()
	sn.rw.close()
	for _, p := range sn.pools {
		p.close()
	}
	sn.poolsMu.Lock()
	defer sn.poolsMu.Unlock()
	for _, p := range sn.foundRows {
		p.close()
	}
}

// errPanic turns a recovered panic into the error the client sees.
func errPanic(r any) error {
	return &InternalError{Msg: fmt.Sprintf("%v (the connection is still usable)", r)}
}
