package proxy

import (
	"net"

	"github.com/shardflake/shardflake/proxy/internal/wire"
)

// extendedConn carries a data source connection through its handshake,
// which go-mysql's client runs and which knows nothing of MariaDB's
// extended capabilities: it reads the server's greeting as it passes and,
// when the server offers MARIADB_CLIENT_EXTENDED_METADATA, asks for it in
// the handshake response, so that column definitions come with MariaDB's
// extended metadata (a JSON alias, UUID, INET6), which the proxy passes
// on to the clients that asked for it too (wire.AppendColumn).
//
// Over TLS it is asked for in the SSL request, the 32-byte packet that
// goes out before TLS encrypts the rest; MariaDB takes the extended
// capabilities from it (the handshake response that follows, encrypted,
// passes as it is). Once the first packet is written, extendedConn only
// passes bytes through; dialBackendTLS unwraps it where it can.
type extendedConn struct {
	net.Conn
	greeting []byte // the greeting packet as read so far, header included
	greeted  bool   // the whole greeting came
	offered  uint32 // the extended capabilities the greeting offers
	answered bool   // the client's first packet went out
	// negotiated: the response asked for MARIADB_CLIENT_EXTENDED_METADATA.
	negotiated bool
}

// maxGreeting bounds the greeting extendedConn reads along (a MariaDB
// greeting is under 128 bytes).
const maxGreeting = 1024

func (c *extendedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if c.answered || c.greeted || n == 0 {
		return n, err
	}
	if len(c.greeting)+n > maxGreeting {
		c.answered = true // not a greeting worth reading: ask for nothing
		return n, err
	}
	c.greeting = append(c.greeting, b[:n]...)
	if len(c.greeting) < 4 {
		return n, err
	}
	size := int(c.greeting[0]) | int(c.greeting[1])<<8 | int(c.greeting[2])<<16
	if len(c.greeting) >= 4+size {
		if _, ext, ok := wire.GreetingCapabilities(c.greeting[4 : 4+size]); ok {
			c.offered = ext
		}
		c.greeting, c.greeted = nil, true
	}
	return n, err
}

// Write asks for MARIADB_CLIENT_EXTENDED_METADATA in the client's first
// packet (go-mysql writes a packet, header included, in one call) when
// the server offers it and the packet is the handshake response or the
// SSL request that starts TLS (which has the same 32 bytes first).
func (c *extendedConn) Write(b []byte) (int, error) {
	if c.answered {
		return c.Conn.Write(b)
	}
	c.answered = true
	size := 0
	if len(b) >= 4 {
		size = int(b[0]) | int(b[1])<<8 | int(b[2])<<16
	}
	if c.offered&wire.MariaDBExtendedMetadata == 0 || size != len(b)-4 || size < 32 || b[3] != 1 {
		return c.Conn.Write(b)
	}
	out := append([]byte(nil), b...)
	ext := wire.ResponseExtended(out[4:]) | wire.MariaDBExtendedMetadata
	if !wire.SetResponseExtended(out[4:], ext) {
		return c.Conn.Write(b)
	}
	if _, err := c.Conn.Write(out); err != nil {
		return 0, err
	}
	c.negotiated = true
	return len(b), nil
}
