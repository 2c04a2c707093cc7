package proxy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"

	"github.com/shardflake/shardflake/internal/sqllex"
	"github.com/shardflake/shardflake/proxy/internal/wire"
	"github.com/shardflake/shardflake/proxy/merge"
	"github.com/shardflake/shardflake/router"
)

// A COM_STMT_PREPARE response tells the client how many columns each
// execute will return, with their definitions, before any execute:
// libmysqlclient and libmariadb (sysbench, PHP mysqli, Python
// mysqlclient, Perl DBD) read an execute's result by that count and lose
// step when it is wrong, and Connector/J's getMetaData() answers from it.
// The proxy learns the columns the way MariaDB would answer them: it
// plans the statement with stand-in values, prepares the first route's
// SQL on its data source (COM_STMT_PREPARE runs nothing) and forwards the
// column definitions, the merge's hidden helper columns left out and
// physical names replaced by logical ones. The result is kept per
// statement text.

// metaTimeout bounds the backend round trips of one prepare's metadata.
const metaTimeout = 10 * time.Second

// maxStmtMeta bounds the statements whose columns are kept; past it the
// cache starts over.
const maxStmtMeta = 4096

// stmtMetaCache keeps the result columns of prepared statements by
// schema, session settings and SQL text, until DDL runs.
type stmtMetaCache = boundedMap[string, []*mysql.Field]

func newStmtMetaCache() *stmtMetaCache { return newBoundedMap[string, []*mysql.Field](maxStmtMeta) }

// stmtColumns returns the columns a prepared statement's executes will
// return: nil for statements that return none (writes, SET) and, as
// before, for those whose columns the proxy cannot learn without running
// them (SHOW but those showColumns knows); the execute's result carries
// its columns anyway. stmt is the parsed statement when it was not given
// to the planner (ps.pp nil).
//
// The error is the data source's when it refuses to prepare the statement
// for a reason MariaDB gives at prepare time, naming something the
// statement names (refusedAtPrepare): the client's prepare fails with it,
// as on MariaDB, instead of every execute.
func (s *Session) stmtColumns(ps *preparedStmt, stmt ast.StmtNode) ([]*mysql.Field, error) {
	key := s.db + "\x00" + s.vars.sql() + "\x00" + ps.sql
	cacheable := len(s.state.pinned) == 0 // a temporary table may shadow a name
	if cacheable {
		if cols, ok := s.srv.stmtMeta.get(key); ok {
			return cols, nil
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), metaTimeout)
	defer cancel()
	var cols []*mysql.Field
	var err error
	if ps.pp != nil {
		cols, err = s.routedColumns(ctx, ps)
	} else {
		cols, err = s.localColumns(ctx, stmt)
	}
	if err != nil || ps.pp == nil && cols == nil {
		// A SELECT whose subqueries run first (insubquery.go).
		if first, ok, ferr := s.subqueriesFirstColumns(ctx, ps); ok {
			cols, err = first, ferr
		} else if derived, ok, derr := s.derivedTempColumns(ctx, ps); ok {
			// A derived table read into a temporary table
			// (derivedtmp.go).
			cols, err = derived, derr
		}
	}
	if err != nil {
		if refused := s.srv.refusedAtPrepare(err); refused != nil {
			return nil, refused
		}
		// The execute reports the error, with its columns if it has any.
		s.log.Debug("prepared statement: result columns unknown", failedAttrs(ps.sql, err)...)
		return nil, nil
	}
	if cacheable {
		s.srv.stmtMeta.put(key, cols)
	}
	return cols, nil
}

// prepareError is a data source's error answer to COM_STMT_PREPARE.
type prepareError struct{ *mysql.MyError }

func (e *prepareError) Unwrap() error { return e.MyError }

// refusedAtPrepare returns the data source's error when err is its answer
// to preparing a statement that names a column, table or function that
// does not exist (or a column ambiguously): what MariaDB itself answers
// to COM_STMT_PREPARE, whatever the parameters. A missing table that is a
// data node of the rules is not the statement's fault but a data source's
// (another data node may hold the rows an execute reaches), and other
// errors may depend on the stand-in values: those the executes report.
func (srv *Server) refusedAtPrepare(err error) *mysql.MyError {
	var pe *prepareError
	if !errors.As(err, &pe) {
		return nil
	}
	switch pe.Code {
	case mysql.ER_BAD_FIELD_ERROR, mysql.ER_NON_UNIQ_ERROR, mysql.ER_SP_DOES_NOT_EXIST:
		return pe.MyError
	case mysql.ER_NO_SUCH_TABLE:
		if namesDataNode(pe.Message, srv.current().physicalTable) {
			return nil
		}
		return pe.MyError
	}
	return nil
}

// namesDataNode reports whether a word of msg is a physical table.
func namesDataNode(msg string, physical map[string]string) bool {
	for _, w := range strings.FieldsFunc(msg, func(r rune) bool { return r >= utf8.RuneSelf || !sqllex.IsWordByte(byte(r)) }) {
		if _, ok := physical[w]; ok {
			return true
		}
	}
	return false
}

// standIns are the values tried in place of a statement's parameters to
// plan it at prepare time: any routable value will do, the columns do
// not depend on it.
var standIns = []any{int64(1), "1", nil}

// routedColumns plans a routed SELECT with stand-in values and prepares
// its first route on that route's data source.
func (s *Session) routedColumns(ctx context.Context, ps *preparedStmt) ([]*mysql.Field, error) {
	if ps.pp.Kind() != router.KindSelect {
		return nil, nil
	}
	plan, err := standInPlan(ps)
	if err != nil {
		return nil, err
	}
	route := plan.Routes[0]
	cols, err := s.backendColumns(ctx, route.DataSource, route.SQL)
	var pe *prepareError
	if err != nil && plan.Merge != nil && plan.Merge.Unlisted != nil && errors.As(err, &pe) {
		if m := s.srv.unlisted(*plan.Merge.Unlisted, pe.MyError); m != nil {
			return nil, &prepareError{m}
		}
	}
	if err != nil {
		return nil, err
	}
	if m := plan.Merge; m != nil && m.Describe && len(plan.Routes) > 1 {
		// The first route describes the computed columns, the second the
		// others, as the merge takes them (describedFields).
		desc := cols
		r := plan.Routes[1]
		if cols, err = s.backendColumns(ctx, r.DataSource, r.SQL); err != nil {
			return nil, err
		}
		if err := merge.Describe(m, desc, cols); err != nil {
			return nil, err
		}
	}
	if len(plan.Routes) > 1 && plan.Merge != nil && plan.Merge.Hidden > 0 {
		if plan.Merge.Hidden >= len(cols) {
			return nil, fmt.Errorf("the merge hides %d of %d columns", plan.Merge.Hidden, len(cols))
		}
		cols = cols[:len(cols)-plan.Merge.Hidden]
	}
	return cols, nil
}

// standInPlan binds ps's plan to stand-in values for its arguments.
func standInPlan(ps *preparedStmt) (plan *router.Plan, err error) {
	for _, v := range standIns {
		args := make([]any, ps.params)
		for i := range args {
			args[i] = v
		}
		if plan, err = ps.pp.Bind(args); err == nil {
			return plan, nil
		}
	}
	return nil, err
}

// localColumns returns the columns of a statement the session answers:
// a SELECT without tables, answered by the proxy or, rewritten as the
// session does, by the default data source.
func (s *Session) localColumns(ctx context.Context, stmt ast.StmtNode) ([]*mysql.Field, error) {
	if show, ok := stmt.(*ast.ShowStmt); ok {
		return s.showColumns(ctx, show)
	}
	if _, ok := stmt.(*ast.SelectStmt); ok && schemaOf(stmt) == infoSchema {
		return s.infoSchemaColumns(ctx, stmt)
	}
	sel, ok := stmt.(*ast.SelectStmt)
	if !ok || sel.From != nil || hasTable(sel) {
		return nil, nil
	}
	if rows, ok := s.localSelect(sel); ok {
		return rows.Columns(), nil
	}
	r := newLocalRewriter(s, sel)
	sel.Accept(r)
	if _, err := s.srv.renameVars(ctx, sel); err != nil {
		return nil, err
	}
	keepFieldNames(sel)
	var b strings.Builder
	if err := sel.Restore(format.NewRestoreCtx(restoreFlags, &b)); err != nil {
		return nil, err
	}
	cols, err := s.backendColumns(ctx, s.srv.rules.DefaultDataSource, b.String())
	if err != nil {
		return nil, err
	}
	return output{local: r.columns}.columns(cols), nil
}

// infoSchemaColumns returns the columns of a SELECT of information_schema
// as its execute describes them: the statement rewritten over the
// logical schema (infoSchemaSelect, which reads the tables it rewrites),
// prepared on its data source, the derived tables' columns described as
// information_schema's.
func (s *Session) infoSchemaColumns(ctx context.Context, stmt ast.StmtNode) ([]*mysql.Field, error) {
	var out output
	plan, err := s.infoSchemaSelect(ctx, stmt, &out)
	return s.planColumns(ctx, plan, out, err)
}

// planColumns returns the columns of plan's one route, prepared on its
// data source, as out describes them; err is the planning's.
func (s *Session) planColumns(ctx context.Context, plan *router.Plan, out output, err error) ([]*mysql.Field, error) {
	if err != nil || plan == nil || len(plan.Routes) != 1 {
		return nil, err
	}
	cols, err := s.backendColumns(ctx, plan.Routes[0].DataSource, plan.Routes[0].SQL)
	if err != nil {
		return nil, err
	}
	return out.columns(cols), nil
}

// showColumns returns the columns of a SHOW the proxy answers: those it
// makes itself (SHOW COUNT(*) WARNINGS, DATABASES, TABLES, CREATE
// DATABASE), a data source's for SHOW COLUMNS, INDEX, CREATE TABLE and
// TABLE STATUS, and those of the SELECT answering SHOW PROCEDURE or
// FUNCTION STATUS; nil for others.
func (s *Session) showColumns(ctx context.Context, st *ast.ShowStmt) ([]*mysql.Field, error) {
	switch st.Tp {
	case ast.ShowCreateTable, ast.ShowColumns, ast.ShowIndex:
		// The data source's own, which the execute forwards.
		_, _, ds, sql, err := s.showTableMetaSQL(st)
		if err != nil {
			return nil, err
		}
		return s.backendColumns(ctx, ds, sql)
	case ast.ShowProcedureStatus, ast.ShowFunctionStatus:
		var out output
		plan, err := s.routineStatus(ctx, st, &out)
		return s.planColumns(ctx, plan, out, err)
	case ast.ShowTableStatus:
		if _, err := s.schema(st.DBName); err != nil {
			return nil, err
		}
		return s.backendColumns(ctx, s.srv.rules.DefaultDataSource, "SHOW TABLE STATUS")
	case ast.ShowWarnings, ast.ShowErrors:
		// MariaDB's prepare describes only the COUNT(*) form, a SELECT
		// of @@warning_count for it.
		if st.CountWarningsOrErrors {
			return diagnosticsColumns(st), nil
		}
	case ast.ShowDatabases:
		return showDatabasesColumns(st), nil
	case ast.ShowCreateDatabase:
		return createDatabaseColumns(), nil
	case ast.ShowTables:
		db, err := s.schema(st.DBName)
		if err != nil {
			return nil, err
		}
		return showTablesColumns(st, db), nil
	}
	return nil, nil
}

// backendColumns prepares sql on a connection of data source ds carrying
// the session's settings, reads the column definitions and closes the
// backend statement.
func (s *Session) backendColumns(ctx context.Context, ds, sql string) ([]*mysql.Field, error) {
	src := poolSource{s}
	bcs, err := src.acquire(ctx, ds, 1)
	if err != nil {
		return nil, err
	}
	bc := bcs[0]
	defer src.release(bc)
	bc.nc.SetReadDeadline(time.Now().Add(metaTimeout))
	defer bc.nc.SetReadDeadline(time.Time{})
	return bc.prepareColumns(sql)
}

// prepareColumns prepares sql on bc, reads the column definitions of the
// prepared statement and closes it again: what a statement's result will
// look like, without running it.
func (bc *backendConn) prepareColumns(sql string) ([]*mysql.Field, error) {
	if err := bc.send(mysql.COM_STMT_PREPARE, sql); err != nil {
		return nil, err
	}
	p, err := bc.wc.ReadPacket()
	if err != nil {
		return nil, bc.lost(err)
	}
	if wire.IsErr(p) {
		return nil, &prepareError{wire.ParseErr(p)}
	}
	ok, err := wire.ParsePrepareOK(p)
	if err != nil {
		return nil, bc.lost(fmt.Errorf("%w: prepare response", err))
	}
	id, ncols, nparams := ok.StmtID, ok.Columns, ok.Params
	// Parameter definitions, then column definitions, each block closed
	// by an EOF packet.
	if nparams > 0 {
		for range nparams + 1 {
			if _, err := bc.wc.ReadPacket(); err != nil {
				return nil, bc.lost(err)
			}
		}
	}
	cols := make([]*mysql.Field, ncols)
	if ncols > 0 {
		for i := range cols {
			p, err := bc.wc.ReadPacket()
			if err != nil {
				return nil, bc.lost(err)
			}
			if cols[i], err = wire.ParseColumn(p, bc.extendedMetadata); err != nil {
				return nil, bc.lost(err)
			}
		}
		if p, err := bc.wc.ReadPacket(); err != nil || !wire.IsEOF(p) {
			return nil, bc.lost(fmt.Errorf("%w: no EOF after the prepared statement's columns", wire.ErrMalformed))
		}
	}
	// COM_STMT_CLOSE has no response.
	bc.wc.ResetSeq()
	if err := bc.sendCommand(wire.AppendStmtClose(bc.wc.Scratch(), id), nil); err != nil {
		return nil, err
	}
	return cols, nil
}
