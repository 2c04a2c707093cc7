package proxy

import (
	"container/list"
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/server"

	"github.com/shardflake/shardflake/proxy/internal/wire"
)

// What a client that has not logged in can make the proxy hold, and how
// logins are let in: handshakes are counted apart from logged-in
// sessions (server.maxHandshakes, the oldest dropped for a new one when
// full), a logged-in session takes its server.maxConnections slot only
// once its password is verified, and an address that keeps failing
// passwords waits for each further try.

// maxHandshakePacket is the largest packet a client may send before it
// has logged in: a handshake response (user, scramble, schema, plugin,
// connection attributes) and the authentication exchanges are far
// smaller. go-mysql allocates what a header announces, so a larger
// announcement is refused before it reaches go-mysql.
const maxHandshakePacket = 16 << 10

// errHandshakePacket: a client announced a handshake packet above
// maxHandshakePacket.
var errHandshakePacket = errors.New("handshake packet above 16 KiB")

// loginConn is the client connection until the login is done. Until
// TLS starts it follows the packet framing of what the client sends and
// fails the read that brings a header announcing more than
// maxHandshakePacket; it carries the session for the checks that run
// once the password is verified (admit).
type loginConn struct {
	net.Conn
	sess *Session

	hdr  [4]byte
	nhdr int // header bytes seen of the next packet
	left int // payload bytes still to come of the current packet
	tls  bool
	off  bool // the login is done (or TLS started): no more parsing
	// first is the start of the client's first packet (its handshake
	// response or SSL request), where it asks for MariaDB extended
	// capabilities; nfirst bytes of it came.
	first  [32]byte
	nfirst int

	admitted bool   // a maxConnections slot was taken (release it)
	host     string // the client's address, as handshakes count them
	// heard: the client has sent something; a full handshake table drops
	// silent connections first (handshakes.add).
	heard atomic.Bool
}

func (c *loginConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if c.off {
		return n, err
	}
	if n > 0 && !c.heard.Load() {
		c.heard.Store(true)
	}
	for i := 0; i < n; {
		if c.left > 0 {
			k := min(c.left, n-i)
			if c.hdr[3] == 1 && c.nfirst < len(c.first) {
				c.nfirst += copy(c.first[c.nfirst:], b[i:i+k])
			}
			c.left -= k
			i += k
			if c.left == 0 && c.tls {
				// The SSL request is through: TLS records follow, whose
				// packets the server reads with a buffer of its own.
				c.off = true
				return n, err
			}
			continue
		}
		c.hdr[c.nhdr] = b[i]
		c.nhdr++
		i++
		if c.nhdr < 4 {
			continue
		}
		c.nhdr = 0
		c.left = int(c.hdr[0]) | int(c.hdr[1])<<8 | int(c.hdr[2])<<16
		if c.left > maxHandshakePacket {
			c.off = true
			return 0, errHandshakePacket
		}
		// A 32-byte first packet is the SSL request (go-mysql reads it so).
		c.tls = c.left == 32 && c.hdr[3] == 1 && c.sess.srv.mysql.Capability()&mysql.CLIENT_SSL != 0
	}
	return n, err
}

// extended returns the MariaDB extended capabilities the client asked for
// in its first packet (0 when it set CLIENT_MYSQL).
func (c *loginConn) extended() uint32 {
	if c.nfirst < len(c.first) {
		return 0
	}
	return wire.ResponseExtended(c.first[:])
}

// RemoteAddr is the client's host without its port while the login runs:
// go-mysql writes it into 1045 Access denied, which MariaDB words with the
// host alone ('app'@'127.0.0.1'). Once logged in it is the full address.
// SocketConn is the socket under c once the login is done and c only
// passes bytes through (wire reads and writes it directly); nil before.
func (c *loginConn) SocketConn() net.Conn {
	if c.off && !c.tls {
		return c.Conn
	}
	return nil
}

func (c *loginConn) RemoteAddr() net.Addr {
	if c.off || c.host == "" {
		return c.Conn.RemoteAddr()
	}
	return clientHost(c.host)
}

// clientHost is a client's address without its port.
type clientHost string

func (h clientHost) Network() string { return "tcp" }
func (h clientHost) String() string  { return string(h) }

// loginConnOf finds the loginConn under what go-mysql holds (a TLS
// connection, the greeting writer).
func loginConnOf(nc net.Conn) *loginConn {
	for {
		switch c := nc.(type) {
		case *loginConn:
			return c
		case *tls.Conn:
			nc = c.NetConn()
		case *announceConn:
			nc = c.Conn
		default:
			return nil
		}
	}
}

// admit runs once the password is verified: the schema named at login
// must exist (checked only now, so that a client without the password
// cannot tell which schemas exist), and the session takes a
// maxConnections slot. The error is sent in place of the login's OK.
func (c *loginConn) admit() error {
	s := c.sess
	if db := s.loginDB; db != "" {
		if isInfoSchema(db) {
			db = infoSchema // infoschema_use.go
		} else if db != s.srv.rules.DatabaseName {
			return mysqlError(&UnknownDatabaseError{Name: db})
		} else if !s.privileges().MayUse(db) {
			return mysqlError(dbDenied(s.user, db))
		}
		s.db = db
		s.mu.Lock()
		s.shown.db = db
		s.mu.Unlock()
	}
	if !s.srv.takeSlot() {
		return mysqlError(ErrTooManyConnections)
	}
	c.admitted = true
	return nil
}

// takeSlot takes a logged-in session's place under maxConnections.
func (s *Server) takeSlot() bool {
	n := s.clients.Add(1)
	if max := s.current().rules.Server.MaxConnections; max > 0 && n > int64(max) {
		s.clients.Add(-1)
		return false
	}
	return true
}

// handshakes are the connections that have not logged in yet, oldest
// first.
type handshakes struct {
	mu      sync.Mutex
	max     int
	pending list.List      // of *loginConn
	perHost map[string]int // pending handshakes by client address
}

// add counts c as a handshake; when the table is full, one is closed to
// make room, taken from the address that holds the most handshakes: its
// oldest that has sent nothing since its greeting, else its oldest. A
// flood from one address so drops its own connections, whether they stay
// silent or each send a byte, never a real client's from elsewhere (which
// is silent for the round trip between greeting and answer). When every
// address holds one, the oldest silent one goes, else the oldest. done
// removes c again.
func (h *handshakes) add(c *loginConn) (done func()) {
	h.mu.Lock()
	var drop *loginConn
	if h.pending.Len() >= max(h.max, 1) {
		victim := h.victim()
		drop = victim.Value.(*loginConn)
		h.remove(victim)
	}
	e := h.pending.PushBack(c)
	if h.perHost == nil {
		h.perHost = map[string]int{}
	}
	h.perHost[c.host]++
	h.mu.Unlock()
	if drop != nil {
		drop.Close()
	}
	return func() {
		h.mu.Lock()
		if e.Value != nil {
			h.remove(e)
		}
		h.mu.Unlock()
	}
}

// victim chooses the handshake to drop from a full table (add).
func (h *handshakes) victim() *list.Element {
	busiest, most := "", 0
	for host, n := range h.perHost {
		if n > most {
			busiest, most = host, n
		}
	}
	var oldest *list.Element
	for e := h.pending.Front(); e != nil; e = e.Next() {
		c := e.Value.(*loginConn)
		if most > 1 && c.host != busiest {
			continue
		}
		if !c.heard.Load() {
			return e
		}
		if oldest == nil {
			oldest = e
		}
	}
	return oldest
}

// remove takes e out of the table.
func (h *handshakes) remove(e *list.Element) {
	c := h.pending.Remove(e).(*loginConn)
	e.Value = nil
	if h.perHost[c.host]--; h.perHost[c.host] <= 0 {
		delete(h.perHost, c.host)
	}
}

// len returns the handshakes in progress.
func (h *handshakes) len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.pending.Len()
}

// closeAll closes every handshake in progress (shutdown).
func (h *handshakes) closeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for e := h.pending.Front(); e != nil; e = e.Next() {
		e.Value.(*loginConn).Close()
	}
}

// Login throttling: an address's first freeLoginFailures wrong passwords
// cost nothing; from then on its logins are let through one per
// loginThrottle until one succeeds (or maxThrottleIdle passes without a
// failure).
const (
	freeLoginFailures = 3
	loginThrottle     = time.Second
	maxThrottleIdle   = 15 * time.Minute
	maxThrottled      = 10000 // addresses remembered
)

// loginFailures remembers the addresses whose passwords failed.
type loginFailures struct {
	mu       sync.Mutex
	interval time.Duration
	hosts    map[string]*failedHost
}

type failedHost struct {
	failures int
	last     time.Time // last failure
	next     time.Time // when the next login may proceed
}

func newLoginFailures(interval time.Duration) *loginFailures {
	return &loginFailures{interval: interval, hosts: map[string]*failedHost{}}
}

// setInterval changes the spacing of throttled logins (tests).
func (l *loginFailures) setInterval(d time.Duration) {
	l.mu.Lock()
	l.interval = d
	l.mu.Unlock()
}

// wait returns how long a login from host must wait before it proceeds,
// and books its turn.
func (l *loginFailures) wait(host string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.hosts[host]
	if f == nil || f.failures < freeLoginFailures {
		return 0
	}
	now := time.Now()
	if now.Sub(f.last) > maxThrottleIdle {
		delete(l.hosts, host)
		return 0
	}
	at := f.next
	if at.Before(now) {
		at = now
	}
	f.next = at.Add(l.interval)
	return at.Sub(now)
}

// failed counts a wrong password from host.
func (l *loginFailures) failed(host string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	f := l.hosts[host]
	if f == nil {
		if len(l.hosts) >= maxThrottled {
			l.forgetIdle(now)
		}
		f = &failedHost{}
		l.hosts[host] = f
	}
	f.failures++
	f.last = now
}

// succeeded forgets host's failures.
func (l *loginFailures) succeeded(host string) {
	l.mu.Lock()
	delete(l.hosts, host)
	l.mu.Unlock()
}

// forgetIdle drops addresses idle past maxThrottleIdle, or every address
// when none is (so the table stays bounded).
func (l *loginFailures) forgetIdle(now time.Time) {
	for h, f := range l.hosts {
		if now.Sub(f.last) > maxThrottleIdle {
			delete(l.hosts, h)
		}
	}
	if len(l.hosts) >= maxThrottled {
		clear(l.hosts)
	}
}

// hostOf is the address part of a remote address, the key throttling
// counts by.
func hostOf(a net.Addr) string {
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// login runs the handshake of nc for sess: counted among the handshakes,
// throttled if its address keeps failing, bounded by handshakeTimeout.
// On success the session holds a maxConnections slot; release gives it
// back.
func (s *Server) login(nc net.Conn, sess *Session) (sc *server.Conn, release func(), err error) {
	host := hostOf(nc.RemoteAddr())
	lc := &loginConn{Conn: nc, sess: sess, host: host}
	done := s.handshakes.add(lc)
	defer done()
	deadline := time.Now().Add(s.current().rules.Server.HandshakeTimeout)
	nc.SetDeadline(deadline)
	if d := s.loginFailures.wait(host); d > 0 {
		if time.Now().Add(d).After(deadline) {
			return nil, nil, errLoginThrottled
		}
		for end := time.Now().Add(d); time.Now().Before(end) && !s.shutdown.Load(); {
			time.Sleep(min(time.Until(end), 50*time.Millisecond))
		}
	}
	sess.handshaking = true
	sc, err = s.mysql.NewCustomizedConn(s.announce(lc, sess), sessionAuth{s.auth, sess}, sess)
	sess.handshaking = false
	lc.off = true
	if err != nil {
		if lc.admitted {
			s.clients.Add(-1)
		}
		return nil, nil, err
	}
	nc.SetDeadline(time.Time{})
	return sc, func() { s.clients.Add(-1) }, nil
}

// errLoginThrottled: the address's turn would come after the handshake
// deadline.
var errLoginThrottled = errors.New("login throttled after failed passwords from this address")
