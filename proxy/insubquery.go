package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/pingcap/tidb/pkg/parser/ast"

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
// any SELECT, pruned by them. A select field that is such a subquery by
// itself is evaluated so too; its column is described as MariaDB
// describes the subquery's (subqueryColumn), not as the literal written
// in its place, and its 1242 waits for the SELECT's first row, as
// MariaDB's does (fieldReferenced). One inside a field's expression is
// written in typed as the subquery (expressionValue), so that MariaDB
// computes and describes the field as it does with the subquery.

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
// EXISTS in WHERE and HAVING, scalar select fields) are read as any
// SELECT, on the statement's connections; the SELECT with their values
// in is then planned and routed, pruned by the values, as any SELECT.
func (s *Session) subqueriesFirstPlan(st *statement, planErr error) (*router.Plan, error) {
	if st.returning != "" || st.out.into != nil || st.out.found != nil || st.out.count != nil {
		return nil, planErr
	}
	sql, ok := textWithArgs(st)
	if !ok {
		return nil, planErr
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
		if what != aSelect {
			return nil, err
		}
		if slices.ContainsFunc(subs, func(sub router.Subquery) bool { return sub.Derived != nil }) {
			// The derived table read first is not what the router
			// refuses: its error names what is (a subquery inside the
			// derived table that does not pair, Sequelize's required:
			// true correlated on another column).
			return nil, &NotSupportedError{What: fmt.Sprintf("%s whose derived table with LIMIT spans data nodes (%s); the proxy evaluates such a derived table first, and cannot run the statement over the rows it chose: %s", what, errLine(planErr), errLine(err))}
		}
		return nil, planErr
	}
	if st.args != nil {
		if err := s.nameFieldSubqueries(st.sql, subs); err != nil {
			return nil, err
		}
	}
	first := &router.SubqueriesFirst{Statement: sql, Subqueries: subs}
	dss := map[string]bool{}
	for _, sub := range subs {
		read := sub.SQL
		if sub.Average != "" {
			read = sub.Average
		}
		if sub.Derived != nil && sub.Derived.Refused != "" {
			return nil, &NotSupportedError{What: fmt.Sprintf("%s whose derived table with LIMIT spans data nodes (%s); the proxy evaluates such a derived table first, and cannot evaluate this one: %s", what, errLine(planErr), sub.Derived.Refused)}
		}
		plan, err := s.planRead(read)
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

// nameFieldSubqueries names the select-list subqueries of subs, found in
// a prepared statement's text with its arguments written in, by the
// client's text (its ?s), as MariaDB names their columns. A field whose
// expression holds a subquery and a ? outside the subqueries' WHERE
// clauses is refused: MariaDB types it by the argument's bound type
// (? * (SELECT COUNT(*) ...) is 41 long for a BIGINT argument), where
// the proxy writes the argument in as a literal.
func (s *Session) nameFieldSubqueries(clientSQL string, subs []router.Subquery) error {
	stmt, ok := s.parseFirst(clientSQL)
	sel, isSelect := stmt.(*ast.SelectStmt)
	if !ok || !isSelect || sel.Fields == nil {
		return nil
	}
	for i, sub := range subs {
		if sub.Field > 0 && sub.Field <= len(sel.Fields.Fields) {
			field := sel.Fields.Fields[sub.Field-1]
			if sub.Expression && typedParam(field.Expr) {
				return &NotSupportedError{What: "a prepared SELECT whose select field holds, inside an expression, a subquery spanning data nodes and a ? outside the subquery's WHERE clause (MariaDB types the field by the argument's type; the proxy evaluates the subquery first and writes the argument in)"}
			}
			subs[i].Name = fieldName(field)
		}
	}
	return nil
}

// typedParam reports whether e holds a ? outside the WHERE clauses of
// its subqueries, where the argument's type may make the type of e.
func typedParam(e ast.ExprNode) bool {
	all, filters := &paramCounter{}, &paramCounter{}
	e.Accept(all)
	e.Accept(&whereVisitor{of: filters})
	return all.n > filters.n
}

// whereVisitor has of visit the WHERE clause of each SELECT it finds.
type whereVisitor struct{ of ast.Visitor }

func (w *whereVisitor) Enter(n ast.Node) (ast.Node, bool) {
	if sel, ok := n.(*ast.SelectStmt); ok && sel.Where != nil {
		sel.Where.Accept(w.of)
	}
	return n, false
}

func (w *whereVisitor) Leave(n ast.Node) (ast.Node, bool) { return n, true }

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

// subqueriesFirstColumns returns the columns of ps when it is a SELECT
// whose subqueries run first (ok): those of the SELECT with TRUE and
// NULL in the subqueries' place, planned and described as any, with the
// column of each select field that is a subquery described as MariaDB
// describes it (subqueryColumn), from the subquery's SELECT described
// alone.
func (s *Session) subqueriesFirstColumns(ctx context.Context, ps *preparedStmt) (cols []*mysql.Field, ok bool, err error) {
	stmt, ok := s.parseFirst(ps.parsed)
	sel, isSelect := stmt.(*ast.SelectStmt)
	if !ok || !isSelect {
		return nil, false, nil
	}
	subs, err := router.SelectSubqueries(stmt)
	if err != nil || len(subs) == 0 {
		return nil, false, nil
	}
	fields := fieldLayout(sel)
	keepFieldNames(sel)
	// A subquery inside a field's expression is written in as a NULL of
	// its type (expressionValue), for MariaDB to describe the field.
	var values [][]any
	for i, sub := range subs {
		if sub.Field == 0 {
			continue
		}
		alone, ok := s.describedPrepared(ps, sub.SQL)
		if !ok {
			return nil, false, nil
		}
		subCols, err := s.routedColumns(ctx, alone)
		if err == nil && len(subCols) != 1 {
			err = mysql.NewError(mysql.ER_OPERAND_COLUMNS, "Operand should contain 1 column(s)")
		}
		if err != nil {
			return nil, true, err
		}
		if sub.Expression {
			if values == nil {
				values = make([][]any, len(subs))
			}
			if expressionColumn(subCols[0], sub) == nil {
				values[i] = []any{expressionValue(subCols[0], nil)}
			} // else left in place, as the execute leaves it
			continue
		}
		col, err := subqueryColumn(subCols[0], "")
		if err != nil {
			return nil, true, err
		}
		fields.at = append(fields.at, sub.Field)
		fields.described = append(fields.described, col)
	}
	wideSQL, err := router.ReplaceSubqueries(stmt, values)
	if err != nil {
		return nil, false, nil
	}
	wide, ok := s.describedPrepared(ps, wideSQL)
	if !ok {
		return nil, false, nil
	}
	if cols, err = s.routedColumns(ctx, wide); err != nil || len(fields.at) == 0 {
		return cols, true, err
	}
	cols, err = fields.columns(cols)
	return cols, true, err
}

// describedPrepared is text, a statement standing in for ps (ps's with
// its subqueries replaced, or one of them), prepared for describing its
// columns.
func (s *Session) describedPrepared(ps *preparedStmt, text string) (*preparedStmt, bool) {
	stmts, err := s.parse(text)
	if err != nil || len(stmts) != 1 {
		return nil, false
	}
	params := countParams(stmts[0])
	pp, err := s.srv.planner.Prepare(stmts[0], text, s.db, s.prepareOptions())
	if err != nil {
		return nil, false
	}
	return &preparedStmt{sql: ps.sql, parsed: text, params: params, pp: pp, snap: ps.snap, db: ps.db}, true
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
		plan, _, err := s.withSubqueryValues(ctx, plan.First, conns)
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
	if plan.First.Materialize != nil {
		// A derived table read into a temporary table (derivedtmp.go).
		return s.runDerivedTemp(ctx, plan, src)
	}
	plan, fields, err := s.withSubqueryValues(ctx, plan.First, src)
	if err != nil {
		return result{}, err
	}
	plan = s.withStatementVars(plan) // sql_select_limit is the outer SELECT's
	if fields == nil {
		return s.runRoutes(ctx, plan, src, mode, s.joinScope(plan))
	}
	// The rows are read as text and written again for the columns as
	// MariaDB describes the subqueries' (a binary row is encoded by its
	// column's type).
	res, err := s.runRoutes(ctx, plan, src, backendText, s.joinScope(plan))
	if err != nil || res.rows == nil {
		return res, err
	}
	cols, err := fields.columns(res.rows.Columns())
	if err != nil {
		res.rows.Close()
		return result{}, err
	}
	res.rows = relabeled{RowStream: res.rows, cols: cols}
	if fields.tooManyRows != nil {
		res.rows = &failedRows{RowStream: res.rows, err: fields.tooManyRows}
	}
	return res, nil
}

// failedRows fails with err at its first row, and has none without.
type failedRows struct {
	RowStream
	err error
}

func (f *failedRows) Next() (Row, error) {
	if _, err := f.RowStream.Next(); err != nil {
		return nil, err
	}
	return nil, f.err
}

// fieldSubqueries are the select fields of a SELECT that are scalar
// subqueries evaluated first, with their columns as MariaDB describes
// them (subqueryColumn).
type fieldSubqueries struct {
	// fields is the number of select fields; wildcards, the positions
	// (from 1) of those that are wildcards.
	fields    int
	wildcards []int
	// at are the subqueries' positions (from 1), described their
	// columns.
	at        []int
	described []*mysql.Field
	// named are the positions (from 1) of fields whose expression holds
	// a subquery, with the name MariaDB gives them (a prepared
	// statement's text, with its ?s), names those names; their columns
	// are otherwise MariaDB's.
	named []int
	names []string
	// tooManyRows is the error of a subquery of more than one row,
	// which the statement gets with its first row (fieldReferenced).
	tooManyRows error
}

// isTooManyRows reports whether err is MariaDB's 1242.
func isTooManyRows(err error) bool {
	var my *mysql.MyError
	return errors.As(err, &my) && my.Code == mysql.ER_SUBQUERY_NO_1_ROW
}

// tooManyRowsLater reports whether tooMany, the 1242 of sub, a select
// field's subquery, waits for the SELECT's first row, as MariaDB's does
// when it evaluates the field for the rows it returns; otherwise it
// returns the error the statement gets at once. A field that is a
// subquery, or a constant expression around it, is evaluated at once
// where GROUP BY, ORDER BY or HAVING names it (fieldReferenced); one
// whose value changes from row to row, for its rows. Inside an aggregate
// the subquery is evaluated for the rows the SELECT reads, which the
// proxy sees only as groups: with GROUP BY and without HAVING a group
// is a row read; otherwise (a SELECT without GROUP BY returns a row
// without reading one) the proxy cannot tell, and refuses the statement.
func tooManyRowsLater(sel *ast.SelectStmt, sub router.Subquery, tooMany error) (bool, error) {
	switch {
	case sub.Aggregated && (sel.GroupBy == nil || sel.Having != nil):
		return false, &NotSupportedError{What: "a SELECT whose aggregate holds a subquery spanning data nodes of more than one row, without GROUP BY or with HAVING (MariaDB fails only if the aggregate reads a row, which the proxy cannot tell)"}
	case sub.Aggregated, sub.PerRow:
		return true, tooMany
	}
	return !fieldReferenced(sel, sub.Field), tooMany
}

// fieldReferenced reports whether sel's GROUP BY, ORDER BY (by position
// or name) or HAVING names its select field at position field (from 1),
// which MariaDB then evaluates before it reads a row: a subquery of more
// than one row there fails even when the SELECT has no row. Elsewhere in
// the select list it fails with the first row only. Under LIMIT 0
// MariaDB reads nothing and sorts or groups nothing, so only HAVING's
// reference counts (read on 10.11).
func fieldReferenced(sel *ast.SelectStmt, field int) bool {
	name := sel.Fields.Fields[field-1].AsName.L
	refers := func(e ast.ExprNode) bool {
		switch x := e.(type) {
		case *ast.PositionExpr:
			return x.N == field
		case *ast.ColumnNameExpr:
			return x.Name.Table.L == "" && x.Name.Name.L == name
		}
		return false
	}
	var items []*ast.ByItem
	if sel.GroupBy != nil {
		items = append(items, sel.GroupBy.Items...)
	}
	if sel.OrderBy != nil {
		items = append(items, sel.OrderBy.Items...)
	}
	if !zeroLimit(sel) && slices.ContainsFunc(items, func(b *ast.ByItem) bool { return refers(b.Expr) }) {
		return true
	}
	if sel.Having == nil {
		return false
	}
	f := &columnFinder{refers: refers}
	sel.Having.Expr.Accept(f)
	return f.found
}

// columnFinder looks for an expression refers accepts.
type columnFinder struct {
	refers func(ast.ExprNode) bool
	found  bool
}

func (f *columnFinder) Enter(n ast.Node) (ast.Node, bool) {
	if e, ok := n.(ast.ExprNode); ok && f.refers(e) {
		f.found = true
	}
	return n, f.found
}

func (f *columnFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// columns returns the result's columns cols (the SELECT's with the
// subqueries' values written in) with the subqueries' own in their
// place, named as cols names them unless the subquery has a name, and
// the fields named renamed.
func (f *fieldSubqueries) columns(cols []*mysql.Field) ([]*mysql.Field, error) {
	out := slices.Clone(cols)
	for i, at := range f.at {
		idx, err := f.index(at, len(cols))
		if err != nil {
			return nil, err
		}
		c := *f.described[i]
		if c.Name == nil {
			c.Name = cols[idx].Name
		}
		out[idx] = &c
	}
	for i, at := range f.named {
		idx, err := f.index(at, len(cols))
		if err != nil {
			return nil, err
		}
		c := *out[idx]
		c.Name = []byte(f.names[i])
		out[idx] = &c
	}
	return out, nil
}

// index is the position, from 0, among n result columns of the select
// field at position at (from 1). A field between two wildcards has no
// known column: 1235.
func (f *fieldSubqueries) index(at, n int) (int, error) {
	idx := -1
	switch {
	case len(f.wildcards) == 0 || at < f.wildcards[0]:
		idx = at - 1
	case at > f.wildcards[len(f.wildcards)-1]:
		idx = n - (f.fields - at) - 1
	}
	if idx < 0 || idx >= n {
		return 0, &NotSupportedError{What: "a SELECT whose select list holds a subquery spanning data nodes between two wildcards"}
	}
	return idx, nil
}

// withSubqueryValues reads first's subqueries on conns and plans its
// statement with their values in; fields describes the select fields
// that are subqueries, nil when none is.
func (s *Session) withSubqueryValues(ctx context.Context, first *router.SubqueriesFirst, conns connSource) (plan *router.Plan, fields *fieldSubqueries, err error) {
	stmt, ok := s.parseFirst(first.Statement)
	if !ok {
		return nil, nil, &InternalError{Msg: "a statement with subqueries does not parse again"}
	}
	if sel, ok := stmt.(*ast.SelectStmt); ok {
		// The statement is written again: its columns keep the names
		// the client's text gives them (COUNT(*), not COUNT(1)).
		keepFieldNames(sel)
		fields = fieldLayout(sel)
	}
	what := statementName(stmt)
	values := make([][]any, len(first.Selects))
	var unwritten error
	for i, sel := range first.Selects {
		sub := first.Subqueries[i]
		vs, col, err := s.subqueryValues(ctx, sel, sub, conns, what)
		if sub.Expression && sub.Name != "" {
			fields.named = append(fields.named, sub.Field)
			fields.names = append(fields.names, sub.Name)
		}
		var kept *keptSubquery
		if errors.As(err, &kept) {
			// Left in place: the router may keep it with the
			// statement (a broadcast table's), else its reason.
			unwritten = kept.err
			continue
		}
		if sub.Field > 0 && col != nil && isTooManyRows(err) {
			var later bool
			if later, err = tooManyRowsLater(stmt.(*ast.SelectStmt), sub, err); later {
				// MariaDB evaluates a select field for the rows it
				// returns: without a row, no error.
				vs, err, fields.tooManyRows = nil, nil, err
				if sub.Expression {
					vs = []any{expressionValue(col, nil)}
				}
			}
		}
		if err != nil {
			return nil, nil, err
		}
		values[i] = vs
		if sub.Field > 0 && !sub.Expression {
			fields.at = append(fields.at, sub.Field)
			fields.described = append(fields.described, col)
		}
	}
	sql, err := router.ReplaceSubqueries(stmt, values)
	if err != nil {
		return nil, nil, err
	}
	if fields != nil && len(fields.at) == 0 && len(fields.named) == 0 && fields.tooManyRows == nil {
		fields = nil
	}
	plan, err = s.planText(sql)
	if err != nil && unwritten != nil {
		err = unwritten
	}
	return plan, fields, err
}

// keptSubquery is the error of a subquery inside a select field's
// expression whose value cannot be written in (expressionColumn): the
// subquery is left in place.
type keptSubquery struct{ err error }

func (k *keptSubquery) Error() string { return k.err.Error() }

// fieldLayout is where sel's wildcards stand among its fields.
func fieldLayout(sel *ast.SelectStmt) *fieldSubqueries {
	f := &fieldSubqueries{}
	if sel.Fields == nil {
		return f
	}
	f.fields = len(sel.Fields.Fields)
	for i, field := range sel.Fields.Fields {
		if field.WildCard != nil {
			f.wildcards = append(f.wildcards, i+1)
		}
	}
	return f
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
// when an EXISTS subquery has a row. For a select field's subquery it
// returns the field's column too, as MariaDB describes it
// (subqueryColumn). what names the statement in errors.
func (s *Session) subqueryValues(ctx context.Context, sel *router.Plan, sub router.Subquery, conns connSource, what string) ([]any, *mysql.Field, error) {
	if sub.Kind == router.SubqueryDerived {
		vs, err := s.chosenRows(ctx, sel, sub, conns, what)
		return vs, nil, err
	}
	unchanged := "; nothing was changed"
	if what == aSelect {
		unchanged = ""
	}
	rows, err := s.readRows(ctx, sel, conns, "a subquery")
	var my *mysql.MyError
	if errors.As(err, &my) && my.Code == mysql.ER_BAD_FIELD_ERROR {
		// An unqualified column of the statement around it: the
		// subquery is correlated after all, and cannot run alone.
		return nil, nil, &NotSupportedError{What: fmt.Sprintf("%s whose subquery spans data nodes and names a column it does not select from (correlated with the statement around it?): run alone, it gets %q", what, my.Message)}
	}
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	cols := rows.Columns()
	value := func(row Row) (any, error) { return subqueryValue(cols[0], row[0], sub, what, unchanged) }
	if sub.Average != "" {
		if value, err = averageValue(cols, what, unchanged); err != nil {
			return nil, nil, err
		}
	} else if len(cols) != 1 && sub.Kind != router.SubqueryExists {
		return nil, nil, mysql.NewError(mysql.ER_OPERAND_COLUMNS, "Operand should contain 1 column(s)")
	}
	var col *mysql.Field
	switch {
	case sub.Expression:
		if err := expressionColumn(cols[0], sub); err != nil {
			return nil, nil, &keptSubquery{err: err}
		}
		col = cols[0]
	case sub.Field > 0:
		if col, err = subqueryColumn(cols[0], sub.Name); err != nil {
			return nil, nil, err
		}
	}
	seen := map[any]bool{}
	values := []any{}
	var scalar Row
	size := 0
	for {
		row, err := rows.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		switch sub.Kind {
		case router.SubqueryExists:
			return []any{int64(1)}, nil, nil
		case router.SubqueryScalar:
			if size > 0 {
				return nil, col, mysql.NewError(mysql.ER_SUBQUERY_NO_1_ROW, "Subquery returns more than 1 row")
			}
			scalar, size = row, 1
			continue
		}
		v, err := value(row)
		if err != nil {
			return nil, nil, err
		}
		if seen[v] {
			continue
		}
		seen[v] = true
		values = append(values, v)
		size += len(row[0])
		if len(values) > maxSubqueryValues || size > maxSubqueryBytes {
			return nil, nil, &NotSupportedError{What: fmt.Sprintf("%s whose IN subquery spans data nodes and returns more than %d distinct values or %d MiB (the proxy evaluates it first and writes its values into the statement)%s", what, maxSubqueryValues, maxSubqueryBytes>>20, unchanged)}
		}
	}
	if sub.Kind == router.SubqueryScalar && size > 0 {
		v, err := value(scalar)
		if err != nil {
			return nil, nil, err
		}
		values = append(values, v)
	}
	if sub.Expression {
		var v any
		if len(values) > 0 {
			v = values[0]
		}
		t := expressionValue(col, v)
		if !fits(t) {
			// CAST would clip it to the column's precision.
			return nil, nil, &keptSubquery{err: &NotSupportedError{What: fmt.Sprintf("a SELECT whose select field holds, inside an expression, a subquery spanning data nodes whose value %s has more digits than its column %s describes", t.Value, col.Name)}}
		}
		values = []any{t}
	}
	return values, col, nil
}

// averageValue checks the columns of an AVG subquery read as its SUM and
// COUNT (Subquery.Average) and returns how a row of them is read: as the
// Quotient written in for the average, NULL for an empty SUM.
func averageValue(cols []*mysql.Field, what, unchanged string) (func(Row) (any, error), error) {
	switch {
	case len(cols) != 2:
		return nil, &InternalError{Msg: fmt.Sprintf("an AVG subquery read as SUM and COUNT returned %d columns", len(cols))}
	case cols[0].Type != mysql.MYSQL_TYPE_NEWDECIMAL:
		// A DOUBLE's: subqueryValue refuses the average's type too.
		return nil, &NotSupportedError{What: fmt.Sprintf("%s whose subquery spans data nodes and averages values of type %s (the proxy evaluates such a subquery first, for integer, decimal and text values)%s", what, fieldTypeName(cols[0]), unchanged)}
	}
	return func(row Row) (any, error) {
		if row[0] == nil {
			return nil, nil
		}
		n, err := strconv.ParseInt(string(row[1]), 10, 64)
		if err != nil {
			return nil, &InternalError{Msg: fmt.Sprintf("an AVG subquery's COUNT %q", row[1])}
		}
		return router.Quotient{Sum: router.Decimal(row[0]), Count: n}, nil
	}, nil
}

// fits reports whether t's value has no more digits before its point
// than its precision and scale leave.
func fits(t router.TypedNumber) bool {
	whole, _, _ := strings.Cut(strings.TrimLeft(string(t.Value), "-"), ".")
	return len(strings.TrimLeft(whole, "0")) <= t.Precision-t.Scale
}

// expressionColumn checks that the value of sub, a scalar subquery
// inside the expression of a select field whose SELECT describes its
// column as f, can be written in as MariaDB computes and describes the
// expression around it (expressionValue): a signed DECIMAL whose value
// MariaDB shows with all its digits (not an AVG's or a division's,
// which it keeps with more decimals than it shows), a BIGINT (COUNT) or
// BIGINT UNSIGNED. Other types keep 1235, naming the type: no form
// written in gives a smaller integer's type and length or a string's
// collation derivation as the subquery's (read on MariaDB 10.11).
func expressionColumn(f *mysql.Field, sub router.Subquery) error {
	const what = "a SELECT whose select field holds, inside an expression, a subquery spanning data nodes"
	cast, _, _, ok := numberCast(f)
	if !ok {
		return &NotSupportedError{What: fmt.Sprintf("%s of column %s of type %s (the proxy evaluates such a subquery first for signed DECIMAL, BIGINT and BIGINT UNSIGNED values, which it can write in as MariaDB types the subquery)", what, f.Name, expressionTypeName(f))}
	}
	if cast == router.CastDecimal && sub.Rounded {
		return &NotSupportedError{What: fmt.Sprintf("%s with an AVG or a division (MariaDB computes the expression with more decimals of its value than it shows, which the proxy cannot read)", what)}
	}
	return nil
}

// expressionValue is v, the value of a scalar subquery inside the
// expression of a select field (nil for NULL, or none), written in typed
// as its column f (expressionColumn).
func expressionValue(f *mysql.Field, v any) router.TypedNumber {
	cast, precision, scale, _ := numberCast(f)
	t := router.TypedNumber{Null: v == nil, Precision: precision, Scale: scale, As: cast}
	switch v := v.(type) {
	case router.Decimal:
		t.Value = v
	case int64:
		t.Value = router.Decimal(strconv.FormatInt(v, 10))
	case uint64:
		t.Value = router.Decimal(strconv.FormatUint(v, 10))
	}
	return t
}

// numberCast is how a value of column f is written in typed as f
// (router.TypedNumber), ok when MariaDB so types it as f (read on 10.11):
// a signed DECIMAL as itself, its precision and scale read from its
// length (which counts a sign and, with decimals, a point); a BIGINT of
// length 10 to 21 (COUNT's is 21) as a DECIMAL of one digit less cast AS
// SIGNED; a BIGINT UNSIGNED (20) as a DECIMAL(20) cast AS UNSIGNED.
func numberCast(f *mysql.Field) (cast router.NumberCast, precision, scale int, ok bool) {
	if f.Flag&mysql.ZEROFILL_FLAG != 0 {
		return 0, 0, 0, false
	}
	unsigned := f.Flag&mysql.UNSIGNED_FLAG != 0
	switch {
	case f.Type == mysql.MYSQL_TYPE_NEWDECIMAL && !unsigned:
		scale = int(f.Decimal)
		precision = int(f.ColumnLength) - 1
		if scale > 0 {
			precision--
		}
		return router.CastDecimal, precision, scale, precision >= 1 && precision <= 65 && scale <= 38 && scale <= precision
	case f.Type == mysql.MYSQL_TYPE_LONGLONG && !unsigned:
		return router.CastSigned, int(f.ColumnLength) - 1, 0, f.ColumnLength >= 10 && f.ColumnLength <= 21
	case f.Type == mysql.MYSQL_TYPE_LONGLONG:
		return router.CastUnsigned, 20, 0, f.ColumnLength == 20
	}
	return 0, 0, 0, false
}

// expressionTypeName names f's type for expressionColumn's error.
func expressionTypeName(f *mysql.Field) string {
	switch {
	case f.Flag&mysql.ZEROFILL_FLAG != 0:
		return "ZEROFILL number"
	case f.Type == mysql.MYSQL_TYPE_NEWDECIMAL && f.Flag&mysql.UNSIGNED_FLAG != 0:
		return "DECIMAL UNSIGNED"
	case f.Charset != 63 && (f.Type == mysql.MYSQL_TYPE_VARCHAR || f.Type == mysql.MYSQL_TYPE_VAR_STRING || f.Type == mysql.MYSQL_TYPE_STRING):
		return "text"
	}
	switch f.Type {
	case mysql.MYSQL_TYPE_TINY, mysql.MYSQL_TYPE_SHORT, mysql.MYSQL_TYPE_INT24, mysql.MYSQL_TYPE_LONG, mysql.MYSQL_TYPE_LONGLONG:
		return fmt.Sprintf("integer of length %d", f.ColumnLength)
	case mysql.MYSQL_TYPE_YEAR:
		return "YEAR"
	}
	return fieldTypeName(f)
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

// subqueryColumn is the column MariaDB describes for a select field that
// is a scalar subquery whose SELECT, run alone, describes its column as
// f: f's type, length, decimals and character set, no table or original
// name, nullable whatever f is, BINARY on numbers (and UNSIGNED
// if f is), NOT_FIXED_DEC decimals on a table's text column (read on
// MariaDB 10.11).
// name, unless empty, names it. A ZEROFILL number (which MariaDB widens),
// ENUM and SET (which it describes as VARCHAR), TEXT (whose length it
// multiplies) and the types subqueryValue refuses get 1235.
func subqueryColumn(f *mysql.Field, name string) (*mysql.Field, error) {
	c := &mysql.Field{Type: f.Type, Charset: f.Charset, ColumnLength: f.ColumnLength, Decimal: f.Decimal}
	if name != "" {
		c.Name = []byte(name)
	}
	described := false
	switch f.Type {
	case mysql.MYSQL_TYPE_TINY, mysql.MYSQL_TYPE_SHORT, mysql.MYSQL_TYPE_INT24, mysql.MYSQL_TYPE_LONG,
		mysql.MYSQL_TYPE_LONGLONG, mysql.MYSQL_TYPE_YEAR, mysql.MYSQL_TYPE_NEWDECIMAL, mysql.MYSQL_TYPE_DECIMAL:
		c.Flag = f.Flag&mysql.UNSIGNED_FLAG | mysql.BINARY_FLAG
		described = f.Flag&mysql.ZEROFILL_FLAG == 0 || f.Type == mysql.MYSQL_TYPE_YEAR // YEAR is always ZEROFILL
	case mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING, mysql.MYSQL_TYPE_STRING:
		if len(f.OrgName) > 0 {
			// A table's column says 0; as an expression it has
			// NOT_FIXED_DEC, as other strings (MAX(enum) has 0).
			c.Decimal = notFixedDecimals
		}
		described = f.Charset != 63 && f.Flag&(mysql.ENUM_FLAG|mysql.SET_FLAG) == 0
	}
	if !described {
		return nil, &NotSupportedError{What: fmt.Sprintf("a SELECT whose select list holds a subquery spanning data nodes of column %s of type %s (the proxy evaluates such a subquery first and describes its column as MariaDB does for integers, decimals and VARCHAR or CHAR text; not ZEROFILL, ENUM, SET, TEXT or other types)", f.Name, fieldTypeName(f))}
	}
	return c, nil
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
	case mysql.MYSQL_TYPE_TINY_BLOB, mysql.MYSQL_TYPE_MEDIUM_BLOB, mysql.MYSQL_TYPE_LONG_BLOB, mysql.MYSQL_TYPE_BLOB:
		if f.Charset != 63 {
			return "TEXT"
		}
	}
	switch {
	case f.Charset == 63:
		return "binary string"
	case f.Flag&mysql.ENUM_FLAG != 0:
		return "ENUM"
	case f.Flag&mysql.SET_FLAG != 0:
		return "SET"
	case f.Flag&mysql.ZEROFILL_FLAG != 0:
		return "ZEROFILL number"
	}
	return "code " + strconv.Itoa(int(f.Type))
}
