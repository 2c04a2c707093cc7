// Package idgen issues keys for INSERTs that lack one.
//
// The key generator types (Types) are SNOWFLAKE (below, most of this
// comment), SEGMENT (Meituan Leaf's segment mode: blocks of keys from a
// table row, segment.go), TICKET (Flickr's ticket servers, ticket.go),
// UUID and UUIDV7 (uuid.go). SEGMENT and TICKET keep their state in a
// database: idgen decides when to ask (SegmentStore, TicketServer) and
// the proxy implements the round trips, so this package imports nothing
// of shardflake's.
//
// It sits at the bottom of the pipeline (cmd → proxy → router → idgen): the
// router asks a KeyGenerator for a block of consecutive keys before it routes
// an INSERT, so a generated key can be the sharding column. A *Snowflake is
// safe for concurrent use by any number of goroutines; its ids are unique
// per (datacenter, worker) pair and strictly increasing in the order calls
// return.
//
// # Layout
//
// An id is a positive BIGINT. By default, high bit to low: 1 sign bit (0),
// 41 bits of milliseconds since 2024-01-01T00:00:00Z (the horizon is
// 2093-09-06T15:47:35.551Z), 5 bits datacenter, 5 bits worker, 12 bits
// sequence: 4096 ids per millisecond per pair, 4.096 million a second. The
// split and the epoch are configurable (Layout, validated to add up to at
// most 63 bits: 53 keeps every id exact in a JavaScript Number); Layout.Decode
// and `shardflake id decode` take an id apart.
//
// # Even spread over id % m
//
// A plain Snowflake starts every millisecond's sequence at 0, so at low
// insert rates every id is a multiple of 4096 and `order_id % 8` sends
// every row to one table. ShardingSphere's max-vibration-offset moves the
// start round-robin, which aliases with periodic traffic: two tables
// alternating on one generator get all-even and all-odd ids.
//
// Here, when a new wall-clock millisecond starts, its sequence starts at a
// random value uniform in [0, 4000). 4000 is a multiple of 2, 4, 8, 16, 32,
// 10, 100 and 1000, so for each such m, id % m is exactly uniform whatever
// the time bits are, even when they are constant mod m (one id per second
// exactly). The random source is a per-generator PCG seeded from
// crypto/rand, so there is no period for traffic to alias with and two
// proxies do not move in lockstep. For other sequence widths the range is
// 1000·2^(s−10), the largest multiple of 1000 and of 2^(s−7) that fits.
//
// When the generator moves to the next millisecond because the sequence ran
// out (saturation, see below), the new millisecond starts at a random value
// in [0, 32) instead: that costs about 0.4% of the capacity rather than
// half of it, and still gives every millisecond a random residue mod 2..32.
// The same holds when a saturated generator falls behind the wall clock
// for a moment (the last millisecond was full for the request at hand);
// single ids and blocks of up to 48 never fill a millisecond that started
// in [0, 4000), so at lower rates every new millisecond gets the full range.
// At saturation a single table's ids are runs of consecutive values, which
// spread more evenly than random draws. Two tables strictly alternating on
// one saturated generator each get every other id of a millisecond, so
// within that millisecond one table's ids share their parity; the parity is
// random from one millisecond to the next, so over a second each table's
// rows split evenly to within a percent or two.
//
// A block from NextN(n) lies within one millisecond and starts where a
// single id would (uniform in [0, 4000) or [0, 32)), narrowed so the block
// fits: for n <= 97 nothing changes, above that the start range shrinks to
// a multiple of 32. The first row of each multi-row INSERT is therefore
// spread like a single id, and the rows after it follow.
//
// The max-vibration-offset prop is accepted for compatibility with
// ShardingSphere rules (an integer in [0, 4095]) and has no effect: the
// random start above replaces the round-robin offset it configured.
//
// # Sequence exhaustion and the borrowed lead
//
// When a millisecond's 4096 ids are used up, the generator borrows the next
// millisecond rather than waiting for it, as long as the borrowed time
// stays within max-lead-milliseconds (default 10) of the wall clock. At the
// cap it sleeps, never spins, until the lead is down to half the cap, so
// one sleep buys several milliseconds of ids and the sleeps' overshoot does
// not cost capacity. Stats reports the current lead, the time slept and the
// cap.
//
// # Clock steps
//
// The generator remembers the latest wall-clock millisecond it saw. When
// the clock reads earlier by at most max-tolerate-time-difference-milliseconds
// (default 10), it rides the step out: it keeps issuing in its last
// millisecond and borrows beyond it within the lead cap, sleeping briefly
// if it must; no id repeats. When the clock is further back, calls return
// *ClockBackwardsError naming the drift and the time at which keys resume;
// the generator recovers by itself once the clock is back within the
// tolerance. A leap forward simply moves the ids forward. The system clock
// is read through Go's monotonic clock and re-read every 10 ms, so a step is
// seen within 10 ms.
//
// # Restarts: the high-water mark
//
// With a state file (static worker ids) or etcd, the generator persists a
// high-water mark: before it issues any millisecond above the mark it
// persists a new one, at least Δ (high-water-reserve-milliseconds, default
// 1000) beyond the wall clock, and it reserves the next window in the
// background once it is halfway through the current one, so issuing rarely
// waits for a write. The state file is replaced atomically (temporary file,
// fsync, rename, fsync of the directory). The mark is therefore always at
// or above every id issued, including after kill -9 or a power loss.
//
// On start, or when taking over a pair, the generator issues only above the
// mark. After a normal restart the clock is up to Δ behind the mark; that is
// not an error: the first ids are up to Δ ahead of the wall clock and the
// lead runs down to max-lead as the clock catches up. The mark also records
// the writer's wall clock; if the clock now reads earlier than that by more
// than the tolerance, the clock was set back across the restart and calls
// return *ClockBackwardsError (HighWater set) until it catches up. Either
// way no id is ever reissued. Without a state file or etcd a restart
// trusts the clock, as a plain Snowflake does. A state file written with
// another layout or epoch is refused, since reusing it could repeat ids.
//
// # Worker ids from etcd
//
// With worker-id-source: etcd, New claims a free (datacenter, worker) pair
// (within datacenter-id when that prop is given) with one transaction: if
// PREFIX/workers/DC/W was never created, put it attached to a new lease and
// read PREFIX/hw/DC/W. Two generators therefore never hold the same pair.
// When every pair is taken, New waits up to etcd-claim-timeout-milliseconds
// for one to be released, then returns *AllPairsTakenError.
//
// The lease is renewed every third of its TTL. The generator stops issuing
// (*LeaseLostError) at the time its last successful renewal was sent plus
// the TTL minus a margin, measured on the monotonic clock, so it stops
// before etcd could have expired the lease and handed the pair to someone
// else, even if etcd is unreachable or the process was paused. If a later
// renewal gets through, issuing resumes; if etcd reports the lease gone,
// the generator claims a pair again. The pair's mark lives in
// PREFIX/hw/DC/W, outside any lease, and is written only in a transaction
// that checks the worker key still carries the writer's lease; a new holder
// starts above it. Since a holder only issues below its persisted mark and
// cannot raise the mark once it lost the lease, even an old holder that
// has not noticed yet (an operator revoked the lease) issues only below
// the ids of the new one. Close revokes the lease, freeing the pair at once. The
// etcd client logs its retries as JSON warnings on stderr; the environment
// variable ETCD_CLIENT_DEBUG=error quiets it.
//
// # Errors
//
// Every error a generator returns matches one of ErrClockMovedBackwards,
// ErrClockStalled, ErrBeforeEpoch, ErrHorizonExceeded, ErrBatchTooLarge,
// ErrLeaseLost, ErrAllPairsTaken, ErrHighWater or ErrClosed with
// errors.Is, and its message starts with "snowflake:" and names the cause,
// ready to be sent as MySQL error 1105 (HY000). Configuration errors are
// *PropError values naming the prop and match ErrInvalidConfig.
//
// # Props
//
// ParseProps reads a SNOWFLAKE key generator's props from the rules file
// (unknown props are errors):
//
//	worker-id                                 static worker id (0)
//	datacenter-id                             static datacenter id (0); with etcd, claim only in it
//	max-tolerate-time-difference-milliseconds clock step ridden out (10)
//	max-vibration-offset                      accepted, no effect (1)
//	epoch                                     RFC 3339 time or date (2024-01-01T00:00:00Z)
//	time-bits, datacenter-bits,
//	worker-bits, sequence-bits                layout (41, 5, 5, 12)
//	max-lead-milliseconds                     borrowed lead cap (10)
//	high-water-reserve-milliseconds           Δ (1000)
//	state-file                                high-water mark file, static source ("" = none)
//	worker-id-source                          static | etcd (static)
//	etcd-endpoints                            comma-separated, required with etcd
//	etcd-prefix                               key prefix (/shardflake/idgen)
//	etcd-lease-ttl-seconds                    lease TTL (10)
//	etcd-claim-timeout-milliseconds           wait for a free pair (10000)
//	etcd-dial-timeout-milliseconds            bound on each etcd call (5000)
package idgen
