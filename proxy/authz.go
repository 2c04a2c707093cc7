package proxy

import (
	"fmt"
	"net"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/server"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/internal/sqllex"
	"github.com/shardflake/shardflake/router"
)

// Authorization: every statement is checked against the proxy user's
// privileges (config.Privileges, from server.users) on its parsed tree
// before it is planned, so that no user holds the powers of the backend
// account the proxy logs in to the data sources with. A refusal is the
// error MariaDB gives an account without the privilege: 1142 for a table,
// 1044 for a schema, 1227 for a global privilege (FILE, PROCESS, and
// HINT, the proxy's own for routing hints), 1370 for a routine. No user
// holds RELOAD, SHUTDOWN or SUPER: FLUSH, SHUTDOWN and their commands
// (COM_REFRESH, COM_SHUTDOWN, COM_DEBUG) get MariaDB's 1227 for them.

// privileges returns the privileges of the session's user. A session
// that has not logged in (tests driving it directly) is an application
// account.
func (s *Session) privileges() *config.Privileges {
	if s.priv != nil {
		return s.priv
	}
	p := s.srv.privilegesOf(s.user)
	if s.user != "" {
		s.priv = p // the user is known: it never changes
	}
	return p
}

// privilegesOf returns user's privileges; an application account on the
// logical schema for a name the rules do not list.
func (srv *Server) privilegesOf(user string) *config.Privileges {
	for i := range srv.current().rules.Server.Users {
		if u := &srv.current().rules.Server.Users[i]; u.Name == user {
			return &u.Privileges
		}
	}
	return &config.Privileges{Schemas: []string{srv.current().rules.DatabaseName}}
}

// privilegeClass condenses what authorization depends on into a byte of
// the plan cache key, so a plan cached after one user's statement was
// authorized is found only by users with the same privileges.
func (s *Session) privilegeClass() byte {
	p := s.privileges()
	var c byte
	for i, b := range []bool{p.ReadOnly, p.Hints, p.OtherSchemas, p.Files, p.MayUse(s.srv.current().rules.DatabaseName)} {
		if b {
			c |= 1 << i
		}
	}
	return c
}

// sessionAuth is the authentication handler of one connection: the
// server's, with the session told its user once the password is verified,
// so that admission checks the login schema against the user's
// privileges (1044 otherwise, as MariaDB).
type sessionAuth struct {
	*authHandler
	s *Session
}

// OnAuthFailure logs the failed login under the connection id the
// greeting announced (go-mysql's server.Conn counts ids of its own, which
// nothing else shows).
func (a sessionAuth) OnAuthFailure(c *server.Conn, err error) {
	a.loginFailed(c, a.s.id, err)
}

func (a sessionAuth) OnAuthSuccess(c *server.Conn) error {
	a.s.setUser(c.GetUser())
	a.s.priv = nil
	// The login schema is checked, existence first, once the password
	// is (loginConn.admit).
	return a.authHandler.OnAuthSuccess(c)
}

// checkUse refuses USE of a logical schema the user is not granted. It is
// a no-op before the user is known: admission checks the login schema.
func (s *Session) checkUse(name string) error {
	if s.user == "" || name != s.srv.current().rules.DatabaseName || s.privileges().MayUse(name) {
		return nil
	}
	return dbDenied(s.user, name)
}

// access is what authorization reads of a session: who the user is, with
// which privileges, where from, and the schema in use. It is made per
// check (Session.access) and holds nothing of the session's state.
type access struct {
	user      string
	p         *config.Privileges
	db        string   // the schema in use, "" for none
	logicalDB string   // the rules' databaseName
	nc        net.Conn // the client's, for 1142's host; nil for none
}

// access is the session's access, for authorize.
func (s *Session) access() access {
	return access{user: s.user, p: s.privileges(), db: s.db, logicalDB: s.srv.current().rules.DatabaseName, nc: s.nc}
}

// clientHost is the client's address as MariaDB names it in 1142.
func (a access) clientHost() string {
	if a.nc == nil {
		return "%"
	}
	host, _, err := net.SplitHostPort(a.nc.RemoteAddr().String())
	if err != nil {
		return a.nc.RemoteAddr().String()
	}
	return host
}

// dbDenied is MariaDB's 1044 for user on schema db.
func dbDenied(user, db string) error {
	return &PrivilegeError{Code: errDBAccessDenied, Msg: fmt.Sprintf("Access denied for user '%s'@'%%' to database '%s'", user, db)}
}

func (a access) tableDenied(command, schema, table string) error {
	return &PrivilegeError{Code: errTableAccessDenied,
		Msg: fmt.Sprintf("%s command denied to user '%s'@'%s' for table `%s`.`%s`", command, a.user, a.clientHost(), schema, table)}
}

func privilegeNeeded(privileges string) error {
	return &PrivilegeError{Code: errSpecificAccessDenied,
		Msg: fmt.Sprintf("Access denied; you need (at least one of) the %s privilege(s) for this operation", privileges)}
}

// Privilege error numbers (MariaDB's).
const (
	errAccessDenied         = 1045 // ER_ACCESS_DENIED_ERROR
	errDBAccessDenied       = 1044 // ER_DBACCESS_DENIED_ERROR
	errTableAccessDenied    = 1142 // ER_TABLEACCESS_DENIED_ERROR
	errSpecificAccessDenied = 1227 // ER_SPECIFIC_ACCESS_DENIED_ERROR
	errProcAccessDenied     = 1370 // ER_PROCACCESS_DENIED_ERROR
)

// privilegeHint is the privilege a 1227 names for a routing hint
// (server.users hints: true); MariaDB has no such privilege.
const privilegeHint = "HINT"

// safeInfoTables are information_schema tables besides the logical ones
// (logicalInfoTables) that any user may read: they describe the server's
// character sets, collations and engines, nothing of its data or sessions.
// FILES (empty for InnoDB on MariaDB), PARTITIONS and TRIGGERS (the triggers the
// backend account may see, which an application created through the
// proxy) are what mysqldump reads by default; MariaDB lets any user read
// both, and refusing them stopped every default dump. PLUGINS and
// ALL_PLUGINS hold what SHOW PLUGINS shows (pt-mysql-summary looks for
// keyring plugins in PLUGINS).
var safeInfoTables = map[string]bool{
	"character_sets": true, "collations": true, "collation_character_set_applicability": true,
	"engines": true, "keywords": true, "sql_functions": true, "plugins": true, "all_plugins": true,
	"files": true, "triggers": true, "partitions": true,
}

// authorize checks one statement against the user's privileges.
// sql is its text, for the routing hints in its comments (which the tree
// does not keep); the rest is read from the tree, before the planner
// consumes it.
func (a access) authorize(stmt ast.StmtNode, sql string) error {
	p := a.p
	if !p.Hints && router.HasRoutingHint(sql) {
		return privilegeNeeded(privilegeHint)
	}
	switch st := stmt.(type) {
	case *ast.ShowStmt:
		return a.authorizeShow(st, p)
	case *ast.ExplainStmt:
		if show, ok := st.Stmt.(*ast.ShowStmt); ok {
			return a.authorizeShow(show, p)
		}
	case *ast.CallStmt:
		// A procedure of the logical schema (the default data source's,
		// as its unsharded tables) is the application's; one elsewhere
		// is not.
		schema := st.Procedure.Schema.O
		if schema == "" {
			schema = a.db
		}
		if !p.OtherSchemas && (schema != a.logicalDB || !p.MayUse(schema) || p.ReadOnly) {
			return &PrivilegeError{Code: errProcAccessDenied, Msg: fmt.Sprintf("execute command denied to user '%s'@'%%' for routine '%s.%s'", a.user, schema, st.Procedure.FnName.O)}
		}
	case *ast.ProcedureInfo, *ast.DropProcedureStmt:
		// A routine runs as the data source's account, which may reach
		// beyond the logical schema.
		if !p.OtherSchemas {
			return dbDenied(a.user, a.db)
		}
	case *ast.LoadDataStmt:
		if st.FileLocRef == ast.FileLocServerOrRemote && !p.Files {
			// MariaDB answers 1045 to LOAD DATA INFILE without FILE.
			return &PrivilegeError{Code: errAccessDenied, Msg: fmt.Sprintf("Access denied for user '%s'@'%%' (using password: YES)", a.user)}
		}
	case *ast.CreateDatabaseStmt:
		// The logical schema exists: who may create tables in it gets
		// MariaDB's 1007 (a note with IF NOT EXISTS), as a restore of
		// mysqldump --databases needs.
		if st.Name.O != a.logicalDB || !p.MayUse(st.Name.O) || p.ReadOnly {
			return dbDenied(a.user, st.Name.O)
		}
	case *ast.DropDatabaseStmt:
		return dbDenied(a.user, st.Name.O)
	case *ast.AlterDatabaseStmt:
		return dbDenied(a.user, st.Name.O)
	case *ast.FlushStmt:
		// FLUSH administers the data sources' servers (mariadb-admin
		// flush-*, reload); their operators run it there.
		return privilegeNeeded("RELOAD")
	case *ast.ShutdownStmt:
		return privilegeNeeded("SHUTDOWN")
	}
	v := &accessVisitor{}
	stmt.Accept(v)
	if v.files && !p.Files {
		return privilegeNeeded("FILE")
	}
	if f := v.routine; f != nil && !p.OtherSchemas && f.Schema.O != a.logicalDB {
		return &PrivilegeError{Code: errProcAccessDenied, Msg: fmt.Sprintf("execute command denied to user '%s'@'%%' for routine '%s.%s'", a.user, f.Schema.O, f.FnName.O)}
	}
	command := writeCommand(stmt)
	if command == "" {
		if p.ReadOnly {
			return privilegeNeeded("INSERT, UPDATE, DELETE, CREATE, DROP, ALTER")
		}
		command = "SELECT"
	}
	for i, t := range v.tables {
		cmd := "SELECT"
		if i == 0 && command != "SELECT" {
			cmd = command
		}
		if err := a.authorizeTable(t, cmd, p); err != nil {
			return err
		}
	}
	if p.ReadOnly && command != "SELECT" && len(v.tables) > 0 {
		return a.tableDenied(command, schemaName(v.tables[0], a.db), v.tables[0].Name.O)
	}
	return nil
}

// unparsedAdminPrivilege is the privilege MariaDB wants for a server
// administration statement the parser does not read, by its words: FLUSH
// followed by options, names, strings and commas (FLUSH USER_RESOURCES,
// TABLE_STATISTICS, RELAY LOGS, several options in one) wants RELOAD, as
// the FLUSH forms the parser reads; START or STOP SLAVE or REPLICA
// (mariadb-admin start-slave, stop-slave) SUPER or REPLICATION SLAVE
// ADMIN. "" for any other text, which stays a syntax error.
func unparsedAdminPrivilege(sql string, mode sqllex.Mode) string {
	toks, ok := statementTokens(sql, mode)
	if !ok || len(toks) < 2 || !toks[0].word || !toks[1].word {
		return ""
	}
	var words []string
	for _, t := range toks {
		switch {
		case t.word:
			words = append(words, t.text)
		case t.text == "," || t.text == ".":
		case t.text[0] == '\'' || t.text[0] == '"' || t.text[0] == '`':
			// A string or quoted name: a log or table name.
		default:
			return ""
		}
	}
	switch {
	case len(words) < 2:
		return ""
	case words[0] == "FLUSH":
		return "RELOAD"
	case words[0] != "START" && words[0] != "STOP":
		return ""
	}
	if words[1] == "ALL" && len(words) > 2 {
		words = words[1:]
	}
	if w := words[1]; w == "SLAVE" || w == "SLAVES" || w == "REPLICA" || w == "REPLICAS" {
		return "SUPER, REPLICATION SLAVE ADMIN"
	}
	return ""
}

// unparsedShowPrivilege is the privilege MariaDB wants for a SHOW about
// replication that the parser does not read: SHOW ALL SLAVES | REPLICAS
// STATUS and SHOW SLAVE | REPLICA 'name' STATUS (mydumper's, when the
// server has @@default_master_connection) want SUPER or SLAVE MONITOR, as
// SHOW SLAVE STATUS; SHOW BINARY | MASTER LOGS SUPER or BINLOG MONITOR;
// SHOW SLAVE | REPLICA HOSTS (pt-online-schema-change's look for
// replicas) REPLICATION MASTER ADMIN. "" for any other text.
func unparsedShowPrivilege(sql string, mode sqllex.Mode) string {
	toks, ok := statementTokens(sql, mode)
	if !ok || len(toks) < 3 || !toks[0].word || toks[0].text != "SHOW" || !toks[1].word {
		return ""
	}
	last := toks[len(toks)-1]
	switch {
	case len(toks) == 3 && (toks[1].text == "BINARY" || toks[1].text == "MASTER") && last.word && last.text == "LOGS":
		return binlogMonitor
	case len(toks) == 3 && (toks[1].text == "SLAVE" || toks[1].text == "REPLICA") && last.word && last.text == "HOSTS":
		return replicationMasterAdmin
	case len(toks) == 4 && last.word && last.text == "STATUS":
		switch {
		case toks[1].text == "ALL" && toks[2].word && (toks[2].text == "SLAVES" || toks[2].text == "REPLICAS"),
			(toks[1].text == "SLAVE" || toks[1].text == "REPLICA") && !toks[2].word:
			return replicaMonitor
		}
	}
	return ""
}

// The privileges MariaDB's 1227 names for SHOW statements about
// replication.
const (
	replicaMonitor = "SUPER, SLAVE MONITOR"
	binlogMonitor  = "SUPER, BINLOG MONITOR"
	// replicationMasterAdmin is the one privilege MariaDB 10.11's 1227
	// names for SHOW SLAVE HOSTS.
	replicationMasterAdmin = "REPLICATION MASTER ADMIN"
)

// errAccountManagement answers statements about accounts: the proxy's
// users are not the data sources' accounts, and their passwords and
// privileges are server.users in the rules file (RELOAD RULES applies a
// change live).
var errAccountManagement = &NotSupportedError{What: "SET PASSWORD, CREATE, ALTER, DROP and RENAME USER, GRANT and REVOKE through the proxy (its users, their passwords and privileges are server.users in the rules file, applied by RELOAD RULES)"}

// setsPassword reports whether sql starts SET PASSWORD, which MariaDB
// reads with further assignments after it and the parser does not.
func setsPassword(sql string, mode sqllex.Mode) bool {
	toks, _ := statementTokens(sql, mode)
	return len(toks) >= 2 && toks[0].word && toks[0].text == "SET" && toks[1].word && toks[1].text == "PASSWORD"
}

// stmtToken is a token of statementTokens.
type stmtToken struct {
	text string // a word upper-cased; a string, quoted name or punctuation byte as written
	word bool
}

// statementTokens returns the tokens of a statement the parser does not
// read, for the recognisers of such statements: its executable text
// without spaces, comments and a final semicolon. ok is false, with the
// tokens before it, at any other token (an optimizer hint, a semicolon
// before the end).
func statementTokens(sql string, mode sqllex.Mode) (toks []stmtToken, ok bool) {
	text := sqllex.ExecutableText(sql, mode)
	semicolon := false
	for sc := sqllex.NewScanner(text, mode); ; {
		t, more := sc.Next()
		if !more {
			return toks, true
		}
		switch t.Kind {
		case sqllex.Space, sqllex.LineComment, sqllex.BlockComment:
			continue
		}
		if semicolon {
			return toks, false
		}
		switch t.Kind {
		case sqllex.Word:
			toks = append(toks, stmtToken{text: strings.ToUpper(t.Text(text)), word: true})
		case sqllex.String, sqllex.QuotedName:
			toks = append(toks, stmtToken{text: t.Text(text)})
		case sqllex.Punct:
			if p := t.Text(text); p == ";" {
				semicolon = true
			} else {
				toks = append(toks, stmtToken{text: p})
			}
		default:
			return toks, false
		}
	}
}

// authorizeMaintenance checks a table maintenance statement (ANALYZE,
// CHECK, CHECKSUM, OPTIMIZE, REPAIR TABLE), which has no parsed tree:
// MariaDB wants SELECT on each table for CHECK and CHECKSUM, and SELECT
// and INSERT for the others (a read-only user gets INSERT's 1142). Its
// 1142 names CHECK TABLE as that command, the others as the privilege.
func (a access) authorizeMaintenance(m *maintenanceStmt, sql string) error {
	p := a.p
	if !p.Hints && router.HasRoutingHint(sql) {
		return privilegeNeeded(privilegeHint)
	}
	cmd := "SELECT"
	switch {
	case m.writes():
		cmd = "INSERT"
	case m.op == "CHECK":
		cmd = "CHECK TABLE"
	}
	for _, t := range m.tables {
		tn := &ast.TableName{Schema: ast.NewCIStr(t.schema), Name: ast.NewCIStr(t.name)}
		if err := a.authorizeTable(tn, cmd, p); err != nil {
			return err
		}
		if p.ReadOnly && m.writes() {
			return a.tableDenied(cmd, schemaName(tn, a.db), t.name)
		}
	}
	return nil
}

// authorizeTable checks one table a statement names; cmd is what the
// statement does to it, for the error.
func (a access) authorizeTable(t *ast.TableName, cmd string, p *config.Privileges) error {
	schema := schemaName(t, a.db)
	switch lower := strings.ToLower(schema); {
	case schema == "":
		// No schema: the planner answers 1046.
		return nil
	case schema == a.logicalDB:
		if !p.MayUse(schema) {
			return a.tableDenied(cmd, schema, t.Name.O)
		}
	case lower == infoSchema:
		name := t.Name.L
		if _, logical := logicalInfoTables[name]; logical || safeInfoTables[name] || p.OtherSchemas {
			return nil
		}
		err := a.tableDenied("SELECT", schema, t.Name.O)
		err.(*PrivilegeError).infoTable = t.Name.O
		return err
	case !p.OtherSchemas:
		return a.tableDenied(cmd, schema, t.Name.O)
	}
	return nil
}

// schemaName is the schema t names, or db for none.
func schemaName(t *ast.TableName, db string) string {
	if t.Schema.O != "" {
		return t.Schema.O
	}
	return db
}

// authorizeShow checks a SHOW statement. Those that describe the logical
// schema, the session or the server's character sets are everyone's;
// those about the servers' state, replication or accounts need
// otherSchemas, as they need PROCESS, SUPER or a grant on mysql in MariaDB.
func (a access) authorizeShow(st *ast.ShowStmt, p *config.Privileges) error {
	if st.Table != nil {
		if err := a.authorizeTable(st.Table, "SELECT", p); err != nil {
			return err
		}
	}
	if st.DBName != "" && st.DBName == a.logicalDB && !p.MayUse(st.DBName) {
		return dbDenied(a.user, st.DBName)
	}
	if p.OtherSchemas {
		return nil
	}
	switch st.Tp {
	case ast.ShowEngines, ast.ShowDatabases, ast.ShowTables, ast.ShowTableStatus, ast.ShowColumns,
		ast.ShowWarnings, ast.ShowErrors, ast.ShowCharset, ast.ShowVariables, ast.ShowStatus,
		ast.ShowCollation, ast.ShowCreateTable, ast.ShowCreateView, ast.ShowIndex, ast.ShowProcessList,
		ast.ShowCreateDatabase, ast.ShowPrivileges, ast.ShowPlugins, ast.ShowProfile, ast.ShowProfiles,
		ast.ShowTriggers, ast.ShowProcedureStatus, ast.ShowFunctionStatus, ast.ShowEvents,
		ast.ShowCreateProcedure, ast.ShowBuiltins, ast.ShowOpenTables:
		return nil
	case ast.ShowGrants:
		if st.User == nil || st.User.CurrentUser || st.User.Username == a.user {
			return nil // answered by the proxy (showOwnGrants)
		}
		return dbDenied(a.user, "mysql")
	case ast.ShowCreateUser:
		return dbDenied(a.user, "mysql")
	case ast.ShowMasterStatus, ast.ShowBinlogStatus:
		return privilegeNeeded(binlogMonitor)
	case ast.ShowReplicaStatus:
		return privilegeNeeded(replicaMonitor)
	}
	return privilegeNeeded("PROCESS")
}

// writeCommand names what a statement other than a read does, as
// MariaDB's 1142 names it; "" for a statement it has no name for. A read
// (or a statement about the session) is "SELECT".
func writeCommand(stmt ast.StmtNode) string {
	switch st := stmt.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt, *ast.ShowStmt, *ast.ExplainStmt, *ast.DoStmt, *ast.UseStmt,
		*ast.SetStmt, *ast.BeginStmt, *ast.CommitStmt, *ast.RollbackStmt, *ast.SavepointStmt,
		*ast.ReleaseSavepointStmt, *ast.KillStmt, *ast.UnlockTablesStmt, *ast.CallStmt:
		return "SELECT"
	case *ast.InsertStmt:
		if st.IsReplace {
			return "INSERT, DELETE"
		}
		return "INSERT"
	case *ast.UpdateStmt:
		return "UPDATE"
	case *ast.DeleteStmt:
		return "DELETE"
	case *ast.LoadDataStmt:
		return "INSERT"
	case *ast.CreateTableStmt:
		return "CREATE"
	case *ast.CreateViewStmt:
		return "CREATE VIEW"
	case *ast.DropTableStmt, *ast.TruncateTableStmt:
		return "DROP"
	case *ast.AlterTableStmt, *ast.RenameTableStmt:
		return "ALTER"
	case *ast.CreateIndexStmt, *ast.DropIndexStmt:
		return "INDEX"
	case *ast.LockTablesStmt:
		return "LOCK TABLES"
	}
	return ""
}

// accessVisitor collects the tables a statement names and whether it
// reads or writes files on the server.
type accessVisitor struct {
	tables []*ast.TableName
	files  bool
	// routine is the first stored function called by schema (sys.f()).
	routine *ast.FuncCallExpr
}

func (v *accessVisitor) Enter(n ast.Node) (ast.Node, bool) {
	switch n := n.(type) {
	case *ast.TableName:
		v.tables = append(v.tables, n)
	case *ast.FuncCallExpr:
		if n.FnName.L == "load_file" {
			v.files = true
		}
		if n.Schema.L != "" && v.routine == nil {
			v.routine = n
		}
	case *ast.SelectStmt:
		if o := n.SelectIntoOpt; o != nil && (o.Tp == ast.SelectIntoOutfile || o.Tp == ast.SelectIntoDumpfile) {
			v.files = true
		}
	}
	return n, false
}

func (v *accessVisitor) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// ownGrants answers SHOW GRANTS for the user with its proxy
// privileges written as MariaDB grants.
func (a access) ownGrants() RowStream {
	p := a.p
	account := "`" + a.user + "`@`%`"
	global := "USAGE"
	if p.Files {
		global = "FILE"
	}
	rows := []Row{rowOf("GRANT " + global + " ON *.* TO " + account)}
	privs := "SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, INDEX, ALTER, CREATE VIEW, SHOW VIEW, LOCK TABLES"
	if p.ReadOnly {
		privs = "SELECT, SHOW VIEW"
	}
	for _, db := range p.Schemas {
		rows = append(rows, rowOf("GRANT "+privs+" ON `"+db+"`.* TO "+account))
	}
	return newMemStream([]*mysql.Field{stringColumn("Grants for " + a.user + "@%")}, rows)
}
