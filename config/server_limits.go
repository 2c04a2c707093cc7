package config

import "time"

// Limits bound what clients can make the proxy hold: memory per packet
// and in all, time a connection may stay idle or stall, logins in
// progress, prepared statements. They are the server: section's keys of
// the same names.
type Limits struct {
	// MaxAllowedPacket is the largest command a client may send, joined
	// over its packets, as MySQL's max_allowed_packet (default 64 MiB, at
	// most 1 GiB): a larger one gets 1153 and the connection is closed.
	MaxAllowedPacket int64
	// PacketMemoryBytes is what all client connections together may hold
	// for commands longer than 64 KiB while they arrive (default 256 MiB):
	// a command that does not fit gets 1037 and its connection is closed.
	PacketMemoryBytes int64
	// WaitTimeout closes a logged-in connection that sends nothing for
	// that long, as MySQL's wait_timeout (default 8h).
	WaitTimeout time.Duration
	// NetReadTimeout closes a connection whose command has begun but
	// stops arriving for that long, as MySQL's net_read_timeout (default
	// 30s).
	NetReadTimeout time.Duration
	// MaxHandshakes caps connections that have not logged in yet,
	// counted apart from MaxConnections (default 128); when it is
	// reached, the oldest such connection that has sent nothing (else the
	// oldest) is dropped for the new one, so strangers that never log in
	// cannot keep anyone out.
	MaxHandshakes int
	// MaxPreparedStatements caps one connection's open prepared
	// statements (default 16382, MySQL's max_prepared_stmt_count); the
	// next prepare gets 1461.
	MaxPreparedStatements int
}

// Limit defaults and bounds.
const (
	DefaultMaxAllowedPacket      = 64 << 20
	MaxMaxAllowedPacket          = 1 << 30
	DefaultPacketMemoryBytes     = 256 << 20
	DefaultWaitTimeout           = 8 * time.Hour
	DefaultNetReadTimeout        = 30 * time.Second
	DefaultMaxHandshakes         = 128
	DefaultMaxPreparedStatements = 16382
)

// limitKeys are the server: keys Limits reads.
func limitKeys() []string {
	return []string{"maxAllowedPacket", "packetMemoryBytes", "waitTimeout", "netReadTimeout",
		"maxHandshakes", "maxPreparedStatements"}
}

// limits decodes the Limits keys of the server: section.
func (d *decoder) limits(s *Server, f *fieldSet) {
	l := &s.Limits
	l.MaxAllowedPacket = d.bytesize(f.get("maxAllowedPacket"), "server.maxAllowedPacket", DefaultMaxAllowedPacket)
	if l.MaxAllowedPacket < 1024 || l.MaxAllowedPacket > MaxMaxAllowedPacket {
		d.errorf(f.get("maxAllowedPacket"), "server.maxAllowedPacket must be from 1KiB to 1GiB, as MySQL's max_allowed_packet")
	}
	l.PacketMemoryBytes = d.bytesize(f.get("packetMemoryBytes"), "server.packetMemoryBytes", DefaultPacketMemoryBytes)
	if l.PacketMemoryBytes < 1<<20 {
		d.errorf(f.get("packetMemoryBytes"), "server.packetMemoryBytes must be at least 1MiB")
	}
	l.WaitTimeout = d.duration(f.get("waitTimeout"), "server.waitTimeout", DefaultWaitTimeout)
	l.NetReadTimeout = d.duration(f.get("netReadTimeout"), "server.netReadTimeout", DefaultNetReadTimeout)
	if l.WaitTimeout == 0 || l.NetReadTimeout == 0 {
		d.errorf(f.get("waitTimeout"), "server.waitTimeout and server.netReadTimeout must be positive")
	}
	l.MaxHandshakes = int(d.integer(f.get("maxHandshakes"), "server.maxHandshakes", DefaultMaxHandshakes))
	if l.MaxHandshakes <= 0 {
		d.errorf(f.get("maxHandshakes"), "server.maxHandshakes must be positive")
	}
	l.MaxPreparedStatements = int(d.integer(f.get("maxPreparedStatements"), "server.maxPreparedStatements", DefaultMaxPreparedStatements))
	if l.MaxPreparedStatements < 1 || l.MaxPreparedStatements > 1048576 {
		d.errorf(f.get("maxPreparedStatements"), "server.maxPreparedStatements must be from 1 to 1048576")
	}
}
