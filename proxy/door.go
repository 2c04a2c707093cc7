package proxy

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/shardflake/shardflake/proxy/internal/wire"
	"github.com/shardflake/shardflake/router"
)

// The door: every statement, whoever answers it, passes runStatement,
// which carries the stages in order:
//
//	classify  who answers (planKind): the router, the proxy from what it
//	          knows, the session's own state, an admin statement, or a
//	          relay to the default data source (CALL, LOAD DATA, routines)
//	plan      the router's plan, or a local answer, which may hand back a
//	          plan for a data source to answer instead
//	admit     traffic limits (traffic.go), once a plan names its routes
//	execute   the plan on its data sources, in the session's transaction
//	observe   metrics and the slow-statement log (Observer)
//
// Text queries (COM_QUERY), each statement of a multi-statement query,
// prepared executes (COM_STMT_EXECUTE), SQL EXECUTE and cached shapes all
// enter here; a cross-cutting concern is a stage here, not a branch inside
// one of the answerers.

// output says how a statement's result is written: in which protocol (text
// for COM_QUERY, binary for COM_STMT_EXECUTE), and whether another result
// of the same command follows it (SERVER_MORE_RESULTS_EXISTS).
type output struct {
	proto Protocol
	more  bool
	// into names the user variables a SELECT ... INTO @var stores its row
	// in, instead of writing it (selectinto.go).
	into *selectInto
	// derived, when set, gives the column definitions of the
	// information_schema tables a statement's derived tables stand for
	// (infoschema.go).
	derived derivedTables
	// local, when set, gives by position the column definitions of the
	// select fields that are values the proxy wrote into the statement
	// (local.go).
	local map[int]*mysql.Field
	// variables, when set, are values the proxy answers for SHOW
	// VARIABLES rows of these names (lower case) in place of the data
	// source's.
	variables map[string]string
	// found counts the rows of a SELECT SQL_CALC_FOUND_ROWS, which runs
	// without the option (calcfoundrows.go).
	found *foundRowsCount
	// count, when set, answers the count of the rows instead of the rows
	// (derivedcount.go).
	count *rowCounter
	// names, when set, renames result columns by position, from 0, or
	// from -1 for the last: an EXECUTE's fields that hold a ?
	// (paramNames).
	names map[int]string
}

// columns returns cols as out describes them: derived, local and names.
func (out output) columns(cols []*mysql.Field) []*mysql.Field {
	if out.derived != nil {
		cols = out.derived.columns(cols)
	}
	if out.local != nil {
		cols = slices.Clone(cols)
		for i, f := range out.local {
			if i < len(cols) {
				cols[i] = f
			}
		}
	}
	if out.names != nil {
		cols = slices.Clone(cols)
		for i, name := range out.names {
			if i < 0 {
				i += len(cols)
			}
			if i >= 0 && i < len(cols) {
				f := *cols[i]
				f.Name = []byte(name)
				cols[i] = &f
			}
		}
	}
	return cols
}

// textOutput is the output of a whole text query's only result.
var textOutput = output{proto: TextProtocol}

// followedBy is out with another result following when next is set.
func (out output) followedBy(next bool) output {
	out.more = out.more || next
	return out
}

// planKind says who answers a statement; classify decides it.
type planKind int

const (
	// planRouted: the router plans it; what the router leaves to the
	// proxy runs on the default data source unchanged.
	planRouted planKind = iota + 1
	// planDataSource: unchanged on one data source (DO without a table:
	// the default one, or the one a DATA_SOURCE_NAME hint names).
	planDataSource
	// planCall: CALL on the default data source, every result set
	// relayed (call.go).
	planCall
	// planLoadLocal: LOAD DATA LOCAL INFILE, the client's file relayed
	// to the default data source (loaddata.go).
	planLoadLocal
	// planRoutine: a stored function, procedure or trigger statement the
	// parser cannot read, recognised by its first words (routines.go).
	planRoutine
	// planLocal: the proxy answers from what it knows (SHOW, a SELECT
	// without tables, information_schema), or rewrites the statement for
	// the default data source.
	planLocal
	// planSession: the session's own state (USE, SET, transactions,
	// savepoints, LOCK TABLES, KILL, PREPARE, DEALLOCATE).
	planSession
	// planAdmin: shardflake's own statements (admin.go).
	planAdmin
	// planEmpty: only comments and spaces, answered OK.
	planEmpty
	// planQuery: a text query of several statements; each passes the
	// door on its own.
	planQuery
)

// String names the kind, for logs and tests.
func (k planKind) String() string {
	switch k {
	case planRouted:
		return "routed"
	case planDataSource:
		return "datasource"
	case planCall:
		return "call"
	case planLoadLocal:
		return "load-local"
	case planRoutine:
		return "routine"
	case planLocal:
		return "local"
	case planSession:
		return "session"
	case planAdmin:
		return "admin"
	case planEmpty:
		return "empty"
	case planQuery:
		return "query"
	}
	return "unknown"
}

// statement is one statement on its way through the door.
type statement struct {
	// sql is the statement's text: the client's, a piece of a
	// multi-statement query, or a prepared statement's.
	sql  string
	node ast.StmtNode // the parsed statement; nil when not parsed
	args []any        // a prepared execute's arguments
	// argTypes are the types the client bound args with, for a statement
	// that passes them on to a data source unchanged (local.go).
	argTypes []byte
	out      output
	// whole: the statement is a whole text query, so its plan may be
	// cached by its text.
	whole bool

	// Set by classify.
	kind planKind
	// pp is the router's plan, when it was planned ahead (a prepared
	// statement, a cached text); plan is a cached shape's, bound to the
	// query's literals.
	pp   PreparedPlan
	plan *router.Plan
	// state is what the statement does to backend session state (pin.go).
	state     backendState
	returning string // INSERT ... RETURNING's list (returning.go)
	admin     adminStmt
	routine   routineKind
	// maintenance is a table maintenance statement the proxy answers
	// (maintenance.go).
	maintenance *maintenanceStmt
	// nodes are the statements of a planQuery (nil: pieces, split by
	// text, parse one by one).
	nodes  []ast.StmtNode
	pieces []string
	// commentTail: the query ends in a piece of only comments, answered
	// OK after its statements (sqlarg.TrailingComment).
	commentTail bool
	// client is a whole text query as the client sent it, before
	// clientSQL; rest, of a planQuery that changes sql_mode, is what is
	// left of it to cut and run (runAsRead).
	client, rest string
}

// runStatement is the door: it classifies the statement, plans it, admits
// it, executes it and observes it, and writes its result (or returns the
// error the client is to get).
func (s *Session) runStatement(st *statement) (err error) {
	defer func() {
		// ROW_COUNT() of the next statement: an error's is -1, as
		// MariaDB's (the caller writes the error).
		s.rowCount = s.written
		if err != nil {
			s.rowCount = -1
		}
	}()
	if err := s.classify(st); err != nil {
		return err
	}
	switch st.kind {
	case planQuery:
		return s.runEach(st)
	case planEmpty:
		return s.writeOK(wire.OK{}, st.out.more)
	}
	if hook := s.srv.beforeStatement; hook != nil {
		hook(st.sql)
	}
	s.keepDiagnostics(st)
	ctx, end := s.statementContext()
	defer end()
	if st.out.into != nil {
		st.out.into.ctx = ctx
	}
	if st.node != nil {
		// Temporary tables, named locks and in-statement variables stay
		// on the backend connection: such statements pin it (pin.go),
		// and their plans are not cached, so the next one is seen too.
		if err := s.access().authorize(st.node, st.sql); err != nil {
			return s.unknownInfoTable(ctx, err)
		}
		if err := s.srv.tempTableError(st.node); err != nil {
			return err
		}
	}
	s.beginState(st.state)
	defer func() { s.endState(st.state, err) }()
	plan, err := s.planStatement(ctx, st)
	if err != nil || plan == nil {
		// nil: answered by the proxy or the session.
		return err
	}
	return s.runPlan(ctx, st, plan)
}

// keepDiagnostics decides what the statement does to what SHOW WARNINGS
// shows: a statement with tables, or a routed one, starts anew; SHOW
// WARNINGS itself and statements without tables keep the last list.
func (s *Session) keepDiagnostics(st *statement) {
	switch {
	case st.node == nil:
		if st.kind == planRouted {
			s.diag.reset()
		}
	case hasTable(st.node) && !isDiagnostics(st.node):
		s.diag.reset()
	default:
		// SHOW WARNINGS shows the list and, as any statement that raised
		// none, ends its result with a warning count of 0.
		s.diag.keep()
	}
}

// runEach runs a planQuery's statements in order, each through the door
// and flagged when another follows, stopping at the first error (MySQL's
// behaviour).
func (s *Session) runEach(st *statement) error {
	if st.rest != "" {
		return s.runAsRead(st)
	}
	n := len(st.nodes) + len(st.pieces)
	if st.commentTail {
		n++
	}
	for i := range n {
		next := statement{out: st.out.followedBy(i < n-1)}
		if st.commentTail && i == n-1 {
			return s.writeOK(wire.OK{}, next.out.more)
		}
		if st.nodes != nil {
			next.node, next.sql = st.nodes[i], trimmedText(st.nodes[i])
		} else {
			next.sql = st.pieces[i]
		}
		if err := s.runStatement(&next); err != nil {
			return err
		}
		if s.quit {
			return nil
		}
	}
	return nil
}

// planStatement is the plan stage: the plan whose routes answer st, or nil
// when the proxy or the session answered it.
func (s *Session) planStatement(ctx context.Context, st *statement) (*router.Plan, error) {
	switch st.kind {
	case planRouted:
		return s.routedPlan(st)
	case planDataSource:
		ds, err := router.DataSourceHint(s.srv.rules, st.sql)
		if err != nil {
			return nil, err
		}
		return s.srv.dataSourcePlan(ds, st.sql, router.KindOther), nil
	case planCall:
		return s.srv.callPlan(st)
	case planLoadLocal:
		return s.loadLocalPlan(st.node.(*ast.LoadDataStmt), st.sql)
	case planRoutine:
		return s.routinePlan(ctx, st.routine, st.sql)
	case planLocal:
		return s.answerLocal(ctx, st)
	case planSession:
		return nil, s.answerSession(ctx, st)
	case planAdmin:
		return nil, s.runAdmin(ctx, st.admin, st.out)
	}
	return nil, &InternalError{Msg: "statement of plan kind " + st.kind.String()}
}

// dataSourcePlan runs sql unchanged on data source ds ("" for the default
// one).
func (srv sessionServer) dataSourcePlan(ds, sql string, kind router.StatementKind) *router.Plan {
	if ds == "" {
		ds = srv.rules.DefaultDataSource
	}
	return &router.Plan{Kind: kind, Type: router.RouteSingle, Routes: []router.Route{{DataSource: ds, SQL: sql}}}
}

// runPlan is the door's admit, execute and observe stages for a plan: it
// runs in the session's transaction state and writes its result.
func (s *Session) runPlan(ctx context.Context, st *statement, plan *router.Plan) error {
	start := time.Now()
	if err := s.admit(ctx, plan, st.sql); err != nil {
		// Refused before anything was sent: no statement to observe.
		return err
	}
	if len(s.limits.held) > 0 {
		defer s.finishAdmit()
	}
	var err error
	switch st.kind {
	case planCall:
		err = s.runCall(ctx, plan, st.out)
	case planLoadLocal:
		err = s.runLoadLocal(ctx, st.node.(*ast.LoadDataStmt), plan, st.out)
	default:
		err = s.runPlanAndWrite(ctx, plan, st.out)
	}
	s.afterAutocommitStatement(err)
	s.afterLockedStatement(err)
	s.observe(ctx, st, plan, time.Since(start), err)
	return err
}

// observe is the observe stage: one StatementEvent per plan run.
func (s *Session) observe(ctx context.Context, st *statement, plan *router.Plan, took time.Duration, err error) {
	ev := StatementEvent{ConnID: s.id, Kind: plan.Kind, Type: plan.Type, Routes: plan.Routes, Duration: took, SQL: st.sql}
	if err != nil {
		ev.Code = mysqlError(err).Code
		if s.log.Enabled(ctx, slog.LevelDebug) {
			s.log.Debug("statement failed", failedAttrs(st.sql, err)...)
		}
	}
	s.srv.obs.Statement(ev)
}
