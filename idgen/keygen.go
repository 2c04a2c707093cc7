package idgen

import (
	"strings"
	"time"
)

// KeyGenerator is a key generator of any type. Every generator also
// implements exactly one of BlockGenerator, ListGenerator and
// UUIDGenerator, and the router asks for keys through that one.
//
// MaxBatch is the largest number of keys one call issues; callers split
// larger requests into several calls.
type KeyGenerator interface {
	MaxBatch() int
}

// BlockGenerator issues blocks of consecutive integer keys (SNOWFLAKE,
// SEGMENT).
//
// NextN returns the first key of a block of n consecutive keys (first,
// first+1, ..., first+n-1), none of which the generator issued before, so
// a multi-row INSERT's LAST_INSERT_ID() + i names its rows as with
// AUTO_INCREMENT.
type BlockGenerator interface {
	KeyGenerator
	NextN(n int) (first int64, err error)
}

// ListGenerator issues integer keys that need not be consecutive (TICKET:
// a ticket server's ids step by its auto_increment_increment, and two
// servers interleave). NextKeys fills dst with len(dst) keys the generator
// never issued before.
type ListGenerator interface {
	KeyGenerator
	NextKeys(dst []int64) error
}

// UUIDGenerator issues 128-bit keys (UUID, UUIDV7). NextUUIDs fills dst;
// Encoding says how the key column holds them.
type UUIDGenerator interface {
	KeyGenerator
	NextUUIDs(dst []UUID) error
	Encoding() UUIDEncoding
}

// Adopter is a generator whose next keys can be moved above a floor: the
// largest key a table already holds (ADOPT SHARDING KEY GENERATOR). After
// Adopt returns, every key issued is above floor.
type Adopter interface {
	Adopt(floor int64) error
}

// Type is one key generator type of the rules file's keyGenerators: its
// name and how its props are checked before the proxy builds it.
type Type struct {
	// Name is the type as the rules file writes it (matched
	// case-insensitively).
	Name string
	// Check validates the props; a *PropError names the bad one.
	Check func(props map[string]string) error
	// Range is the kind of key column the generator's keys fit, for the
	// range checks of `shardflake check` and DDL.
	Range func(props map[string]string) KeyRange
}

// KeyRange is what a generator's keys need of their column.
type KeyRange struct {
	// Integer keys: Max is the largest key the generator can issue within
	// its lifetime (for SNOWFLAKE the first key issued today already needs
	// a BIGINT); Soon says whether keys that large come at once (true) or
	// only after as many keys were issued (false: SEGMENT, TICKET count up
	// from the table's adopted maximum).
	Integer bool
	Max     uint64
	Soon    bool
	// Otherwise the keys are UUIDs in this encoding.
	UUID UUIDEncoding
}

// Types lists every key generator type, in documentation order. The list
// is built on each call (no package state).
func Types() []Type {
	return []Type{
		{Name: TypeSnowflake, Check: checkSnowflake, Range: snowflakeRange},
		{Name: TypeSegment, Check: checkSegment, Range: countingRange},
		{Name: TypeTicket, Check: checkTicket, Range: countingRange},
		{Name: TypeUUID, Check: checkUUID, Range: uuidRange},
		{Name: TypeUUIDv7, Check: checkUUID, Range: uuidRange},
	}
}

// Type names, as SHOW SHARDING KEY GENERATORS prints them.
const (
	TypeSnowflake = "SNOWFLAKE"
	TypeSegment   = "SEGMENT"
	TypeTicket    = "TICKET"
	TypeUUID      = "UUID"
	TypeUUIDv7    = "UUIDV7"
)

// LookupType finds a type by name, case-insensitively.
func LookupType(name string) (Type, bool) {
	for _, t := range Types() {
		if strings.EqualFold(t.Name, strings.TrimSpace(name)) {
			return t, true
		}
	}
	return Type{}, false
}

// TypeNames lists the type names for error messages.
func TypeNames() []string {
	var names []string
	for _, t := range Types() {
		names = append(names, t.Name)
	}
	return names
}

func checkSnowflake(props map[string]string) error {
	_, err := ParseProps(props)
	return err
}

func snowflakeRange(props map[string]string) KeyRange {
	max := uint64(1<<63 - 1)
	if o, err := ParseProps(props); err == nil {
		max = uint64(o.Layout.MaxID())
	}
	return KeyRange{Integer: true, Max: max, Soon: true}
}

func countingRange(map[string]string) KeyRange {
	return KeyRange{Integer: true, Max: 1<<63 - 1}
}

// GeneratorState is a snapshot of a SEGMENT or TICKET generator for
// SHOW SHARDING KEY GENERATORS and metrics.
type GeneratorState struct {
	// Issued counts keys issued, RoundTrips the statements sent to the
	// data sources that hold the generator's state, Waited the time
	// callers spent waiting for them.
	Issued     uint64
	RoundTrips uint64
	Failures   uint64
	Waited     time.Duration
	// Segment: the block keys come from now, [BlockNext, BlockEnd], the
	// preloaded one (0 when none) and the step of the next fetch.
	BlockNext, BlockEnd int64
	NextBlockEnd        int64
	Step                int64
	// Floor is the adopted maximum: every key is above it.
	Floor int64
	// Servers are the ticket servers (or the one segment data source).
	Servers []ServerState
	// Err is why the generator cannot issue now; "" when it can.
	Err string
}

// ServerState is one ticket server or segment data source.
type ServerState struct {
	Addr    string
	Healthy bool
	// Increment and Offset are a ticket server's auto_increment settings
	// (its residue class), 0 before they were read.
	Increment, Offset int64
	Issued            uint64
	Err               string
}

// Stater is a generator that reports a GeneratorState.
type Stater interface {
	State() GeneratorState
}
