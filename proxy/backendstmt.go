package proxy

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/proxy/internal/wire"
)

// maxBackendStmts bounds the statements one backend connection keeps
// prepared. MariaDB's max_prepared_stmt_count (16382 by default) is
// shared by all connections of a server: a full pool of 50 connections
// stays far below it.
const maxBackendStmts = 128

// backendStmt is a statement prepared on one backend connection, by the
// SQL text of a route. A route of a client's COM_STMT_EXECUTE runs as
// COM_STMT_EXECUTE of its backend statement, so the backend skips parsing
// and answers in the binary protocol, which the proxy forwards as it is.
type backendStmt struct {
	id     uint32
	params int
	// columns are the result columns the prepare announced.
	columns []*mysql.Field
	// textExact: every column's binary values read back as the exact
	// text MariaDB would have sent (textExact), so a merge may read the
	// statement's rows.
	textExact bool
	// manyRows: an execution for a text query returned more than
	// manyRows rows; the statement runs as text for text queries
	// (textprepared.go).
	manyRows bool
	// unsupported: the backend cannot prepare this SQL (cannotPrepare);
	// it runs as text instead.
	unsupported bool
	used        uint64 // bc.stmtClock at last use, for eviction
}

// errPrepareUnsupported means a route cannot run as a backend prepared
// statement; it runs as text with its arguments written in.
var errPrepareUnsupported = errors.New("the data source cannot prepare this statement")

// stmt returns the backend statement for sql, preparing it on first use.
// Statements prepared before the last DDL through the proxy are closed
// first: the tables they name may have changed (MariaDB re-prepares by
// itself, but a dropped table's statement would only hold memory). It
// returns errPrepareUnsupported for SQL the backend will not prepare, or
// when the backend's statement limit is reached.
func (bc *backendConn) stmt(ctx context.Context, sql string) (*backendStmt, error) {
	if gen := bc.pool.schemaGen.Load(); gen != bc.stmtGen {
		bc.closeStmts()
		bc.stmtGen = gen
	}
	bc.stmtClock++
	if st, ok := bc.stmts[sql]; ok {
		st.used = bc.stmtClock
		if st.unsupported {
			return nil, errPrepareUnsupported
		}
		return st, nil
	}
	if len(bc.stmts) >= maxBackendStmts {
		bc.evictStmt()
	}
	st, err := bc.prepare(ctx, sql)
	var my *mysql.MyError
	switch {
	case cannotPrepare(err):
		st = &backendStmt{unsupported: true}
		err = errPrepareUnsupported
	case errors.As(err, &my) && my.Code == mysql.ER_MAX_PREPARED_STMT_COUNT_REACHED:
		// Not this statement's fault: try again next time.
		return nil, errPrepareUnsupported
	case err != nil:
		return nil, err
	}
	st.used = bc.stmtClock
	if bc.stmts == nil {
		bc.stmts = map[string]*backendStmt{}
	}
	bc.stmts[sql] = st
	return st, err
}

// cannotPrepare reports whether err is a backend's refusal to prepare
// SQL that no later attempt changes: 1295 (this statement cannot be
// prepared) or 1390 (more than 65,535 placeholders). The connection
// remembers it and runs the SQL as text from then on.
func cannotPrepare(err error) bool {
	var my *mysql.MyError
	return errors.As(err, &my) && (my.Code == mysql.ER_UNSUPPORTED_PS || my.Code == mysql.ER_PS_MANY_PARAM)
}

// prepare sends COM_STMT_PREPARE and reads the whole response.
func (bc *backendConn) prepare(ctx context.Context, sql string) (*backendStmt, error) {
	if err := bc.send(mysql.COM_STMT_PREPARE, sql); err != nil {
		return nil, err
	}
	stop := bc.watch(ctx)
	defer stop()
	p, err := bc.wc.ReadPacket()
	if err != nil {
		return nil, cancelled(ctx, bc.lost(err))
	}
	if wire.IsErr(p) {
		return nil, cancelled(ctx, wire.ParseErr(p))
	}
	ok, err := wire.ParsePrepareOK(p)
	if err != nil {
		return nil, bc.lost(err)
	}
	// The parameter definitions are not needed; the columns describe a
	// client's prepared statement (Session.describe).
	st := &backendStmt{id: ok.StmtID, params: ok.Params}
	if ok.Params > 0 {
		for range ok.Params + 1 {
			if _, err := bc.wc.ReadPacket(); err != nil {
				return nil, bc.lost(err)
			}
		}
	}
	if ok.Columns > 0 {
		st.columns = make([]*mysql.Field, ok.Columns)
		for i := range st.columns {
			p, err := bc.wc.ReadPacket()
			if err != nil {
				return nil, bc.lost(err)
			}
			if st.columns[i], err = bc.column(p); err != nil {
				return nil, bc.lost(err)
			}
		}
		if _, err := bc.wc.ReadPacket(); err != nil {
			return nil, bc.lost(err)
		}
	}
	st.textExact = textExact(st.columns)
	return st, nil
}

// forgetStmt drops sql's statement after the backend said it no longer
// knows it, or must prepare it again.
func (bc *backendConn) forgetStmt(sql string) {
	if st, ok := bc.stmts[sql]; ok {
		delete(bc.stmts, sql)
		if !st.unsupported {
			bc.queueClose(st.id)
		}
	}
}

// evictStmt closes the least recently used statement.
func (bc *backendConn) evictStmt() {
	var oldest string
	var found *backendStmt
	for sql, st := range bc.stmts {
		if found == nil || st.used < found.used {
			oldest, found = sql, st
		}
	}
	if found != nil {
		bc.forgetStmt(oldest)
	}
}

// closeStmts closes every statement of the connection.
func (bc *backendConn) closeStmts() {
	for sql := range bc.stmts {
		bc.forgetStmt(sql)
	}
}

// queueClose buffers a COM_STMT_CLOSE; it goes out with the next command,
// in the same write (the server does not answer it).
func (bc *backendConn) queueClose(id uint32) {
	bc.wc.ResetSeq()
	buf := wire.AppendStmtClose(bc.wc.Scratch(), id)
	if err := bc.wc.WritePacket(buf); err != nil {
		bc.broken = true
	}
	bc.wc.SetScratch(buf)
}

// sendExecute writes COM_STMT_EXECUTE of st with args, under the
// client's types when types is not nil (wire.AppendExecuteAs).
func (bc *backendConn) sendExecute(st *backendStmt, args []any, types []byte) error {
	if len(args) != st.params {
		return &InternalError{Msg: fmt.Sprintf("route to %s: %d arguments for %d parameters", bc.pool.name, len(args), st.params)}
	}
	args, err := bc.sendLongData(st, args)
	if err != nil {
		return err
	}
	bc.wc.ResetSeq()
	buf, err := wire.AppendExecuteAs(bc.wc.Scratch(), st.id, args, types)
	return bc.sendCommand(buf, err)
}

// staleStmt reports whether err says the backend lost or invalidated a
// prepared statement, so preparing it again may succeed.
func staleStmt(err error) bool {
	if err == nil {
		// errors.As's target escapes: no allocation on the common path.
		return false
	}
	var my *mysql.MyError
	return errors.As(err, &my) && (my.Code == mysql.ER_UNKNOWN_STMT_HANDLER || my.Code == mysql.ER_NEED_REPREPARE)
}
