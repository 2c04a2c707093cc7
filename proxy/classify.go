package proxy

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/shardflake/shardflake/proxy/internal/sqlarg"
)

// classify is the door's classify stage: it decides who answers st
// (st.kind), parsing its text when it must. A whole text query is first
// looked up by its shape and by its text in the plan cache, then as an
// admin statement, before the parser sees it.
func (s *Session) classify(st *statement) error {
	if st.pp != nil {
		// A prepared statement the router planned ahead.
		st.kind = planRouted
		return nil
	}
	if st.node == nil {
		if err := s.classifyText(st); err != nil || st.kind != 0 {
			return err
		}
	}
	if base, node, count, ok := s.splitCalcFoundRows(st.sql, st.node); ok {
		// SELECT SQL_CALC_FOUND_ROWS: counted by the proxy (calcfoundrows.go).
		st.sql, st.node, st.out.found, st.whole = base, node, count, false
	}
	return s.classifyNode(st)
}

// classifyText parses st's text, unless its plan is cached or it is an
// admin statement, and classifies what the parser cannot read.
func (s *Session) classifyText(st *statement) error {
	// MariaDB answers a last piece of only comments ("SELECT 1; -- done")
	// of a multi-statement query as a statement that did nothing: an OK
	// after the results before it. Such a query is never a cached plan.
	commentTail := st.whole && s.multiStatements && sqlarg.TrailingComment(st.sql, s.lexMode())
	if st.whole {
		if s.switchesSQLMode(st.client) {
			st.kind, st.rest = planQuery, st.client
			return nil
		}
		if !commentTail && (s.cachedShape(st) || s.cachedText(st)) {
			return nil
		}
		if a, ok, err := matchAdmin(st.sql); ok {
			if err != nil {
				return err
			}
			return s.classifyAdmin(st, a)
		}
		if base, list, ok := sqlarg.SplitReturning(st.sql); ok {
			// INSERT or DELETE ... RETURNING: the parser gets the statement
			// without it (returning.go).
			if stmts, err := s.parse(base); err == nil && len(stmts) == 1 {
				st.sql, st.node, st.returning, st.whole = base, stmts[0], list, false
				return nil
			}
		}
	}
	if base, node, into, ok := s.parseSelectInto(st.sql); ok {
		// SELECT ... INTO @var: the parser gets the SELECT (selectinto.go).
		st.sql, st.node, st.out.into, st.whole = base, node, into, false
		return nil
	}
	stmts, err := s.parse(st.sql)
	if err == nil && !st.whole && len(stmts) != 1 {
		err = errors.New("cannot split the query into statements")
	}
	if err != nil {
		return s.classifyUnparsed(st, err)
	}
	switch {
	case len(stmts) == 0:
		// Only comments and spaces: MySQL answers OK, as for a statement
		// that did nothing; nothing at all is an error.
		if emptyQuery(st.sql) {
			return ErrEmptyQuery
		}
		st.kind = planEmpty
	case len(stmts) > 1:
		if !s.multiStatements {
			return ErrMultiStatementsOff
		}
		// The parser reuses the slice it returns: statements that parse
		// again as they run (calcfoundrows.go, insubquery.go) must not
		// overwrite the ones after them.
		st.kind, st.nodes = planQuery, slices.Clone(stmts)
	default:
		st.node = stmts[0]
	}
	if commentTail && len(stmts) > 0 {
		st.kind, st.nodes, st.node, st.commentTail = planQuery, slices.Clone(stmts), nil, true
	}
	return nil
}

// classifyUnparsed classifies a text the parser refused: stored functions
// and triggers (the parser reads neither) and procedures it cannot read,
// alone or a CREATE whose body's semicolons are its own; SHOW PACKAGE
// STATUS and SHOW CREATE TRIGGER (routineshow.go); table maintenance
// statements (maintenance.go); MariaDB's FLUSH, START and STOP SLAVE
// forms and SHOWs about replication (authz.go); SET PASSWORD with other assignments; a
// multi-statement query, whose statements
// MySQL parses one at a time, so those before the one that does not parse
// still run; else the syntax error.
func (s *Session) classifyUnparsed(st *statement, err error) error {
	var pieces []string
	if st.whole && s.multiStatements {
		pieces = sqlarg.Split(st.sql)
	}
	single := len(pieces) <= 1
	if kind, create, ok := routineOf(st.sql); ok && (create || single) {
		st.kind, st.routine = planRoutine, kind
		return nil
	}
	if !single {
		st.kind, st.pieces = planQuery, pieces
		return nil
	}
	if ok, err := s.classifyRoutineShow(st); ok {
		return err
	}
	if s.classifyMaintenance(st) {
		return nil
	}
	if privilege := unparsedAdminPrivilege(st.sql, s.lexMode()); privilege != "" {
		return privilegeNeeded(privilege) // authz.go
	}
	if privilege := unparsedShowPrivilege(st.sql, s.lexMode()); privilege != "" {
		if !s.privileges().OtherSchemas {
			// As authorizeShow answers SHOW SLAVE STATUS.
			return privilegeNeeded(privilege)
		}
		// The default data source answers, as it does SHOW SLAVE STATUS.
		st.kind = planDataSource
		return nil
	}
	if setsPassword(st.sql, s.lexMode()) {
		// mariadb-admin password's SET PASSWORD = '...', sql_log_off = 0.
		return errAccountManagement
	}
	return &ParseError{Err: err}
}

// classifyAdmin classifies a recognised admin statement; SET VARIABLE is
// the SET it spells.
func (s *Session) classifyAdmin(st *statement, a adminStmt) error {
	if a.kind != adminSetVariable {
		st.kind, st.admin = planAdmin, a
		return nil
	}
	stmts, err := s.parse(a.body)
	if err != nil {
		return &ParseError{Err: err}
	}
	if len(stmts) != 1 {
		return &NotSupportedError{What: "several statements in SET VARIABLE"}
	}
	st.sql, st.node, st.whole = a.body, stmts[0], false
	return s.classifyNode(st)
}

// classifyNode classifies a parsed statement. Statements about the
// session (USE, SET, transactions, KILL), the proxy's own answers (SHOW
// TABLES, DATABASE(), information_schema) and statements that name no
// table are answered by the proxy; CALL and LOAD DATA LOCAL are relayed;
// everything else goes to the router.
func (s *Session) classifyNode(st *statement) error {
	if err := s.classifyInInfoSchema(st); err != nil {
		return err
	}
	st.state = stateOf(st.node)
	switch n := st.node.(type) {
	case *ast.ExecuteStmt:
		return s.classifyExecute(st, n)
	case *ast.UseStmt, *ast.SetStmt, *ast.PrepareStmt, *ast.DeallocateStmt,
		*ast.BeginStmt, *ast.CommitStmt, *ast.RollbackStmt,
		*ast.LockTablesStmt, *ast.UnlockTablesStmt,
		*ast.SavepointStmt, *ast.ReleaseSavepointStmt, *ast.KillStmt:
		st.kind = planSession
	case *ast.ShowStmt, *ast.ExplainStmt:
		st.kind = planLocal
	case *ast.CreateDatabaseStmt:
		if n.Name.O == s.srv.rules.DatabaseName {
			st.kind = planLocal
		}
	case *ast.SelectStmt:
		if (n.From == nil && !hasTable(n)) || schemaOf(n) == infoSchema {
			st.kind = planLocal
		}
	case *ast.SetOprStmt:
		// UNION, INTERSECT, EXCEPT of information_schema queries (TypeORM
		// reads its tables with a UNION): the same logical rows.
		if schemaOf(n) == infoSchema {
			st.kind = planLocal
		}
	case *ast.LoadDataStmt:
		if n.FileLocRef == ast.FileLocClient && st.out.proto == TextProtocol {
			st.kind = planLoadLocal
		}
	case *ast.CallStmt:
		st.kind = planCall
	case *ast.AnalyzeTableStmt, *ast.OptimizeTableStmt:
		// TiDB's forms; MariaDB's are table maintenance statements.
		if s.classifyMaintenance(st) {
			return nil
		}
	case *ast.DoStmt:
		if !hasTable(n) {
			st.kind = planDataSource
		}
	case *ast.SetPwdStmt, *ast.AlterUserStmt, *ast.CreateUserStmt, *ast.DropUserStmt, *ast.RenameUserStmt,
		*ast.GrantStmt, *ast.RevokeStmt:
		return errAccountManagement
	}
	if st.kind == 0 {
		st.kind = planRouted
	}
	return nil
}

// classifyExecute puts the statement an EXECUTE names in its place: the
// prepared text with the USING variables' values written into its
// placeholders.
func (s *Session) classifyExecute(st *statement, ex *ast.ExecuteStmt) error {
	p, ok := s.prepared[strings.ToLower(ex.Name)]
	if !ok {
		return unknownPrepared(ex.Name, "EXECUTE")
	}
	if len(ex.UsingVars) != p.params {
		return &mysql.MyError{Code: mysql.ER_WRONG_ARGUMENTS, State: "HY000", Message: "Incorrect arguments to EXECUTE"}
	}
	args := make([]any, len(ex.UsingVars))
	if len(args) > 0 {
		ctx, end := s.statementContext()
		for i, v := range ex.UsingVars {
			lit, err := s.userVarValue(ctx, v)
			if err != nil {
				end()
				return err
			}
			args[i] = sqlarg.Literal(lit)
		}
		end()
	}
	text, err := sqlarg.Interpolate(p.sql, args, sqlarg.Backslash)
	if err != nil {
		return &InternalError{Msg: err.Error()}
	}
	if base, node, into, ok := s.parseSelectInto(text); ok {
		into.last = false // MariaDB warned at PREPARE
		st.sql, st.node, st.out.into, st.whole = base, node, into, false
		return s.classifyNode(st)
	}
	stmts, err := s.parse(text)
	if err != nil {
		return &ParseError{Err: err}
	}
	if len(stmts) != 1 {
		return &ParseError{Err: fmt.Errorf("the prepared statement %s is not one statement", ex.Name)}
	}
	st.sql, st.node, st.whole = text, stmts[0], false
	if err := s.classifyNode(st); err != nil {
		return err
	}
	st.out.names = p.names
	return nil
}

// cachedShape classifies a text query by the plan of its shape: its
// integer and string literals become placeholders (sqlarg.Normalize), the
// shape is planned once, as if the client had prepared it, and each query
// binds its own literals, so a query that differs from an earlier one only
// in its values is neither parsed nor planned again. It reports false
// when the query must go the long way: it does not normalize, its shape
// has no plan of its own (the session answers it, or it does not parse
// with placeholders), or binding fails (the long way gives the error the
// query's own text deserves).
func (s *Session) cachedShape(st *statement) bool {
	if len(st.sql) > maxCachedSQL {
		return false
	}
	norm, args, ok := sqlarg.Normalize(st.sql, s.normalized, s.args)
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
	st.kind, st.plan = planRouted, plan
	return true
}

// cachedText classifies a text query whose plan is cached by its text.
func (s *Session) cachedText(st *statement) bool {
	if len(st.sql) > maxCachedSQL {
		return false
	}
	s.key = append(appendPlanKey(s.key[:0], s.db, s.sqlMode, s.privilegeClass()), st.sql...)
	pp := s.srv.cache.get(s.key)
	if pp == nil {
		return false
	}
	if _, none := pp.(noPlan); none {
		return false
	}
	st.kind, st.pp = planRouted, pp
	return true
}

// trimmedText is a statement's own text within a multi-statement query.
func trimmedText(n ast.StmtNode) string { return strings.TrimSpace(n.Text()) }

// emptyQuery reports whether MariaDB finds nothing at all in sql, which it
// answers with 1065 Query was empty: it drops the spaces before a query
// and the spaces and semicolons after it (alloc_query) before it parses,
// so ";" and " ; ;" are as empty as "", while a comment is a query that
// does nothing (OK).
func emptyQuery(sql string) bool {
	return strings.TrimRight(strings.TrimLeft(sql, mariaDBSpace), mariaDBSpace+";") == ""
}

// mariaDBSpace are the bytes MariaDB's my_isspace takes for spaces.
const mariaDBSpace = " \t\n\v\f\r"
