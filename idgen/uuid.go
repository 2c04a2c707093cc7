package idgen

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// UUID is a 128-bit key, big-endian as RFC 9562 lays it out.
type UUID [16]byte

// String is the 36-character form, lower-case hex with hyphens.
func (u UUID) String() string {
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}

// Version is the version nibble (4 or 7).
func (u UUID) Version() int { return int(u[6] >> 4) }

// Variant reports whether the variant bits are RFC 9562's 10.
func (u UUID) Variant() bool { return u[8]&0xc0 == 0x80 }

// UUIDEncoding is how a UUID key column holds its keys.
type UUIDEncoding int

// UUID encodings, as the column-type prop spells them.
const (
	// UUIDChar36 is CHAR(36): 8-4-4-4-12 lower-case hex.
	UUIDChar36 UUIDEncoding = iota + 1
	// UUIDChar32 is CHAR(32): 32 hex digits without hyphens, as
	// ShardingSphere's UUID generator writes them.
	UUIDChar32
	// UUIDBinary16 is BINARY(16): the 16 bytes, big-endian, so that byte
	// order is time order for UUIDv7.
	UUIDBinary16
)

// String returns the column type it fits.
func (e UUIDEncoding) String() string {
	switch e {
	case UUIDChar36:
		return "CHAR(36)"
	case UUIDChar32:
		return "CHAR(32)"
	case UUIDBinary16:
		return "BINARY(16)"
	}
	return fmt.Sprintf("UUIDEncoding(%d)", int(e))
}

// Text is the key as the column holds it, for char encodings; for
// BINARY(16) it is the 16 raw bytes.
func (e UUIDEncoding) Text(u UUID) string {
	switch e {
	case UUIDChar32:
		return hex.EncodeToString(u[:])
	case UUIDBinary16:
		return string(u[:])
	}
	return u.String()
}

// PropColumnType is the UUID generators' one prop.
const PropColumnType = "column-type"

// uuidMaxBatch bounds one NextUUIDs call (a multi-row INSERT asks in
// pieces this large).
const uuidMaxBatch = 4096

func parseUUIDProps(props map[string]string) (UUIDEncoding, error) {
	for name := range props {
		if name != PropColumnType {
			return 0, &PropError{Type: TypeUUID, Prop: name, Reason: "unknown prop; known: " + PropColumnType}
		}
	}
	v, ok := props[PropColumnType]
	if !ok {
		return UUIDChar36, nil
	}
	switch strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(v), " ", "")) {
	case "CHAR(36)", "CHAR36", "VARCHAR(36)":
		return UUIDChar36, nil
	case "CHAR(32)", "CHAR32", "VARCHAR(32)":
		return UUIDChar32, nil
	case "BINARY(16)", "BINARY16":
		return UUIDBinary16, nil
	}
	return 0, &PropError{Type: TypeUUID, Prop: PropColumnType, Value: v, Reason: "want CHAR(36), CHAR(32) or BINARY(16)"}
}

func checkUUID(props map[string]string) error {
	_, err := parseUUIDProps(props)
	return err
}

func uuidRange(props map[string]string) KeyRange {
	e, err := parseUUIDProps(props)
	if err != nil {
		e = UUIDChar36
	}
	return KeyRange{UUID: e}
}

// UUIDv4 issues random (version 4) UUIDs, as ShardingSphere's UUID type.
// Random keys land anywhere in a B+tree index: each insert touches a
// random leaf page. It is safe for concurrent use.
type UUIDv4 struct {
	enc UUIDEncoding
}

// NewUUIDv4 builds a v4 generator from the UUID type's props.
func NewUUIDv4(props map[string]string) (*UUIDv4, error) {
	e, err := parseUUIDProps(props)
	if err != nil {
		return nil, err
	}
	return &UUIDv4{enc: e}, nil
}

// MaxBatch is the largest len(dst) NextUUIDs accepts.
func (g *UUIDv4) MaxBatch() int { return uuidMaxBatch }

// Encoding is the key column's encoding.
func (g *UUIDv4) Encoding() UUIDEncoding { return g.enc }

// NextUUIDs fills dst with random UUIDs: 122 random bits from crypto/rand
// each, so a collision is as likely as guessing one.
func (g *UUIDv4) NextUUIDs(dst []UUID) error {
	if len(dst) > uuidMaxBatch {
		return &BatchSizeError{N: len(dst), Max: uuidMaxBatch}
	}
	for i := range dst {
		rand.Read(dst[i][:])
		dst[i][6] = dst[i][6]&0x0f | 0x40
		dst[i][8] = dst[i][8]&0x3f | 0x80
	}
	return nil
}

// UUIDv7 issues time-ordered (version 7) UUIDs: 48 bits of Unix
// milliseconds, then 74 bits that start random each millisecond and count
// up within it (RFC 9562 §6.2 method 2, a randomly seeded counter), so the
// keys of one generator are strictly increasing as bytes and as text, and
// inserts append to the right edge of a B+tree like AUTO_INCREMENT. When
// the clock steps back the generator keeps counting from the last key;
// when a millisecond's counter runs out it moves on to the next
// millisecond. It is safe for concurrent use.
type UUIDv7 struct {
	enc   UUIDEncoding
	clock Clock

	mu sync.Mutex
	ms int64
	// hi (12 bits, rand_a) and lo (62 bits, rand_b) are the counter.
	hi uint16
	lo uint64
}

// NewUUIDv7 builds a v7 generator from the UUIDV7 type's props.
func NewUUIDv7(props map[string]string, opts ...UUIDOption) (*UUIDv7, error) {
	e, err := parseUUIDProps(props)
	if err != nil {
		return nil, err
	}
	g := &UUIDv7{enc: e, clock: SystemClock()}
	for _, o := range opts {
		o(g)
	}
	return g, nil
}

// UUIDOption configures a UUIDv7 generator.
type UUIDOption func(*UUIDv7)

// WithUUIDClock makes a UUIDv7 generator read c instead of the system
// clock (tests).
func WithUUIDClock(c Clock) UUIDOption { return func(g *UUIDv7) { g.clock = c } }

// MaxBatch is the largest len(dst) NextUUIDs accepts.
func (g *UUIDv7) MaxBatch() int { return uuidMaxBatch }

// Encoding is the key column's encoding.
func (g *UUIDv7) Encoding() UUIDEncoding { return g.enc }

const (
	loBits = 62
	loMax  = 1<<loBits - 1
	hiMax  = 1<<12 - 1
)

// NextUUIDs fills dst with increasing v7 UUIDs.
func (g *UUIDv7) NextUUIDs(dst []UUID) error {
	if len(dst) > uuidMaxBatch {
		return &BatchSizeError{N: len(dst), Max: uuidMaxBatch}
	}
	now := g.clock.Now().UnixMilli()
	if now < 0 || now >= 1<<48 {
		return errors.New("uuidv7: clock outside the 48-bit millisecond range")
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := range dst {
		if now > g.ms {
			g.ms = now
			g.seed()
		} else if g.lo < loMax {
			g.lo++
		} else if g.hi < hiMax {
			g.hi, g.lo = g.hi+1, 0
		} else {
			// This millisecond is spent: borrow the next one.
			g.ms++
			g.seed()
		}
		dst[i] = g.compose()
	}
	return nil
}

// seed starts a millisecond's counter at a random value with the top bit
// of rand_a clear, so at least 2^73 keys fit before it overflows.
func (g *UUIDv7) seed() {
	var b [10]byte
	rand.Read(b[:])
	g.hi = binary.BigEndian.Uint16(b[0:2]) & 0x07ff
	g.lo = binary.BigEndian.Uint64(b[2:10]) & loMax
}

func (g *UUIDv7) compose() UUID {
	var u UUID
	ms := uint64(g.ms)
	u[0], u[1], u[2], u[3], u[4], u[5] = byte(ms>>40), byte(ms>>32), byte(ms>>24), byte(ms>>16), byte(ms>>8), byte(ms)
	u[6] = 0x70 | byte(g.hi>>8)
	u[7] = byte(g.hi)
	binary.BigEndian.PutUint64(u[8:], g.lo|0x8000000000000000)
	u[8] = u[8]&0x3f | 0x80
	return u
}

// Time is the millisecond a v7 UUID carries.
func (u UUID) Time() time.Time {
	ms := int64(u[0])<<40 | int64(u[1])<<32 | int64(u[2])<<24 | int64(u[3])<<16 | int64(u[4])<<8 | int64(u[5])
	return time.UnixMilli(ms).UTC()
}
