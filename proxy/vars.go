package proxy

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	tidbmysql "github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/proxy/internal/sqlarg"
	"github.com/shardflake/shardflake/proxy/internal/wire"
	"github.com/shardflake/shardflake/router"
)

// settings are the session variables a client set (SET NAMES, SET
// [SESSION] var, SET @user_var) that every backend connection the session
// uses must carry. They are kept in the order of their last assignment and
// applied as one SET statement; a backend connection remembers which
// settings it carries, so a session reusing it pays nothing, and another
// session gets it reset first (backendConn.apply).
type settings struct {
	items []setting
}

type setting struct {
	key string // what a later assignment replaces, e.g. "@@sql_mode"
	sql string // the assignment, e.g. "@@SESSION.sql_mode = 'ANSI'"
}

func (v settings) clone() settings {
	return settings{items: append([]setting(nil), v.items...)}
}

func (v *settings) remove(keys ...string) {
	out := v.items[:0]
	for _, it := range v.items {
		keep := true
		for _, k := range keys {
			if it.key == k {
				keep = false
			}
		}
		if keep {
			out = append(out, it)
		}
	}
	v.items = out
}

func (v *settings) set(key, sql string) {
	v.remove(key)
	v.items = append(v.items, setting{key: key, sql: sql})
}

// setNames records SET NAMES, which supersedes the character set
// variables it sets. utf8mb4 with its default collation is the baseline
// every backend connection has, so it needs no setting.
func (v *settings) setNames(cs, collation string) {
	v.remove("names", "@@character_set_client", "@@character_set_results", "@@character_set_connection", "@@collation_connection")
	cs = strings.ToLower(cs)
	if cs == "utf8mb4" && (collation == "" || strings.EqualFold(collation, backendCollation)) {
		return
	}
	sql := "NAMES " + cs
	if collation != "" {
		sql += " COLLATE " + collation
	}
	v.set("names", sql)
}

// onlyNames reports whether the settings are at most the character set
// (SET NAMES, SET CHARACTER SET, or the handshake's), which the
// multiplexer's shared connections can carry (multiplex.go).
func (v settings) onlyNames() bool {
	for _, it := range v.items {
		if it.key != "names" && it.key != "charset" {
			return false
		}
	}
	return true
}

// sql returns the assignments for a SET statement ("" for none).
func (v settings) sql() string {
	if len(v.items) == 0 {
		return ""
	}
	parts := make([]string, len(v.items))
	for i, it := range v.items {
		parts[i] = it.sql
	}
	return strings.Join(parts, ", ")
}

// handleSet runs SET. autocommit and SET TRANSACTION ISOLATION LEVEL are
// the session's own business; everything else is checked by running it on
// the default data source and then recorded for every backend connection.
func (s *Session) handleSet(ctx context.Context, st *ast.SetStmt, more bool) error {
	p := &setPlan{next: s.vars.clone()}
	for _, a := range st.Variables {
		if err := p.assign(ctx, s, st, a); err != nil {
			return err
		}
	}
	if err := p.apply(ctx, s); err != nil {
		return err
	}
	// SET TRANSACTION, for the next transaction only, changes none of
	// the session's state that MariaDB's state change tracking reports.
	s.stateChanged = p.isolation == "" && p.readOnlyNext == nil
	return s.writeOK(wire.OK{}, more)
}

// setPlan is what one SET statement changes, read from all its
// assignments before any is applied.
type setPlan struct {
	next        settings // the session's settings after it
	assignments []string // what the data sources are sent
	autocommit  *bool
	// schemaTracking is SET session_track_schema's value;
	// trackVars: SET session_track_system_variables' list (nil in it
	// for DEFAULT); assigned: the system variables the SET assigns, whose
	// values its OK reports when the session tracks them (by the list
	// as the SET leaves it, as MariaDB reads it).
	schemaTracking *bool
	stateTracking  *bool
	trackVars      *[]string
	assigned       []string
	// readOnlyNext is SET TRANSACTION READ ONLY / READ WRITE.
	readOnlyNext *bool
	txnMode      *config.TransactionMode
	isolation    string // SET TRANSACTION ISOLATION LEVEL's
	// selectLimit is SET sql_select_limit's value, the session's own
	// (stmtvars.go): "" for DEFAULT.
	selectLimit *string
	// uniqueChecks is SET unique_checks' value, the session's own
	// (uniqueChecksValue says why).
	uniqueChecks *bool
}

// assign reads one assignment of SET statement st.
func (p *setPlan) assign(ctx context.Context, s *Session, st *ast.SetStmt, a *ast.VariableAssignment) error {
	name := strings.ToLower(a.Name)
	switch {
	case a.IsGlobal || a.IsInstance:
		return &NotSupportedError{What: "SET GLOBAL through the proxy (set it on each data source)"}
	case a.IsSystem && restrictedSessionVars[name] != "":
		return privilegeNeeded(restrictedSessionVars[name])
	case a.Name == ast.SetNames:
		cs, err := restoreExpr(a.Value)
		if err != nil {
			return err
		}
		collation := ""
		if a.ExtendValue != nil {
			collation = valueText(a.ExtendValue)
		}
		cs = strings.Trim(cs, "'`\"")
		if strings.EqualFold(cs, "default") {
			cs = "utf8mb4"
		}
		p.next.setNames(cs, collation)
		p.assignments = append(p.assignments, "NAMES "+cs+collateSuffix(collation))
		p.assigned = append(p.assigned, charsetVars...)
	case a.Name == ast.SetCharset:
		cs, err := restoreExpr(a.Value)
		if err != nil {
			return err
		}
		p.next.remove("names")
		p.next.set("charset", "CHARACTER SET "+cs)
		p.assignments = append(p.assignments, "CHARACTER SET "+cs)
		p.assigned = append(p.assigned, charsetVars...)
	case isTransactionModeVar(name):
		mode, err := s.transactionModeValue(a.Value)
		if err != nil {
			return err
		}
		p.txnMode = &mode
	case a.IsSystem && name == "autocommit":
		on, err := boolSetting(a.Value)
		if err != nil {
			return err
		}
		p.autocommit = &on
	case a.IsSystem && !a.IsGlobal && name == "unique_checks":
		v, err := s.systemValue(ctx, a.Value)
		if err != nil {
			return err
		}
		on, err := uniqueChecksValue(v)
		if err != nil {
			return err
		}
		p.uniqueChecks = &on
		p.assigned = append(p.assigned, name)
	case a.IsSystem && name == "tx_isolation_one_shot":
		level, err := restoreExpr(a.Value)
		if err != nil {
			return err
		}
		p.isolation = strings.ReplaceAll(strings.Trim(level, "'"), "-", " ")
	case a.IsSystem && isReadOnlyVar(name) && (p.isolation != "" || oneShotTransaction.MatchString(st.Text())):
		// SET TRANSACTION READ ONLY: the next transaction only.
		if s.txn.active {
			return mysql.NewDefaultError(mysql.ER_CANT_CHANGE_TX_CHARACTERISTICS)
		}
		_, on, err := readOnlySetting(a.Value)
		if err != nil {
			return err
		}
		p.readOnlyNext = &on
	case a.IsSystem && name == "sql_select_limit":
		val, err := s.systemValue(ctx, a.Value)
		if err != nil {
			return err
		}
		limit, err := selectLimitValue(val)
		if err != nil {
			return err
		}
		p.selectLimit = &limit
	case a.IsSystem && name == "session_track_schema":
		// The proxy writes the OK packets that report the schema and
		// the state change (a backend connection tracks nothing); the
		// data sources check the value.
		p.schemaTracking = trackingSwitch(a.Value, true)
		return p.assignSystem(ctx, s, name, a)
	case a.IsSystem && name == "session_track_state_change":
		p.stateTracking = trackingSwitch(a.Value, false)
		return p.assignSystem(ctx, s, name, a)
	case a.IsSystem && name == "session_track_transaction_info":
		// MariaDB's transaction state says whether the transaction read
		// or wrote transactional or other tables, ran an unsafe statement
		// or sent a result set, on whichever data sources it touched:
		// the proxy cannot report it, and refuses to be asked rather
		// than answer with OKs that never carry it.
		v, err := s.systemValue(ctx, a.Value)
		if err != nil {
			return err
		}
		switch strings.ToUpper(strings.Trim(v, "'\"`")) {
		case "STATE", "CHARACTERISTICS", "1", "2":
			return &NotSupportedError{What: "session_track_transaction_info other than OFF through the proxy (the transaction state spans data sources; the proxy does not report it)"}
		}
		// OFF, or a value the data source refuses (1231).
		return p.assignSystem(ctx, s, name, a)
	case a.IsSystem && name == "session_track_system_variables":
		// The proxy reports the tracked variables a SET assigns (the
		// data sources' OKs are not the client's), and autocommit, the
		// session's own.
		var list []string // DEFAULT
		if v, err := restoreExpr(a.Value); err == nil && !strings.EqualFold(v, "DEFAULT") {
			list = []string{}
			for _, listed := range strings.Split(strings.Trim(v, "'\""), ",") {
				if listed = strings.ToLower(strings.TrimSpace(listed)); listed != "" {
					list = append(list, listed)
				}
			}
		}
		p.trackVars = &list
		return p.assignSystem(ctx, s, name, a)
	case a.IsSystem:
		return p.assignSystem(ctx, s, name, a)
	default:
		val, err := s.userVarValue(ctx, a.Value)
		if err != nil {
			return err
		}
		p.assignUser(a.Name, val)
	}
	return nil
}

// trackingSwitch reads the value of session_track_schema or
// session_track_state_change: on, off, or MariaDB's default for DEFAULT;
// nil for a value the data source is left to refuse.
func trackingSwitch(e ast.ExprNode, byDefault bool) *bool {
	if on, err := boolSetting(e); err == nil {
		return &on
	}
	if v, _ := restoreExpr(e); strings.EqualFold(v, "DEFAULT") {
		return &byDefault
	}
	return nil
}

// restrictedSessionVars are the session variables MariaDB lets only an
// account with these privileges set (its 1227 names them): they change
// what the data sources log and replicate (sql_log_bin=0 keeps writes out
// of the binary log, so replicas miss them) or which server and thread
// their binary log names. No proxy user holds the data sources' account's
// SUPER, BINLOG ADMIN or BINLOG REPLAY.
var restrictedSessionVars = map[string]string{
	"sql_log_off": "SUPER", "enforce_storage_engine": "SUPER", "wsrep_on": "SUPER",
	"sql_log_bin": "SUPER, BINLOG ADMIN", "binlog_format": "SUPER, BINLOG ADMIN",
	"binlog_annotate_row_events": "SUPER, BINLOG ADMIN", "binlog_row_image": "SUPER, BINLOG ADMIN",
	"binlog_direct_non_transactional_updates": "SUPER, BINLOG ADMIN",
	"gtid_domain_id": "SUPER, BINLOG REPLAY", "gtid_seq_no": "SUPER, BINLOG REPLAY",
	"server_id": "SUPER, BINLOG REPLAY", "pseudo_thread_id": "SUPER, BINLOG REPLAY",
}

// assignUser records SET @name = val, val a literal.
func (p *setPlan) assignUser(name, val string) {
	sql := "@`" + strings.ReplaceAll(name, "`", "``") + "` = " + val
	p.next.set("@"+strings.ToLower(name), sql)
	p.assignments = append(p.assignments, sql)
}

// assignSystem reads the assignment of a system variable the data sources
// keep for the session.
func (p *setPlan) assignSystem(ctx context.Context, s *Session, name string, a *ast.VariableAssignment) error {
	var val string
	var err error
	if isReadOnlyVar(name) {
		val, _, err = readOnlySetting(a.Value)
	} else {
		val, err = s.systemValue(ctx, a.Value)
	}
	if err != nil {
		return err
	}
	// transaction_isolation or tx_isolation, as the data sources
	// know it (compat.go).
	if name, err = s.srv.setVarName(ctx, name); err != nil {
		return err
	}
	sql := "@@SESSION." + name + " = " + val
	p.next.set("@@"+name, sql)
	p.assignments = append(p.assignments, sql)
	p.assigned = append(p.assigned, name)
	return nil
}

// charsetVars are the variables SET NAMES and SET CHARACTER SET assign
// that MariaDB's default session_track_system_variables names.
var charsetVars = []string{"character_set_client", "character_set_connection", "character_set_results"}

// trackedByDefault is MariaDB's default session_track_system_variables.
var trackedByDefault = []string{"autocommit", "character_set_client", "character_set_connection", "character_set_results", "time_zone"}

// tracks reports whether the session's session_track_system_variables
// names the variable.
func (s *Session) tracks(name string) bool {
	return listTracks(s.trackVars, s.trackVarsSet, name)
}

// listTracks reports whether a session_track_system_variables list
// names the variable (set false: the default list).
func listTracks(list []string, set bool, name string) bool {
	if !set {
		return slices.Contains(trackedByDefault, name)
	}
	return slices.Contains(list, name) || slices.Contains(list, "*")
}

// tracked returns the variables the SET assigns that the session tracks
// once the SET's own session_track_system_variables took effect.
func (p *setPlan) tracked(s *Session) []string {
	list, set := s.trackVars, s.trackVarsSet
	if p.trackVars != nil {
		list, set = *p.trackVars, *p.trackVars != nil
	}
	var out []string
	for _, name := range p.assigned {
		if listTracks(list, set, name) && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// apply makes the SET's changes: on the data sources, then the session's.
func (p *setPlan) apply(ctx context.Context, s *Session) error {
	tracked := p.tracked(s)
	var own []wire.TrackedVariable
	if i := slices.Index(tracked, "unique_checks"); i >= 0 {
		// Assigned by this SET, the session's own value, not the data
		// sources'.
		tracked = slices.Delete(tracked, i, i+1)
		own = append(own, wire.TrackedVariable{Name: "unique_checks", Value: onOff(*p.uniqueChecks)})
	}
	if len(p.assignments) > 0 {
		vals, err := s.applySet(ctx, "SET "+strings.Join(p.assignments, ", "), p.next, tracked)
		if err != nil {
			return err
		}
		s.trackedVars = append(s.trackedVars, vals...)
	}
	s.trackedVars = append(s.trackedVars, own...)
	if p.uniqueChecks != nil {
		s.uniqueChecksOff = !*p.uniqueChecks
	}
	if p.txnMode != nil && *p.txnMode != s.txnMode {
		if s.inTransaction() && len(s.txn.conns) > 0 {
			return mysql.NewDefaultError(mysql.ER_CANT_CHANGE_TX_CHARACTERISTICS)
		}
		s.txnMode = *p.txnMode
		s.txn.xa = s.txn.active && s.xaMode() && !s.txn.readOnly()
	}
	s.vars = p.next
	if p.selectLimit != nil {
		s.selectLimitVar = *p.selectLimit
	}
	if p.isolation != "" {
		s.txn.isolation = p.isolation
	}
	if p.schemaTracking != nil {
		s.schemaTrackingOff = !*p.schemaTracking
	}
	if p.stateTracking != nil {
		s.stateTracking = *p.stateTracking
	}
	if p.trackVars != nil {
		s.trackVars, s.trackVarsSet = *p.trackVars, *p.trackVars != nil
	}
	if p.readOnlyNext != nil {
		s.txn.readOnlyNext = *p.readOnlyNext
	}
	if p.autocommit != nil {
		if *p.autocommit && !s.autocommit {
			// Turning autocommit on commits, as in MySQL.
			if err := s.implicitCommit(); err != nil {
				return err
			}
		}
		s.autocommit = *p.autocommit
		s.autocommitSet = true
	}
	return nil
}

// applySet runs a SET on a default data source connection (that is the
// check that the values are valid) and on the connections an open
// transaction pinned. It returns the values the SET left in the tracked
// variables, as that connection reads them.
func (s *Session) applySet(ctx context.Context, set string, next settings, tracked []string) ([]wire.TrackedVariable, error) {
	src := poolSource{s}
	bcs, err := src.acquire(ctx, s.srv.rules.DefaultDataSource, 1)
	if err != nil {
		return nil, err
	}
	bc := bcs[0]
	// The statements prepared on it keep the settings the SET changes
	// (backendConn.apply).
	bc.closeStmts()
	var vals []string
	if _, err = bc.exec(set); err == nil {
		vals, err = sessionValues(bc, append([]string{"sql_mode"}, tracked...))
	}
	if err != nil {
		// The connection may hold part of the SET; make it reset.
		bc.applied = "\x00unknown"
		src.release(bc)
		return nil, err
	}
	s.followSQLMode(vals[0])
	bc.applied = next.sql()
	s.carryMode(bc)
	src.release(bc)
	for _, ds := range s.txn.order {
		pinned := s.txn.conns[ds]
		pinned.closeStmts()
		if _, err := pinned.exec(set); err != nil {
			return nil, err
		}
		pinned.applied = next.sql()
		s.carryMode(pinned)
	}
	var out []wire.TrackedVariable
	for i, name := range tracked {
		out = append(out, wire.TrackedVariable{Name: name, Value: vals[i+1]})
	}
	return out, nil
}

// sessionValues reads session variables on bc, as text ("" for NULL):
// sql_mode alone (after every SET) with SELECT, more (the tracked
// variables a SET assigned) as SHOW VARIABLES shows them, which is how a
// server's session tracking reports them: ON and OFF for a boolean, where
// SELECT @@tx_read_only says 0. (The server lists every variable to
// filter SHOW VARIABLES, so a SET that reports nothing does not pay it.)
func sessionValues(bc *backendConn, names []string) ([]string, error) {
	q := "SELECT @@SESSION." + names[0]
	if len(names) > 1 {
		quoted := make([]string, len(names))
		for i, name := range names {
			quoted[i] = sqlString(name)
		}
		q = "SHOW SESSION VARIABLES WHERE Variable_name IN (" + strings.Join(quoted, ", ") + ")"
	}
	rows, err := bc.queryRows(q)
	if err != nil {
		return nil, err
	}
	vals := make([]string, len(names))
	if len(names) == 1 {
		if len(rows) != 1 || len(rows[0]) != 1 {
			return nil, &InternalError{Msg: q + " returned no row"}
		}
		vals[0] = string(rows[0][0])
		return vals, nil
	}
	for _, row := range rows {
		for i, name := range names {
			// sql_mode comes twice when the SET assigned it too.
			if len(row) == 2 && strings.EqualFold(name, string(row[0])) {
				vals[i] = string(row[1])
			}
		}
	}
	return vals, nil
}

// followSQLMode makes the session's parser read SQL as the session's
// sql_mode says (ANSI_QUOTES, PIPES_AS_CONCAT, ...), text being the mode
// a SET left. Under NO_BACKSLASH_ESCAPES the client's text is turned
// into the backslash form as it arrives (noBackslashText), so the parser
// reads that form: the session's sqlMode keeps the flag, the parser's
// does not.
func (s *Session) followSQLMode(text string) {
	mode, err := tidbmysql.GetSQLMode(text)
	if err != nil {
		// A mode TiDB does not know (MariaDB's own) changes no parsing.
		mode = 0
		for _, part := range strings.Split(text, ",") {
			if m, err := tidbmysql.GetSQLMode(part); err == nil {
				mode |= m
			}
		}
	}
	s.parser.SetSQLMode(mode &^ tidbmysql.ModeNoBackslashEscapes)
	s.sqlMode = mode
}

// userVarValue evaluates a user variable's value once, on the default
// data source, so that replaying the assignment on other connections
// gives the same value (SET @t = NOW() must not change per connection).
func (s *Session) userVarValue(ctx context.Context, e ast.ExprNode) (string, error) {
	// The values only the proxy knows (@@unique_checks, LAST_INSERT_ID(),
	// ...) are written in first: the data source's are not the session's.
	r := &localRewriter{s: s}
	if n, ok := e.Accept(r); ok && r.changed {
		e = n.(ast.ExprNode)
	}
	val, err := restoreExpr(e)
	if err != nil {
		return "", err
	}
	if _, ok := e.(ast.ValueExpr); ok {
		return val, nil
	}
	plan := &router.Plan{Kind: router.KindSelect, Type: router.RouteSingle, Routes: []router.Route{{DataSource: s.srv.rules.DefaultDataSource, SQL: "SELECT " + val}}}
	res, err := runPlan(ctx, plan, poolSource{s}, s.srv.merger, 0, s.srv.obs)
	if err != nil {
		return "", err
	}
	defer res.rows.Close()
	row, err := res.rows.Next()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return "NULL", nil
		}
		return "", err
	}
	if row[0] == nil {
		return "NULL", nil
	}
	if isNumeric(res.rows.Columns()[0].Type) {
		return string(row[0]), nil
	}
	lit, err := sqlarg.AppendLiteral(nil, string(row[0]), sqlarg.Backslash)
	return string(lit), err
}

func isNumeric(tp byte) bool {
	switch tp {
	case mysql.MYSQL_TYPE_TINY, mysql.MYSQL_TYPE_SHORT, mysql.MYSQL_TYPE_INT24, mysql.MYSQL_TYPE_LONG,
		mysql.MYSQL_TYPE_LONGLONG, mysql.MYSQL_TYPE_FLOAT, mysql.MYSQL_TYPE_DOUBLE,
		mysql.MYSQL_TYPE_DECIMAL, mysql.MYSQL_TYPE_NEWDECIMAL, mysql.MYSQL_TYPE_YEAR:
		return true
	}
	return false
}

func collateSuffix(collation string) string {
	if collation == "" {
		return ""
	}
	return " COLLATE " + collation
}

// restoreExpr writes an expression back as SQL. Subqueries are refused:
// they could name logical tables, which only the router can resolve.
func restoreExpr(e ast.ExprNode) (string, error) {
	if e == nil {
		return "DEFAULT", nil
	}
	if hasSubquery(e) {
		return "", &NotSupportedError{What: "subqueries in SET"}
	}
	var b strings.Builder
	if err := e.Restore(format.NewRestoreCtx(restoreFlags, &b)); err != nil {
		return "", &InternalError{Msg: "restore expression: " + err.Error()}
	}
	return b.String(), nil
}

// valueText returns a literal's text (a collation name, a charset).
func valueText(v ast.ValueExpr) string {
	if v == nil {
		return ""
	}
	s, err := restoreExpr(v)
	if err != nil {
		return ""
	}
	return strings.Trim(s, "'`\"")
}

// uniqueChecksValue reads the value of SET unique_checks (the literal
// systemValue gives). The session keeps it and answers it (@@unique_checks,
// SHOW VARIABLES, session tracking), but the data sources are never sent
// unique_checks = 0: with it and foreign_key_checks = 0, MariaDB's first
// INSERT or LOAD DATA into an empty table in a transaction locks the
// whole table until the transaction ends (its bulk insert). One server
// sees two such transactions wait on each other and rolls one back; two
// sessions whose transactions take tables on two data sources in other
// orders (myloader's threads loading chunks of one sharded table) wait on
// each other across servers, which neither server sees, until
// innodb_lock_wait_timeout fails both. unique_checks = 0 only permits the
// server to skip checks; with the checks kept, a load is slower into an
// empty table and its duplicate keys fail at once.
func uniqueChecksValue(v string) (bool, error) {
	if strings.EqualFold(v, "DEFAULT") {
		return true, nil
	}
	return boolText("unique_checks", v)
}

// onOff is a boolean variable's value as SHOW VARIABLES and session
// tracking give it.
func onOff(on bool) string {
	if on {
		return "ON"
	}
	return "OFF"
}

// boolSetting reads ON/OFF/1/0/TRUE/FALSE, the value of autocommit (or
// of another boolean, whose error the caller does not pass on).
func boolSetting(e ast.ExprNode) (bool, error) {
	s, err := restoreExpr(e)
	if err != nil {
		return false, err
	}
	return boolText("autocommit", s)
}

// boolText reads s, a boolean variable's value as written (quoted or
// not), or answers MariaDB's 1231 naming the variable.
func boolText(name, s string) (bool, error) {
	switch strings.ToUpper(strings.Trim(s, "'`\"")) {
	case "1", "ON", "TRUE":
		return true, nil
	case "0", "OFF", "FALSE":
		return false, nil
	}
	return false, mysql.NewDefaultError(mysql.ER_WRONG_VALUE_FOR_VAR, name, strings.Trim(s, "'\""))
}

type subqueryFinder struct{ found bool }

func (f *subqueryFinder) Enter(n ast.Node) (ast.Node, bool) {
	if _, ok := n.(*ast.SubqueryExpr); ok {
		f.found = true
		return n, true
	}
	return n, false
}

func (f *subqueryFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

func hasSubquery(n ast.Node) bool {
	f := &subqueryFinder{}
	n.Accept(f)
	return f.found
}
