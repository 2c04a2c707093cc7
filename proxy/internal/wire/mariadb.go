package wire

import (
	"encoding/binary"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// MariaDB's extended capabilities are 4 more bytes of flags (bits 32-63
// of its 64-bit capabilities) in places MySQL leaves as filler: the last
// 4 of the greeting's 10 reserved bytes and the last 4 of the handshake
// response's (or SSL request's) 23. Each side reads them only when the
// other leaves CLIENT_MYSQL (MySQL's CLIENT_LONG_PASSWORD) unset: MariaDB
// servers from 10.2 do in their greeting, a client that wants an extended
// capability does in its response.
const (
	// ClientMySQL is the flag whose absence says the extended
	// capabilities are there.
	ClientMySQL = mysql.CLIENT_LONG_PASSWORD
	// MariaDBExtendedMetadata is MARIADB_CLIENT_EXTENDED_METADATA: column
	// definitions carry a block of extended metadata (ParseColumn).
	MariaDBExtendedMetadata = 1 << 3
)

// greetingCapsAt returns where the lower capability flags of greeting
// payload p start, or -1 when p is not a protocol-10 greeting with the
// reserved bytes that hold the extended capabilities.
func greetingCapsAt(p []byte) int {
	if len(p) < 1 || p[0] != 10 {
		return -1
	}
	end := 1
	for end < len(p) && p[end] != 0 {
		end++
	}
	// version NUL, connection id 4, scramble 8, filler 1, then
	// capabilities 2, charset 1, status 2, capabilities (upper) 2,
	// auth data length 1, reserved 6, extended capabilities 4.
	at := end + 1 + 4 + 8 + 1
	if at+18 > len(p) {
		return -1
	}
	return at
}

// GreetingCapabilities returns the capabilities of greeting payload p and
// its extended capabilities (0 when CLIENT_MYSQL is set); ok is false when
// p is no protocol-10 greeting.
func GreetingCapabilities(p []byte) (caps, extended uint32, ok bool) {
	at := greetingCapsAt(p)
	if at < 0 {
		return 0, 0, false
	}
	caps = uint32(binary.LittleEndian.Uint16(p[at:])) | uint32(binary.LittleEndian.Uint16(p[at+5:]))<<16
	if caps&ClientMySQL == 0 {
		extended = binary.LittleEndian.Uint32(p[at+14:])
	}
	return caps, extended, true
}

// SetGreetingExtended makes greeting payload p offer extended capabilities
// extended, as a MariaDB server does: CLIENT_MYSQL unset, the flags in the
// reserved bytes. It reports false (p unchanged) when p is no protocol-10
// greeting.
func SetGreetingExtended(p []byte, extended uint32) bool {
	at := greetingCapsAt(p)
	if at < 0 {
		return false
	}
	binary.LittleEndian.PutUint16(p[at:], binary.LittleEndian.Uint16(p[at:])&^uint16(ClientMySQL))
	binary.LittleEndian.PutUint32(p[at+14:], extended)
	return true
}

// handshakeResponseFixed is the fixed start of a handshake response (and
// the whole of an SSL request): capabilities 4, max packet 4, charset 1,
// reserved 23 (19 and the extended capabilities 4).
const handshakeResponseFixed = 32

// ResponseExtended returns the extended capabilities a client asks for in
// the start of its handshake response or SSL request payload p: 0 when it
// sets CLIENT_MYSQL or p is too short.
func ResponseExtended(p []byte) uint32 {
	if len(p) < handshakeResponseFixed || binary.LittleEndian.Uint32(p)&ClientMySQL != 0 {
		return 0
	}
	return binary.LittleEndian.Uint32(p[28:])
}

// SetResponseExtended makes handshake response payload p ask for extended
// capabilities extended: CLIENT_MYSQL unset, the flags in the reserved
// bytes. It reports false (p unchanged) when p is too short.
func SetResponseExtended(p []byte, extended uint32) bool {
	if len(p) < handshakeResponseFixed {
		return false
	}
	binary.LittleEndian.PutUint32(p, binary.LittleEndian.Uint32(p)&^ClientMySQL)
	binary.LittleEndian.PutUint32(p[28:], extended)
	return true
}
