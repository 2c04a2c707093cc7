package proxy

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/shardflake/shardflake/internal/sqllex"
	"github.com/shardflake/shardflake/proxy/internal/sqlarg"
	"github.com/shardflake/shardflake/proxy/internal/wire"
	"github.com/shardflake/shardflake/router"
)

// preparedStmt is a server-side prepared statement of a session. A routed
// statement is analysed by the router once, at prepare time, and bound to
// each execute's values (routing happens then); a statement the session
// answers itself (SET, SHOW, SELECT @@var, ...) is run as text with the
// values written in.
type preparedStmt struct {
	id     uint32
	sql    string
	params int
	// parsed is what the parser reads of sql (sql without an INSERT's
	// RETURNING clause); returning is that clause's list, "" for none.
	parsed, returning string
	pp                PreparedPlan // nil when the statement is not routed
	// into is a SELECT ... INTO @var's clause, cut off sql.
	into *selectInto
	// snap is the rules snapshot pp was planned on; an execute on
	// another one plans again (snapshot.go).
	snap *snapshot
	db   string // the schema in use when it was prepared
	// types are the parameter types the client bound last; an execute
	// may omit them.
	types    []byte
	longData [][]byte // COM_STMT_SEND_LONG_DATA per parameter
	// longDataBytes is what longData holds (limits.go); longDataErr is
	// the error the next execute gets when more was sent than allowed.
	longDataBytes int
	longDataErr   error
	// args holds the last execute's arguments, reused by the next (they
	// live no longer than their statement).
	args []any
	// state is what a routed statement does to backend session state
	// (pin.go).
	state backendState
	// columns are the result columns each execute returns, as the
	// prepare response announced them (stmtmeta.go); nil for none.
	columns []*mysql.Field
}

// handleStmtPrepare answers COM_STMT_PREPARE with the parameter count and
// the result columns each execute will return, as MariaDB does
// (stmtmeta.go).
func (s *Session) handleStmtPrepare(sql string) error {
	ps, err := s.prepare(s.clientSQL(sql))
	if err != nil {
		// As MariaDB: an execute of the last statement pipelined behind
		// a failed prepare must not run the one prepared before.
		s.lastStmt = 0
		return err
	}
	if err := s.writePacket(wire.AppendPrepareOK(s.wc.Scratch(), ps.id, uint16(len(ps.columns)), uint16(ps.params), 0)); err != nil {
		return err
	}
	if ps.params > 0 {
		param := &mysql.Field{Name: []byte("?"), Charset: charsetBinary, Type: mysql.MYSQL_TYPE_VAR_STRING, Flag: mysql.BINARY_FLAG}
		for range ps.params {
			if err := s.writePacket(wire.AppendColumn(s.wc.Scratch(), param, s.extendedMetadata)); err != nil {
				return err
			}
		}
		if err := s.writeEOF(false); err != nil {
			return err
		}
	}
	if len(ps.columns) == 0 {
		return nil
	}
	for _, f := range ps.columns {
		if err := s.wc.WritePacket(s.columnPacket(f)); err != nil {
			return err
		}
	}
	return s.writeEOF(false)
}

// prepare parses and plans a statement and keeps it under a new id.
func (s *Session) prepare(sql string) (*preparedStmt, error) {
	if max := s.srv.limits().MaxPreparedStatements; len(s.stmts) >= max {
		return nil, tooManyPreparedError(max)
	}
	parsed, returning := sql, ""
	var into *selectInto
	if base, list, ok := sqlarg.SplitReturning(sql); ok {
		parsed, returning = base, list
	} else if base, _, in, ok := s.parseSelectInto(sql); ok {
		// Kept as the SELECT alone; executes store its row (selectinto.go).
		sql, parsed, into = base, base, in
	}
	stmts, err := s.parse(parsed)
	if err != nil {
		return nil, &ParseError{Err: err}
	}
	if len(stmts) == 0 {
		if emptyQuery(parsed) {
			return nil, ErrEmptyQuery
		}
		// Only comments: MariaDB prepares it, and each execute does
		// nothing (OK), as the text query (executeStmt).
		return s.keepStmt(&preparedStmt{sql: sql, parsed: parsed, snap: s.srv.snapshot, db: s.db}), nil
	}
	if len(stmts) != 1 {
		return nil, severalStatements(parsed, s.lexMode())
	}
	params := countParams(stmts[0])
	if params > math.MaxUint16 {
		// The prepare OK carries the count in 16 bits; MariaDB refuses
		// such a statement right after parsing it.
		return nil, mysql.NewError(mysql.ER_PS_MANY_PARAM, "Prepared statement contains too many placeholders")
	}
	if err := s.access().authorize(stmts[0], sql); err != nil {
		ctx, cancel := context.WithTimeout(context.Background(), metaTimeout)
		defer cancel()
		return nil, s.unknownInfoTable(ctx, err)
	}
	ps := &preparedStmt{sql: sql, parsed: parsed, returning: returning, params: params, state: stateOf(stmts[0]), snap: s.srv.snapshot, db: s.db}
	if err := s.srv.tempTableError(stmts[0]); err != nil {
		return nil, err
	}
	// A SELECT SQL_CALC_FOUND_ROWS is not planned ahead: each execute
	// runs it as text, its arguments written in, counted by the proxy
	// (calcfoundrows.go).
	if routed(stmts[0]) && !calcFoundRows(stmts[0]) {
		if ps.pp, err = s.srv.planner.Prepare(stmts[0], parsed, s.db, s.prepareOptions()); err != nil {
			fill, ferr := s.isInsertFill(parsed, returning, err)
			if ferr != nil {
				return nil, ferr
			}
			if _, _, ok := s.pulledSubqueries(parsed, err); (!ok || returning != "" || into != nil) && !s.isDerivedCount(parsed, into) && !s.isDerivedTemp(parsed, into) && !fill {
				return nil, err
			}
			// An IN subquery across data nodes, COUNT(*) of a derived
			// table across data nodes, a derived table read into a
			// temporary table, or an INSERT ... SELECT read first:
			// each execute runs the statement as text, its
			// arguments written in, and the subquery first
			// (insubquery.go), the derived table's query counted
			// (derivedcount.go) or the SELECT read (insertselect.go).
			ps.pp = nil
			if stmts, err = s.parse(parsed); err != nil {
				return nil, &ParseError{Err: err}
			}
		} else if ps.pp, err = withReturning(ps.pp, returning); err != nil {
			return nil, err
		}
		if ps.pp != nil && ps.pp.Kind() == router.KindOther {
			ps.pp = nil
			// The planner consumed the tree; the columns need it again.
			if stmts, err = s.parse(parsed); err != nil {
				return nil, &ParseError{Err: err}
			}
		}
	}
	if ps.into = into; into == nil {
		// A SELECT ... INTO has no result set to describe.
		if ps.columns, err = s.stmtColumns(ps, stmts[0]); err != nil {
			return nil, err
		}
	}
	return s.keepStmt(ps), nil
}

// keepStmt keeps ps under the session's next statement id.
func (s *Session) keepStmt(ps *preparedStmt) *preparedStmt {
	s.nextStmtID++
	ps.id = s.nextStmtID
	s.stmts[ps.id] = ps
	s.lastStmt = ps.id
	return ps
}

// stmt returns the prepared statement a command names by id, the last
// one prepared for wire.LastStmtID.
func (s *Session) stmt(id uint32) (*preparedStmt, bool) {
	if id == wire.LastStmtID {
		id = s.lastStmt
	}
	ps, ok := s.stmts[id]
	return ps, ok
}

// replan plans ps again when the rules were reloaded since it was
// planned: its plan routes by the old rules, to the old pools.
func (s *Session) replan(ps *preparedStmt) error {
	if ps.pp == nil || ps.snap == s.srv.snapshot {
		return nil
	}
	stmts, err := s.parse(ps.parsed)
	if err != nil {
		return &ParseError{Err: err}
	}
	pp, err := s.srv.planner.Prepare(stmts[0], ps.parsed, ps.db, s.prepareOptions())
	if err != nil {
		return err
	}
	if pp, err = withReturning(pp, ps.returning); err != nil {
		return err
	}
	ps.pp, ps.snap = pp, s.srv.snapshot
	return nil
}

// handleStmtExecute answers COM_STMT_EXECUTE with binary-protocol rows.
func (s *Session) handleStmtExecute(data []byte) {
	s.srv.questions.Add(1)
	s.answer(s.stmtExecute(data))
}

func (s *Session) stmtExecute(data []byte) error {
	id, err := wire.StmtID(data)
	if err != nil {
		return err
	}
	ps, ok := s.stmt(id)
	if !ok {
		return &UnknownStmtError{ID: id, Command: "mysqld_stmt_execute"}
	}
	if ps.longData != nil {
		// The arguments share nothing with the long data once the
		// execute is done; its memory goes back then.
		defer func() { ps.args = nil }()
		defer s.dropLongData(ps)
	}
	if err := ps.longDataErr; err != nil {
		ps.longDataErr = nil
		return err
	}
	if err := s.replan(ps); err != nil {
		return err
	}
	e, err := wire.ParseExecute(data, ps.params, ps.types, ps.longData, ps.args)
	if err != nil {
		// As MariaDB answers an execute whose parameters do not parse
		// (an unknown type, too few or too many values).
		s.log.Debug("malformed COM_STMT_EXECUTE", "stmt", id, "err", errLine(err))
		if errors.Is(err, wire.ErrExecuteTypes) {
			return mysql.NewError(mysql.ER_MALFORMED_PACKET, "Malformed communication packet")
		}
		return mysql.NewDefaultError(mysql.ER_WRONG_ARGUMENTS, "mysqld_stmt_execute")
	}
	ps.types, ps.args = e.Types, e.Args
	if e.CursorFlags != 0 {
		return &NotSupportedError{What: "cursors on prepared statements (useCursorFetch)"}
	}
	return s.executeStmt(ps, e.Args)
}

// executeStmt runs a prepared statement with its arguments: routed at
// execute time with the bound values, or as text with them written in.
func (s *Session) executeStmt(ps *preparedStmt, args []any) error {
	if len(args) != ps.params {
		return mysql.NewDefaultError(mysql.ER_WRONG_ARGUMENTS, "mysqld_stmt_execute")
	}
	out := output{proto: BinaryProtocol}
	if ps.into != nil {
		// Its row goes into variables, not to the client: read it as
		// text, as the text protocol's SELECT ... INTO does.
		// MariaDB warns of INTO after FROM when it prepares, not on
		// each execute.
		into := *ps.into
		into.last = false
		out = output{proto: TextProtocol, into: &into}
	}
	if ps.pp != nil {
		return s.runStatement(&statement{sql: ps.sql, pp: ps.pp, args: args, state: ps.state, out: out})
	}
	if ps.into == nil {
		if sel, ok := s.tablelessParams(ps); ok {
			return s.runStatement(&statement{sql: ps.sql, node: sel, args: args, argTypes: ps.types, out: out})
		}
	}
	sql, err := sqlarg.Interpolate(ps.sql, args, sqlarg.Backslash)
	if err != nil {
		return &InternalError{Msg: err.Error()}
	}
	stmts, err := s.parse(sql)
	if err == nil && len(stmts) == 0 {
		// Only comments (prepare): answered OK as the text query is.
		return s.runStatement(&statement{sql: sql, client: sql, out: out, whole: true})
	}
	if err == nil && len(stmts) != 1 {
		err = fmt.Errorf("a prepared statement must hold exactly one statement, not %d", len(stmts))
	}
	if err != nil {
		return &ParseError{Err: err}
	}
	return s.runStatement(&statement{sql: sql, node: stmts[0], out: out})
}

// severalStatements is MariaDB's answer to a prepared text that holds
// more than one statement: its parser stops at the second one, so the
// syntax error is near that statement's text (and what follows it), at
// its line.
func severalStatements(sql string, mode sqlarg.Mode) error {
	_, rest := sqlarg.SplitFirst(sql, mode)
	i, _ := sqllex.SkipSpace(rest, 0, mode)
	near := rest[i:]
	line := 1 + strings.Count(sql[:len(sql)-len(near)], "\n")
	return &ParseError{Err: fmt.Errorf("line %d column 0 near \"%s\"", line, near)}
}

// handleStmtClose answers COM_STMT_CLOSE (no response).
func (s *Session) handleStmtClose(data []byte) {
	if id, err := wire.StmtID(data); err == nil {
		if ps, ok := s.stmt(id); ok {
			s.dropLongData(ps)
			delete(s.stmts, ps.id)
			if ps.id == s.lastStmt {
				s.lastStmt = 0
			}
		}
	}
}

// handleStmtReset answers COM_STMT_RESET: long data sent so far is dropped.
func (s *Session) handleStmtReset(data []byte) error {
	id, err := wire.StmtID(data)
	if err != nil {
		return err
	}
	ps, ok := s.stmt(id)
	if !ok {
		return &UnknownStmtError{ID: id, Command: "mysqld_stmt_reset"}
	}
	s.dropLongData(ps)
	ps.longDataErr = nil
	return s.writeOK(wire.OK{}, false)
}

// handleStmtSendLongData answers COM_STMT_SEND_LONG_DATA (no response):
// the bytes are added to the parameter's value for the next execute.
func (s *Session) handleStmtSendLongData(data []byte) {
	ld, err := wire.ParseSendLongData(data)
	if err != nil {
		return
	}
	ps, ok := s.stmt(ld.StmtID)
	if !ok {
		return
	}
	if ld.Param >= ps.params {
		return
	}
	s.addLongData(ps, ld.Param, ld.Data)
}

// routed reports whether the planner may plan stmt ahead, at prepare time
// and for a cached shape; what it leaves to the proxy (KindOther) is
// classified again when it runs (classify.go).
func routed(stmt ast.StmtNode) bool {
	switch st := stmt.(type) {
	case *ast.UseStmt, *ast.SetStmt, *ast.BeginStmt, *ast.CommitStmt, *ast.RollbackStmt,
		*ast.SavepointStmt, *ast.ReleaseSavepointStmt, *ast.KillStmt, *ast.ShowStmt, *ast.ExplainStmt:
		return false
	case *ast.SelectStmt:
		if st.From == nil && !hasTable(st) {
			return false
		}
		return schemaOf(st) != infoSchema
	case *ast.DoStmt:
		return hasTable(st)
	}
	return true
}

// paramCounter counts ? placeholders.
type paramCounter struct{ n int }

func (c *paramCounter) Enter(n ast.Node) (ast.Node, bool) {
	if _, ok := n.(ast.ParamMarkerExpr); ok {
		c.n++
	}
	return n, false
}

func (c *paramCounter) Leave(n ast.Node) (ast.Node, bool) { return n, true }

func countParams(stmt ast.StmtNode) int {
	c := &paramCounter{}
	stmt.Accept(c)
	return c.n
}
