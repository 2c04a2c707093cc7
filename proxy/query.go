package proxy

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"

	// The parser needs a driver for its literal values.
	_ "github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/shardflake/shardflake/internal/sqllex"
	"github.com/shardflake/shardflake/proxy/internal/sqlarg"
	"github.com/shardflake/shardflake/router"
)

// handleQuery answers COM_QUERY: every statement of the query in order,
// each result flagged when another follows, stopping at the first error
// (MySQL's behaviour). Several statements are refused, before any runs,
// unless the client enabled multi-statements.
func (s *Session) handleQuery(sql string) {
	s.srv.questions.Add(1)
	if vars, rest, ok, err := splitSetStatement(sql, s.lexMode()); ok {
		if err == nil {
			err = s.runSetStatement(vars, rest)
		}
		s.answer(err)
		return
	}
	s.answer(s.runStatement(&statement{sql: s.clientSQL(sql), client: sql, out: textOutput, whole: true}))
}

// parse parses a query with the session's parser. The parser can panic
// on some inputs; that is a syntax error for the client, not a crash.
func (s *Session) parse(sql string) (stmts []ast.StmtNode, err error) {
	defer func() {
		if r := recover(); r != nil {
			stmts, err = nil, fmt.Errorf("the SQL parser cannot read this statement: %v", r)
		}
	}()
	// The parser runs every /*! comment and no /*M! one; MariaDB decides
	// by the version after the marker.
	if sqllex.HasExecutable(sql) {
		if id, ok := mariaDBVersionID(s.srv.version()); ok {
			sql = sqllex.ParserText(sql, s.lexMode(), id)
		}
	}
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
		// CREATE and ALTER TABLE with MariaDB's UUID, INET6 and INET4
		// column types, and CAST and CONVERT to INT or INTEGER
		// (router.ParseStandIn); the statement's text stays the
		// client's, and so do the texts that name its columns.
		if st, ok := router.ParseStandIn(s.parser, sql, s.lexMode()); ok {
			return st, nil
		}
		// SHOW WARNINGS and ERRORS with MariaDB's LIMIT forms, as text
		// and prepared (warnings.go).
		if show := diagnosticsLimit(sql, s.lexMode()); show != nil {
			return []ast.StmtNode{show}, nil
		}
		// EXPLAIN PARTITIONS and EXTENDED (explain.go).
		if plain, word := explainWord(sql, s.lexMode()); word != "" {
			if st, _, perr := s.parser.Parse(plain, "", ""); perr == nil {
				return st, nil
			}
		}
		// DESCRIBE t 'pattern' (DBD::MariaDB's column_info).
		if describe := s.describeWild(sql); describe != nil {
			return []ast.StmtNode{describe}, nil
		}
		// KILL '123' (DBD::mysql's KILL ? with 123 bound).
		if kill := s.killQuotedID(sql); kill != nil {
			return []ast.StmtNode{kill}, nil
		}
	}
	return stmts, err
}

// describeWild reads MariaDB's {DESCRIBE | DESC | EXPLAIN} t 'wild', the
// columns of t whose names are LIKE the string, which the parser does not
// (it knows a column name there, not a string): nil for any other text.
// What precedes the string must parse as DESCRIBE t; the string becomes
// that statement's LIKE pattern, as in SHOW COLUMNS FROM t LIKE 'wild'.
func (s *Session) describeWild(sql string) *ast.ExplainStmt {
	mode := s.lexMode()
	toks := sqllex.CodeTokens(sql, mode)
	if n := len(toks); n > 0 && toks[n-1].Kind == sqllex.Punct && toks[n-1].Text(sql) == ";" {
		toks = toks[:n-1]
	}
	if len(toks) < 3 {
		return nil
	}
	wild := toks[len(toks)-1]
	if wild.Kind != sqllex.String || wild.Unterminated {
		return nil
	}
	stmts, _, err := s.parser.Parse(sql[:wild.Start], "", "")
	if err != nil || len(stmts) != 1 {
		return nil
	}
	explain, ok := stmts[0].(*ast.ExplainStmt)
	if !ok {
		return nil
	}
	show, ok := explain.Stmt.(*ast.ShowStmt)
	if !ok || show.Tp != ast.ShowColumns || show.Column != nil {
		return nil
	}
	show.Pattern = &ast.PatternLikeOrIlikeExpr{
		Pattern: ast.NewValueExpr(sqllex.Unquote(sql, wild, mode), "", ""),
		Escape:  '\\',
		IsLike:  true,
	}
	return explain
}

// killQuotedID reads KILL [CONNECTION | QUERY] 'id', the id a quoted
// string of digits, which MariaDB takes (it reads an expression there and
// DBD::mysql binds pt-kill's KILL ? so) and the parser does not (it knows
// a number there): nil for any other text.
func (s *Session) killQuotedID(sql string) *ast.KillStmt {
	mode := s.lexMode()
	var id sqllex.Token
	for sc := sqllex.NewScanner(sql, mode); ; {
		t, more := sc.Next()
		if !more {
			break
		}
		if t.Kind == sqllex.String {
			if id.Kind != 0 {
				return nil
			}
			id = t
		}
	}
	if id.Kind == 0 || id.Unterminated {
		return nil
	}
	digits := sqllex.Unquote(sql, id, mode)
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return nil
	}
	stmts, _, err := s.parser.Parse(sql[:id.Start]+digits+sql[id.End:], "", "")
	if err != nil || len(stmts) != 1 {
		return nil
	}
	kill, ok := stmts[0].(*ast.KillStmt)
	if !ok || kill.Expr != nil || kill.TiDBExtension {
		return nil
	}
	return kill
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

// planShape plans a normalized query as a prepared statement of the
// client's would be planned; noPlan when it cannot be.
func (s *Session) planShape(norm string) PreparedPlan {
	stmts, err := s.parse(norm)
	if err != nil || len(stmts) != 1 || !routed(stmts[0]) || calcFoundRows(stmts[0]) || s.access().authorize(stmts[0], norm) != nil {
		return noPlan{}
	}
	pp, err := s.srv.planner.Prepare(stmts[0], norm, s.db, s.prepareOptions())
	if err != nil || pp.Kind() == router.KindOther || pp.Kind() == router.KindDDL {
		return noPlan{}
	}
	return pp
}

// routedPlan is the plan stage of a planRouted statement: its cached
// shape's bound plan, or its prepared plan bound to its arguments, or the
// router's plan of its tree (kept in the plan cache for a whole text
// query). A statement the router leaves to the proxy runs on the default
// data source unchanged, or not at all.
func (s *Session) routedPlan(st *statement) (*router.Plan, error) {
	if st.plan != nil {
		return st.plan, nil
	}
	pp := st.pp
	if pp == nil {
		toDefault := defaultable(st.node) // the planner consumes the tree
		var err error
		if pp, err = s.srv.planner.Prepare(st.node, st.sql, s.db, s.prepareOptions()); err != nil {
			if plan, ok := s.derivedCountPlan(st); ok {
				// COUNT(*) of a derived table over several data nodes
				// (derivedcount.go).
				return plan, nil
			}
			if plan, ok, ferr := s.insertFillPlan(st, err); ok {
				// INSERT ... SELECT read first (insertselect.go).
				return plan, ferr
			}
			// An IN subquery across data nodes (insubquery.go), or a
			// derived table read first into a temporary table
			// (derivedtmp.go).
			return s.subqueriesOrDerivedPlan(st, err)
		}
		if pp, err = withReturning(pp, st.returning); err != nil {
			return nil, err
		}
		if pp.Kind() == router.KindOther {
			// Not about the logical schema (mysql.*, performance_schema.*,
			// CALL): the default data source answers, or nobody does.
			if !toDefault {
				return nil, &NotSupportedError{What: "this statement through the proxy"}
			}
			if routineDDL(st.node) {
				// It commits an open transaction, as in MySQL.
				return s.srv.dataSourcePlan("", st.sql, router.KindDDL), nil
			}
			return s.srv.dataSourcePlan("", st.sql, router.KindOther), nil
		}
		if st.whole && st.returning == "" && !st.state.touches() && st.args == nil && len(st.sql) <= maxCachedSQL {
			s.key = append(appendPlanKey(s.key[:0], s.db, s.sqlMode, s.privilegeClass()), st.sql...)
			s.srv.cache.put(s.key, pp)
		}
	}
	s.diag.reset()
	plan, err := pp.Bind(st.args)
	if err != nil {
		if st.args == nil && wrongArgs(err) {
			// A text query whose parsed tree has placeholders.
			return nil, placeholderInText(st.sql, s.lexMode())
		}
		if plan, ok := s.derivedCountPlan(st); ok {
			// COUNT(*) of a derived table across data nodes, seen with
			// the arguments (derivedcount.go).
			return plan, nil
		}
		if plan, ok, ferr := s.insertFillPlan(st, err); ok {
			// INSERT ... SELECT read first, seen with the arguments.
			return plan, ferr
		}
		// An IN subquery across data nodes, or a derived table read
		// first, seen with the arguments.
		return s.subqueriesOrDerivedPlan(st, err)
	}
	return plan, nil
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

// runPlanAndWrite is the execute stage of a routed plan: it runs on the
// session's connections for it (its transaction's, a replica's, the
// pools') and writes its result.
func (s *Session) runPlanAndWrite(ctx context.Context, plan *router.Plan, out output) error {
	ctx = withDiagnostics(ctx, &s.diag)
	plan, lockErr := s.lockedPlan(plan) // LOCK TABLES (lock.go)
	if lockErr != nil {
		return lockErr
	}
	plan = s.withStatementVars(plan) // SET STATEMENT, sql_select_limit (stmtvars.go)
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
	if !inTxn && !ddl && out.found == nil && s.multiplexable(plan, src, out.proto) {
		res, err := s.runMultiplexed(ctx, plan, out.proto)
		if !errors.Is(err, errMuxFallback) {
			if err != nil {
				return s.srv.unlistedError(plan, err)
			}
			return s.writeResult(plan, res, out)
		}
	}
	var unknown *unknownTables
	if ddl {
		// A DROP TABLE of several tables: which have no data node at all
		// (dropnotes.go).
		unknown = s.lookupDropped(ctx, plan)
	}
	var err error
	if out.found != nil {
		// SELECT SQL_CALC_FOUND_ROWS: its count first (calcfoundrows.go).
		err = s.countFoundRows(ctx, out.found, src, inTxn)
	}
	var res result
	if err == nil {
		res, err = s.executePlan(ctx, plan, src, inTxn, out.proto)
	}
	err = unknown.error(err)
	if inTxn {
		defer s.afterTxnStatement(err)
	}
	if err != nil {
		return keyError(plan, s.srv.unlistedError(plan, err))
	}
	if unknown != nil {
		res.ok.Warnings = unknown.notes(&s.diag)
	}
	return s.writeResult(plan, res, out)
}

// executePlan runs plan's routes on src: a key move, an all-or-nothing
// write over several routes, or the routes as they are.
func (s *Session) executePlan(ctx context.Context, plan *router.Plan, src connSource, inTxn bool, proto Protocol) (result, error) {
	mode := backendText
	if proto == BinaryProtocol {
		mode = backendPrepared
	}
	if plan.Fill != nil {
		// An INSERT ... SELECT whose SELECT is read first (insertselect.go).
		return s.runInsertFill(ctx, plan, src, inTxn)
	}
	if plan.First != nil && plan.Kind == router.KindSelect {
		// A SELECT whose uncorrelated subqueries run first (insubquery.go).
		return s.runSelectSubqueriesFirst(ctx, plan, src, mode)
	}
	if plan.First != nil {
		// An UPDATE or DELETE whose IN subqueries run first (insubquery.go).
		return s.runSubqueriesFirst(ctx, plan, src, inTxn)
	}
	if plan.Move != nil {
		// An UPDATE of sharding columns that may move rows (keymove.go).
		return s.runKeyMove(ctx, plan, src, inTxn)
	}
	join := s.joinScope(plan)
	if needsGuard(plan) {
		// A write over several routes is all-or-nothing (stmtatomic.go).
		return s.atomically(ctx, plan, src, inTxn, func(conns connSource) (result, error) {
			return s.runRoutes(ctx, plan, conns, mode, join)
		})
	}
	res, err := s.runRoutes(ctx, plan, src, mode, join)
	if rs, ok := src.(*rwSource); ok && rs.retryable(err) {
		// A replica was lost before the result began: the primary answers.
		res, err = s.runRoutes(ctx, plan, src, mode, join)
	}
	return res, err
}

// joinScope is where a SELECT's routes on one data source are grouped
// into one UNION ALL statement (union.go), nil when they are not.
func (s *Session) joinScope(plan *router.Plan) *joinScope {
	if s.srv.rules.Server.UnionRoutes && plan.Kind == router.KindSelect && len(plan.Routes) > 1 {
		return &joinScope{cache: s.srv.joins, settings: s.vars.sql()}
	}
	return nil
}

// writeResult writes a plan's result: its rows, or its OK.
func (s *Session) writeResult(plan *router.Plan, res result, out output) error {
	if res.rows != nil {
		return s.writeRows(res.rows, out)
	}
	if plan.Kind == router.KindDDL {
		// Cached plans and column lists may describe the old tables.
		s.srv.schemaChanged()
		if len(plan.Routes) > 1 && res.ok.Warnings > 0 {
			// Each data node's statement raised the same note about the
			// one logical table (Unknown table, already exists): the
			// client hears it once, as from MariaDB.
			res.ok.Warnings = s.diag.distinct(s.srv.logicalNames)
		}
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
	return s.writeOK(res.ok, out.more)
}

// relaySource is the connections of a statement relayed to one data source
// as it is (CALL, LOAD DATA LOCAL): the transaction's, opening it under
// autocommit=0, or the pools'.
func (s *Session) relaySource() connSource {
	if !s.inTransaction() {
		return poolSource{s}
	}
	if !s.txn.active {
		s.startTxn("START TRANSACTION")
	}
	return txnSource{s: s, write: true}
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

// wrongArgs reports the router's error for arguments that do not match
// the statement's placeholders. Its own function, so that the target of
// errors.As, which escapes, is allocated only when a bind fails.
func wrongArgs(err error) bool {
	var re *router.Error
	return errors.As(err, &re) && re.Code == router.CodeWrongArgs
}

// placeholderInText is the error of a text query holding a ? placeholder,
// which the parser reads as a prepared statement's: MariaDB has no value
// for it and answers its syntax error near the ?, on the ?'s line.
func placeholderInText(sql string, mode sqlarg.Mode) error {
	i := sqlarg.FirstPlaceholder(sql, mode)
	if i < 0 {
		i = len(sql)
	}
	line := 1 + strings.Count(sql[:i], "\n")
	column := i - strings.LastIndexByte(sql[:i], '\n')
	return &ParseError{Err: fmt.Errorf("line %d column %d near \"%s\"", line, column, sql[i:])}
}
