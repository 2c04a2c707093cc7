package proxy

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"
	gomysql "github.com/go-sql-driver/mysql"

	"github.com/shardflake/shardflake/proxy/internal/wire"
)

// rawSession logs in to addr with go-mysql's client and returns the
// connection for packets written by hand.
func rawSession(t *testing.T, addr, user, password, db string) *wire.Conn {
	t.Helper()
	gc, err := client.Connect(addr, user, password, db, func(c *client.Conn) error {
		// Results end with EOF packets, as the proxy's do.
		c.UnsetCapability(mysql.CLIENT_DEPRECATE_EOF)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gc.Close() })
	return wire.NewConn(gc.Conn.Conn)
}

// command sends one command and returns the first packet of the answer.
func command(t *testing.T, c *wire.Conn, payload []byte) []byte {
	t.Helper()
	c.ResetSeq()
	if err := c.WritePacket(payload); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	p, err := c.ReadPacket()
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Clone(p)
}

// errOf returns the error number of an error packet, 0 for another.
func errOf(p []byte) uint16 {
	if !wire.IsErr(p) {
		return 0
	}
	return wire.ParseErr(p).Code
}

// TestCommandAboveMaxAllowedPacket: a command one byte over
// server.maxAllowedPacket gets 1153 and its connection is closed, as
// MariaDB does with max_allowed_packet; one at the limit runs; long data
// over the limit fails its execute and leaves the connection usable.
func TestCommandAboveMaxAllowedPacket(t *testing.T) {
	e := startEnv(t, envOptions{server: "maxAllowedPacket: 1MiB", planner: toDefault})
	const limit = 1 << 20
	c := rawSession(t, e.addr, "app", "app-secret", "sharding_db")
	q := []byte{mysql.COM_QUERY}
	q = append(q, "SET @a = 1 #"...)
	q = append(q, bytes.Repeat([]byte{'x'}, limit-len(q))...)
	if p := command(t, c, q); p[0] != wire.HeaderOK {
		t.Fatalf("a command of exactly maxAllowedPacket: %q", p)
	}
	if p := command(t, c, append(q, 'x')); errOf(p) != mysql.ER_NET_PACKET_TOO_LARGE {
		t.Fatalf("a command one byte over: %q, want 1153", p)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.ReadPacket(); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the connection stayed open after 1153: %v", err)
	}

	// go-sql-driver sends a big value as long data in chunks below the limit.
	db := e.open(t, "maxAllowedPacket=65536")
	db.SetMaxOpenConns(1)
	var n int
	err := db.QueryRow("SELECT LENGTH(?)", bytes.Repeat([]byte{'y'}, limit+1)).Scan(&n)
	if code := errCode(err); code != mysql.ER_NET_PACKET_TOO_LARGE {
		t.Fatalf("long data over the limit: %v, want 1153", err)
	}
	if err := db.QueryRow("SELECT LENGTH(?)", bytes.Repeat([]byte{'y'}, limit/2)).Scan(&n); err != nil || n != limit/2 {
		t.Fatalf("long data under the limit after that: %d, %v", n, err)
	}
	if used := e.srv.packetBudget.Used(); used > 1<<20 {
		t.Errorf("%d bytes of the packet budget still held", used)
	}
}

// closedWithin waits for the proxy to close c and reports how long that
// took; it fails the test after limit.
func closedWithin(t *testing.T, c *wire.Conn, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	c.SetReadDeadline(start.Add(limit))
	var b [64]byte
	for {
		_, err := c.NetConn().Read(b[:])
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("still open after %s", limit)
		}
		if err != nil {
			return time.Since(start)
		}
	}
}

// TestIdleAndStalledConnectionsClosed: after login, a connection that
// sends nothing for server.waitTimeout is closed, and so is one that
// starts a command and stops for server.netReadTimeout; one that keeps
// talking stays.
func TestIdleAndStalledConnectionsClosed(t *testing.T) {
	e := startEnv(t, envOptions{server: "waitTimeout: 400ms\nnetReadTimeout: 300ms", planner: toDefault})
	idle := rawSession(t, e.addr, "app", "app-secret", "sharding_db")
	busy := rawSession(t, e.addr, "app", "app-secret", "sharding_db")
	// busy pings every 100 ms for a second: never idle that long.
	for range 10 {
		if p := command(t, busy, []byte{mysql.COM_PING}); p[0] != wire.HeaderOK {
			t.Fatalf("ping: %q", p)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if took := closedWithin(t, idle, 10*time.Second); took > 5*time.Second {
		t.Errorf("idle connection closed after %s more", took)
	}
	if p := command(t, busy, []byte{mysql.COM_PING}); p[0] != wire.HeaderOK {
		t.Fatalf("the busy connection: %q", p)
	}

	// A command announced as 100 bytes, of which 10 come.
	stalled := rawSession(t, e.addr, "app", "app-secret", "sharding_db")
	stalled.NetConn().Write(append([]byte{100, 0, 0, 0, mysql.COM_QUERY}, "SELECT 1 "...))
	if took := closedWithin(t, stalled, 10*time.Second); took > 5*time.Second {
		t.Errorf("stalled connection closed after %s", took)
	}
}

// TestHalfOpenConnectionsDoNotLockOut: 1,024 TCP connections that never
// log in (maxConnections' default) used to take every slot, so real
// logins got 1040 for the whole handshake window. Handshakes now have
// their own, smaller table that drops its oldest for a newcomer, and a
// slot is taken only by a verified login.
func TestHalfOpenConnectionsDoNotLockOut(t *testing.T) {
	e := startEnv(t, envOptions{planner: toDefault})
	var strangers []net.Conn
	defer func() {
		for _, c := range strangers {
			c.Close()
		}
	}()
	for range 1024 {
		c, err := net.Dial("tcp", e.addr)
		if err != nil {
			t.Fatal(err)
		}
		strangers = append(strangers, c)
	}
	// Each has been accepted: greeted, or dropped for a newer one.
	for _, c := range strangers {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		var b [1]byte
		if _, err := c.Read(b[:]); errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatal("a connection was neither greeted nor closed")
		}
	}
	db := e.open(t)
	db.SetMaxIdleConns(0)
	for i := range 5 {
		if err := db.Ping(); err != nil {
			t.Fatalf("login %d among 1,024 half-open connections: %v", i, err)
		}
	}
	// The strangers hold no session slot and at most maxHandshakes
	// handshake places.
	waitFor(t, func() bool { return e.srv.Clients() == 0 })
	if n := e.srv.handshakes.len(); n > e.srv.limits().MaxHandshakes {
		t.Errorf("%d handshakes in progress, above the cap of %d", n, e.srv.limits().MaxHandshakes)
	}
	// Real sessions still get maxConnections' 1040 when they are too many.
	small := startEnv(t, envOptions{server: "maxConnections: 2", planner: toDefault})
	sdb := small.open(t)
	ctx := context.Background()
	var held []*sql.Conn
	for range 2 {
		c, err := sdb.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.PingContext(ctx); err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	if _, err := sdb.Conn(ctx); errCode(err) != mysql.ER_CON_COUNT_ERROR {
		t.Errorf("a third session: %v, want 1040", err)
	}
	for _, c := range held {
		c.Close()
	}
}

// TestLoginSchemaCheckedAfterPassword: without the password a client
// cannot tell which schemas exist (1045 for any), with it an unknown
// one gets 1049.
func TestLoginSchemaCheckedAfterPassword(t *testing.T) {
	e := startEnv(t, envOptions{planner: toDefault})
	e.srv.loginFailures.setInterval(time.Millisecond)
	try := func(password, schema string) uint16 {
		dsn := strings.Replace(e.dsn("app", password), "/sharding_db", "/"+schema, 1)
		db, _ := sql.Open("mysql", dsn)
		defer db.Close()
		return errCode(db.Ping())
	}
	tests := []struct {
		password, schema string
		want             uint16
	}{
		{"wrong", "nope", mysql.ER_ACCESS_DENIED_ERROR},
		{"wrong", "sharding_db", mysql.ER_ACCESS_DENIED_ERROR},
		{"app-secret", "nope", mysql.ER_BAD_DB_ERROR},
		{"app-secret", "sharding_db", 0},
	}
	for _, tt := range tests {
		if got := try(tt.password, tt.schema); got != tt.want {
			t.Errorf("password %s, schema %s: error %d, want %d", tt.password, tt.schema, got, tt.want)
		}
	}
}

// TestWrongPasswordsThrottled: after a few wrong passwords from one
// address, its further logins proceed one per interval, however many it
// opens at once; a right password still gets in, and clears the count.
func TestWrongPasswordsThrottled(t *testing.T) {
	e := startEnv(t, envOptions{planner: toDefault})
	const interval = 150 * time.Millisecond
	e.srv.loginFailures.setInterval(interval)
	login := func(password string) error {
		db, _ := sql.Open("mysql", e.dsn("app", password))
		defer db.Close()
		return db.Ping()
	}
	start := time.Now()
	for range freeLoginFailures {
		if err := login("wrong"); errCode(err) != mysql.ER_ACCESS_DENIED_ERROR {
			t.Fatalf("wrong password: %v", err)
		}
	}
	free := time.Since(start)
	// Six tries at once: they are let through one per interval.
	start = time.Now()
	errs := make(chan error, 6)
	for range 6 {
		go func() { errs <- login("wrong") }()
	}
	for range 6 {
		if err := <-errs; errCode(err) != mysql.ER_ACCESS_DENIED_ERROR {
			t.Fatalf("throttled wrong password: %v", err)
		}
	}
	if took := time.Since(start); took < 5*interval {
		t.Errorf("6 parallel tries after %d failures took %s (the first %d: %s), want at least %s", freeLoginFailures, took, freeLoginFailures, free, 5*interval)
	}
	if err := login("app-secret"); err != nil {
		t.Fatalf("the right password while throttled: %v", err)
	}
	start = time.Now()
	for range freeLoginFailures {
		login("wrong")
	}
	if took := time.Since(start); took > 3*interval*freeLoginFailures {
		t.Errorf("after a successful login the failures were not forgotten: %d tries took %s", freeLoginFailures, took)
	}
}

// TestTooManyPreparedStatements: past server.maxPreparedStatements open
// statements a prepare gets 1461, as past MySQL's
// max_prepared_stmt_count; closing one makes room.
func TestTooManyPreparedStatements(t *testing.T) {
	e := startEnv(t, envOptions{server: "maxPreparedStatements: 20", planner: toDefault})
	c := rawSession(t, e.addr, "app", "app-secret", "sharding_db")
	prepare := func() []byte {
		c.ResetSeq()
		c.WritePacket(append([]byte{mysql.COM_STMT_PREPARE}, "SELECT ?"...))
		c.Flush()
		first, err := c.ReadPacket()
		if err != nil {
			t.Fatal(err)
		}
		first = bytes.Clone(first)
		if first[0] == wire.HeaderOK {
			// one parameter definition and its EOF
			for range 2 {
				if _, err := c.ReadPacket(); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := wire.ParsePrepareOK(first); err != nil {
				t.Fatal(err)
			}
			// and the result column with its EOF
			for range 2 {
				if _, err := c.ReadPacket(); err != nil {
					t.Fatal(err)
				}
			}
		}
		return first
	}
	var ids []uint32
	for i := range 20 {
		p := prepare()
		ok, err := wire.ParsePrepareOK(p)
		if err != nil {
			t.Fatalf("prepare %d: %q", i+1, p)
		}
		ids = append(ids, ok.StmtID)
	}
	p := prepare()
	if errOf(p) != 1461 || !strings.Contains(string(p), "max_prepared_stmt_count") {
		t.Fatalf("prepare 21: %q, want 1461", p)
	}
	c.ResetSeq()
	c.WritePacket(wire.AppendStmtClose(nil, ids[0]))
	c.Flush()
	if p := prepare(); p[0] != wire.HeaderOK {
		t.Fatalf("after a close: %q", p)
	}
}

// TestFullHandshakeTableDropsSilentFirst: with the table full, a new
// connection drops the oldest handshake that has sent nothing, and the
// oldest of all only when every one has spoken.
func TestFullHandshakeTableDropsSilentFirst(t *testing.T) {
	h := &handshakes{max: 2}
	conn := func() (*loginConn, net.Conn) {
		a, b := net.Pipe()
		t.Cleanup(func() { a.Close(); b.Close() })
		return &loginConn{Conn: a, off: true}, b
	}
	closed := func(peer net.Conn) bool {
		peer.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		_, err := peer.Read(make([]byte, 1))
		return err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
	}
	spoke, spokePeer := conn()
	spoke.heard.Store(true)
	silent, silentPeer := conn()
	h.add(spoke)
	h.add(silent)
	third, _ := conn()
	third.heard.Store(true)
	h.add(third)
	if !closed(silentPeer) || closed(spokePeer) {
		t.Fatal("the silent handshake should have been dropped, not the one that spoke")
	}
	fourth, _ := conn()
	h.add(fourth)
	if !closed(spokePeer) {
		t.Fatal("with every handshake heard from, the oldest should have been dropped")
	}
	if n := h.len(); n != 2 {
		t.Errorf("%d handshakes counted, want 2", n)
	}
}

// slowAnswer is a client connection whose first write (the handshake
// response) waits until release is closed: a real client between the
// greeting and its answer, which is silent for that round trip.
type slowAnswer struct {
	net.Conn
	waiting chan struct{} // closed when the first write waits
	release chan struct{}
	once    sync.Once
}

func (c *slowAnswer) Write(b []byte) (int, error) {
	c.once.Do(func() {
		close(c.waiting)
		<-c.release
	})
	return c.Conn.Write(b)
}

// TestHandshakeFloodFromOneAddress: connections from one address that
// each send a byte after the greeting fill the handshake table many times
// over while a real client from another address is between the greeting
// and its answer; the flood drops its own connections, and the real login
// succeeds.
func TestHandshakeFloodFromOneAddress(t *testing.T) {
	e := startEnv(t, envOptions{server: "maxHandshakes: 8", planner: toDefault})
	cfg, err := gomysql.ParseDSN(e.dsn("app", "app-secret"))
	if err != nil {
		t.Fatal(err)
	}
	slow := &slowAnswer{waiting: make(chan struct{}), release: make(chan struct{})}
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		slow.Conn = c
		return slow, nil
	}
	conn, err := gomysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	login := make(chan error, 1)
	go func() { login <- db.Ping() }()
	<-slow.waiting

	// The flood comes from 127.0.0.2 (loopback, another address).
	flooder := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}
	var flood []net.Conn
	defer func() {
		for _, c := range flood {
			c.Close()
		}
	}()
	for range 40 {
		c, err := flooder.Dial("tcp", e.addr)
		if err != nil {
			t.Fatal(err)
		}
		flood = append(flood, c)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Read(make([]byte, 512)); err != nil {
			continue // dropped before its greeting was read
		}
		if _, err := c.Write([]byte{0x85}); err != nil {
			continue
		}
		// The proxy has read the byte once the connection counts as heard.
		waitFor(t, func() bool { return heardFrom(e.srv.handshakes, "127.0.0.2") > 0 })
	}
	close(slow.release)
	if err := <-login; err != nil {
		t.Fatalf("a real login during a flood from another address: %v", err)
	}
	if n := e.srv.handshakes.len(); n > 8 {
		t.Errorf("%d handshakes counted, above maxHandshakes 8", n)
	}
}

// heardFrom counts the handshakes from host that have sent something.
func heardFrom(h *handshakes, host string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for e := h.pending.Front(); e != nil; e = e.Next() {
		if c := e.Value.(*loginConn); hostOf(c.RemoteAddr()) == host && c.heard.Load() {
			n++
		}
	}
	return n
}

// TestWrongPasswordErrorAsMariaDB: a wrong or missing password gets 1045
// naming the client's host alone, as MariaDB words it, not host:port.
func TestWrongPasswordErrorAsMariaDB(t *testing.T) {
	e := startEnv(t, envOptions{})
	e.srv.loginFailures.setInterval(time.Millisecond)
	message := func(dsn, user string) string {
		db, err := sql.Open("mysql", dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		err = db.Ping()
		var me *gomysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1045 {
			t.Fatalf("login as %s: %v, want 1045", user, err)
		}
		return strings.ReplaceAll(me.Message, "'"+user+"'@", "'U'@")
	}
	tests := []struct{ user, password string }{
		{"app", "wrong"}, // MariaDB's root with a wrong password
		{"nobody", ""},   // an unknown user without a password: using password: NO
	}
	for _, tt := range tests {
		direct := gomysql.NewConfig()
		direct.User, direct.Passwd, direct.Net, direct.Addr = "root", tt.password, "tcp", e.backends[0].Addr()
		if tt.password == "" {
			direct.User = tt.user
		}
		want := message(direct.FormatDSN(), direct.User)
		if got := message(e.dsn(tt.user, tt.password), tt.user); got != want {
			t.Errorf("%s with password %q: the proxy answered %q, MariaDB %q", tt.user, tt.password, got, want)
		}
	}
}
