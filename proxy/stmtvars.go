package proxy

import (
	"math"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/internal/sqllex"
	"github.com/shardflake/shardflake/proxy/internal/sqlarg"
	"github.com/shardflake/shardflake/router"
)

// Statement-scoped variables: MariaDB's SET STATEMENT var = value [, ...]
// FOR statement, and sql_select_limit, which caps the rows of a
// top-level SELECT without LIMIT. Connector/J sends both:
// Statement.setQueryTimeout as SET STATEMENT max_statement_time=N FOR ...,
// setMaxRows as SET @@SQL_SELECT_LIMIT=N before the query and DEFAULT
// after it.
//
// SET STATEMENT's assignments are sent in front of every route's SQL, so
// each data source runs its part under them (a max_statement_time bounds
// each data node's statement). sql_select_limit cannot be left to the data
// sources when several answer: each would return its own N rows (a merge
// shows up to N per route), and a route whose rows the merge folds
// (GROUP BY, aggregates, DISTINCT, HAVING, an ORDER BY the merge sorts
// itself) would lose rows the answer needs. So a multi-route SELECT gets
// the limit as its merge's LIMIT, and its routes run without it unless
// their first N rows are all the merge needs. Nor is the limit a setting
// of the session's backend connections: the proxy's own statements on
// them would return no rows under sql_select_limit=0.

// stmtVars are the assignments of a SET STATEMENT the session runs now
// (the statement after FOR): sent before each route's SQL; selectLimit is
// its sql_select_limit, kept apart (limitSet: it has one; "" for
// DEFAULT).
type stmtVars struct {
	assignments string
	selectLimit string
	limitSet    bool
}

// stmtVarsRefused are the variables SET STATEMENT may not set through the
// proxy: it rewrites each statement's text for the data sources in the
// session's sql_mode and character set, and keeps autocommit, the
// transaction's characteristics and the last insert id itself.
var stmtVarsRefused = map[string]bool{
	"sql_mode": true, "autocommit": true, "names": true,
	"tx_isolation": true, "transaction_isolation": true, "tx_read_only": true, "transaction_read_only": true,
	"insert_id": true, "last_insert_id": true, "identity": true,
}

// splitSetStatement reads a query that starts with SET STATEMENT: its
// assignments and the statement after FOR. ok is false for any other
// query; err is a SET STATEMENT the proxy cannot run (a syntax error, a
// value that is not a constant, a variable it keeps itself).
func splitSetStatement(sql string, mode sqlarg.Mode) (vars stmtVars, rest string, ok bool, err error) {
	sc := &tokens{sql: sql, mode: mode}
	if !sc.word("SET") || !sc.word("STATEMENT") {
		return stmtVars{}, "", false, nil
	}
	syntax := func() error { return syntaxErrorNear(strings.TrimSpace(sql[min(sc.pos, len(sql)):]), "") }
	var parts []string
	for {
		name, ok := sc.next(sqllex.Word)
		if !ok {
			return stmtVars{}, "", true, syntax()
		}
		lower := strings.ToLower(name)
		if eq, _ := sc.next(sqllex.Punct); eq != "=" {
			return stmtVars{}, "", true, syntax()
		}
		value, ok := sc.constant()
		if !ok {
			return stmtVars{}, "", true, &NotSupportedError{What: "SET STATEMENT with a value that is not a constant"}
		}
		switch {
		case stmtVarsRefused[lower] || strings.HasPrefix(lower, "character_set_") || strings.HasPrefix(lower, "collation_"):
			return stmtVars{}, "", true, &NotSupportedError{What: "SET STATEMENT " + lower + " through the proxy (SET SESSION it around the statement)"}
		case restrictedSessionVars[lower] != "":
			return stmtVars{}, "", true, privilegeNeeded(restrictedSessionVars[lower])
		case lower == "sql_select_limit":
			if vars.selectLimit, err = selectLimitValue(value); err != nil {
				return stmtVars{}, "", true, err
			}
			vars.limitSet = true
		case lower == "unique_checks":
			// The data sources keep their unique checks
			// (uniqueChecksValue).
			if _, err := uniqueChecksValue(value); err != nil {
				return stmtVars{}, "", true, err
			}
		default:
			parts = append(parts, lower+"="+value)
		}
		if sc.word("FOR") {
			break
		}
		if c, _ := sc.next(sqllex.Punct); c != "," {
			return stmtVars{}, "", true, syntax()
		}
	}
	vars.assignments = strings.Join(parts, ", ")
	rest = strings.TrimSpace(sql[sc.pos:])
	if rest == "" {
		return stmtVars{}, "", true, syntax()
	}
	return vars, rest, true, nil
}

// tokens reads a statement's code tokens, skipping space and comments.
type tokens struct {
	sql  string
	pos  int
	mode sqlarg.Mode
}

// peek returns the next code token.
func (t *tokens) peek() (sqllex.Token, bool) {
	i, stop := sqllex.SkipSpace(t.sql, t.pos, t.mode)
	if stop.Kind != 0 || i >= len(t.sql) {
		return sqllex.Token{}, false
	}
	return sqllex.At(t.sql, i, t.mode), true
}

// next takes the next token if it is of kind k and returns its text.
func (t *tokens) next(k sqllex.Kind) (string, bool) {
	tok, ok := t.peek()
	if !ok || tok.Kind != k {
		return "", false
	}
	t.pos = tok.End
	return t.sql[tok.Start:tok.End], true
}

// word takes the next token if it is the keyword w.
func (t *tokens) word(w string) bool {
	tok, ok := t.peek()
	if !ok || tok.Kind != sqllex.Word || !strings.EqualFold(t.sql[tok.Start:tok.End], w) {
		return false
	}
	t.pos = tok.End
	return true
}

// constant takes a constant: a string, a word (a number, ON, DEFAULT), a
// signed or decimal number.
func (t *tokens) constant() (string, bool) {
	if s, ok := t.next(sqllex.String); ok {
		return s, true
	}
	sign := ""
	if tok, ok := t.peek(); ok && tok.Kind == sqllex.Punct && (t.sql[tok.Start] == '-' || t.sql[tok.Start] == '+') {
		sign = t.sql[tok.Start:tok.End]
		t.pos = tok.End
	}
	w, ok := t.next(sqllex.Word)
	if !ok || sign != "" && !isDigits(w) {
		return "", false
	}
	if isDigits(w) && t.pos < len(t.sql) && t.sql[t.pos] == '.' {
		t.pos++
		frac := ""
		if tok, ok := t.peek(); ok && tok.Start == t.pos && tok.Kind == sqllex.Word && isDigits(t.sql[tok.Start:tok.End]) {
			frac = t.sql[tok.Start:tok.End]
			t.pos = tok.End
		}
		return sign + w + "." + frac, true
	}
	return sign + w, true
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// runSetStatement runs the statement of a SET STATEMENT ... FOR query
// under its assignments. The statement must be one: MariaDB applies the
// assignments to the first statement of a multi-statement query only.
func (s *Session) runSetStatement(vars stmtVars, rest string) error {
	first, more := sqlarg.SplitFirst(rest, s.lexMode())
	if strings.TrimSpace(more) != "" || first == "" {
		return &NotSupportedError{What: "SET STATEMENT ... FOR before several statements"}
	}
	s.stmtVars = vars
	defer func() { s.stmtVars = stmtVars{} }()
	return s.runStatement(&statement{sql: s.clientSQL(rest), client: rest, out: textOutput, whole: true})
}

// selectLimitValue reads a sql_select_limit value as MariaDB takes it: a
// number, or DEFAULT (returned as ""; so is the maximum, no limit).
func selectLimitValue(v string) (string, error) {
	v = strings.TrimSpace(v)
	if strings.EqualFold(v, "DEFAULT") {
		return "", nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return "", mysql.NewError(mysql.ER_WRONG_TYPE_FOR_VAR, "Incorrect argument type to variable 'sql_select_limit'")
	}
	if n > math.MaxInt64 {
		return "", nil
	}
	return strconv.FormatUint(n, 10), nil
}

// withStatementVars returns the plan to run under the statement's SET
// STATEMENT assignments and the sql_select_limit in force (the
// statement's, else the session's): plan itself when neither changes it,
// else a copy (plans are shared). The limit is never a setting of the
// backend connections, whose other statements (the proxy's own reads,
// the rows an UPDATE moves) it would cut: it goes with each SELECT that
// needs it. One route (or the default data source) runs under it as
// MariaDB would; a merge gets it as its LIMIT when the statement has none,
// its routes too when their first rows are all it needs.
func (s *Session) withStatementVars(plan *router.Plan) *router.Plan {
	limit := s.selectLimitVar
	if s.stmtVars.limitSet {
		limit = s.stmtVars.selectLimit
	}
	select_ := plan.Kind == router.KindSelect || plan.Kind == router.KindOther
	capMerge := false
	routeLimit := ""
	if limit != "" && select_ {
		switch {
		case plan.Merge == nil:
			routeLimit = limit
		case plan.Merge.Limit == nil:
			capMerge = true
			if firstRowsSuffice(plan.Merge) {
				routeLimit = limit
			}
		}
	}
	assignments := s.stmtVars.assignments
	if routeLimit != "" {
		assignments = strings.TrimPrefix(assignments+", sql_select_limit="+routeLimit, ", ")
	}
	if !capMerge && assignments == "" {
		return plan
	}
	p := *plan
	if capMerge {
		n, _ := strconv.ParseInt(limit, 10, 64)
		m := *plan.Merge
		m.Limit = &router.Limit{Count: n}
		p.Merge = &m
	}
	if assignments != "" {
		p.Routes = prefixedRoutes(plan.Routes, "SET STATEMENT "+assignments+" FOR ")
		// (SET STATEMENT ... FOR SELECT ...) is no UNION branch.
		p.Unionable = false
	}
	if p.Merge != nil && p.Merge.SetOp != nil && s.stmtVars.assignments != "" {
		// A UNION's branches run their own routes (setop.go): each gets
		// the statement's assignments; the limit is the UNION's merge's.
		m := *p.Merge
		set := *m.SetOp
		set.Branches = make([]*router.Plan, len(m.SetOp.Branches))
		for i, b := range m.SetOp.Branches {
			bp := *b
			bp.Routes = prefixedRoutes(b.Routes, "SET STATEMENT "+s.stmtVars.assignments+" FOR ")
			bp.Unionable = false
			set.Branches[i] = &bp
		}
		m.SetOp = &set
		p.Merge = &m
	}
	return &p
}

// prefixedRoutes returns a copy of routes, each SQL after prefix.
func prefixedRoutes(routes []router.Route, prefix string) []router.Route {
	out := make([]router.Route, len(routes))
	for i, r := range routes {
		r.SQL = prefix + r.SQL
		out[i] = r
	}
	return out
}

// firstRowsSuffice reports whether a merge needs no more than each route's
// first N rows for its first N: it neither folds rows nor sorts them
// itself.
func firstRowsSuffice(m *router.Merge) bool {
	return m.Group == nil && m.Having == nil && !m.Distinct && len(m.OrderBy) == 0
}
