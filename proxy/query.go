package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"

	// The parser needs a driver for its literal values.
	_ "github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/shardflake/shardflake/proxy/internal/sqlarg"
	"github.com/shardflake/shardflake/proxy/internal/wire"
	"github.com/shardflake/shardflake/router"
)

// handleQuery answers COM_QUERY: every statement of the query in order,
// each result flagged when another follows, stopping at the first error
// (MySQL's behaviour). Several statements are refused, before any runs,
// unless the client enabled multi-statements.
func (s *Session) handleQuery(sql string) {
	s.srv.questions.Add(1)
	sql = s.clientSQL(sql)
	if s.runNormalized(sql) {
		return
	}
	if len(sql) <= maxCachedSQL {
		s.key = append(appendPlanKey(s.key[:0], s.db, s.sqlMode, s.privilegeClass()), sql...)
		if pp := s.srv.cache.get(s.key); pp != nil {
			if _, none := pp.(noPlan); !none {
				s.answer(s.runCached(pp, sql))
				return
			}
		}
	}
	if s.handleAdmin(sql) {
		return
	}
	if base, list, ok := sqlarg.SplitReturning(sql); ok {
		// INSERT ... RETURNING: the parser gets the INSERT (returning.go).
		if stmts, err := s.parse(base); err == nil && len(stmts) == 1 {
			s.returning = list
			err := s.execute(stmts[0], base, nil, TextProtocol, false, false)
			s.returning = ""
			s.answer(err)
			return
		}
	}
	stmts, err := s.parse(sql)
	if err != nil {
		// Stored functions and triggers (the parser reads neither) and
		// procedures it cannot read, alone or a CREATE whose body's
		// semicolons are its own.
		if kind, create, ok := routineOf(sql); ok && (create || !s.multiStatements || len(sqlarg.Split(sql)) <= 1) {
			ctx, end := s.statementContext()
			s.answer(s.runRoutine(ctx, kind, sql, false))
			end()
			return
		}
		if pieces := sqlarg.Split(sql); len(pieces) > 1 && s.multiStatements {
			// MySQL parses one statement at a time: those before the
			// one that does not parse still run.
			s.runPieces(pieces)
			return
		}
		s.writeErr(&ParseError{Err: err})
		return
	}
	if len(stmts) == 0 {
		// Only comments and spaces: MySQL answers OK, as for a statement
		// that did nothing; nothing at all is an error.
		if strings.TrimSpace(sql) == "" {
			s.writeErr(ErrEmptyQuery)
			return
		}
		s.writeOK(wire.OK{}, false)
		return
	}
	if len(stmts) > 1 && !s.multiStatements {
		s.writeErr(ErrMultiStatementsOff)
		return
	}
	for i, stmt := range stmts {
		text := sql
		if len(stmts) > 1 {
			text = strings.TrimSpace(stmt.Text())
		}
		more := i < len(stmts)-1
		if err := s.execute(stmt, text, nil, TextProtocol, more, len(stmts) == 1); err != nil {
			s.answer(err)
			return
		}
		if s.quit {
			return
		}
	}
}

// runPieces runs a multi-statement query one piece at a time, stopping at
// the first that fails to parse or to run.
func (s *Session) runPieces(pieces []string) {
	for i, piece := range pieces {
		more := i < len(pieces)-1
		stmts, err := s.parse(piece)
		if err == nil && len(stmts) != 1 {
			err = errors.New("cannot split the query into statements")
		}
		if kind, _, ok := routineOf(piece); err != nil && ok {
			// A routine the parser cannot read, its body's semicolons
			// kept by Split.
			ctx, end := s.statementContext()
			err := s.runRoutine(ctx, kind, piece, more)
			end()
			if err != nil {
				s.answer(err)
				return
			}
			continue
		}
		if err != nil {
			s.writeErr(&ParseError{Err: err})
			return
		}
		stmt := stmts[0]
		if err := s.execute(stmt, piece, nil, TextProtocol, more, false); err != nil {
			s.answer(err)
			return
		}
		if s.quit {
			return
		}
	}
}

// parse parses a query with the session's parser. The parser can panic
// on some inputs; that is a syntax error for the client, not a crash.
func (s *Session) parse(sql string) (stmts []ast.StmtNode, err error) {
	defer func() {
		if r := recover(); r != nil {
			stmts, err = nil, fmt.Errorf("the SQL parser cannot read this statement: %v", r)
		}
	}()
	stmts, _, err = s.parser.Parse(sql, "", "")
	if err != nil {
		// BEGIN WORK, COMMIT WORK, ROLLBACK WORK [TO SAVEPOINT x] and
		// LOCK TABLES t LOW_PRIORITY WRITE: the TiDB parser lacks the
		// optional words (savepoint.go).
		if plain, ok := withoutOptionalWords(sql); ok {
			if st, _, werr := s.parser.Parse(plain, "", ""); werr == nil {
				return st, nil
			}
		}
	}
	return stmts, err
}

// answer sends err unless the client already has it.
func (s *Session) answer(err error) {
	if err == nil {
		return
	}
	var w *errWritten
	if errors.As(err, &w) {
		return
	}
	s.writeErr(err)
}

func (s *Session) runCached(pp PreparedPlan, sql string) error {
	ctx, end := s.statementContext()
	defer end()
	return s.runPrepared(ctx, pp, sql, nil, TextProtocol, false)
}

// runNormalized runs a text query by the plan of its shape: its integer
// and string literals become placeholders (sqlarg.Normalize), the shape is
// planned once, as if the client had prepared it, and each query binds
// its own literals, so a query that differs from an earlier one only in
// its values is neither parsed nor planned again. It reports false, having
// written nothing, when the query must go the long way: it does not
// normalize, its shape has no plan of its own (the session answers it, or
// it does not parse with placeholders), or binding fails (the long way
// gives the error the query's own text deserves).
func (s *Session) runNormalized(sql string) bool {
	if len(sql) > maxCachedSQL {
		return false
	}
	norm, args, ok := sqlarg.Normalize(sql, s.normalized, s.args)
	s.normalized, s.args = norm[:0], args[:0]
	if !ok {
		return false
	}
	s.key = append(appendPlanKey(s.key[:0], s.db, s.sqlMode, s.privilegeClass()), norm...)
	pp := s.srv.cache.get(s.key)
	if pp == nil {
		pp = s.planShape(string(norm))
		s.srv.cache.put(s.key, pp)
	}
	if _, none := pp.(noPlan); none {
		return false
	}
	plan, err := pp.Bind(args)
	if err != nil {
		return false
	}
	if hook := s.srv.beforeStatement; hook != nil {
		hook(sql)
	}
	ctx, end := s.statementContext()
	defer end()
	s.diag.reset()
	s.answer(s.runRouted(ctx, plan, sql, TextProtocol, false))
	return true
}

// planShape plans a normalized query as a prepared statement of the
// client's would be planned; noPlan when it cannot be.
func (s *Session) planShape(norm string) PreparedPlan {
	stmts, err := s.parse(norm)
	if err != nil || len(stmts) != 1 || !routed(stmts[0]) || s.authorize(stmts[0], norm) != nil {
		return noPlan{}
	}
	pp, err := s.srv.planner.Prepare(stmts[0], norm, s.db)
	if err != nil || pp.Kind() == router.KindOther || pp.Kind() == router.KindDDL {
		return noPlan{}
	}
	return pp
}

// execute runs one statement and writes its result. Statements about the
// session (USE, SET, transactions, KILL), the proxy's own answers (SHOW
// TABLES, DATABASE(), information_schema) and statements that name no
// table are handled here; everything else goes to the planner. cacheable
// says the statement is a whole text query, so its plan may be cached by
// its SQL text.
func (s *Session) execute(stmt ast.StmtNode, sql string, args []any, proto Protocol, more, cacheable bool) (err error) {
	if hook := s.srv.beforeStatement; hook != nil {
		hook(sql)
	}
	switch {
	case isDiagnostics(stmt):
	case hasTable(stmt):
		s.diag.reset()
	default:
		s.diag.keep()
	}
	if st, ok := stmt.(*ast.ExecuteStmt); ok {
		// Runs the statement it names, which has a context of its own.
		return s.sqlExecute(st, proto, more)
	}
	if st, ok := stmt.(*ast.ExecuteStmt); ok {
		// Runs the statement it names, which has a context of its own.
		return s.sqlExecute(st, proto, more)
	}
	ctx, end := s.statementContext()
	defer end()
	// Temporary tables, named locks and in-statement variables stay on
	// the backend connection: such statements pin it (pin.go), and their
	// plans are not cached, so the next one is seen too.
	if err := s.authorize(stmt, sql); err != nil {
		return err
	}
	if err := s.tempTableError(stmt); err != nil {
		return err
	}
	if b := stateOf(stmt); b.touches() || len(s.state.pinned) > 0 {
		cacheable = cacheable && !b.touches()
		s.beginState(b)
		defer func() { s.endState(b, err) }()
	}
	switch st := stmt.(type) {
	case *ast.UseStmt:
		if err := s.UseDB(st.DBName); err != nil {
			return err
		}
		return s.writeOK(wire.OK{}, more)
	case *ast.SetStmt:
		return s.handleSet(ctx, st, more)
	case *ast.PrepareStmt:
		return s.sqlPrepare(ctx, st, more)
	case *ast.DeallocateStmt:
		return s.sqlDeallocate(st, more)
	case *ast.BeginStmt:
		if err := s.beginTransaction(st); err != nil {
			return err
		}
		return s.writeOK(wire.OK{}, more)
	case *ast.CommitStmt:
		s.commitInfo = ""
		if err := s.endTransaction(true); err != nil {
			return err
		}
		if s.commitInfo != "" {
			return s.writeOK(wire.OK{Warnings: 1, Info: s.commitInfo}, more)
		}
		return s.writeOK(wire.OK{}, more)
	case *ast.RollbackStmt:
		if st.SavepointName != "" {
			return s.handleRollbackTo(st.SavepointName, more)
		}
		if err := s.endTransaction(false); err != nil {
			return err
		}
		return s.writeOK(wire.OK{}, more)
	case *ast.LockTablesStmt:
		return s.handleLockTables(ctx, st, more)
	case *ast.UnlockTablesStmt:
		return s.handleUnlockTables(more)
	case *ast.SavepointStmt:
		return s.handleSavepoint(st.Name, more)
	case *ast.ReleaseSavepointStmt:
		return s.handleReleaseSavepoint(st.Name, more)
	case *ast.KillStmt:
		if err := s.srv.killSession(s, st.ConnectionID, st.Query); err != nil {
			return err
		}
		if s.quit {
			return nil
		}
		return s.writeOK(wire.OK{}, more)
	case *ast.ShowStmt:
		return s.handleShow(ctx, st, sql, proto, more)
	case *ast.ExplainStmt:
		if show, ok := st.Stmt.(*ast.ShowStmt); ok {
			// DESCRIBE t and EXPLAIN t are SHOW COLUMNS.
			return s.handleShow(ctx, show, sql, proto, more)
		}
		return &NotSupportedError{What: "EXPLAIN of statements (shardflake explain prints the plan)"}
	case *ast.SelectStmt:
		tableless := st.From == nil && !hasTable(st)
		if tableless || schemaOf(st) == infoSchema {
			// The router never sees these: its DATA_SOURCE_NAME hint is
			// honoured (and checked) here.
			if ds, err := router.DataSourceHint(s.srv.rules, sql); err != nil || ds != "" {
				if err != nil {
					return err
				}
				return s.onDataSource(ctx, ds, sql, router.KindSelect, proto, more)
			}
		}
		if tableless {
			return s.tablelessSelect(ctx, st, sql, proto, more)
		}
		if schemaOf(st) == infoSchema {
			return s.infoSchemaSelect(ctx, st, proto, more)
		}
	case *ast.SetOprStmt:
		// UNION, INTERSECT, EXCEPT of information_schema queries (TypeORM
		// reads its tables with a UNION): the same logical rows.
		if schemaOf(st) == infoSchema {
			if ds, err := router.DataSourceHint(s.srv.rules, sql); err != nil || ds != "" {
				if err != nil {
					return err
				}
				return s.onDataSource(ctx, ds, sql, router.KindSelect, proto, more)
			}
			return s.infoSchemaSelect(ctx, st, proto, more)
		}
	case *ast.LoadDataStmt:
		if st.FileLocRef == ast.FileLocClient && proto == TextProtocol {
			return s.runLoadLocal(ctx, st, sql, more)
		}
	case *ast.CallStmt:
		// A prepared CALL runs as text with its arguments written in, so
		// that every result set comes back (a backend prepared CALL
		// would be read for its first one only); rows go to the client
		// in the binary protocol.
		text, err := sqlarg.Interpolate(sql, args, sqlarg.Backslash)
		if err != nil {
			return err
		}
		return s.runCall(ctx, text, proto, more)
	case *ast.DoStmt:
		if !hasTable(st) {
			ds, err := router.DataSourceHint(s.srv.rules, sql)
			if err != nil {
				return err
			}
			return s.onDataSource(ctx, ds, sql, router.KindOther, proto, more)
		}
	}
	toDefault := defaultable(stmt)
	pp, err := s.srv.planner.Prepare(stmt, sql, s.db)
	if err != nil {
		return err
	}
	if s.returning != "" {
		if pp, err = withReturning(pp, s.returning); err != nil {
			return err
		}
		cacheable = false
	}
	if pp.Kind() == router.KindOther {
		// Not about the logical schema (mysql.*, performance_schema.*,
		// CALL): the default data source answers, or nobody does.
		if !toDefault {
			return &NotSupportedError{What: "this statement through the proxy"}
		}
		if routineDDL(stmt) {
			// It commits an open transaction, as in MySQL.
			return s.onDefault(ctx, sql, router.KindDDL, proto, more)
		}
		return s.onDefault(ctx, sql, router.KindOther, proto, more)
	}
	if cacheable && args == nil && len(sql) <= maxCachedSQL {
		s.key = append(appendPlanKey(s.key[:0], s.db, s.sqlMode, s.privilegeClass()), sql...)
		s.srv.cache.put(s.key, pp)
	}
	return s.runPrepared(ctx, pp, sql, args, proto, more)
}

// defaultable reports whether a statement the router leaves to the proxy
// may run on the default data source as it is.
func defaultable(stmt ast.StmtNode) bool {
	switch stmt.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt, *ast.DoStmt, *ast.CallStmt:
		return true
	}
	return routineDDL(stmt)
}

// routineDDL reports whether stmt creates or drops a stored procedure.
// Stored routines live on the default data source, as its own tables do,
// and read the tables there: CALL runs them there too.
func routineDDL(stmt ast.StmtNode) bool {
	switch stmt.(type) {
	case *ast.ProcedureInfo, *ast.DropProcedureStmt:
		return true
	}
	return false
}

func (s *Session) runPrepared(ctx context.Context, pp PreparedPlan, sql string, args []any, proto Protocol, more bool) error {
	s.diag.reset()
	plan, err := pp.Bind(args)
	if err != nil {
		return err
	}
	return s.runRouted(ctx, plan, sql, proto, more)
}

// onDefault runs a statement unchanged on the default data source
// (SELECT 1, SELECT NOW(), @@variables): nothing about it is sharded.
func (s *Session) onDefault(ctx context.Context, sql string, kind router.StatementKind, proto Protocol, more bool) error {
	return s.onDataSource(ctx, "", sql, kind, proto, more)
}

// onDataSource runs a statement unchanged on data source ds ("" for the
// default one).
func (s *Session) onDataSource(ctx context.Context, ds, sql string, kind router.StatementKind, proto Protocol, more bool) error {
	if ds == "" {
		ds = s.srv.rules.DefaultDataSource
	}
	plan := &router.Plan{Kind: kind, Type: router.RouteSingle, Routes: []router.Route{{DataSource: ds, SQL: sql}}}
	return s.runRouted(ctx, plan, sql, proto, more)
}

// runRouted runs a plan in the session's transaction state and writes its
// result.
func (s *Session) runRouted(ctx context.Context, plan *router.Plan, sql string, proto Protocol, more bool) error {
	start := time.Now()
	if err := s.admit(ctx, plan, sql); err != nil {
		// Refused before anything was sent: no statement to observe.
		return err
	}
	if len(s.limits.held) > 0 {
		defer s.finishAdmit()
	}
	err := s.runPlanAndWrite(ctx, plan, proto, more)
	s.afterAutocommitStatement(err)
	s.afterLockedStatement(err)
	ev := StatementEvent{ConnID: s.id, Kind: plan.Kind, Type: plan.Type, Routes: plan.Routes, Duration: time.Since(start), SQL: sql}
	if err != nil {
		ev.Code = mysqlError(err).Code
		if s.log.Enabled(ctx, slog.LevelDebug) {
			s.log.Debug("statement failed", failedAttrs(sql, err)...)
		}
	}
	s.srv.obs.Statement(ev)
	return err
}

func (s *Session) runPlanAndWrite(ctx context.Context, plan *router.Plan, proto Protocol, more bool) error {
	ctx = withDiagnostics(ctx, &s.diag)
	plan, lockErr := s.lockedPlan(plan) // LOCK TABLES (lock.go)
	if lockErr != nil {
		return lockErr
	}
	// DDL commits an open transaction, as in MySQL; CREATE and DROP
	// TEMPORARY TABLE do not.
	ddl := plan.Kind == router.KindDDL && !s.state.tempDDL
	if ddl {
		if err := s.implicitCommit(); err != nil {
			return err
		}
	}
	var src connSource = poolSource{s}
	inTxn := !ddl && s.inTransaction()
	if inTxn {
		if !s.txn.active {
			// autocommit=0: the first statement opens the transaction.
			s.startTxn("START TRANSACTION")
		}
		if err := s.checkMultiSource(plan); err != nil {
			return err
		}
		src = txnSource{s: s, write: plan.Kind != router.KindSelect}
	}
	src = s.readwriteSource(plan, src, inTxn)
	mode := backendText
	if proto == BinaryProtocol {
		mode = backendPrepared
	}
	var join *joinScope
	if s.srv.rules.Server.UnionRoutes && plan.Kind == router.KindSelect && len(plan.Routes) > 1 {
		join = &joinScope{cache: s.srv.joins, settings: s.vars.sql()}
	}
	var res result
	var err error
	if plan.Move != nil {
		// An UPDATE of sharding columns that may move rows (keymove.go).
		res, err = s.runKeyMove(ctx, plan, src, inTxn)
	} else if needsGuard(plan) {
		// A write over several routes is all-or-nothing (stmtatomic.go).
		guard := newStmtGuard(s, src, inTxn)
		if err = guard.begin(ctx, plan); err == nil {
			res, err = s.runRoutes(ctx, plan, guard, mode, join)
		}
		err = guard.finish(err)
	} else {
		res, err = s.runRoutes(ctx, plan, src, mode, join)
		if rs, ok := src.(*rwSource); ok && rs.retryable(err) {
			// A replica was lost before the result began: the primary answers.
			res, err = s.runRoutes(ctx, plan, src, mode, join)
		}
	}
	if inTxn {
		defer s.afterTxnStatement(err)
	}
	if err != nil {
		return keyError(plan, err)
	}
	if res.rows != nil {
		return s.writeRows(res.rows, proto, more)
	}
	if plan.Kind == router.KindDDL {
		// Cached plans and column lists may describe the old tables.
		s.srv.schemaChanged()
	}
	if res.copies != nil {
		dss := make([]string, len(plan.Routes))
		for i, r := range plan.Routes {
			dss[i] = r.DataSource
		}
		s.log.Warn("the copies of a broadcast table disagree: a write changed a different number of rows on each data source; the client was told the first one's",
			"tables", plan.Tables, "datasources", dss, "affected_rows", res.copies)
	}
	if res.ok.InsertID != 0 {
		s.lastInsertID = res.ok.InsertID
	}
	return s.writeOK(res.ok, more)
}

// tableFinder finds table names in a statement.
type tableFinder struct {
	tables []*ast.TableName
}

func (f *tableFinder) Enter(n ast.Node) (ast.Node, bool) {
	if t, ok := n.(*ast.TableName); ok {
		f.tables = append(f.tables, t)
	}
	return n, false
}

func (f *tableFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

func tablesOf(n ast.Node) []*ast.TableName {
	f := &tableFinder{}
	n.Accept(f)
	return f.tables
}

func hasTable(n ast.Node) bool { return len(tablesOf(n)) > 0 }

const infoSchema = "information_schema"

// restoreFlags write a statement tree back as SQL every MySQL and MariaDB
// reads the same way: backquoted names, single-quoted strings with
// backslashes escaped, and no charset introducers (_UTF8MB4'x'), which
// MariaDB refuses in upper case.
const restoreFlags = format.DefaultRestoreFlags | format.RestoreStringEscapeBackslash | format.RestoreStringWithoutCharset

// schemaOf returns the schema every table of n names explicitly, lower
// case, or "" when they differ or one names none.
func schemaOf(n ast.Node) string {
	tables := tablesOf(n)
	if len(tables) == 0 {
		return ""
	}
	schema := tables[0].Schema.L
	for _, t := range tables[1:] {
		if t.Schema.L != schema {
			return ""
		}
	}
	return schema
}
