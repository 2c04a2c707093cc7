package proxy

import (
	"fmt"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/server"

	"github.com/shardflake/shardflake/proxy/internal/wire"
)

// Session is go-mysql's server.Handler. go-mysql calls UseDB during the
// handshake; afterwards the session reads commands itself (run), which
// streams results. The other Handler methods run the same code with the
// result collected into a *mysql.Result, for callers that drive a Session
// through go-mysql's own command loop (server.Conn.HandleCommand).
var _ server.Handler = (*Session)(nil)

// capture collects what a command would write, for the Handler methods.
type capture struct {
	result *mysql.Result
	err    error
}

func (c *capture) ok(ok wire.OK) {
	if c.result == nil && c.err == nil {
		c.result = &mysql.Result{AffectedRows: ok.AffectedRows, InsertId: ok.InsertID, Status: ok.Status, Warnings: ok.Warnings}
	}
}

func (c *capture) rows(cols []*mysql.Field, rows []Row, binary bool) {
	if c.result != nil || c.err != nil {
		return
	}
	rs := mysql.NewResultset(len(cols))
	// go-mysql writes a Field's Data, when set, as its whole definition;
	// the proxy keeps a definition's extended metadata there
	// (wire.ParseColumn), which go-mysql's command loop never negotiates.
	for i, f := range cols {
		c := *f
		c.Data = nil
		rs.Fields[i] = &c
	}
	for _, r := range rows {
		var data []byte
		if binary {
			var err error
			if data, err = wire.AppendBinaryRow(nil, cols, r); err != nil {
				c.err = err
				return
			}
		} else {
			data = wire.AppendTextRow(nil, r)
		}
		rs.RowDatas = append(rs.RowDatas, data)
	}
	c.result = mysql.NewResult(rs)
}

func (c *capture) fail(err error) {
	if c.err == nil && c.result == nil {
		c.err = err
	}
}

// collect runs fn with the session's output captured.
func (s *Session) collect(fn func()) (*mysql.Result, error) {
	s.capture = &capture{}
	defer func() { s.capture = nil }()
	err := s.takeSnapshot()
	defer s.leaveSnapshot(false)
	if err != nil {
		return nil, mysqlError(err)
	}
	fn()
	c := s.capture
	if c.err != nil {
		return nil, mysqlError(c.err)
	}
	return c.result, nil
}

// HandleQuery runs a COM_QUERY and returns its first result.
func (s *Session) HandleQuery(query string) (*mysql.Result, error) {
	return s.collect(func() { s.handleQuery(query) })
}

// HandleFieldList returns a table's columns (COM_FIELD_LIST).
func (s *Session) HandleFieldList(table string, fieldWildcard string) ([]*mysql.Field, error) {
	fields, err := s.fieldList(table, fieldWildcard)
	if err != nil {
		return nil, mysqlError(err)
	}
	return fields, nil
}

// HandleStmtPrepare prepares a statement; the context is its id.
func (s *Session) HandleStmtPrepare(query string) (params int, columns int, context any, err error) {
	ps, err := s.prepare(query)
	if err != nil {
		return 0, 0, nil, mysqlError(err)
	}
	return ps.params, len(ps.columns), ps.id, nil
}

// HandleStmtExecute runs a statement prepared by HandleStmtPrepare.
func (s *Session) HandleStmtExecute(context any, query string, args []any) (*mysql.Result, error) {
	id, ok := context.(uint32)
	if !ok || s.stmts[id] == nil {
		return nil, mysqlError(&UnknownStmtError{ID: id, Command: "mysqld_stmt_execute"})
	}
	return s.collect(func() {
		if err := s.replan(s.stmts[id]); err != nil {
			s.answer(err)
			return
		}
		s.answer(s.executeStmt(s.stmts[id], normalizeArgs(args)))
	})
}

// HandleStmtClose drops a prepared statement.
func (s *Session) HandleStmtClose(context any) error {
	if id, ok := context.(uint32); ok {
		delete(s.stmts, id)
	}
	return nil
}

// HandleOtherCommand refuses commands the session does not know.
func (s *Session) HandleOtherCommand(cmd byte, data []byte) error {
	return mysql.NewError(mysql.ER_UNKNOWN_COM_ERROR, fmt.Sprintf("Unknown command %d", cmd))
}

// normalizeArgs turns go-mysql's decoded arguments into the forms the
// proxy's own decoder produces.
func normalizeArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch x := a.(type) {
		case mysql.TypedBytes:
			out[i] = string(x.Bytes)
		case []byte:
			out[i] = string(x)
		case int8:
			out[i] = int64(x)
		case int16:
			out[i] = int64(x)
		case int32:
			out[i] = int64(x)
		case uint8:
			out[i] = int64(x)
		case uint16:
			out[i] = int64(x)
		case uint32:
			out[i] = int64(x)
		default:
			out[i] = a
		}
	}
	return out
}
