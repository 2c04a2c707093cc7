package proxy

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/server"
	"github.com/pingcap/tidb/pkg/parser"
	tidbmysql "github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/proxy/internal/wire"
)

// Session is one client connection: its logical schema, session settings,
// transaction, prepared statements and the statement running now. It
// implements go-mysql's server.Handler, the seam through which go-mysql
// runs the handshake; after it the session reads commands itself (run) so
// results can be streamed packet by packet.
//
// A Session is used by its own goroutine; only cancelStatement, kill and
// closeIfIdle are called from others (KILL, shutdown).
type Session struct {
	// srv is the server and the rules snapshot the session holds
	// (snapshot.go); snapHeld says whether it holds one now.
	srv      sessionServer
	snapHeld bool
	wc       *wire.Conn
	nc       net.Conn
	id       uint32
	user     string
	// scrambles are the login's, for COM_CHANGE_USER (greeting.go).
	scrambles [][]byte
	log       *slog.Logger

	clientFlags  uint32
	sessionTrack bool
	// schemaTrackingOff is SET session_track_schema = OFF (MariaDB's
	// default is ON); schemaChanged: a USE or COM_INIT_DB since the last
	// OK, which tells a client that tracks the schema (wire.OK.Schema).
	schemaTrackingOff bool
	schemaChanged     bool
	// trackVars is SET session_track_system_variables' list, lower case
	// (trackVarsSet false: MariaDB's default list, trackedByDefault);
	// trackedVars: the tracked variables SETs assigned since the last
	// OK, with their values, and autocommitSet a SET autocommit, which
	// the OK reports to a client that tracks them.
	trackVars     []string
	trackVarsSet  bool
	trackedVars   []wire.TrackedVariable
	autocommitSet bool
	// stateTracking is SET session_track_state_change = ON;
	// stateChanged: a statement changed the session's state (a SET other
	// than SET TRANSACTION, a USE, PREPARE, DEALLOCATE PREPARE, CREATE or
	// DROP TEMPORARY TABLE) since the last OK, which the OK tells a
	// client that tracks it, as MariaDB does.
	stateTracking bool
	stateChanged  bool
	// offeredExtended are the MariaDB extended capabilities the greeting
	// offered (announce); extendedMetadata: the client took
	// MARIADB_CLIENT_EXTENDED_METADATA, so every column definition it
	// gets carries the extended metadata block (wire.AppendColumn).
	offeredExtended  uint32
	extendedMetadata bool
	multiStatements  bool
	foundRows        bool
	quit             bool // the connection ends after this command
	// txnMode is how transactions over several data sources commit
	// (server.transactionMode, SET shardflake_transaction_mode).
	txnMode config.TransactionMode
	// commitInfo is the warning of the last COMMIT whose XA branches
	// are left to recovery ("" for none).
	commitInfo string

	db   string             // logical schema in use, "" for none
	priv *config.Privileges // the user's, once known (authz.go)
	// handshaking: go-mysql is running the login; loginDB is the schema
	// it named, checked once the password is (admission.go).
	handshaking bool
	loginDB     string
	parser      *parser.Parser
	sqlMode     tidbmysql.SQLMode // the parser's
	// stmtVars are the assignments of the SET STATEMENT ... FOR running
	// now (stmtvars.go).
	stmtVars stmtVars
	// selectLimitVar is the session's sql_select_limit, "" for DEFAULT
	// (stmtvars.go).
	selectLimitVar string
	// normalized, args and key are reused from statement to statement by
	// the text path (classify.go: cachedShape).
	normalized []byte
	args       []any
	key        []byte
	// logical caches logicalColumn's answers.
	logical    map[*mysql.Field]*logicalCol
	autocommit bool
	// uniqueChecksOff is SET unique_checks = 0, which the data sources
	// are not sent (uniqueChecksValue).
	uniqueChecksOff bool
	// prepared holds the SQL-level prepared statements by lower-case
	// name (sqlprepare.go).
	prepared map[string]sqlPrepared
	// diag is what the last statement left for SHOW WARNINGS
	// (warnings.go).
	diag diagnostics
	txn  txnState
	// backendStatus collects the status flags the backends of the
	// running statement reported that the client hears too (status.go).
	backendStatus statusSink
	vars          settings
	lastInsertID  uint64
	// rowCount is ROW_COUNT(): what the last statement told the client
	// (an OK's affected rows, -1 for a result set or an error); written
	// is what the running statement's last write told (door.go).
	rowCount, written int64
	// found is FOUND_ROWS(): the rows the last result set sent, or its
	// SQL_CALC_FOUND_ROWS count (calcfoundrows.go).
	found int64
	// rw is the session's read/write splitting state (readwrite.go).
	rw rwSession

	stmts      map[uint32]*preparedStmt
	nextStmtID uint32
	lastStmt   uint32 // the id wire.LastStmtID names; 0 after a failed prepare or its close
	longData   int    // bytes of COM_STMT_SEND_LONG_DATA held (limits.go)

	// state is what the session left on backend connections it pinned
	// (temporary tables, named locks; pin.go).
	state sessionState

	// limits is the admit stage's scratch (traffic.go).
	limits sessionLimits

	// capture, when set, collects results instead of writing them
	// (the server.Handler methods).
	capture *capture

	held heldConns // pooled connections a statement holds
	// muxTimer times the session's waits on shared connections
	// (multiplex.go), made on first use.
	muxTimer *time.Timer

	mu      sync.Mutex
	busy    bool
	closing bool
	// shown is what SHOW PROCESSLIST shows of the session, written
	// under mu by the session's goroutine, read by another's.
	shown shownState
	// watch cancels the running statement (statementContext).
	watch stmtWatch
}

func newSession(srv *Server) *Session {
	return &Session{
		srv:        sessionServer{Server: srv, snapshot: srv.current()},
		log:        srv.log,
		parser:     parser.New(),
		autocommit: true,
		txnMode:    srv.current().rules.Server.TransactionMode,
		stmts:      map[uint32]*preparedStmt{},
	}
}

// attach takes over the connection once go-mysql finished the handshake.
func (s *Session) attach(sc *server.Conn) {
	s.attachHandler(sc)
	s.wc = wire.NewConn(s.nc)
	s.watch.wc = s.wc
	s.applyLimits()
}

// attachHandler learns the connection's identity and capabilities, for a
// session that go-mysql's command loop drives through server.Handler.
func (s *Session) attachHandler(sc *server.Conn) {
	if a, ok := sc.Conn.Conn.(*announceConn); ok {
		s.scrambles = a.scrambles
	}
	s.nc = unwrapGreeting(sc.Conn.Conn)
	// The login's OK said AUTOCOMMIT (OnAuthSuccess); from now on the
	// session's own state says what the flags are (status).
	sc.UnsetStatus(greetingStatus)
	if s.id == 0 {
		// Sessions the proxy's listener made have their id (announce).
		s.id = sc.ConnectionID()
	}
	s.setUser(sc.GetUser())
	s.log = s.srv.log.With("conn", s.id, "user", s.user)
	s.clientFlags = sc.Capability()
	offered := s.srv.mysql.Capability()
	s.sessionTrack = s.clientFlags&offered&mysql.CLIENT_SESSION_TRACK != 0
	if lc := loginConnOf(sc.Conn.Conn); lc != nil {
		s.extendedMetadata = lc.extended()&s.offeredExtended&wire.MariaDBExtendedMetadata != 0
	}
	// go-mysql does not offer CLIENT_MULTI_STATEMENTS, but a client that
	// asks for it gets it, as from MySQL.
	s.multiStatements = s.clientFlags&mysql.CLIENT_MULTI_STATEMENTS != 0
	s.foundRows = s.clientFlags&mysql.CLIENT_FOUND_ROWS != 0
	if cs, collation, ok := handshakeNames(sc.Charset()); ok {
		s.vars.setNames(cs, collation)
	}
	if s.clientFlags&mysql.CLIENT_IGNORE_SPACE != 0 {
		// MariaDB adds IGNORE_SPACE to the sql_mode of a client that asks
		// for it in its handshake (Connector/J does); until a reset.
		s.vars.set("@@sql_mode", "@@SESSION.sql_mode = CONCAT(@@SESSION.sql_mode, ',IGNORE_SPACE')")
		s.sqlMode |= tidbmysql.ModeIgnoreSpace
		s.parser.SetSQLMode(s.sqlMode &^ tidbmysql.ModeNoBackslashEscapes)
	}
	s.log.Debug("connected", "remote", s.nc.RemoteAddr().String(), "db", s.db)
}

// UseDB switches the logical schema (COM_INIT_DB, USE, and the schema a
// client names at login). Only the rules file's databaseName exists. The
// error is already a MySQL error: go-mysql sends it as it is.
func (s *Session) UseDB(name string) error {
	if s.handshaking {
		s.loginDB = name
		return nil
	}
	if isInfoSchema(name) {
		name = infoSchema // infoschema_use.go
	} else if name != s.srv.rules.DatabaseName {
		return mysqlError(&UnknownDatabaseError{Name: name})
	}
	if err := s.checkUse(name); err != nil {
		return mysqlError(err)
	}
	s.db = name
	s.mu.Lock()
	s.shown.db = name
	s.mu.Unlock()
	return nil
}

// run reads and answers commands until the client leaves, the
// connection is killed, or the server shuts down.
func (s *Session) run() {
	defer s.close()
	for {
		s.wc.ResetSeq()
		p, err := s.wc.ReadPacket()
		if err != nil {
			s.readFailed(err)
			return
		}
		if !s.startCommand(p) {
			return
		}
		if err := s.takeSnapshot(); err != nil {
			s.writeErr(err)
		} else {
			s.dispatch(p)
		}
		// Shown idle before the answer leaves: a client that has its
		// answer and asks SHOW PROCESSLIST at once on another
		// connection sees this one sleeping, as on MariaDB.
		s.showIdle()
		err = s.wc.Flush()
		s.leaveSnapshot(false)
		s.endCommand()
		if err != nil || s.quit || s.srv.shutdown.Load() {
			return
		}
	}
}

func (s *Session) startCommand(p []byte) bool {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.busy = true
	s.shown.since, s.shown.command, s.shown.info = now, 0, ""
	if len(p) > 0 {
		s.shown.command = p[0]
		if p[0] == mysql.COM_QUERY || p[0] == mysql.COM_STMT_PREPARE {
			// The statement's text, a string of its own (dispatch runs
			// it): p's buffer takes the packets that come during the
			// command.
			s.shown.info = string(p[1:])
		}
		if p[0] == mysql.COM_STMT_EXECUTE {
			// As MariaDB, the prepared statement's text.
			if id, err := wire.StmtID(p[1:]); err == nil {
				if ps, ok := s.stmt(id); ok {
					s.shown.info = ps.sql
				}
			}
		}
	}
	return true
}

// showIdle shows the session in SHOW PROCESSLIST as sleeping since now.
func (s *Session) showIdle() {
	now := time.Now()
	s.mu.Lock()
	s.shown.since, s.shown.command, s.shown.info = now, 0, ""
	s.mu.Unlock()
}

func (s *Session) endCommand() {
	s.mu.Lock()
	s.busy = false
	s.mu.Unlock()
}

// closeIfIdle closes the connection unless a command is running (that one
// closes it when done, see run).
func (s *Session) closeIfIdle() {
	s.mu.Lock()
	idle := !s.busy
	if idle {
		s.closing = true
	}
	s.mu.Unlock()
	if idle {
		s.nc.Close()
	}
}

// kill cancels the running statement and closes the connection (KILL,
// shutdown deadline).
func (s *Session) kill(cause error) {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	s.watch.cancel(cause)
	s.nc.Close()
}

// close ends the session: an open transaction is rolled back and its
// connections go back to the pools.
func (s *Session) close() {
	if s.wc != nil {
		s.wc.ReleaseBudget()
	}
	s.dropAllLongData()
	s.endTransaction(false)
	s.unpinAll()
	s.held.releaseAll()
	s.leaveSnapshot(true)
	s.watch.release()
	s.nc.Close()
	s.log.Debug("disconnected")
}

// dispatch answers one command. A panic answers 1105 and leaves the
// connection usable.
func (s *Session) dispatch(p []byte) {
	defer func() {
		if r := recover(); r != nil {
			s.srv.obs.Panic()
			s.log.Error("panic while serving a command", "panic", r, "stack", string(debug.Stack()))
			// What the statement held is in an unknown state: the
			// transaction is rolled back and its connections dropped,
			// with the session's pinned ones (their state is lost).
			s.endTransaction(false)
			for _, bc := range s.state.pinned {
				bc.broken = true
			}
			s.unpinAll()
			s.held.releaseAll()
			s.writeErr(errPanic(r))
		}
	}()
	if len(p) == 0 {
		s.writeErr(&InternalError{Msg: "empty command packet"})
		return
	}
	cmd, data := p[0], p[1:]
	s.backendStatus.reset()
	var err error
	switch cmd {
	case mysql.COM_QUIT:
		s.quit = true
		return
	case mysql.COM_PING:
		err = s.writeOK(wire.OK{}, false)
	case mysql.COM_INIT_DB:
		if err = s.UseDB(string(data)); err == nil {
			s.schemaChanged, s.stateChanged = true, true
			err = s.writeOK(wire.OK{}, false)
		}
	case mysql.COM_QUERY:
		// startCommand made the text a string; only this goroutine
		// writes shown, so it reads it without mu.
		s.handleQuery(s.shown.info)
		return
	case mysql.COM_FIELD_LIST:
		err = s.handleFieldList(data)
	case mysql.COM_STMT_PREPARE:
		err = s.handleStmtPrepare(s.shown.info)
	case mysql.COM_STMT_EXECUTE:
		s.handleStmtExecute(data)
		return
	case mysql.COM_STMT_CLOSE:
		s.handleStmtClose(data)
		return
	case mysql.COM_STMT_RESET:
		err = s.handleStmtReset(data)
	case mysql.COM_STMT_SEND_LONG_DATA:
		s.handleStmtSendLongData(data)
		return
	case mysql.COM_CHANGE_USER:
		err = s.changeUser(data)
	case mysql.COM_RESET_CONNECTION:
		s.resetConnection()
		err = s.writeOK(wire.OK{}, false)
	case mysql.COM_SET_OPTION:
		err = s.setOption(data)
	case mysql.COM_STATISTICS:
		err = s.writePacket(append(s.wc.Scratch(), s.srv.statistics()...))
	case mysql.COM_PROCESS_KILL:
		if id, perr := wire.ParseProcessKill(data); perr != nil {
			err = &InternalError{Msg: "malformed COM_PROCESS_KILL"}
		} else if err = s.srv.killSession(s, uint64(id), false); err == nil {
			err = s.writeOK(wire.OK{}, false)
		}
	case mysql.COM_REFRESH:
		err = privilegeNeeded("RELOAD") // as FLUSH (authz.go)
	case mysql.COM_SHUTDOWN:
		err = privilegeNeeded("SHUTDOWN")
	case mysql.COM_DEBUG:
		err = privilegeNeeded("SUPER")
	default:
		err = mysql.NewDefaultError(mysql.ER_UNKNOWN_COM_ERROR)
	}
	if err != nil {
		s.writeErr(err)
	}
}

// setOption answers COM_SET_OPTION: multi-statements on (0) or off (1).
func (s *Session) setOption(data []byte) error {
	opt, err := wire.ParseSetOption(data)
	if err != nil {
		return mysql.NewDefaultError(mysql.ER_UNKNOWN_COM_ERROR)
	}
	switch opt {
	case 0:
		s.multiStatements = true
	case 1:
		s.multiStatements = false
	default:
		return mysql.NewDefaultError(mysql.ER_UNKNOWN_COM_ERROR)
	}
	return s.writeEOF(false)
}

// statistics is the COM_STATISTICS answer (mysqladmin status, \s).
func (srv sessionServer) statistics() string {
	up := int64(time.Since(srv.started).Seconds())
	return fmt.Sprintf("Uptime: %d  Threads: %d  Questions: %d  Slow queries: 0  Opens: 0  Open tables: 0  Queries per second avg: %.3f",
		up, srv.Clients(), srv.questions.Load(), float64(srv.questions.Load())/float64(max(up, 1)))
}

// resetConnection is COM_RESET_CONNECTION: the session is as after login,
// except for the schema in use.
func (s *Session) resetConnection() {
	s.endTransaction(false)
	s.txn = txnState{} // and a pending SET TRANSACTION
	s.unpinAll()       // temporary tables and locks are gone, as in MySQL
	s.vars = settings{}
	s.selectLimitVar = ""
	s.schemaTrackingOff = false
	s.trackVars, s.trackVarsSet, s.trackedVars = nil, false, nil
	s.stateTracking, s.stateChanged = false, false
	s.autocommit = true
	s.uniqueChecksOff = false
	s.lastInsertID = 0
	s.rowCount = 0
	s.found = 0
	s.parser.SetSQLMode(0)
	s.sqlMode = 0
	s.dropAllLongData()
	s.stmts = map[uint32]*preparedStmt{}
	s.prepared = nil // PREPARE's statements, as MariaDB drops them
}

// statementContext makes the context of one statement: KILL QUERY, the
// statement timeout and the client going away cancel it (stmtWatch). end
// must be called when the statement's response is written.
func (s *Session) statementContext() (ctx context.Context, end func()) {
	s.backendStatus.reset()
	return s.watch.begin(s.srv.rules.Server.StatementTimeout)
}

// heldConns tracks the pooled connections a statement has, so that a
// panic cannot leak them. Its methods are safe for concurrent use (a
// statement's routes run on goroutines of their own).
type heldConns struct {
	mu sync.Mutex
	m  map[*backendConn]bool
}

// add tracks bc.
func (h *heldConns) add(bc *backendConn) {
	h.mu.Lock()
	if h.m == nil {
		h.m = map[*backendConn]bool{}
	}
	h.m[bc] = true
	h.mu.Unlock()
}

// remove stops tracking bc, reporting whether it was tracked.
func (h *heldConns) remove(bc *backendConn) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.m[bc] {
		return false
	}
	delete(h.m, bc)
	return true
}

// each calls f for every tracked connection, under the lock.
func (h *heldConns) each(f func(bc *backendConn)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for bc := range h.m {
		f(bc)
	}
}

// releaseAll closes whatever a failed statement left behind: the
// connections are in an unknown state.
func (h *heldConns) releaseAll() {
	h.mu.Lock()
	held := h.m
	h.m = nil
	h.mu.Unlock()
	for bc := range held {
		bc.broken = true
		bc.pool.put(bc)
	}
}

// truncate shortens SQL for logs.
func truncate(sql string) string {
	const max = 200
	sql = strings.TrimSpace(sql)
	if len(sql) <= max {
		return sql
	}
	return sql[:max] + "..."
}
