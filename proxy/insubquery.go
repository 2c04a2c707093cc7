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
//
// A SELECT whose uncorrelated subqueries in WHERE or HAVING (IN, scalar,
// EXISTS) the router cannot keep with the rest of it runs the same two
// steps, without the atomic write and the locks (Vitess's pulled-out
// subquery): each subquery is read as a SELECT of its own, merged across
// data nodes as any, on the statement's connections (the transaction's
// inside one); the SELECT with their values in is planned and routed as
// any SELECT, pruned by them.

// Bounds of a subquery's values, so that the statement written with them
// stays far below MariaDB's max_allowed_packet (16 MiB by default): past
// either, the statement is refused (1235) and nothing changes.
const (
	maxSubqueryValues = 100_000
	maxSubqueryBytes  = 4 << 20
)

// subqueriesFirstPlan plans st, an UPDATE, DELETE or SELECT the router
// refused with planErr, as a plan with First when an uncorrelated
// subquery is what the router cannot run per data node; otherwise it
// returns planErr. A SELECT's subqueries (SelectSubqueries: IN, scalar,
// EXISTS in WHERE and HAVING) are read as any SELECT, on the
// statement's connections; the SELECT with their values in is then
// planned and routed, pruned by the values, as any SELECT.
func (s *Session) subqueriesFirstPlan(st *statement, planErr error) (*router.Plan, error) {
	if st.returning != "" || st.out.into != nil || st.out.found != nil || st.out.count != nil {
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
	what, subs, ok := s.pulledSubqueries(sql, planErr)
	if !ok {
		return nil, planErr
	}
	switch {
	case len(s.state.tableLocks) > 0:
		// Its SELECTs would read under the client's aliases, unlocked.
		return nil, &NotSupportedError{What: what + " whose subquery spans data nodes under LOCK TABLES"}
	case s.stmtVars.assignments != "":
		return nil, &NotSupportedError{What: "SET STATEMENT ... FOR " + what + " whose subquery spans data nodes"}
	}
	// The statement with TRUE for its IN and EXISTS subqueries (NULL for
	// a scalar one) reaches every data source an UPDATE or DELETE may
	// reach with their values; it must plan, or the subqueries are not
	// what the router refused.
	stmt, _ := s.parseFirst(sql)
	wideSQL, err := router.ReplaceSubqueries(stmt, nil)
	if err != nil {
		return nil, err
	}
	wide, err := s.planText(wideSQL)
	if err != nil {
		if what == aSelect {
			return nil, planErr
		}
		return nil, err
	}
	first := &router.SubqueriesFirst{Statement: sql, Subqueries: subs}
	dss := map[string]bool{}
	for _, sub := range subs {
		plan, err := s.planRead(sub.SQL)
		if err != nil {
			return nil, &NotSupportedError{What: fmt.Sprintf("%s whose subquery spans data nodes (%s); the proxy evaluates such a subquery first, and cannot evaluate this one: %s", what, errLine(planErr), errLine(err))}
		}
		first.Selects = append(first.Selects, plan)
		for _, r := range plan.Routes {
			dss[r.DataSource] = true
		}
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

const aSelect = "a SELECT"

// pulledSubqueries returns the subqueries of sql, an UPDATE, DELETE or
// SELECT the router refused with planErr, when the proxy may evaluate
// them first (router.InSubqueries, router.SelectSubqueries), and what the
// statement is.
func (s *Session) pulledSubqueries(sql string, planErr error) (what string, subs []router.Subquery, ok bool) {
	var rerr *router.Error
	if !errors.As(planErr, &rerr) || rerr.Code != router.CodeNotSupported || router.HasRoutingHint(sql) {
		return "", nil, false
	}
	stmt, ok := s.parseFirst(sql)
	if !ok {
		return "", nil, false
	}
	what = statementName(stmt)
	if what == aSelect {
		subs, err := router.SelectSubqueries(stmt)
		return what, subs, err == nil && len(subs) > 0
	}
	selects, err := router.InSubqueries(stmt)
	for _, q := range selects {
		subs = append(subs, router.Subquery{SQL: q, Kind: router.SubqueryIn, Strings: true})
	}
	return what, subs, err == nil && len(subs) > 0
}

// subqueriesFirstDescribed is what describes the columns of ps when it
// is a SELECT whose subqueries run first: the SELECT with TRUE and NULL
// in their place, planned, whose columns are ps's (the subqueries stand
// in WHERE and HAVING only); nil for any other statement.
func (s *Session) subqueriesFirstDescribed(ps *preparedStmt) *preparedStmt {
	stmt, ok := s.parseFirst(ps.parsed)
	sel, isSelect := stmt.(*ast.SelectStmt)
	if !ok || !isSelect {
		return nil
	}
	if subs, err := router.SelectSubqueries(stmt); err != nil || len(subs) == 0 {
		return nil
	}
	keepFieldNames(sel)
	wideSQL, err := router.ReplaceSubqueries(stmt, nil)
	if err != nil {
		return nil
	}
	stmts, err := s.parse(wideSQL)
	if err != nil || len(stmts) != 1 {
		return nil
	}
	params := countParams(stmts[0])
	pp, err := s.srv.planner.Prepare(stmts[0], wideSQL, s.db, s.prepareOptions())
	if err != nil {
		return nil
	}
	return &preparedStmt{sql: ps.sql, parsed: wideSQL, params: params, pp: pp, snap: ps.snap, db: ps.db}
}

// statementName names an UPDATE, DELETE or SELECT in an error.
func statementName(stmt ast.StmtNode) string {
	switch stmt.(type) {
	case *ast.SelectStmt:
		return aSelect
	case *ast.DeleteStmt:
		return "a DELETE"
	}
	return "an UPDATE"
}

// parseFirst parses sql, which must be one UPDATE, DELETE or SELECT.
func (s *Session) parseFirst(sql string) (ast.StmtNode, bool) {
	stmts, err := s.parse(sql)
	if err != nil || len(stmts) != 1 {
		return nil, false
	}
	switch stmts[0].(type) {
	case *ast.UpdateStmt, *ast.DeleteStmt, *ast.SelectStmt:
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

// runSubqueriesFirst runs plan, an UPDATE or DELETE whose First is set,
// in its own atomic write over the data sources of plan's routes.
func (s *Session) runSubqueriesFirst(ctx context.Context, plan *router.Plan, src connSource, inTxn bool) (result, error) {
	return s.atomically(ctx, plan, src, inTxn, func(conns connSource) (result, error) {
		plan, err := s.withSubqueryValues(ctx, plan.First, conns)
		if err != nil {
			return result{}, err
		}
		if plan.Move != nil {
			return s.moveRows(ctx, plan, conns)
		}
		return s.runRoutes(ctx, plan, conns, backendText, nil)
	})
}

// runSelectSubqueriesFirst runs plan, a SELECT whose First is set, on
// src: its subqueries, then the SELECT with their values, as the client's
// SELECT runs (mode).
func (s *Session) runSelectSubqueriesFirst(ctx context.Context, plan *router.Plan, src connSource, mode backendMode) (result, error) {
	plan, err := s.withSubqueryValues(ctx, plan.First, src)
	if err != nil {
		return result{}, err
	}
	plan = s.withStatementVars(plan) // sql_select_limit is the outer SELECT's
	return s.runRoutes(ctx, plan, src, mode, s.joinScope(plan))
}

// withSubqueryValues reads first's subqueries on conns and plans its
// statement with their values in.
func (s *Session) withSubqueryValues(ctx context.Context, first *router.SubqueriesFirst, conns connSource) (*router.Plan, error) {
	stmt, ok := s.parseFirst(first.Statement)
	if !ok {
		return nil, &InternalError{Msg: "a statement with subqueries does not parse again"}
	}
	if sel, ok := stmt.(*ast.SelectStmt); ok {
		// The statement is written again: its columns keep the names
		// the client's text gives them (COUNT(*), not COUNT(1)).
		keepFieldNames(sel)
	}
	what := statementName(stmt)
	values := make([][]any, len(first.Selects))
	for i, sel := range first.Selects {
		vs, err := s.subqueryValues(ctx, sel, first.Subqueries[i], conns, what)
		if err != nil {
			return nil, err
		}
		values[i] = vs
	}
	sql, err := router.ReplaceSubqueries(stmt, values)
	if err != nil {
		return nil, err
	}
	return s.planText(sql)
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

// subqueryValues runs a subquery's SELECT and returns its values as
// ReplaceSubqueries takes them: an IN subquery's distinct values, NULL
// included; a scalar subquery's value, none without a row; one value
// when an EXISTS subquery has a row. what names the statement in errors.
func (s *Session) subqueryValues(ctx context.Context, sel *router.Plan, sub router.Subquery, conns connSource, what string) ([]any, error) {
	unchanged := "; nothing was changed"
	if what == aSelect {
		unchanged = ""
	}
	rows, err := s.readRows(ctx, sel, conns, "a subquery")
	var my *mysql.MyError
	if errors.As(err, &my) && my.Code == mysql.ER_BAD_FIELD_ERROR {
		// An unqualified column of the statement around it: the
		// subquery is correlated after all, and cannot run alone.
		return nil, &NotSupportedError{What: fmt.Sprintf("%s whose subquery spans data nodes and names a column it does not select from (correlated with the statement around it?): run alone, it gets %q", what, my.Message)}
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols := rows.Columns()
	if len(cols) != 1 && sub.Kind != router.SubqueryExists {
		return nil, mysql.NewError(mysql.ER_OPERAND_COLUMNS, "Operand should contain 1 column(s)")
	}
	seen := map[any]bool{}
	values := []any{}
	var scalar []byte
	size := 0
	for {
		row, err := rows.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch sub.Kind {
		case router.SubqueryExists:
			return []any{int64(1)}, nil
		case router.SubqueryScalar:
			if size > 0 {
				return nil, mysql.NewError(mysql.ER_SUBQUERY_NO_1_ROW, "Subquery returns more than 1 row")
			}
			scalar, size = row[0], 1
			continue
		}
		v, err := subqueryValue(cols[0], row[0], sub, what, unchanged)
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
			return nil, &NotSupportedError{What: fmt.Sprintf("%s whose IN subquery spans data nodes and returns more than %d distinct values or %d MiB (the proxy evaluates it first and writes its values into the statement)%s", what, maxSubqueryValues, maxSubqueryBytes>>20, unchanged)}
		}
	}
	if sub.Kind == router.SubqueryScalar && size > 0 {
		v, err := subqueryValue(cols[0], scalar, sub, what, unchanged)
		if err != nil {
			return nil, err
		}
		values = append(values, v)
	}
	return values, nil
}

// subqueryValue is a subquery's value as ReplaceSubqueries writes it:
// integers and decimals as numbers, text as strings. Other types (binary
// strings, floating-point, temporal values) would not compare as the
// subquery's column does when written as literals, and are refused.
func subqueryValue(f *mysql.Field, v []byte, sub router.Subquery, what, unchanged string) (any, error) {
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
		if f.Charset != 63 && !sub.Strings { // not binary
			return nil, &NotSupportedError{What: fmt.Sprintf("%s whose subquery spans data nodes and gives the text column %s where no column is compared with it (the proxy evaluates such a subquery first and writes its value as a literal, which would compare in the connection's collation, not the column's)", what, f.Name)}
		}
		if f.Charset != 63 {
			return string(v), nil
		}
	}
	return nil, &NotSupportedError{What: fmt.Sprintf("%s whose subquery spans data nodes and selects column %s of type %s (the proxy evaluates such a subquery first, for integer, decimal and text values)%s", what, f.Name, fieldTypeName(f), unchanged)}
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
