package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/shardflake/shardflake/proxy/internal/sqlarg"
	"github.com/shardflake/shardflake/router"
)

// An UPDATE or DELETE whose `expr IN (SELECT ...)` subquery the router
// cannot run on each data node (Django's filter(related__x=...).update()
// on sharded tables, router/insubquery.go) runs in two steps in one
// atomic write (stmtGuard), as MariaDB reads such a subquery before it
// changes a row: the subquery, planned as a SELECT ... FOR UPDATE of its
// own (a binding-table join over every data node, an aggregate), is read
// and its rows locked; then the statement, with the subquery's values in
// its place, is planned and routed as any UPDATE or DELETE. A failure or
// a ROLLBACK undoes both; a subquery that cannot be planned keeps the
// statement's 1235, naming why.

// Bounds of a subquery's values, so that the statement written with them
// stays far below MariaDB's max_allowed_packet (16 MiB by default): past
// either, the statement is refused (1235) and nothing changes.
const (
	maxSubqueryValues = 100_000
	maxSubqueryBytes  = 4 << 20
)

// subqueriesFirstPlan plans st, an UPDATE or DELETE the router refused
// with planErr, as a plan with First when an IN subquery of its WHERE
// clause is what the router cannot run per data node; otherwise it
// returns planErr.
func (s *Session) subqueriesFirstPlan(st *statement, planErr error) (*router.Plan, error) {
	if st.returning != "" {
		return nil, planErr
	}
	sql := st.sql
	if st.args != nil {
		// A prepared statement's arguments are written in, as for a
		// route that runs as text.
		var err error
		if sql, err = sqlarg.Interpolate(sql, st.args, sqlarg.Backslash); err != nil {
			return nil, planErr
		}
	}
	what, selects, ok := s.inSubqueries(sql, planErr)
	if !ok {
		return nil, planErr
	}
	switch {
	case len(s.state.tableLocks) > 0:
		// Its SELECTs would read under the client's aliases, unlocked.
		return nil, &NotSupportedError{What: what + " whose IN subquery spans data nodes under LOCK TABLES"}
	case s.stmtVars.assignments != "":
		return nil, &NotSupportedError{What: "SET STATEMENT ... FOR " + what + " whose IN subquery spans data nodes"}
	}
	first := &router.SubqueriesFirst{Statement: sql}
	dss := map[string]bool{}
	for _, q := range selects {
		plan, err := s.planRead(q)
		if err != nil {
			return nil, &NotSupportedError{What: fmt.Sprintf("%s whose IN subquery spans data nodes (%s); the proxy evaluates such a subquery first, and cannot evaluate this one: %s", what, errLine(planErr), errLine(err))}
		}
		first.Selects = append(first.Selects, plan)
		for _, r := range plan.Routes {
			dss[r.DataSource] = true
		}
	}
	// The statement with TRUE for its subqueries reaches every data
	// source it may reach with their values.
	stmt, _ := s.parseWrite(sql)
	wideSQL, err := router.ReplaceInSubqueries(stmt, nil)
	if err != nil {
		return nil, err
	}
	wide, err := s.planText(wideSQL)
	if err != nil {
		return nil, err
	}
	for _, r := range wide.Routes {
		dss[r.DataSource] = true
	}
	if wide.Move != nil {
		for _, ds := range wide.Move.DataSources {
			dss[ds] = true
		}
	}
	s.diag.reset()
	plan := &router.Plan{Kind: wide.Kind, Type: wide.Type, Tables: wide.Tables, Access: wide.Access, First: first}
	for _, ds := range slices.Sorted(maps.Keys(dss)) {
		plan.Routes = append(plan.Routes, router.Route{DataSource: ds})
	}
	return plan, nil
}

// inSubqueries returns the SELECTs of the IN subqueries of sql, an UPDATE
// or DELETE the router refused with planErr, when the proxy may evaluate
// them first (router.InSubqueries), and what the statement is.
func (s *Session) inSubqueries(sql string, planErr error) (what string, selects []string, ok bool) {
	var rerr *router.Error
	if !errors.As(planErr, &rerr) || rerr.Code != router.CodeNotSupported || router.HasRoutingHint(sql) {
		return "", nil, false
	}
	stmt, ok := s.parseWrite(sql)
	if !ok {
		return "", nil, false
	}
	what = "an UPDATE"
	if _, ok := stmt.(*ast.DeleteStmt); ok {
		what = "a DELETE"
	}
	selects, err := router.InSubqueries(stmt)
	return what, selects, err == nil && len(selects) > 0
}

// parseWrite parses sql, which must be one UPDATE or DELETE.
func (s *Session) parseWrite(sql string) (ast.StmtNode, bool) {
	stmts, err := s.parse(sql)
	if err != nil || len(stmts) != 1 {
		return nil, false
	}
	switch stmts[0].(type) {
	case *ast.UpdateStmt, *ast.DeleteStmt:
		return stmts[0], true
	}
	return nil, false
}

// planText plans one statement of the proxy's own.
func (s *Session) planText(sql string) (*router.Plan, error) {
	stmts, err := s.parse(sql)
	if err != nil {
		return nil, &ParseError{Err: err}
	}
	if len(stmts) != 1 {
		return nil, &InternalError{Msg: "the proxy's own statement is not one statement"}
	}
	pp, err := s.srv.planner.Prepare(stmts[0], sql, s.db, s.prepareOptions())
	if err != nil {
		return nil, err
	}
	return pp.Bind(nil)
}

// planRead plans a subquery's SELECT.
func (s *Session) planRead(sql string) (*router.Plan, error) {
	plan, err := s.planText(sql)
	if err == nil && plan.Kind != router.KindSelect {
		err = &InternalError{Msg: "a subquery is planned as " + plan.Kind.String()}
	}
	return plan, err
}

// runSubqueriesFirst runs plan, whose First is set, in its own atomic
// write over the data sources of plan's routes.
func (s *Session) runSubqueriesFirst(ctx context.Context, plan *router.Plan, src connSource, inTxn bool) (result, error) {
	return s.atomically(ctx, plan, src, inTxn, func(conns connSource) (result, error) {
		return s.subqueriesFirst(ctx, plan.First, conns)
	})
}

func (s *Session) subqueriesFirst(ctx context.Context, first *router.SubqueriesFirst, conns connSource) (result, error) {
	values := make([][]any, len(first.Selects))
	for i, sel := range first.Selects {
		vs, err := s.subqueryValues(ctx, sel, conns)
		if err != nil {
			return result{}, err
		}
		values[i] = vs
	}
	stmt, ok := s.parseWrite(first.Statement)
	if !ok {
		return result{}, &InternalError{Msg: "an UPDATE or DELETE with IN subqueries does not parse again"}
	}
	sql, err := router.ReplaceInSubqueries(stmt, values)
	if err != nil {
		return result{}, err
	}
	plan, err := s.planText(sql)
	if err != nil {
		return result{}, err
	}
	if plan.Move != nil {
		return s.moveRows(ctx, plan, conns)
	}
	return s.runRoutes(ctx, plan, conns, backendText, nil)
}

// readRows runs a read of the proxy's own (a plan of SELECTs) on conns,
// as text, under the merge's memory budget, and returns its rows for the
// caller to read and close; what names the read in the error when it
// returns no result set.
func (s *Session) readRows(ctx context.Context, plan *router.Plan, conns connSource, what string) (RowStream, error) {
	res, err := runPlanMode(ctx, plan, conns, s.srv.merger, s.srv.rules.Server.MergeMemoryBytes, s.srv.obs, backendText, nil)
	if err != nil {
		return nil, err
	}
	if res.rows == nil {
		return nil, &InternalError{Msg: what + " returned no result set"}
	}
	return res.rows, nil
}

// subqueryValues runs a subquery's SELECT and returns its distinct
// values, NULL included.
func (s *Session) subqueryValues(ctx context.Context, sel *router.Plan, conns connSource) ([]any, error) {
	rows, err := s.readRows(ctx, sel, conns, "an IN subquery")
	var my *mysql.MyError
	if errors.As(err, &my) && my.Code == mysql.ER_BAD_FIELD_ERROR {
		// An unqualified column of the statement around it: the
		// subquery is correlated after all, and cannot run alone.
		return nil, &NotSupportedError{What: fmt.Sprintf("an UPDATE or DELETE whose IN subquery spans data nodes and names a column it does not select from (correlated with the statement around it?): run alone, it gets %q", my.Message)}
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols := rows.Columns()
	if len(cols) != 1 {
		return nil, mysql.NewError(mysql.ER_OPERAND_COLUMNS, "Operand should contain 1 column(s)")
	}
	seen := map[any]bool{}
	values := []any{}
	size := 0
	for {
		row, err := rows.Next()
		if errors.Is(err, io.EOF) {
			return values, nil
		}
		if err != nil {
			return nil, err
		}
		v, err := subqueryValue(cols[0], row[0])
		if err != nil {
			return nil, err
		}
		if seen[v] {
			continue
		}
		seen[v] = true
		values = append(values, v)
		size += len(row[0])
		if len(values) > maxSubqueryValues || size > maxSubqueryBytes {
			return nil, &NotSupportedError{What: fmt.Sprintf("an UPDATE or DELETE whose IN subquery spans data nodes and returns more than %d distinct values or %d MiB (the proxy evaluates it first and writes its values into the statement); nothing was changed", maxSubqueryValues, maxSubqueryBytes>>20)}
		}
	}
}

// subqueryValue is a subquery's value as ReplaceInSubqueries writes it:
// integers and decimals as numbers, text as strings. Other types (binary
// strings, floating-point, temporal values) would not compare as the
// subquery's column does when written as literals, and are refused.
func subqueryValue(f *mysql.Field, v []byte) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch f.Type {
	case mysql.MYSQL_TYPE_TINY, mysql.MYSQL_TYPE_SHORT, mysql.MYSQL_TYPE_INT24, mysql.MYSQL_TYPE_LONG,
		mysql.MYSQL_TYPE_LONGLONG, mysql.MYSQL_TYPE_YEAR:
		if f.Flag&mysql.UNSIGNED_FLAG != 0 {
			if n, err := strconv.ParseUint(string(v), 10, 64); err == nil {
				return n, nil
			}
		} else if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return n, nil
		}
	case mysql.MYSQL_TYPE_NEWDECIMAL, mysql.MYSQL_TYPE_DECIMAL:
		return router.Decimal(v), nil
	case mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING, mysql.MYSQL_TYPE_STRING,
		mysql.MYSQL_TYPE_TINY_BLOB, mysql.MYSQL_TYPE_MEDIUM_BLOB, mysql.MYSQL_TYPE_LONG_BLOB, mysql.MYSQL_TYPE_BLOB:
		if f.Charset != 63 { // not binary
			return string(v), nil
		}
	}
	return nil, &NotSupportedError{What: fmt.Sprintf("an UPDATE or DELETE whose IN subquery spans data nodes and selects column %s of type %s (the proxy evaluates such a subquery first, for integer, decimal and text values); nothing was changed", f.Name, fieldTypeName(f))}
}

// fieldTypeName names the types subqueryValue refuses.
func fieldTypeName(f *mysql.Field) string {
	switch f.Type {
	case mysql.MYSQL_TYPE_FLOAT:
		return "FLOAT"
	case mysql.MYSQL_TYPE_DOUBLE:
		return "DOUBLE"
	case mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_NEWDATE:
		return "DATE"
	case mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_DATETIME2:
		return "DATETIME"
	case mysql.MYSQL_TYPE_TIMESTAMP, mysql.MYSQL_TYPE_TIMESTAMP2:
		return "TIMESTAMP"
	case mysql.MYSQL_TYPE_TIME, mysql.MYSQL_TYPE_TIME2:
		return "TIME"
	case mysql.MYSQL_TYPE_BIT:
		return "BIT"
	case mysql.MYSQL_TYPE_JSON:
		return "JSON"
	case mysql.MYSQL_TYPE_GEOMETRY:
		return "GEOMETRY"
	}
	if f.Charset == 63 {
		return "binary string"
	}
	return "code " + strconv.Itoa(int(f.Type))
}
