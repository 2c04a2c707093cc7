package traffic

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/router"
)

// Rule is one traffic rule: what it matches, and a setting (limit,
// policy, on or off) that ALTER and DISABLE TRAFFIC RULE replace whole.
type Rule struct {
	name  string
	match matcher
	set   atomic.Pointer[setting]

	admitted, delayed, rejected atomic.Uint64
	waits                       histogram
	// requested counts the permits statements asked for, refused ones
	// too: a cluster rule's demand.
	requested atomic.Uint64
	// share is a cluster rule's part of the budget (float64 bits) and
	// members the proxies sharing it, as of the last round.
	share   atomic.Uint64
	members atomic.Int64
}

// setting is a rule's current limit and policy; immutable once published.
type setting struct {
	rule    config.TrafficRule
	limiter Limiter
}

// wait is how long a statement may wait for this rule's permits.
func (s *setting) wait() time.Duration {
	if s.rule.Limit.Type == "CONCURRENCY" {
		return s.rule.Limit.QueueTimeout
	}
	if s.rule.OnLimit == config.TrafficWait {
		return s.rule.MaxWait
	}
	return 0
}

// limit is the rule's limit as a number, for messages.
func (s *setting) limit() float64 {
	l := s.rule.Limit
	switch l.Type {
	case "TOKEN_BUCKET", "LEAKY_BUCKET":
		return l.Rate
	case "CONCURRENCY":
		return float64(l.MaxInFlight)
	}
	return float64(l.Permits)
}

// Name is the rule's name.
func (r *Rule) Name() string { return r.name }

// matcher is a rule's match, ready for a statement.
type matcher struct {
	users       []string
	tables      []string
	kinds       uint32 // bit per router.StatementKind
	digests     []string
	dataSources []string
}

func newMatcher(m config.TrafficMatch) matcher {
	mt := matcher{users: m.Users, tables: m.Tables, digests: m.Digests, dataSources: m.DataSources}
	for _, name := range m.Kinds {
		for k := router.KindSelect; k <= router.KindOther; k++ {
			if k.String() == name {
				mt.kinds |= 1 << uint(k)
			}
		}
	}
	return mt
}

// cost is how many permits st costs under this match: one per route (per
// route on the matched data sources), 0 when st does not match.
func (m *matcher) cost(st *Statement) int {
	if len(m.users) > 0 && !slices.Contains(m.users, st.User) {
		return 0
	}
	if m.kinds != 0 && m.kinds&(1<<uint(kindOf(st.Kind))) == 0 {
		return 0
	}
	if len(m.tables) > 0 && !m.anyTable(st.Tables) {
		return 0
	}
	if len(m.digests) > 0 && !slices.Contains(m.digests, st.Digest()) {
		return 0
	}
	if len(m.dataSources) == 0 {
		return max(1, len(st.Routes))
	}
	n := 0
	for i := range st.Routes {
		if slices.Contains(m.dataSources, st.Routes[i].DataSource) {
			n++
		}
	}
	return n
}

func (m *matcher) anyTable(tables []string) bool {
	for _, t := range tables {
		for _, want := range m.tables {
			if strings.EqualFold(t, want) {
				return true
			}
		}
	}
	return false
}

// kindOf folds the kinds a rule cannot name into other.
func kindOf(k router.StatementKind) router.StatementKind {
	switch k {
	case router.KindSelect, router.KindInsert, router.KindUpdate, router.KindDelete, router.KindDDL:
		return k
	}
	return router.KindOther
}

// String describes the match as SHOW TRAFFIC RULES prints it.
func (m *matcher) String() string {
	var parts []string
	add := func(key string, vals []string) {
		if len(vals) > 0 {
			parts = append(parts, key+"="+strings.Join(vals, ","))
		}
	}
	add("users", m.users)
	add("tables", m.tables)
	var kinds []string
	for k := router.KindSelect; k <= router.KindOther; k++ {
		if m.kinds&(1<<uint(k)) != 0 {
			kinds = append(kinds, k.String())
		}
	}
	add("kinds", kinds)
	add("digests", m.digests)
	add("dataSources", m.dataSources)
	if len(parts) == 0 {
		return "all statements"
	}
	return strings.Join(parts, " ")
}

// describeLimit prints a limit's parameters as the rules file writes them.
func describeLimit(l config.TrafficLimit) string {
	switch l.Type {
	case "TOKEN_BUCKET":
		return fmt.Sprintf("rate=%g burst=%d", l.Rate, l.Burst)
	case "LEAKY_BUCKET":
		return fmt.Sprintf("rate=%g", l.Rate)
	case "SLIDING_WINDOW":
		return fmt.Sprintf("permits=%d window=%s subWindows=%d", l.Permits, l.Window, l.SubWindows)
	case "FIXED_WINDOW":
		return fmt.Sprintf("permits=%d window=%s", l.Permits, l.Window)
	case "CONCURRENCY":
		return fmt.Sprintf("maxInFlight=%d queue=%d queueTimeout=%s", l.MaxInFlight, l.Queue, l.QueueTimeout)
	}
	return ""
}

// WaitBuckets are the upper bounds, in seconds, of the wait-time
// histogram each rule keeps.
var WaitBuckets = []float64{.0001, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}

// histogram counts waits by WaitBuckets, lock-free.
type histogram struct {
	counts [14]atomic.Uint64 // len(WaitBuckets)+1, the last for +Inf
	sumNS  atomic.Int64
}

func (h *histogram) observe(d time.Duration) {
	s := d.Seconds()
	i := 0
	for i < len(WaitBuckets) && s > WaitBuckets[i] {
		i++
	}
	h.counts[i].Add(1)
	h.sumNS.Add(int64(d))
}

// snapshot returns cumulative counts per bucket, the total and the sum
// in seconds.
func (h *histogram) snapshot() (cumulative []uint64, count uint64, sum float64) {
	cumulative = make([]uint64, len(WaitBuckets))
	for i := range h.counts {
		count += h.counts[i].Load()
		if i < len(WaitBuckets) {
			cumulative[i] = count
		}
	}
	return cumulative, count, time.Duration(h.sumNS.Load()).Seconds()
}
