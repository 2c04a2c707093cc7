package proxy

import (
	"context"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"

	"github.com/shardflake/shardflake/internal/sqllex"
)

// FOUND_ROWS() is the session's, as in MariaDB: the number of rows the
// last statement with a result set sent (a SELECT, SHOW, ...), or, after a
// SELECT SQL_CALC_FOUND_ROWS, how many rows it would have sent without its
// LIMIT. Statements answered with an OK leave it as it was. The proxy
// keeps it (Session.found, set by writeRows) because the statement may
// have run on several data nodes, or on a pooled connection the next
// statement does not get.
//
// SQL_CALC_FOUND_ROWS is taken out of the statement, which runs as
// without it, and a second statement of the proxy's counts the rows
// first, on the same connections (the transaction's, in one): a
// SELECT COUNT(*) over the same FROM and WHERE, or, for a statement with
// GROUP BY, DISTINCT, HAVING or aggregates, the statement itself without
// LIMIT and ORDER BY, whose merged rows are counted. Counting first means
// a statement the count cannot run for fails whole, before any row is
// sent.

// foundRowsCount is the count of a SELECT SQL_CALC_FOUND_ROWS.
type foundRowsCount struct {
	// sql counts the rows: a COUNT(*) (rows false: its value is the
	// count) or the SELECT without LIMIT (rows true: its rows are).
	sql  string
	rows bool
	// n is the count once run, -1 before (a statement that did not run
	// as a routed plan: its rows sent are the count).
	n int64
}

// calcFoundRows reports a SELECT SQL_CALC_FOUND_ROWS.
func calcFoundRows(node ast.StmtNode) bool {
	sel, ok := node.(*ast.SelectStmt)
	return ok && sel.SelectStmtOpts != nil && sel.SelectStmtOpts.CalcFoundRows
}

// splitCalcFoundRows returns, for a SELECT SQL_CALC_FOUND_ROWS (node,
// parsed from sql), the statement without the option (base, and node as
// parsed from it) and the statement that counts its rows. ok is false for
// any other statement, and for an option the proxy cannot cut out of the
// text (inside an executable comment), which then runs as before.
func (s *Session) splitCalcFoundRows(sql string, node ast.StmtNode) (base string, baseNode ast.StmtNode, count *foundRowsCount, ok bool) {
	if !calcFoundRows(node) || node.(*ast.SelectStmt).From == nil {
		// Without a table, the data source answers as MariaDB.
		return "", nil, nil, false
	}
	// MariaDB allows the option only in the outermost SELECT, so its
	// first word of that spelling outside strings and comments is it.
	for sc := sqllex.NewScanner(sql, s.lexMode()); ; {
		t, more := sc.Next()
		if !more {
			return "", nil, nil, false
		}
		if t.Kind == sqllex.Word && strings.EqualFold(t.Text(sql), "SQL_CALC_FOUND_ROWS") {
			base = sql[:t.Start] + " " + sql[t.End:]
			break
		}
	}
	// Two parses of base: one edited into the count, then (the session's
	// parser reuses its trees) the one the statement runs as.
	stmts, err := s.parse(base)
	if err != nil || len(stmts) != 1 || calcFoundRows(stmts[0]) {
		return "", nil, nil, false
	}
	countSel, isSelect := stmts[0].(*ast.SelectStmt)
	if !isSelect {
		return "", nil, nil, false
	}
	if count, err = foundRowsStatement(countSel); err != nil {
		return "", nil, nil, false
	}
	if stmts, err = s.parse(base); err != nil || len(stmts) != 1 {
		return "", nil, nil, false
	}
	return base, stmts[0], count, true
}

// foundRowsStatement edits sel, a SELECT without SQL_CALC_FOUND_ROWS,
// into the statement that counts the rows it would send without LIMIT.
func foundRowsStatement(sel *ast.SelectStmt) (*foundRowsCount, error) {
	sel.Limit, sel.OrderBy, sel.LockInfo = nil, nil, nil
	rows := sel.Distinct || sel.GroupBy != nil || sel.Having != nil || sel.WindowSpecs != nil
	for _, f := range sel.Fields.Fields {
		if f.Expr != nil && (hasAggregate(f.Expr) || hasWindow(f.Expr)) {
			rows = true
		}
	}
	if !rows {
		sel.Fields = &ast.FieldList{Fields: []*ast.SelectField{{Expr: &ast.AggregateFuncExpr{F: ast.AggFuncCount, Args: []ast.ExprNode{ast.NewValueExpr(1, "", "")}}}}}
	}
	var b strings.Builder
	if err := sel.Restore(format.NewRestoreCtx(restoreFlags, &b)); err != nil {
		return nil, err
	}
	return &foundRowsCount{sql: b.String(), rows: rows, n: -1}, nil
}

// countFoundRows runs count on src, before its statement, and keeps
// the count in it.
func (s *Session) countFoundRows(ctx context.Context, count *foundRowsCount, src connSource, inTxn bool) error {
	plan, err := s.planRead(count.sql)
	if err != nil {
		return err
	}
	res, err := s.executePlan(ctx, plan, src, inTxn, TextProtocol)
	if err != nil {
		return err
	}
	if res.rows == nil {
		return &InternalError{Msg: "the count of SQL_CALC_FOUND_ROWS returned no result set"}
	}
	if count.rows {
		count.n, err = streamLength(res.rows)
		return err
	}
	all, err := drain(res.rows)
	if err != nil {
		return err
	}
	if len(all) != 1 || len(all[0]) != 1 {
		return &InternalError{Msg: "the count of SQL_CALC_FOUND_ROWS is not one value"}
	}
	if count.n, err = strconv.ParseInt(string(all[0][0]), 10, 64); err != nil {
		return &InternalError{Msg: "the count of SQL_CALC_FOUND_ROWS: " + err.Error()}
	}
	return nil
}

// hasAggregate reports an aggregate function in e outside subqueries.
func hasAggregate(e ast.ExprNode) bool {
	f := nodeFinder{match: func(n ast.Node) bool { _, ok := n.(*ast.AggregateFuncExpr); return ok }}
	e.Accept(&f)
	return f.found
}

// hasWindow reports a window function in e outside subqueries.
func hasWindow(e ast.ExprNode) bool {
	f := nodeFinder{match: func(n ast.Node) bool { _, ok := n.(*ast.WindowFuncExpr); return ok }}
	e.Accept(&f)
	return f.found
}

// nodeFinder finds a node match accepts, outside subqueries.
type nodeFinder struct {
	match func(ast.Node) bool
	found bool
}

func (f *nodeFinder) Enter(n ast.Node) (ast.Node, bool) {
	if _, sub := n.(*ast.SubqueryExpr); sub {
		return n, true
	}
	if f.match(n) {
		f.found = true
	}
	return n, f.found
}

func (f *nodeFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }
