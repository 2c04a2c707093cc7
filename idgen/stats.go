package idgen

import (
	"strconv"
	"time"
)

// LeaseState is where a generator stands with its worker-id lease.
type LeaseState int

// Lease states, as Stats reports them.
const (
	// LeaseNone: a static pair, no lease.
	LeaseNone LeaseState = iota + 1
	// LeaseHeld: the lease was renewed in time; ids are issued.
	LeaseHeld
	// LeaseRenewing: the last keep-alive failed, but the lease cannot have
	// expired yet; ids are still issued until the deadline.
	LeaseRenewing
	// LeaseLapsed: the deadline passed without a renewal; no ids until a
	// keep-alive gets through (if etcd still has the lease) or a new pair is
	// claimed.
	LeaseLapsed
	// LeaseLost: etcd says the lease is gone; the generator is claiming a
	// pair again.
	LeaseLost
	// LeaseReleased: Close revoked the lease.
	LeaseReleased
	// LeaseClaiming: New could not claim a pair (etcd unreachable) and
	// keeps trying in the background; no ids until it succeeds.
	LeaseClaiming
)

// String returns the state in lower case, as metrics label it.
func (s LeaseState) String() string {
	switch s {
	case LeaseNone:
		return "none"
	case LeaseHeld:
		return "held"
	case LeaseRenewing:
		return "renewing"
	case LeaseLapsed:
		return "lapsed"
	case LeaseLost:
		return "lost"
	case LeaseReleased:
		return "released"
	case LeaseClaiming:
		return "claiming"
	}
	return "LeaseState(" + strconv.Itoa(int(s)) + ")"
}

// Stats is a snapshot of a generator for metrics and admin statements.
type Stats struct {
	// Generated counts ids issued since New.
	Generated uint64
	// ClockBackSteps counts the times the wall clock was seen going back.
	ClockBackSteps uint64
	// Waited is the time spent sleeping for the clock: the lead at its cap
	// or a back-step within the tolerance.
	Waited time.Duration
	// HighWaterWaits counts the calls that waited for the high-water mark to
	// be persisted (the background reservation normally avoids it).
	HighWaterWaits uint64
	// Lead is how far the last id's time is ahead of the wall clock now
	// (0 when not ahead); MaxLead the configured bound and LeadCap the bound
	// in force (above MaxLead only while a restart's lead runs down).
	Lead, MaxLead, LeadCap time.Duration
	Source                 WorkerIDSource
	DatacenterID, WorkerID int
	LeaseState             LeaseState
	// LeaseRenewed is when the last successful grant or keep-alive was
	// sent: etcd keeps the lease at least until LeaseRenewed + LeaseTTL.
	// LeaseDeadline, a margin earlier, is when the generator stops issuing
	// unless renewed again. Both are zero without a lease.
	LeaseRenewed  time.Time
	LeaseDeadline time.Time
	LeaseTTL      time.Duration
	// HighWater is the persisted high-water mark; zero without a state file
	// or etcd.
	HighWater time.Time
	// LastID is the last id issued, 0 before the first.
	LastID int64
}

// Stats returns a snapshot; it reads the clock once for Lead and the lease
// state.
func (g *Snowflake) Stats() Stats {
	now := g.clk.read()
	g.mu.Lock()
	defer g.mu.Unlock()
	s := Stats{
		Generated:      g.generated,
		ClockBackSteps: g.backSteps,
		Waited:         g.waited,
		HighWaterWaits: g.highWaterWaits,
		MaxLead:        g.cfg.MaxLead,
		LeadCap:        time.Duration(g.leadCap) * time.Millisecond,
		Source:         g.cfg.Source,
		DatacenterID:   g.dc,
		WorkerID:       g.worker,
		LeaseState:     LeaseNone,
		LastID:         g.lastID,
	}
	if lead := g.last - (now.ms - g.epochMs); lead > 0 && g.generated > 0 {
		s.Lead = time.Duration(lead) * time.Millisecond
	}
	if g.hw != noHighWater && g.hw >= 0 {
		s.HighWater = time.UnixMilli(g.epochMs + g.hw).UTC()
	}
	if g.etcd != nil {
		s.LeaseState = g.leaseStateLocked(now)
		s.LeaseRenewed = g.clk.at(g.leaseRenewed)
		s.LeaseDeadline = g.clk.at(g.leaseDeadline)
		s.LeaseTTL = g.leaseTTL
	}
	return s
}
