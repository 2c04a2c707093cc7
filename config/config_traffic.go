package config

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// TrafficRule is one entry of server.traffic: which statements it
// matches and the limit they share. The proxy's traffic package gives it
// its clock and state; here it is data.
type TrafficRule struct {
	// Name names the rule in errors, admin statements and metrics.
	Name string
	// Match selects the statements the rule limits.
	Match TrafficMatch
	// Limit is the algorithm and its parameters.
	Limit TrafficLimit
	// OnLimit says what a statement over the limit gets.
	OnLimit TrafficOnLimit
	// MaxWait bounds the wait of OnLimit wait (never past the
	// statement's timeout); 0 with reject.
	MaxWait time.Duration
	// Scope is local (each proxy its own budget) or cluster.
	Scope TrafficScope
	// Disabled rules are loaded (ENABLE TRAFFIC RULE turns them on) but
	// limit nothing.
	Disabled bool
	// Line is where the rule starts in the file.
	Line int
}

// TrafficMatch selects statements: every list that is set must match
// (one of its items), an empty list matches everything.
type TrafficMatch struct {
	Users       []string
	Tables      []string // logical tables, lower case
	Kinds       []string // statement kinds by router.StatementKind's lower-case names
	Digests     []string // statement fingerprint digests, lower-case hex
	DataSources []string
}

// TrafficLimit is a limit algorithm and its parameters; which fields mean
// something depends on Type (TrafficLimitKeys).
type TrafficLimit struct {
	// Type is TOKEN_BUCKET, LEAKY_BUCKET, SLIDING_WINDOW, FIXED_WINDOW or
	// CONCURRENCY.
	Type string
	// Rate is permits per second (token and leaky bucket).
	Rate float64
	// Burst is the token bucket's capacity (default: one second of Rate).
	Burst int
	// Permits per Window (sliding and fixed window).
	Permits int
	Window  time.Duration
	// SubWindows split a sliding window (default 10).
	SubWindows int
	// MaxInFlight is the concurrency limit.
	MaxInFlight int
	// Queue is how many statements may wait for a concurrency slot
	// (default 0: none waits), each at most QueueTimeout.
	Queue        int
	QueueTimeout time.Duration
}

// TrafficLimitKeys are the parameter keys each limit type accepts, beside
// type; the traffic package builds one limiter per type.
var TrafficLimitKeys = map[string][]string{
	"TOKEN_BUCKET":   {"rate", "burst"},
	"LEAKY_BUCKET":   {"rate"},
	"SLIDING_WINDOW": {"permits", "window", "subWindows"},
	"FIXED_WINDOW":   {"permits", "window"},
	"CONCURRENCY":    {"maxInFlight", "queue", "queueTimeout"},
}

// TrafficOnLimit is what a statement over a limit gets.
type TrafficOnLimit int

// What a statement over a limit gets.
const (
	TrafficReject TrafficOnLimit = iota + 1 // refused at once
	TrafficWait                             // waits up to maxWait, then refused
)

// String returns the policy as the rules file writes it.
func (o TrafficOnLimit) String() string {
	switch o {
	case TrafficReject:
		return "reject"
	case TrafficWait:
		return "wait"
	}
	return "unknown"
}

// TrafficScope is whose budget a rule's limit is.
type TrafficScope int

// Traffic rule scopes.
const (
	TrafficLocal   TrafficScope = iota + 1 // each proxy its own
	TrafficCluster                         // one budget shared by the proxies on one etcd
)

// String returns the scope as the rules file writes it.
func (s TrafficScope) String() string {
	switch s {
	case TrafficLocal:
		return "local"
	case TrafficCluster:
		return "cluster"
	}
	return "unknown"
}

// trafficKinds are the statement kinds match.kinds accepts, by the names
// router.StatementKind prints.
var trafficKinds = []string{"select", "insert", "update", "delete", "ddl", "other"}

// traffic decodes server.traffic, a list of rules.
func (d *decoder) traffic(r *Rules, n *yaml.Node) {
	n = resolve(n)
	if n == nil || isNull(n) {
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, "server.traffic must be a list of rules {name, match, limit, onLimit, maxWait, scope}")
		return
	}
	seen := map[string]bool{}
	for _, it := range n.Content {
		f := d.fields(it, "server.traffic rule", "name", "match", "limit", "onLimit", "maxWait", "scope", "disabled")
		if f == nil {
			continue
		}
		tr := TrafficRule{Line: f.node.Line}
		tr.Name = d.str(f.get("name"), "server.traffic name")
		switch {
		case tr.Name == "":
			d.errorf(f.node, "server.traffic: every rule needs a name")
		case seen[strings.ToLower(tr.Name)]:
			d.errorf(f.get("name"), "server.traffic: rule %q appears twice", tr.Name)
		case !validRuleName(tr.Name):
			d.errorf(f.get("name"), "server.traffic: rule name %q: use letters, digits, _ and - (it is a metrics label)", tr.Name)
		}
		seen[strings.ToLower(tr.Name)] = true
		what := fmt.Sprintf("server.traffic rule %s", tr.Name)
		d.trafficMatch(r, &tr, f.get("match"), what)
		d.trafficLimit(&tr, f, what)
		tr.Disabled = d.boolean(f.get("disabled"), what+" disabled", false)
		tr.Scope = TrafficLocal
		switch s := d.str(f.get("scope"), what+" scope"); s {
		case "", "local":
		case "cluster":
			// Checked once the key generators are known (trafficScopes).
			tr.Scope = TrafficCluster
		default:
			d.errorf(f.get("scope"), "%s: scope %q: want local or cluster", what, s)
		}
		r.Server.Traffic = append(r.Server.Traffic, tr)
	}
}

// trafficScopes checks the cluster rules: their budget is shared through
// the etcd the worker-id leases use, so one key generator must lease its
// worker id from etcd; and only a token bucket's rate can be split.
func (d *decoder) trafficScopes(r *Rules) {
	etcd := TrafficEtcdKeyGenerator(r) != ""
	for _, tr := range r.Server.Traffic {
		if tr.Scope != TrafficCluster {
			continue
		}
		switch {
		case !etcd:
			d.errs = append(d.errs, &Error{File: d.file, Line: tr.Line, Message: fmt.Sprintf(
				"server.traffic rule %s: scope: cluster shares one budget through the etcd the worker-id leases use, and no key generator has worker-id-source: etcd; without etcd use scope: local (each proxy its own budget)", tr.Name)})
		case tr.Limit.Type != "TOKEN_BUCKET":
			d.errs = append(d.errs, &Error{File: d.file, Line: tr.Line, Message: fmt.Sprintf(
				"server.traffic rule %s: scope: cluster splits a TOKEN_BUCKET's rate among the proxies; %s cannot be split", tr.Name, tr.Limit.Type)})
		}
	}
}

// TrafficEtcdKeyGenerator names the key generator (the first by name)
// whose worker id is leased from etcd: its etcd carries cluster traffic
// budgets too. "" when none is.
func TrafficEtcdKeyGenerator(r *Rules) string {
	names := make([]string, 0, len(r.KeyGenerators))
	for name, kg := range r.KeyGenerators {
		if strings.EqualFold(kg.Props["worker-id-source"], "etcd") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return ""
	}
	return names[0]
}

func validRuleName(s string) bool {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return len(s) <= 64
}

func (d *decoder) trafficMatch(r *Rules, tr *TrafficRule, n *yaml.Node, what string) {
	f := d.fields(n, what+" match", "users", "tables", "kinds", "digests", "dataSources")
	if f == nil {
		return
	}
	m := &tr.Match
	users, nodes := d.strList(f.get("users"), what+" match.users")
	known := map[string]bool{}
	for _, u := range r.Server.Users {
		known[u.Name] = true
	}
	for i, u := range users {
		if !known[u] {
			d.errorf(nodes[i], "%s: match.users names %q, which is not in server.users", what, u)
		}
	}
	m.Users = users
	tables, _ := d.strList(f.get("tables"), what+" match.tables")
	for _, t := range tables {
		m.Tables = append(m.Tables, strings.ToLower(t))
	}
	kinds, nodes := d.strList(f.get("kinds"), what+" match.kinds")
	for i, k := range kinds {
		kind := strings.ToLower(k)
		if !slices.Contains(trafficKinds, kind) {
			d.errorf(nodes[i], "%s: match.kinds %q: want select, insert, update, delete, ddl or other", what, k)
			continue
		}
		m.Kinds = append(m.Kinds, kind)
	}
	digests, nodes := d.strList(f.get("digests"), what+" match.digests")
	for i, g := range digests {
		g = strings.ToLower(g)
		if len(g) != 64 || strings.Trim(g, "0123456789abcdef") != "" {
			d.errorf(nodes[i], "%s: match.digests %q: want the 64 hex digits of a statement digest (the slow log's digest)", what, digests[i])
			continue
		}
		m.Digests = append(m.Digests, g)
	}
	dss, nodes := d.strList(f.get("dataSources"), what+" match.dataSources")
	for i, ds := range dss {
		if r.dsByName != nil && r.dsByName[ds] == nil {
			d.errorf(nodes[i], "%s: match.dataSources names %q, which is not in dataSources", what, ds)
		}
	}
	m.DataSources = dss
}

func (d *decoder) trafficLimit(tr *TrafficRule, rule *fieldSet, what string) {
	n := rule.get("limit")
	if n == nil {
		d.errorf(rule.node, "%s needs a limit: {type: TOKEN_BUCKET|LEAKY_BUCKET|SLIDING_WINDOW|FIXED_WINDOW|CONCURRENCY, ...}", what)
		return
	}
	head := d.fields(n, what+" limit", nil...)
	if head == nil {
		return
	}
	typ := strings.ToUpper(d.str(head.get("type"), what+" limit.type"))
	keys, ok := TrafficLimitKeys[typ]
	if !ok {
		d.errorf(head.keyNode("type"), "%s: limit.type %q: want TOKEN_BUCKET, LEAKY_BUCKET, SLIDING_WINDOW, FIXED_WINDOW or CONCURRENCY", what, typ)
		return
	}
	f := d.fields(n, what+" limit ("+typ+")", append([]string{"type"}, keys...)...)
	l := &tr.Limit
	l.Type = typ
	positive := func(key string, v int64) int {
		if v <= 0 {
			d.errorf(f.keyNode(key), "%s: limit.%s must be positive", what, key)
		}
		return int(v)
	}
	switch typ {
	case "TOKEN_BUCKET", "LEAKY_BUCKET":
		l.Rate = d.rate(f, what)
		if typ == "TOKEN_BUCKET" {
			l.Burst = positive("burst", d.integer(f.get("burst"), what+" limit.burst", int64(max(1, l.Rate))))
		}
	case "SLIDING_WINDOW", "FIXED_WINDOW":
		l.Permits = positive("permits", d.integer(f.get("permits"), what+" limit.permits", 0))
		l.Window = d.duration(f.get("window"), what+" limit.window", 0)
		if l.Window <= 0 {
			d.errorf(f.keyNode("window"), "%s: limit.window must be a positive duration such as 1s or 1h", what)
		}
		if typ == "SLIDING_WINDOW" {
			l.SubWindows = positive("subWindows", d.integer(f.get("subWindows"), what+" limit.subWindows", 10))
			if l.SubWindows > 1000 {
				d.errorf(f.keyNode("subWindows"), "%s: limit.subWindows must be at most 1000", what)
			}
		}
	case "CONCURRENCY":
		l.MaxInFlight = positive("maxInFlight", d.integer(f.get("maxInFlight"), what+" limit.maxInFlight", 0))
		l.Queue = int(d.integer(f.get("queue"), what+" limit.queue", 0))
		if l.Queue < 0 {
			d.errorf(f.keyNode("queue"), "%s: limit.queue cannot be negative", what)
		}
		l.QueueTimeout = d.duration(f.get("queueTimeout"), what+" limit.queueTimeout", 0)
		if l.Queue > 0 && l.QueueTimeout <= 0 {
			d.errorf(f.keyNode("queueTimeout"), "%s: limit.queue needs a queueTimeout (how long a queued statement waits, e.g. 100ms)", what)
		}
	}
	tr.OnLimit = TrafficReject
	switch o := d.str(rule.get("onLimit"), what+" onLimit"); o {
	case "", "reject":
	case "wait":
		tr.OnLimit = TrafficWait
	default:
		d.errorf(rule.get("onLimit"), "%s: onLimit %q: want reject or wait", what, o)
	}
	tr.MaxWait = d.duration(rule.get("maxWait"), what+" maxWait", 0)
	switch {
	case typ == "CONCURRENCY" && (rule.has("onLimit") || rule.has("maxWait")):
		d.errorf(rule.keyNode("onLimit"), "%s: a CONCURRENCY limit waits in its queue (limit.queue, limit.queueTimeout), not by onLimit/maxWait", what)
	case tr.OnLimit == TrafficWait && tr.MaxWait <= 0:
		d.errorf(rule.keyNode("maxWait"), "%s: onLimit: wait needs a positive maxWait (e.g. 20ms)", what)
	case tr.OnLimit == TrafficReject && tr.MaxWait > 0:
		d.errorf(rule.keyNode("maxWait"), "%s: maxWait needs onLimit: wait", what)
	}
}

// rate reads limit.rate: permits per second, a positive number.
func (d *decoder) rate(f *fieldSet, what string) float64 {
	s := d.str(f.get("rate"), what+" limit.rate")
	v, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
	if err != nil || v <= 0 || v > 1e9 {
		d.errorf(f.keyNode("rate"), "%s: limit.rate must be a positive number of permits per second, got %q", what, s)
		return 1
	}
	return v
}

// AlterTrafficRule returns tr with props applied, validated as the rules
// file is: props are limit keys (type and TrafficLimitKeys) and onLimit,
// maxWait, any case. A new type drops the parameters of the old one it
// does not take; onLimit reject drops maxWait.
func AlterTrafficRule(tr TrafficRule, props map[string]string) (TrafficRule, error) {
	limit := trafficLimitProps(tr.Limit)
	rule := map[string]string{}
	if tr.Limit.Type != "CONCURRENCY" && tr.OnLimit == TrafficWait {
		rule["onLimit"], rule["maxWait"] = "wait", tr.MaxWait.String()
	}
	canon := map[string]string{"type": "type", "onlimit": "onLimit", "maxwait": "maxWait"}
	for _, keys := range TrafficLimitKeys {
		for _, k := range keys {
			canon[strings.ToLower(k)] = k
		}
	}
	given := map[string]string{}
	for k, v := range props {
		key, ok := canon[strings.ToLower(k)]
		if !ok {
			return tr, fmt.Errorf("unknown property %q (known: type, onLimit, maxWait and the limit's keys)", k)
		}
		given[key] = v
	}
	if t, ok := given["type"]; ok && strings.ToUpper(t) != limit["type"] {
		limit = map[string]string{"type": strings.ToUpper(t)}
		if limit["type"] == "CONCURRENCY" {
			rule = map[string]string{}
		}
	}
	for key, v := range given {
		switch key {
		case "type":
		case "onLimit", "maxWait":
			rule[key] = v
		default:
			limit[key] = v
		}
	}
	if _, ok := given["maxWait"]; !ok && rule["onLimit"] == "reject" {
		delete(rule, "maxWait")
	}
	node := &yaml.Node{Kind: yaml.MappingNode}
	scalar := func(m *yaml.Node, k, v string) {
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, &yaml.Node{Kind: yaml.ScalarNode, Value: v})
	}
	lim := &yaml.Node{Kind: yaml.MappingNode}
	for _, k := range sortedKeys(limit) {
		scalar(lim, k, limit[k])
	}
	node.Content = append(node.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "limit"}, lim)
	for _, k := range sortedKeys(rule) {
		scalar(node, k, rule[k])
	}
	d := &decoder{file: "ALTER TRAFFIC RULE"}
	out := TrafficRule{Name: tr.Name, Match: tr.Match, Scope: tr.Scope, Disabled: tr.Disabled, Line: tr.Line}
	f := d.fields(node, "traffic rule "+tr.Name, "limit", "onLimit", "maxWait")
	d.trafficLimit(&out, f, "traffic rule "+tr.Name)
	if len(d.errs) > 0 {
		msgs := make([]string, len(d.errs))
		for i, e := range d.errs {
			msgs[i] = e.Message
		}
		return tr, fmt.Errorf("%s", strings.Join(msgs, "; "))
	}
	return out, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// trafficLimitProps writes a limit's parameters back as the rules file
// spells them.
func trafficLimitProps(l TrafficLimit) map[string]string {
	p := map[string]string{"type": l.Type}
	switch l.Type {
	case "TOKEN_BUCKET":
		p["rate"], p["burst"] = strconv.FormatFloat(l.Rate, 'g', -1, 64), strconv.Itoa(l.Burst)
	case "LEAKY_BUCKET":
		p["rate"] = strconv.FormatFloat(l.Rate, 'g', -1, 64)
	case "SLIDING_WINDOW":
		p["permits"], p["window"], p["subWindows"] = strconv.Itoa(l.Permits), l.Window.String(), strconv.Itoa(l.SubWindows)
	case "FIXED_WINDOW":
		p["permits"], p["window"] = strconv.Itoa(l.Permits), l.Window.String()
	case "CONCURRENCY":
		p["maxInFlight"], p["queue"] = strconv.Itoa(l.MaxInFlight), strconv.Itoa(l.Queue)
		if l.QueueTimeout > 0 {
			p["queueTimeout"] = l.QueueTimeout.String()
		}
	}
	return p
}
