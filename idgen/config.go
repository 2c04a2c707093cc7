package idgen

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// WorkerIDSource says where a generator's (datacenter, worker) pair comes
// from.
type WorkerIDSource int

// Worker-id sources, as the worker-id-source prop spells them.
const (
	// WorkerIDStatic takes the pair from the worker-id and datacenter-id
	// props; the operator keeps it distinct across proxies.
	WorkerIDStatic WorkerIDSource = iota + 1
	// WorkerIDEtcd leases a free pair from etcd, so two proxies never hold
	// the same one.
	WorkerIDEtcd
)

// String returns the prop spelling.
func (s WorkerIDSource) String() string {
	switch s {
	case WorkerIDStatic:
		return "static"
	case WorkerIDEtcd:
		return "etcd"
	}
	return "WorkerIDSource(" + strconv.Itoa(int(s)) + ")"
}

// Config is everything a Snowflake generator needs, validated by Validate
// (ParseProps and New call it).
type Config struct {
	Layout Layout
	// DatacenterID and WorkerID are the static pair. With the etcd source
	// WorkerID is ignored (the lease replaces it) and DatacenterID counts
	// only when Etcd.PinDatacenter is set.
	DatacenterID int
	WorkerID     int
	Source       WorkerIDSource
	// MaxTolerate is how far the clock may step back before the generator
	// refuses to issue (max-tolerate-time-difference-milliseconds); smaller
	// steps are ridden out without duplicates.
	MaxTolerate time.Duration
	// MaxVibrationOffset is ShardingSphere's round-robin start offset. It is
	// accepted and range-checked so ShardingSphere rules load, and has no
	// effect: the sequence start is random (see the package doc).
	MaxVibrationOffset int
	// MaxLead bounds how far ahead of the wall clock the generator may
	// borrow milliseconds when a millisecond's sequence runs out.
	MaxLead time.Duration
	// HighWaterReserve is Δ: how far beyond the time being issued the
	// persisted high-water mark is pushed each time it is reached.
	HighWaterReserve time.Duration
	// StateFile persists the high-water mark of a static pair; empty means
	// none (a restart then trusts the clock, as a plain Snowflake does).
	StateFile string
	Etcd      EtcdConfig
}

// EtcdConfig is the etcd worker-id source.
type EtcdConfig struct {
	Endpoints []string
	// Prefix is the key prefix: Prefix/workers/DC/W holds a lease while a
	// generator owns the pair, Prefix/hw/DC/W its high-water mark forever.
	Prefix string
	// LeaseTTL is the lease's time to live; the generator stops issuing
	// before it could have expired when keep-alives fail.
	LeaseTTL time.Duration
	// ClaimTimeout is how long New waits for a pair to become free when all
	// are taken; 0 fails at once.
	ClaimTimeout time.Duration
	DialTimeout  time.Duration
	// PinDatacenter restricts claims to Config.DatacenterID (set by
	// ParseProps when datacenter-id is given with the etcd source).
	PinDatacenter bool
}

// Defaults of the props that have one.
const (
	DefaultMaxTolerate        = 10 * time.Millisecond
	DefaultMaxVibrationOffset = 1
	DefaultMaxLead            = 10 * time.Millisecond
	DefaultHighWaterReserve   = time.Second
	DefaultEtcdPrefix         = "/shardflake/idgen"
	DefaultEtcdLeaseTTL       = 10 * time.Second
	DefaultEtcdClaimTimeout   = 10 * time.Second
	DefaultEtcdDialTimeout    = 5 * time.Second
)

// Bounds on the durations, generous enough for any deployment but tight
// enough to catch seconds written where milliseconds were meant.
const (
	maxTolerateLimit = time.Hour
	maxLeadLimit     = 10 * time.Second
	maxReserveLimit  = time.Hour
	minLeaseTTL      = 2 * time.Second // etcd's own minimum with default timing
	maxLeaseTTL      = time.Hour
)

// DefaultConfig is a static generator for datacenter 0, worker 0 with the
// default layout and no state file.
func DefaultConfig() Config {
	return Config{
		Layout:             DefaultLayout(),
		Source:             WorkerIDStatic,
		MaxTolerate:        DefaultMaxTolerate,
		MaxVibrationOffset: DefaultMaxVibrationOffset,
		MaxLead:            DefaultMaxLead,
		HighWaterReserve:   DefaultHighWaterReserve,
		Etcd: EtcdConfig{
			Prefix:       DefaultEtcdPrefix,
			LeaseTTL:     DefaultEtcdLeaseTTL,
			ClaimTimeout: DefaultEtcdClaimTimeout,
			DialTimeout:  DefaultEtcdDialTimeout,
		},
	}
}

// Prop names: ShardingSphere's where it has one, ours in its kebab-case
// style otherwise.
const (
	PropWorkerID           = "worker-id"
	PropDatacenterID       = "datacenter-id"
	PropMaxTolerate        = "max-tolerate-time-difference-milliseconds"
	PropMaxVibrationOffset = "max-vibration-offset"
	PropEpoch              = "epoch"
	PropTimeBits           = "time-bits"
	PropDatacenterBits     = "datacenter-bits"
	PropWorkerBits         = "worker-bits"
	PropSequenceBits       = "sequence-bits"
	PropMaxLead            = "max-lead-milliseconds"
	PropHighWaterReserve   = "high-water-reserve-milliseconds"
	PropStateFile          = "state-file"
	PropWorkerIDSource     = "worker-id-source"
	PropEtcdEndpoints      = "etcd-endpoints"
	PropEtcdPrefix         = "etcd-prefix"
	PropEtcdLeaseTTL       = "etcd-lease-ttl-seconds"
	PropEtcdClaimTimeout   = "etcd-claim-timeout-milliseconds"
	PropEtcdDialTimeout    = "etcd-dial-timeout-milliseconds"
)

// Props lists every prop ParseProps accepts, in documentation order.
func Props() []string {
	return []string{
		PropWorkerID, PropDatacenterID, PropMaxTolerate, PropMaxVibrationOffset,
		PropEpoch, PropTimeBits, PropDatacenterBits, PropWorkerBits, PropSequenceBits,
		PropMaxLead, PropHighWaterReserve, PropStateFile, PropWorkerIDSource,
		PropEtcdEndpoints, PropEtcdPrefix, PropEtcdLeaseTTL, PropEtcdClaimTimeout, PropEtcdDialTimeout,
	}
}

// ParseProps builds a Config from a SNOWFLAKE key generator's props, as the
// rules file writes them, and validates it. Unknown props and bad values
// are a *PropError naming the prop.
func ParseProps(props map[string]string) (Config, error) {
	known := Props()
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	slices.Sort(names) // report the same first error every time
	for _, name := range names {
		if !slices.Contains(known, name) {
			return Config{}, &PropError{Prop: name, Reason: "unknown prop; known: " + strings.Join(known, ", ")}
		}
	}
	c := DefaultConfig()
	p := propReader{props: props}
	c.WorkerID = p.int(PropWorkerID, c.WorkerID)
	c.DatacenterID = p.int(PropDatacenterID, c.DatacenterID)
	c.MaxTolerate = p.millis(PropMaxTolerate, c.MaxTolerate)
	c.MaxVibrationOffset = p.int(PropMaxVibrationOffset, c.MaxVibrationOffset)
	c.Layout.Epoch = p.epoch(PropEpoch, c.Layout.Epoch)
	c.Layout.TimeBits = p.int(PropTimeBits, c.Layout.TimeBits)
	c.Layout.DatacenterBits = p.int(PropDatacenterBits, c.Layout.DatacenterBits)
	c.Layout.WorkerBits = p.int(PropWorkerBits, c.Layout.WorkerBits)
	c.Layout.SequenceBits = p.int(PropSequenceBits, c.Layout.SequenceBits)
	c.MaxLead = p.millis(PropMaxLead, c.MaxLead)
	c.HighWaterReserve = p.millis(PropHighWaterReserve, c.HighWaterReserve)
	c.StateFile = strings.TrimSpace(props[PropStateFile])
	if v, ok := props[PropWorkerIDSource]; ok {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "static":
			c.Source = WorkerIDStatic
		case "etcd":
			c.Source = WorkerIDEtcd
		default:
			p.fail(PropWorkerIDSource, v, "want static or etcd")
		}
	}
	if v, ok := props[PropEtcdEndpoints]; ok {
		for _, e := range strings.Split(v, ",") {
			if e = strings.TrimSpace(e); e != "" {
				c.Etcd.Endpoints = append(c.Etcd.Endpoints, e)
			}
		}
	}
	if v, ok := props[PropEtcdPrefix]; ok {
		c.Etcd.Prefix = strings.TrimSpace(v)
	}
	c.Etcd.LeaseTTL = time.Duration(p.int(PropEtcdLeaseTTL, int(c.Etcd.LeaseTTL/time.Second))) * time.Second
	c.Etcd.ClaimTimeout = p.millis(PropEtcdClaimTimeout, c.Etcd.ClaimTimeout)
	c.Etcd.DialTimeout = p.millis(PropEtcdDialTimeout, c.Etcd.DialTimeout)
	if p.err != nil {
		return Config{}, p.err
	}
	if c.Source == WorkerIDEtcd {
		_, c.Etcd.PinDatacenter = props[PropDatacenterID]
	} else {
		for _, name := range []string{PropEtcdEndpoints, PropEtcdPrefix, PropEtcdLeaseTTL, PropEtcdClaimTimeout, PropEtcdDialTimeout} {
			if v, ok := props[name]; ok {
				return Config{}, &PropError{Prop: name, Value: v, Reason: "only applies with worker-id-source: etcd"}
			}
		}
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Validate checks every field and how they fit together; the error is a
// *PropError naming the prop that sets the bad field.
func (c Config) Validate() error {
	if prop, reason := c.Layout.problem(); reason != "" {
		return &PropError{Prop: prop, Reason: reason, Err: ErrInvalidLayout}
	}
	l := c.Layout
	checks := []struct {
		bad  bool
		prop string
		val  string
		why  string
	}{
		{c.Source != WorkerIDStatic && c.Source != WorkerIDEtcd, PropWorkerIDSource, c.Source.String(), "want static or etcd"},
		{c.DatacenterID < 0 || c.DatacenterID > l.MaxDatacenter(), PropDatacenterID, strconv.Itoa(c.DatacenterID),
			fmt.Sprintf("outside [0, %d] for %d datacenter bits", l.MaxDatacenter(), l.DatacenterBits)},
		{c.Source == WorkerIDStatic && (c.WorkerID < 0 || c.WorkerID > l.MaxWorker()), PropWorkerID, strconv.Itoa(c.WorkerID),
			fmt.Sprintf("outside [0, %d] for %d worker bits", l.MaxWorker(), l.WorkerBits)},
		{c.MaxTolerate < 0 || c.MaxTolerate > maxTolerateLimit, PropMaxTolerate, msString(c.MaxTolerate),
			fmt.Sprintf("outside [0, %d]", maxTolerateLimit.Milliseconds())},
		{c.MaxVibrationOffset < 0 || c.MaxVibrationOffset > l.MaxSequence(), PropMaxVibrationOffset, strconv.Itoa(c.MaxVibrationOffset),
			fmt.Sprintf("outside [0, %d]", l.MaxSequence())},
		{c.MaxLead < 0 || c.MaxLead > maxLeadLimit, PropMaxLead, msString(c.MaxLead),
			fmt.Sprintf("outside [0, %d]", maxLeadLimit.Milliseconds())},
		{c.HighWaterReserve < time.Millisecond || c.HighWaterReserve > maxReserveLimit, PropHighWaterReserve, msString(c.HighWaterReserve),
			fmt.Sprintf("outside [1, %d]", maxReserveLimit.Milliseconds())},
		{c.Source == WorkerIDEtcd && c.StateFile != "", PropStateFile, c.StateFile,
			"only applies with worker-id-source: static (etcd keeps the high-water mark)"},
		{c.Source == WorkerIDEtcd && len(c.Etcd.Endpoints) == 0, PropEtcdEndpoints, "",
			"required with worker-id-source: etcd"},
		{c.Source == WorkerIDEtcd && (!strings.HasPrefix(c.Etcd.Prefix, "/") || strings.HasSuffix(c.Etcd.Prefix, "/")), PropEtcdPrefix, c.Etcd.Prefix,
			"want an absolute key prefix without a trailing slash, e.g. /shardflake/idgen"},
		{c.Source == WorkerIDEtcd && (c.Etcd.LeaseTTL < minLeaseTTL || c.Etcd.LeaseTTL > maxLeaseTTL || c.Etcd.LeaseTTL%time.Second != 0),
			PropEtcdLeaseTTL, strconv.FormatInt(int64(c.Etcd.LeaseTTL/time.Second), 10),
			fmt.Sprintf("want whole seconds in [%d, %d]", int(minLeaseTTL.Seconds()), int(maxLeaseTTL.Seconds()))},
		{c.Etcd.ClaimTimeout < 0, PropEtcdClaimTimeout, msString(c.Etcd.ClaimTimeout), "negative"},
		{c.Source == WorkerIDEtcd && c.Etcd.DialTimeout <= 0, PropEtcdDialTimeout, msString(c.Etcd.DialTimeout), "want > 0"},
	}
	for _, ck := range checks {
		if ck.bad {
			return &PropError{Prop: ck.prop, Value: ck.val, Reason: ck.why}
		}
	}
	return nil
}

func msString(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

// propReader parses props, keeping the first error so ParseProps reads as
// a list of fields.
type propReader struct {
	props map[string]string
	err   error
}

func (p *propReader) fail(prop, value, reason string) {
	if p.err == nil {
		p.err = &PropError{Prop: prop, Value: value, Reason: reason}
	}
}

func (p *propReader) int(prop string, def int) int {
	v, ok := p.props[prop]
	if !ok {
		return def
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		p.fail(prop, v, "want an integer")
		return def
	}
	return n
}

func (p *propReader) millis(prop string, def time.Duration) time.Duration {
	v, ok := p.props[prop]
	if !ok {
		return def
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 || n > 1<<40 { // 1<<40 ms keeps the Duration from overflowing
		p.fail(prop, v, "want a whole number of milliseconds")
		return def
	}
	return time.Duration(n) * time.Millisecond
}

func (p *propReader) epoch(prop string, def time.Time) time.Time {
	v, ok := p.props[prop]
	if !ok {
		return def
	}
	v = strings.TrimSpace(v)
	for _, layout := range []string{time.RFC3339Nano, time.DateOnly} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC()
		}
	}
	p.fail(prop, v, "want an RFC 3339 time such as 2024-01-01T00:00:00Z, or a date such as 2024-01-01")
	return def
}
