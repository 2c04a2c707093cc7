package proxy

import (
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/internal/sqllex"
	"github.com/shardflake/shardflake/proxy/internal/wire"
	"github.com/shardflake/shardflake/router"
)

// The traffic rules' admin statements, in DistSQL's spelling:
//
//	SHOW TRAFFIC RULES
//	ALTER TRAFFIC RULE <name> PROPERTIES("rate"="300", "burst"="30", ...)
//	ENABLE TRAFFIC RULE <name>
//	DISABLE TRAFFIC RULE <name>
//
// ALTER and ENABLE/DISABLE change the running proxy only: the rules file
// is not rewritten, and a restart loads it as it is.
const (
	adminTrafficRules adminKind = 100 + iota
	adminAlterTraffic
	adminEnableTraffic
	adminDisableTraffic
)

var trafficVerbs = map[adminKind]string{adminAlterTraffic: "ALTER", adminEnableTraffic: "ENABLE", adminDisableTraffic: "DISABLE"}

// trafficSyntax lists the traffic admin statements for syntax errors.
const trafficSyntax = `SHOW TRAFFIC RULES; ALTER TRAFFIC RULE <name> PROPERTIES("key"="value", ...); ENABLE TRAFFIC RULE <name>; DISABLE TRAFFIC RULE <name>`

// matchTrafficAdmin recognises a traffic admin statement after its first
// word: SHOW, ALTER, ENABLE or DISABLE followed by TRAFFIC, which begins
// no MySQL statement.
func matchTrafficAdmin(lx adminLexer, first string) (st adminStmt, ok bool, err error) {
	kinds := map[string]adminKind{"SHOW": adminTrafficRules, "ALTER": adminAlterTraffic, "ENABLE": adminEnableTraffic, "DISABLE": adminDisableTraffic}
	kind, known := kinds[strings.ToUpper(first)]
	if !known || !lx.keywords("TRAFFIC") {
		return st, false, nil
	}
	st.kind = kind
	if kind == adminTrafficRules {
		if !lx.keywords("RULES") {
			return st, true, lx.trafficSyntaxError()
		}
		return st, true, lx.end()
	}
	if !lx.keywords("RULE") {
		return st, true, lx.trafficSyntaxError()
	}
	name, named := lx.ident()
	if !named {
		return st, true, lx.trafficSyntaxError()
	}
	st.table = name
	if kind == adminAlterTraffic {
		start := lx.pos
		if _, err = lx.properties(); err != nil {
			return st, true, err
		}
		// The session reads them again from body (adminStmt stays a
		// comparable value).
		st.body = strings.TrimSpace(lx.sql[start:lx.pos])
	}
	return st, true, lx.end()
}

func (lx *adminLexer) trafficSyntaxError() error {
	return lx.syntaxError("the traffic rule statements are " + trafficSyntax)
}

// end accepts an optional ; and nothing after it.
func (lx *adminLexer) end() error {
	lx.skip()
	if lx.pos < len(lx.sql) && lx.sql[lx.pos] == ';' {
		lx.pos++
	}
	if !lx.skip() || lx.pos < len(lx.sql) {
		return lx.trafficSyntaxError()
	}
	return nil
}

// properties reads PROPERTIES("key"="value", ...): quoted keys and values
// (single or double quotes; a doubled quote stands for one).
func (lx *adminLexer) properties() (map[string]string, error) {
	if !lx.keywords("PROPERTIES") || !lx.punct('(') {
		return nil, lx.syntaxError(`ALTER TRAFFIC RULE needs PROPERTIES("key"="value", ...), e.g. PROPERTIES("rate"="300")`)
	}
	props := map[string]string{}
	for {
		k, ok := lx.quoted()
		if !ok || !lx.punct('=') {
			return nil, lx.syntaxError(`each property is "key"="value"`)
		}
		v, ok := lx.quoted()
		if !ok {
			return nil, lx.syntaxError(`each property is "key"="value"`)
		}
		props[k] = v
		if lx.punct(')') {
			return props, nil
		}
		if !lx.punct(',') {
			return nil, lx.syntaxError(`properties are separated by commas and end with )`)
		}
	}
}

// punct consumes the character c when it comes next.
func (lx *adminLexer) punct(c byte) bool {
	if !lx.skip() || lx.pos >= len(lx.sql) || lx.sql[lx.pos] != c {
		return false
	}
	lx.pos++
	return true
}

// quoted reads a '...' or "..." string.
func (lx *adminLexer) quoted() (string, bool) {
	if !lx.skip() || lx.pos >= len(lx.sql) {
		return "", false
	}
	if q := lx.sql[lx.pos]; q != '\'' && q != '"' {
		return "", false
	}
	// A backslash is an ordinary character here; a doubled quote is one.
	t := sqllex.At(lx.sql, lx.pos, sqllex.NoBackslashEscapes)
	if t.Unterminated {
		return "", false
	}
	lx.pos = t.End
	return sqllex.Unquote(lx.sql, t, sqllex.NoBackslashEscapes), true
}

// runTrafficAdmin answers a traffic admin statement.
func (s *Session) runTrafficAdmin(st adminStmt) error {
	set := s.srv.traffic
	if st.kind != adminTrafficRules && !s.privileges().TrafficAdmin {
		// The statements a rule limits must not switch it off.
		return privilegeNeeded("TRAFFIC ADMIN (server.users trafficAdmin: true)")
	}
	var err error
	switch st.kind {
	case adminTrafficRules:
		cols, rows := s.srv.trafficRules()
		return s.writeRows(newMemStream(cols, rows), textOutput)
	case adminAlterTraffic:
		lx := adminLexer{sql: st.body}
		props, perr := lx.properties()
		if perr != nil {
			return perr
		}
		err = set.Alter(st.table, props)
	case adminEnableTraffic:
		err = set.SetEnabled(st.table, true)
	case adminDisableTraffic:
		err = set.SetEnabled(st.table, false)
	}
	if err != nil {
		return err
	}
	s.log.Info("traffic rule changed at run time", "statement", trafficVerbs[st.kind], "rule", st.table, "props", st.body)
	return s.writeOK(wire.OK{}, false)
}

// trafficRules is SHOW TRAFFIC RULES: each rule's setting and live state.
func (srv sessionServer) trafficRules() ([]*mysql.Field, []Row) {
	cols := stringColumns("name", "type", "match_rule", "limit_props", "on_limit", "max_wait", "scope", "enabled",
		"available_permits", "in_flight", "queued", "admitted", "delayed", "rejected", "unused_permits", "cluster_share", "cluster_members")
	var rows []Row
	for _, r := range srv.traffic.States() {
		var onLimit, maxWait any = r.OnLimit.String(), r.MaxWait.String()
		if r.Type == "CONCURRENCY" {
			onLimit, maxWait = "queue", nil
		} else if r.OnLimit == config.TrafficReject {
			maxWait = nil
		}
		// unused_permits: what a token bucket's rate made while it was
		// full (the demand was below the rate); the others do not count it.
		var unused any
		if r.Type == "TOKEN_BUCKET" {
			unused = strconv.FormatFloat(r.Unused, 'f', 0, 64)
		}
		var share, members any
		if r.Scope == config.TrafficCluster {
			share, members = strconv.FormatFloat(r.Share, 'f', 1, 64), strconv.Itoa(r.Members)
		}
		rows = append(rows, rowOf(r.Name, r.Type, r.Match, r.Limit, onLimit, maxWait, r.Scope.String(), strconv.FormatBool(r.Enabled),
			strconv.FormatFloat(r.Available, 'f', 0, 64), strconv.Itoa(r.InFlight), strconv.Itoa(r.Queued),
			strconv.FormatUint(r.Admitted, 10), strconv.FormatUint(r.Delayed, 10), strconv.FormatUint(r.Rejected, 10), unused, share, members))
	}
	return cols, rows
}

// withTrafficRules adds PREVIEW's traffic_rules column (when the proxy has
// rules): the rules the statement would take permits from, and how many.
func (s *Session) withTrafficRules(cols []*mysql.Field, rows []Row, plan *router.Plan, sql string) ([]*mysql.Field, []Row) {
	if s.srv.traffic.Empty() {
		return cols, rows
	}
	names := strings.Join(s.trafficMatches(plan, sql), ", ")
	for i, r := range rows {
		rows[i] = append(r, []byte(names))
	}
	return append(cols, stringColumn("traffic_rules")), rows
}
