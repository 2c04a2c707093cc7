package traffic

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/router"
)

// Statement is what the admit stage knows of a planned statement. The
// session fills one in place per statement; the Set does not keep it.
type Statement struct {
	User   string
	Kind   router.StatementKind
	Tables []string
	Routes []router.Route
	// SQL is the client's text, read only when a rule matches digests.
	SQL string

	digest   string
	digested bool
}

// Reset makes st describe a new statement.
func (st *Statement) Reset(user string, plan *router.Plan, sql string) {
	*st = Statement{User: user, Kind: plan.Kind, Tables: plan.Tables, Routes: plan.Routes, SQL: sql}
}

// Digest is the statement's fingerprint digest, as the slow log writes it.
func (st *Statement) Digest() string {
	if !st.digested {
		st.digest = parser.DigestNormalized(parser.Normalize(st.SQL, "ON")).String()
		st.digested = true
	}
	return st.digest
}

// Set is the traffic rules of one rules snapshot, in file order.
type Set struct {
	clock Clock
	rules []*Rule
}

// Held is one rule's permits that an admitted statement holds until
// Finish.
type Held struct {
	rule    *Rule
	limiter Limiter
	permit  Permit
}

// New builds the rules' limiters on clock c (nil: the wall clock). Cluster
// rules hold the whole budget until StartCluster gives them their share.
func New(rules []config.TrafficRule, c Clock) (*Set, error) {
	if c == nil {
		c = SystemClock()
	}
	s := &Set{clock: c}
	for _, tr := range rules {
		if tr.Scope == config.TrafficCluster && tr.Limit.Type != "TOKEN_BUCKET" {
			return nil, fmt.Errorf("traffic rule %s: scope cluster splits a TOKEN_BUCKET's rate, not a %s", tr.Name, tr.Limit.Type)
		}
		lim, err := NewLimiter(tr.Limit, c)
		if err != nil {
			return nil, fmt.Errorf("traffic rule %s: %w", tr.Name, err)
		}
		r := &Rule{name: tr.Name, match: newMatcher(tr.Match)}
		r.set.Store(&setting{rule: tr, limiter: lim})
		s.rules = append(s.rules, r)
	}
	return s, nil
}

// Empty reports whether the set has no rules (a nil Set has none).
func (s *Set) Empty() bool { return s == nil || len(s.rules) == 0 }

// Admit takes the permits of every enabled rule st matches, in rule
// order, waiting where a rule says so but never more than budget in all
// (the time left before the statement's timeout) nor past ctx's end. It
// returns held with the permits appended, for Finish. A refused statement
// holds nothing: the rules that had granted permits take them back. The
// error is a *LimitError, or ctx's cause.
func (s *Set) Admit(ctx context.Context, st *Statement, budget time.Duration, held []Held) ([]Held, error) {
	if s.Empty() {
		return held, nil
	}
	if dl, ok := ctx.Deadline(); ok {
		budget = min(budget, time.Until(dl))
	}
	first := len(held)
	for _, r := range s.rules {
		set := r.set.Load()
		if set.rule.Disabled {
			continue
		}
		n := r.match.cost(st)
		if n == 0 {
			continue
		}
		n = min(n, set.limiter.Capacity())
		r.requested.Add(uint64(n))
		p, err := set.limiter.Acquire(ctx, n, max(0, min(set.wait(), budget)))
		if err != nil {
			held = s.Finish(held[first:], false)
			if errors.Is(err, ErrLimited) || errors.Is(err, ErrQueueFull) || errors.Is(err, ErrQueueTimeout) {
				r.rejected.Add(1)
				return held, &LimitError{Rule: r.name, User: st.User, Err: err, Limit: set.limit()}
			}
			return held, err
		}
		budget -= p.Waited
		held = append(held, Held{rule: r, limiter: set.limiter, permit: p})
	}
	for _, h := range held[first:] {
		h.rule.admitted.Add(1)
		if h.permit.Waited > 0 {
			h.rule.delayed.Add(1)
		}
		h.rule.waits.observe(h.permit.Waited)
	}
	return held, nil
}

// Finish ends the permits Admit granted; ran is false when the statement
// never ran. It returns held emptied, for reuse.
func (s *Set) Finish(held []Held, ran bool) []Held {
	for i := range held {
		held[i].limiter.Release(held[i].permit, ran)
		held[i] = Held{}
	}
	return held[:0]
}

// Matching names the enabled rules st would take permits from, with its
// cost under each (PREVIEW).
func (s *Set) Matching(st *Statement) []string {
	if s.Empty() {
		return nil
	}
	var names []string
	for _, r := range s.rules {
		set := r.set.Load()
		if n := r.match.cost(st); n > 0 && !set.rule.Disabled {
			n = min(n, set.limiter.Capacity())
			unit := "permits"
			if n == 1 {
				unit = "permit"
			}
			names = append(names, fmt.Sprintf("%s (%d %s)", r.name, n, unit))
		}
	}
	return names
}

// RuleState is a rule's setting and live state.
type RuleState struct {
	Name, Type, Match, Limit string
	OnLimit                  config.TrafficOnLimit
	MaxWait                  time.Duration
	Scope                    config.TrafficScope
	Enabled                  bool
	State
	Admitted, Delayed, Rejected uint64
	// WaitBuckets are cumulative counts per WaitBuckets bound.
	WaitBuckets []uint64
	WaitCount   uint64
	WaitSum     float64 // seconds
	// Share is a cluster rule's part of the budget on this proxy, and
	// Members the proxies sharing it (0 for a local rule).
	Share   float64
	Members int
}

// States returns every rule's state, in rule order.
func (s *Set) States() []RuleState {
	if s.Empty() {
		return nil
	}
	out := make([]RuleState, 0, len(s.rules))
	for _, r := range s.rules {
		set := r.set.Load()
		rs := RuleState{
			Name: r.name, Type: set.rule.Limit.Type, Match: r.match.String(), Limit: describeLimit(set.rule.Limit),
			OnLimit: set.rule.OnLimit, MaxWait: set.rule.MaxWait, Scope: set.rule.Scope, Enabled: !set.rule.Disabled,
			State:    set.limiter.State(),
			Admitted: r.admitted.Load(), Delayed: r.delayed.Load(), Rejected: r.rejected.Load(),
		}
		rs.WaitBuckets, rs.WaitCount, rs.WaitSum = r.waits.snapshot()
		if set.rule.Scope == config.TrafficCluster {
			rs.Share, rs.Members = math.Float64frombits(r.share.Load()), int(r.members.Load())
		}
		out = append(out, rs)
	}
	return out
}

// RuleError is an admin statement about a rule that cannot be done: the
// rule does not exist, or a property is wrong.
type RuleError struct {
	Rule    string
	Unknown bool // no such rule
	Msg     string
}

func (e *RuleError) Error() string {
	if e.Unknown {
		return fmt.Sprintf("Traffic rule '%s' does not exist", e.Rule)
	}
	return fmt.Sprintf("Traffic rule '%s': %s", e.Rule, e.Msg)
}

func (s *Set) find(name string) *Rule {
	if s == nil {
		return nil
	}
	for _, r := range s.rules {
		if strings.EqualFold(r.name, name) {
			return r
		}
	}
	return nil
}

// Alter changes a rule's limit and policy at run time: props are limit
// keys (type, rate, burst, permits, window, subWindows, maxInFlight,
// queue, queueTimeout) and onLimit, maxWait, validated as in the rules
// file. The rule gets a new limiter, full; statements in flight finish on
// the old one.
func (s *Set) Alter(name string, props map[string]string) error {
	r := s.find(name)
	if r == nil {
		return &RuleError{Rule: name, Unknown: true}
	}
	old := r.set.Load()
	tr, err := config.AlterTrafficRule(old.rule, props)
	if err != nil {
		return &RuleError{Rule: r.name, Msg: err.Error()}
	}
	if tr.Scope == config.TrafficCluster && tr.Limit.Type != "TOKEN_BUCKET" {
		return &RuleError{Rule: r.name, Msg: "scope: cluster splits a TOKEN_BUCKET's rate among the proxies; " + tr.Limit.Type + " cannot be split"}
	}
	lim, err := NewLimiter(tr.Limit, s.clock)
	if err != nil {
		return &RuleError{Rule: r.name, Msg: err.Error()}
	}
	r.set.Store(&setting{rule: tr, limiter: lim})
	return nil
}

// SetEnabled turns a rule on or off at run time (ENABLE, DISABLE TRAFFIC
// RULE); its limiter keeps its state.
func (s *Set) SetEnabled(name string, on bool) error {
	r := s.find(name)
	if r == nil {
		return &RuleError{Rule: name, Unknown: true}
	}
	for {
		old := r.set.Load()
		next := *old
		next.rule.Disabled = !on
		if r.set.CompareAndSwap(old, &next) {
			return nil
		}
	}
}
