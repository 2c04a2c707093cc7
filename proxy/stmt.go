package proxy

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/pingcap/tidb/pkg/parser/ast"

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
	pp     PreparedPlan // nil when the statement is not routed
	// types are the parameter types the client bound last; an execute
	// may omit them.
	types    []byte
	longData [][]byte // COM_STMT_SEND_LONG_DATA per parameter
	// args holds the last execute's arguments, reused by the next (they
	// live no longer than their statement).
	args []any
}

// handleStmtPrepare answers COM_STMT_PREPARE with the statement's
// parameters and, for a routed SELECT, its result columns (describe):
// libmysqlclient and libmariadb read an execute's rows only when the
// prepare announced columns, and a client that does not read them is out
// of step at its next command (2014). Statements the session answers
// itself announce no columns; their rows still come with each execute.
func (s *Session) handleStmtPrepare(sql string) error {
	ps, err := s.prepare(sql)
	if err != nil {
		return err
	}
	cols := s.describe(ps)
	if err := s.writePacket(wire.AppendPrepareOK(s.wc.Scratch(), ps.id, uint16(len(cols)), uint16(ps.params), 0)); err != nil {
		return err
	}
	if ps.params > 0 {
		param := &mysql.Field{Name: []byte("?"), Charset: charsetBinary, Type: mysql.MYSQL_TYPE_VAR_STRING, Flag: mysql.BINARY_FLAG}
		for range ps.params {
			if err := s.writePacket(wire.AppendColumn(s.wc.Scratch(), param)); err != nil {
				return err
			}
		}
		if err := s.writeEOF(false); err != nil {
			return err
		}
	}
	if len(cols) == 0 {
		return nil
	}
	for _, f := range cols {
		if err := s.writePacket(wire.AppendColumn(s.wc.Scratch(), s.logicalColumn(f))); err != nil {
			return err
		}
	}
	return s.writeEOF(false)
}

// describe returns the result columns of a prepared SELECT the router
// plans: the statement is bound with every argument NULL (or, when that
// does not plan, 1), the first route's SQL is prepared on its data source,
// which runs nothing, and the columns the client will see (a merge's
// helper columns dropped) are kept by statement text until DDL. nil when
// the statement returns no rows or cannot be described.
func (s *Session) describe(ps *preparedStmt) []*mysql.Field {
	if ps.pp == nil || ps.pp.Kind() != router.KindSelect {
		return nil
	}
	s.key = append(appendPlanKey(s.key[:0], s.db, s.sqlMode), ps.sql...)
	if cols, ok := s.srv.described.get(s.key); ok {
		return cols
	}
	cols, err := s.describeRoute(ps)
	if err != nil {
		s.log.Debug("cannot describe the prepared statement's columns", "sql", truncate(ps.sql), "err", err)
		return nil
	}
	s.srv.described.put(s.key, cols)
	return cols
}

func (s *Session) describeRoute(ps *preparedStmt) ([]*mysql.Field, error) {
	args := make([]any, ps.params)
	plan, err := ps.pp.Bind(args)
	if err != nil || len(plan.Routes) == 0 {
		for i := range args {
			args[i] = int64(1)
		}
		if plan, err = ps.pp.Bind(args); err != nil {
			return nil, err
		}
	}
	if len(plan.Routes) == 0 {
		return nil, errors.New("the statement plans no route")
	}
	ctx, cancel := context.WithTimeout(context.Background(), describeTimeout)
	defer cancel()
	src := poolSource{s}
	route := plan.Routes[0]
	bcs, err := src.acquire(ctx, route.DataSource, 1)
	if err != nil {
		return nil, err
	}
	bc := bcs[0]
	defer src.release(bc)
	st, err := bc.stmt(ctx, route.SQL)
	if err != nil {
		return nil, err
	}
	cols := st.columns
	if plan.Merge != nil && len(plan.Routes) > 1 {
		cols = cols[:max(len(cols)-plan.Merge.Hidden, 0)]
	}
	return cols, nil
}

// prepare parses and plans a statement and keeps it under a new id.
func (s *Session) prepare(sql string) (*preparedStmt, error) {
	stmts, err := s.parse(sql)
	if err != nil {
		return nil, &ParseError{Err: err}
	}
	if len(stmts) != 1 {
		return nil, &ParseError{Err: fmt.Errorf("a prepared statement must hold exactly one statement, not %d", len(stmts))}
	}
	ps := &preparedStmt{sql: sql, params: countParams(stmts[0])}
	if routed(stmts[0]) {
		if ps.pp, err = s.srv.planner.Prepare(stmts[0], sql, s.db); err != nil {
			return nil, err
		}
		if ps.pp.Kind() == router.KindOther {
			ps.pp = nil
		}
	}
	s.nextStmtID++
	ps.id = s.nextStmtID
	s.stmts[ps.id] = ps
	return ps, nil
}

// describeTimeout bounds the backend prepare that describes a prepared
// statement's columns.
const describeTimeout = 10 * time.Second

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
	ps, ok := s.stmts[id]
	if !ok {
		return &UnknownStmtError{ID: id, Command: "mysqld_stmt_execute"}
	}
	e, err := wire.ParseExecute(data, ps.params, ps.types, ps.longData, ps.args)
	ps.longData = nil
	if err != nil {
		return &InternalError{Msg: "malformed COM_STMT_EXECUTE: " + err.Error()}
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
	if ps.pp != nil {
		if hook := s.srv.beforeStatement; hook != nil {
			hook(ps.sql)
		}
		ctx, end := s.statementContext()
		defer end()
		return s.runPrepared(ctx, ps.pp, ps.sql, args, BinaryProtocol, false)
	}
	sql, err := sqlarg.Interpolate(ps.sql, args, sqlarg.Backslash)
	if err != nil {
		return &InternalError{Msg: err.Error()}
	}
	stmts, err := s.parse(sql)
	if err == nil && len(stmts) != 1 {
		err = fmt.Errorf("a prepared statement must hold exactly one statement, not %d", len(stmts))
	}
	if err != nil {
		return &ParseError{Err: err}
	}
	return s.execute(stmts[0], sql, nil, BinaryProtocol, false, false)
}

// handleStmtClose answers COM_STMT_CLOSE (no response).
func (s *Session) handleStmtClose(data []byte) {
	if id, err := wire.StmtID(data); err == nil {
		delete(s.stmts, id)
	}
}

// handleStmtReset answers COM_STMT_RESET: long data sent so far is dropped.
func (s *Session) handleStmtReset(data []byte) error {
	id, err := wire.StmtID(data)
	if err != nil {
		return err
	}
	ps, ok := s.stmts[id]
	if !ok {
		return &UnknownStmtError{ID: id, Command: "mysqld_stmt_reset"}
	}
	ps.longData = nil
	return s.writeOK(wire.OK{}, false)
}

// handleStmtSendLongData answers COM_STMT_SEND_LONG_DATA (no response):
// the bytes are added to the parameter's value for the next execute.
func (s *Session) handleStmtSendLongData(data []byte) {
	id, err := wire.StmtID(data)
	if err != nil || len(data) < 6 {
		return
	}
	ps, ok := s.stmts[id]
	if !ok {
		return
	}
	param := int(binary.LittleEndian.Uint16(data[4:]))
	if param >= ps.params {
		return
	}
	if ps.longData == nil {
		ps.longData = make([][]byte, ps.params)
	}
	if ps.longData[param] == nil {
		ps.longData[param] = []byte{}
	}
	ps.longData[param] = append(ps.longData[param], data[6:]...)
}

// routed reports whether the planner handles stmt, rather than the
// session (see Session.execute).
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
