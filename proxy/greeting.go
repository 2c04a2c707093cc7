package proxy

import (
	"context"
	"encoding/binary"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/proxy/internal/wire"
)

// greetingCapabilities are what the proxy offers in its greeting beyond
// go-mysql's defaults (which it does not let a server add): MariaDB and
// MySQL offer CLIENT_MULTI_STATEMENTS and CLIENT_FOUND_ROWS, and
// go-sql-driver from v1.10 asks only for the capabilities the server
// offers, so multiStatements=true and clientFoundRows=true need them
// there (the session reads CLIENT_FOUND_ROWS from the client's answer and
// takes backend connections logged in with it).
const greetingCapabilities = mysql.CLIENT_MULTI_STATEMENTS | mysql.CLIENT_FOUND_ROWS

// mariaDBCompatPrefix is what MariaDB puts before its version in the
// greeting, so that clients that only know MySQL read a 5.5 server rather
// than a "10.x" one newer than MySQL 8; MariaDB-aware clients strip it.
const mariaDBCompatPrefix = "5.5.5-"

// versionSuffix marks the announced version as the proxy's.
const versionSuffix = "-shardflake"

// versions is the version the proxy announces when the rules file sets
// none: learnt once from the default data source.
type versions struct {
	learnt atomic.Pointer[string]
	// tried is when the default data source was last asked (unix nanos),
	// so an unreachable one is not dialled on every login.
	tried atomic.Int64
}

// version returns the version the proxy announces as VERSION() and
// @@version: the rules file's server.version, else the default data
// source's version with the shardflake suffix once known, else
// ServerVersion.
func (srv *Server) version() string {
	if v := srv.current().rules.Server.Version; v != "" {
		return v
	}
	if v := srv.versions.learnt.Load(); v != nil {
		return *v
	}
	return ServerVersion
}

// mariaDBVersionID returns MariaDB version v as the server's
// MYSQL_VERSION_ID (10.11.19-MariaDB-shardflake is 101119), which decides
// which executable comments it runs; false for another server's version.
func mariaDBVersionID(v string) (int, bool) {
	if !isMariaDB(v) {
		return 0, false
	}
	v = strings.TrimPrefix(v, mariaDBCompatPrefix)
	id := 0
	for _, part := range strings.SplitN(v, ".", 3) {
		n := 0
		for n < len(part) && part[n] >= '0' && part[n] <= '9' {
			n++
		}
		p, err := strconv.Atoi(part[:n])
		if err != nil || p > 99 {
			return 0, false
		}
		id = id*100 + p
	}
	return id, true
}

// learnVersion asks the default data source its version, once, so the
// greeting can announce it. A data source that cannot be reached leaves
// ServerVersion in place, and is asked again at a later login.
func (srv *Server) learnVersion() {
	if srv.current().rules.Server.Version != "" || srv.versions.learnt.Load() != nil {
		return
	}
	now := time.Now().UnixNano()
	last := srv.versions.tried.Load()
	if last != 0 && now-last < int64(10*time.Second) || !srv.versions.tried.CompareAndSwap(last, now) {
		return
	}
	p, err := srv.current().pool(srv.current().rules.DefaultDataSource, false)
	if err != nil {
		return
	}
	v := p.serverVersion()
	if v == "" {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		bcs, err := p.get(ctx, 1)
		cancel()
		if err != nil {
			return
		}
		p.put(bcs...)
		v = p.serverVersion()
	}
	if v == "" {
		return
	}
	announced := announcedVersion(v)
	srv.versions.learnt.CompareAndSwap(nil, &announced)
}

// announcedVersion turns a data source's version into the proxy's: the
// compatibility prefix and any suffix after the name dropped
// (5.5.5-10.11.19-MariaDB-log becomes 10.11.19-MariaDB-shardflake).
func announcedVersion(backend string) string {
	v := strings.TrimPrefix(backend, mariaDBCompatPrefix)
	if i := strings.Index(strings.ToLower(v), "mariadb"); i >= 0 {
		v = v[:i+len("mariadb")]
	} else if i := strings.IndexByte(v, '-'); i >= 0 {
		v = v[:i]
	}
	return v + versionSuffix
}

// greetingVersion is the version in the greeting: a MariaDB version
// carries MariaDB's compatibility prefix there, as MariaDB sends it.
func greetingVersion(v string) string {
	if isMariaDB(v) && !strings.HasPrefix(v, mariaDBCompatPrefix) && !strings.HasPrefix(v, "5.") {
		return mariaDBCompatPrefix + v
	}
	return v
}

// announceConn edits the first packet written to a client, go-mysql's
// greeting: the version the proxy announces, the connection id (the
// proxy's, fleet-unique, in place of go-mysql's counter), the
// capabilities it adds and
// the status flags (go-mysql writes 0 and offers no way to set them, and
// PyMySQL and mysqlclient read AUTOCOMMIT there: greetingStatus) and the
// MariaDB extended capabilities it offers. Later writes pass through
// untouched.
type announceConn struct {
	net.Conn
	version  string
	id       uint32
	extended uint32
	done     bool
	// scrambles are those the login sent, the greeting's and an
	// authentication switch's, one of which a COM_CHANGE_USER answers
	// (changeuser.go: clients differ on which); loggedIn: the write
	// after the greeting went out, past which none is looked for.
	scrambles [][]byte
	loggedIn  bool
}

// Write rewrites the greeting (it arrives whole: go-mysql writes a packet
// in one call) and passes everything else through, noting the scramble
// of an authentication switch until the login ends.
func (g *announceConn) Write(b []byte) (int, error) {
	if g.done {
		if !g.loggedIn {
			// One switch at most, as a packet of its own; anything else
			// (the login's answer, a TLS handshake) ends the watch.
			g.loggedIn = true
			if len(b) > 4 && int(b[0])|int(b[1])<<8|int(b[2])<<16 == len(b)-4 {
				if scramble, ok := wire.AuthSwitchScramble(b[4:]); ok {
					g.scrambles = append(g.scrambles, scramble)
				}
			}
		}
		return g.Conn.Write(b)
	}
	g.done = true
	if scramble, ok := wire.GreetingScramble(b[min(4, len(b)):]); ok {
		g.scrambles = append(g.scrambles, scramble)
	}
	out, ok := rewriteGreeting(b, g.version, g.id, g.extended)
	if !ok {
		return g.Conn.Write(b)
	}
	if _, err := g.Conn.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}

// rewriteGreeting returns the greeting packet p (with its 4-byte header)
// announcing version (empty: keep the version), connection id id (0: keep
// it), greetingCapabilities, greetingStatus and, when extended is not 0,
// those MariaDB extended capabilities (wire.SetGreetingExtended).
// It reports false when p is not a protocol-10 greeting.
func rewriteGreeting(p []byte, version string, id uint32, extended uint32) ([]byte, bool) {
	if len(p) < 5 || int(p[0])|int(p[1])<<8|int(p[2])<<16 != len(p)-4 || p[4] != 10 {
		return nil, false
	}
	end := 5
	for end < len(p) && p[end] != 0 {
		end++
	}
	// version NUL, connection id 4, scramble 8, filler 1, capabilities 2,
	// charset 1, status 2, capabilities (upper) 2.
	rest := end + 1
	if rest+4+8+1+2+1+2+2 > len(p) {
		return nil, false
	}
	if version == "" {
		version = string(p[5:end])
	}
	out := make([]byte, 0, len(p)+len(version))
	out = append(out, 0, 0, 0, p[3], 10)
	out = append(out, version...)
	out = append(out, p[end:]...)
	if id != 0 {
		binary.LittleEndian.PutUint32(out[4+1+len(version)+1:], id)
	}
	capAt := 4 + 1 + len(version) + 1 + 4 + 8 + 1
	lower := binary.LittleEndian.Uint16(out[capAt:])
	upper := binary.LittleEndian.Uint16(out[capAt+2+1+2:])
	caps := uint32(lower) | uint32(upper)<<16 | greetingCapabilities
	binary.LittleEndian.PutUint16(out[capAt:], uint16(caps))
	binary.LittleEndian.PutUint16(out[capAt+2+1+2:], uint16(caps>>16))
	binary.LittleEndian.PutUint16(out[capAt+2+1:], greetingStatus)
	if extended != 0 && !wire.SetGreetingExtended(out[4:], extended) {
		return nil, false
	}
	n := len(out) - 4
	if n >= wire.MaxPayload {
		return nil, false
	}
	out[0], out[1], out[2] = byte(n), byte(n>>8), byte(n>>16)
	return out, true
}

// announce wraps a client's connection for the handshake and gives sess
// its connection id and the MariaDB extended capabilities offered to it.
func (srv *Server) announce(nc net.Conn, sess *Session) net.Conn {
	srv.learnVersion()
	sess.id = srv.newConnID()
	version := srv.version()
	sess.offeredExtended = offeredExtended(version)
	return &announceConn{Conn: nc, version: greetingVersion(version), id: sess.id, extended: sess.offeredExtended}
}

// offeredExtended is the MariaDB extended capabilities the proxy offers
// when it announces version: MARIADB_CLIENT_EXTENDED_METADATA when it
// presents itself as MariaDB (whose clients, Node's mysql2, Connector/J
// and Connector/Node, learn a JSON column or a UUID or INET6 one from the
// extended metadata alone), none otherwise, as MySQL offers none.
func offeredExtended(version string) uint32 {
	if isMariaDB(version) {
		return wire.MariaDBExtendedMetadata
	}
	return 0
}
