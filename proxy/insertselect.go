package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/proxy/internal/sqlarg"
	"github.com/shardflake/shardflake/proxy/internal/wire"
	"github.com/shardflake/shardflake/router"
)

// An INSERT ... SELECT into a sharded table that the data nodes cannot
// run as it is (the selected rows need keys the proxy generates, or
// belong to other data nodes than the ones they are read on: a copy from
// an unsharded staging table, from a table sharded otherwise, a SELECT
// across data nodes) runs in two steps in one atomic write (stmtGuard):
// the SELECT, planned as a statement of its own and a locking read (LOCK
// IN SHARE MODE, as MariaDB reads the rows it inserts), is read to its
// end; then its rows, written as literals, are planned as INSERT ...
// VALUES, which generates the keys they lack and routes each row to its
// data node. A failure or a ROLLBACK undoes it all. Without a column list
// the rows fill the table's columns in table order (SHOW COLUMNS of its
// first data node, as for an INSERT ... VALUES without one); a SELECT
// with another number of columns gets MariaDB's 1136 before a row is
// read. ON DUPLICATE KEY UPDATE follows each INSERT ... VALUES, where
// VALUES(col) and the table's columns mean what they meant; a clause that
// may name a column of the SELECT's tables, which MariaDB's clause sees
// and rows of literals do not have, keeps 1235 (router.InsertSelectParts),
// as does one the router refuses for INSERT ... VALUES (a sharding column
// assigned other than col = VALUES(col)): both are checked before the
// SELECT runs.

// Bounds of the rows held between the two steps: past either, the
// statement is refused (1235) and nothing changes. Each INSERT ... VALUES
// carries at most fillStatementBytes of rows, far below MariaDB's
// max_allowed_packet.
const (
	maxFillRows        = 100_000
	maxFillBytes       = 64 << 20
	fillStatementBytes = 1 << 20
)

// insertFillPlan plans st, an INSERT ... SELECT the router refused with
// planErr, as a plan with Fill when its target is a sharded table and
// its SELECT can be planned alone; ok is false when it is no such
// statement (planErr stands).
func (s *Session) insertFillPlan(st *statement, planErr error) (plan *router.Plan, ok bool, err error) {
	if st.returning != "" {
		return nil, false, nil
	}
	sql := st.sql
	if st.args != nil {
		// A prepared statement's arguments are written in, as for a
		// route that runs as text.
		if sql, err = sqlarg.Interpolate(sql, st.args, s.lexMode()); err != nil {
			return nil, false, nil
		}
	}
	target, parts, ok, err := s.insertFillParts(sql, planErr)
	if !ok {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	switch {
	case len(s.state.tableLocks) > 0:
		return nil, true, &NotSupportedError{What: "INSERT ... SELECT into sharded table " + target.Name + " that the data nodes cannot run as it is, under LOCK TABLES"}
	case s.stmtVars.assignments != "":
		return nil, true, &NotSupportedError{What: "SET STATEMENT ... FOR an INSERT ... SELECT that the data nodes cannot run as it is"}
	}
	read, err := s.planRead(parts.Select)
	if err != nil {
		return nil, true, &NotSupportedError{What: fmt.Sprintf("INSERT ... SELECT into %s (%s); the proxy reads such a SELECT first, and cannot read this one: %s", target.Name, errLine(planErr), errLine(err))}
	}
	dss := map[string]bool{}
	for _, r := range read.Routes {
		dss[r.DataSource] = true
	}
	for _, ds := range target.DataSources() {
		dss[ds] = true
	}
	s.diag.reset()
	plan = &router.Plan{Kind: router.KindInsert, Type: router.RouteMulti, Tables: []string{target.Name}, Access: router.AccessWrite,
		Fill: &router.InsertFill{Select: read, Head: parts.Head, Tail: parts.Tail, Columns: parts.Columns}}
	for _, ds := range slices.Sorted(maps.Keys(dss)) {
		plan.Routes = append(plan.Routes, router.Route{DataSource: ds})
	}
	return plan, true, nil
}

// insertFillParts returns the target's rule and the parts of sql
// (router.InsertSelectParts) when sql is an INSERT ... SELECT into a
// sharded table of the logical schema that the router refused with
// planErr as not supported; err, with ok, when the proxy cannot run it
// in two steps either.
func (s *Session) insertFillParts(sql string, planErr error) (target *config.TableRule, parts router.InsertSelectText, ok bool, err error) {
	var rerr *router.Error
	if !errors.As(planErr, &rerr) || rerr.Code != router.CodeNotSupported || router.HasRoutingHint(sql) {
		return nil, parts, false, nil
	}
	stmts, err := s.parse(sql)
	if err != nil || len(stmts) != 1 {
		return nil, parts, false, nil
	}
	ins, isInsert := stmts[0].(*ast.InsertStmt)
	if !isInsert || ins.Select == nil || ins.Table == nil || ins.Table.TableRefs == nil {
		return nil, parts, false, nil
	}
	ts, isSource := ins.Table.TableRefs.Left.(*ast.TableSource)
	if !isSource {
		return nil, parts, false, nil
	}
	tn, isName := ts.Source.(*ast.TableName)
	if !isName || (tn.Schema.L != "" && tn.Schema.L != strings.ToLower(s.db)) {
		return nil, parts, false, nil
	}
	if target = s.srv.rules.Table(tn.Name.O); target == nil {
		return nil, parts, false, nil
	}
	parts, ok, err = router.InsertSelectParts(ins, s.fillColumns)
	if err != nil {
		return target, parts, true, err
	}
	if ok && parts.Tail != "" {
		// The router's rules for ON DUPLICATE KEY UPDATE on INSERT ...
		// VALUES, checked on rows of placeholders before anything runs.
		probe := parts.Head + "(" + strings.Repeat("?,", parts.Columns-1) + "?)" + parts.Tail
		stmts, err := s.parse(probe)
		if err != nil || len(stmts) != 1 {
			return target, parts, false, nil
		}
		if _, err := s.srv.planner.Prepare(stmts[0], probe, s.db, s.prepareOptions()); err != nil {
			return target, parts, true, err
		}
	}
	return target, parts, ok, nil
}

// fillColumns gives the columns of a table of the logical schema, for
// router.InsertSelectParts; nil for a table of another schema or one
// that cannot be read.
func (s *Session) fillColumns(schema, table string) (insert, all []string) {
	if schema != "" && !strings.EqualFold(schema, s.db) {
		return nil, nil
	}
	shape := s.srv.snapshot.shape(table)
	return shape.cols, shape.all
}

// isInsertFill reports whether a statement being prepared, which the
// router refused with planErr, is an INSERT ... SELECT each execute runs
// in two steps, as text with its arguments written in; err when it is
// one that cannot run so either.
func (s *Session) isInsertFill(sql, returning string, planErr error) (bool, error) {
	_, _, ok, err := s.insertFillParts(sql, planErr)
	if !ok || returning != "" {
		return false, nil
	}
	return true, err
}

// runInsertFill runs plan, whose Fill is set, in its own atomic write
// over the data sources of plan's routes.
func (s *Session) runInsertFill(ctx context.Context, plan *router.Plan, src connSource, inTxn bool) (result, error) {
	return s.atomically(ctx, plan, src, inTxn, func(conns connSource) (result, error) {
		return s.insertFill(ctx, plan.Fill, conns)
	})
}

func (s *Session) insertFill(ctx context.Context, fill *router.InsertFill, conns connSource) (result, error) {
	rows, err := s.fillRows(ctx, fill, conns)
	if err != nil {
		return result{}, err
	}
	var oks []wire.OK
	var insertID uint64
	var dup router.Duplicates
	for len(rows) > 0 {
		b := []byte(fill.Head)
		n := 0
		for n < len(rows) && (n == 0 || len(b)+len(rows[n]) < fillStatementBytes) {
			if n > 0 {
				b = append(b, ',')
			}
			b = append(b, rows[n]...)
			n++
		}
		rows = rows[n:]
		b = append(b, fill.Tail...)
		plan, err := s.planText(string(b))
		if err != nil {
			return result{}, err
		}
		if plan.Kind != router.KindInsert || plan.Fill != nil || plan.First != nil || plan.Move != nil {
			return result{}, &InternalError{Msg: "the rows of an INSERT ... SELECT are planned as " + plan.Kind.String()}
		}
		res, err := runPlanMode(ctx, plan, conns, s.srv.merger, 0, s.srv.obs, backendText, nil)
		if err != nil {
			return result{}, err
		}
		if insertID == 0 {
			insertID = res.ok.InsertID
		}
		dup = plan.Duplicates
		oks = append(oks, res.ok)
	}
	ok := wire.OK{InsertID: insertID, Info: "Records: 0  Duplicates: 0  Warnings: 0"}
	for _, o := range oks {
		ok.AffectedRows += o.AffectedRows
		ok.Warnings += o.Warnings
	}
	if len(oks) > 0 {
		ok.Info = sumInfo(router.KindInsert, dup, oks)
	}
	return result{ok: ok}, nil
}

// fillRows runs an INSERT ... SELECT's SELECT and returns its rows, each
// written as a row of literals, "(1,'a',NULL)".
func (s *Session) fillRows(ctx context.Context, fill *router.InsertFill, conns connSource) ([][]byte, error) {
	rows, err := s.readRows(ctx, fill.Select, conns, "the SELECT of an INSERT ... SELECT")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols := rows.Columns()
	if len(cols) != fill.Columns {
		// MariaDB counts the SELECT's columns before it reads a row.
		return nil, mysql.NewError(mysql.ER_WRONG_VALUE_COUNT_ON_ROW, "Column count doesn't match value count at row 1")
	}
	mode := s.lexMode()
	var out [][]byte
	size := 0
	for {
		row, err := rows.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		b, err := appendFillRow(nil, cols, row, mode)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
		size += len(b)
		if len(out) > maxFillRows || size > maxFillBytes {
			return nil, &NotSupportedError{What: fmt.Sprintf("an INSERT ... SELECT that the data nodes cannot run as it is and that selects more than %d rows or %d MiB (the proxy reads its rows first and inserts them); nothing was inserted: copy in batches, e.g. by ranges of a key", maxFillRows, maxFillBytes>>20)}
		}
	}
}

// appendFillRow appends a selected row as a row of literals,
// "(1,'a',NULL)" (appendFillValue).
func appendFillRow(b []byte, cols []*mysql.Field, row Row, mode sqlarg.Mode) ([]byte, error) {
	b = append(b, '(')
	for i, v := range row {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendFillValue(b, cols[i], v, mode); err != nil {
			return nil, err
		}
	}
	return append(b, ')'), nil
}

// appendFillValue appends a selected value as the literal that inserts
// it as MariaDB's INSERT ... SELECT does: NULL; numbers as they are (a
// DECIMAL or DOUBLE rounds into an integer column, where a string would
// be truncated); binary strings, BIT and GEOMETRY values in hex; other
// values (text, temporal, JSON) as strings.
func appendFillValue(b []byte, f *mysql.Field, v []byte, mode sqlarg.Mode) ([]byte, error) {
	if v == nil {
		return append(b, "NULL"...), nil
	}
	switch f.Type {
	case mysql.MYSQL_TYPE_TINY, mysql.MYSQL_TYPE_SHORT, mysql.MYSQL_TYPE_INT24, mysql.MYSQL_TYPE_LONG,
		mysql.MYSQL_TYPE_LONGLONG, mysql.MYSQL_TYPE_YEAR, mysql.MYSQL_TYPE_NEWDECIMAL, mysql.MYSQL_TYPE_DECIMAL,
		mysql.MYSQL_TYPE_FLOAT, mysql.MYSQL_TYPE_DOUBLE:
		if numberText(v) {
			return append(b, v...), nil
		}
	case mysql.MYSQL_TYPE_BIT, mysql.MYSQL_TYPE_GEOMETRY:
		return sqlarg.AppendInterpolated(b, "?", []any{v}, mode)
	}
	if f.Charset == 63 {
		return sqlarg.AppendInterpolated(b, "?", []any{v}, mode)
	}
	return sqlarg.AppendInterpolated(b, "?", []any{string(v)}, mode)
}

// numberText reports whether v is a number as MariaDB writes one: digits
// with a sign, a point and an exponent.
func numberText(v []byte) bool {
	if len(v) == 0 {
		return false
	}
	for _, c := range v {
		if (c < '0' || c > '9') && c != '-' && c != '+' && c != '.' && c != 'e' && c != 'E' {
			return false
		}
	}
	return v[0] != 'e' && v[0] != 'E'
}
