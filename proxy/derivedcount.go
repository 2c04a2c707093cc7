package proxy

import (
	"errors"
	"io"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"

	"github.com/shardflake/shardflake/proxy/internal/sqlarg"
	"github.com/shardflake/shardflake/router"
)

// ORMs count a query's rows by wrapping it: SELECT COUNT(*) FROM (SELECT
// ... LIMIT 10) subquery_for_count (ActiveRecord's relation.limit(10)
// .count), SELECT COUNT(*) FROM (SELECT ... LIMIT 5) subquery (Django's
// qs[:5].count(), and its count of a distinct or annotated query). The
// router pushes such a count down when the inner query returns rows each
// data node can give alone (router/select_lift.go); with LIMIT, DISTINCT,
// GROUP BY or aggregates inside over several data nodes it cannot, and
// answers 1235. The proxy then runs the inner query alone, merged as any
// SELECT, and counts its rows: the answer is the outer COUNT(*) exactly,
// one row under the outer column's name, typed as MariaDB types COUNT(*).

// rowCounter replaces a result set by the count of its rows.
type rowCounter struct{ name string }

// derivedCountPlan plans st, a SELECT the router refused, as its derived table's query whose rows the proxy counts, when
// st is only COUNT(*) of one derived table (no WHERE, GROUP BY, HAVING,
// ORDER BY, LIMIT or locking of its own). ok is false for any other
// statement and for an inner query the router cannot plan either.
func (s *Session) derivedCountPlan(st *statement) (plan *router.Plan, ok bool) {
	if st.returning != "" || st.out.into != nil || st.out.found != nil {
		return nil, false
	}
	sql, ok := textWithArgs(st)
	if !ok {
		return nil, false
	}
	innerSQL, name, ok := s.derivedCount(sql)
	if !ok {
		return nil, false
	}
	inner, err := s.planRead(innerSQL)
	if err != nil {
		return nil, false
	}
	st.out.count = &rowCounter{name: name}
	return inner, true
}

// textWithArgs is st's text with a prepared statement's arguments written
// in, as for a route that runs as text.
func textWithArgs(st *statement) (string, bool) {
	if st.args == nil {
		return st.sql, true
	}
	sql, err := sqlarg.Interpolate(st.sql, st.args, sqlarg.Backslash)
	return sql, err == nil
}

// derivedCount returns, for sql that is only COUNT(*) of one derived
// table, the derived table's query and the name of the count's column.
func (s *Session) derivedCount(sql string) (inner, name string, ok bool) {
	stmts, err := s.parse(sql)
	if err != nil || len(stmts) != 1 {
		return "", "", false
	}
	sel, isSelect := stmts[0].(*ast.SelectStmt)
	if !isSelect || sel.Kind != ast.SelectStmtKindSelect || sel.Where != nil || sel.GroupBy != nil || sel.Having != nil ||
		sel.OrderBy != nil || sel.Limit != nil || sel.LockInfo != nil || sel.Distinct || sel.WindowSpecs != nil ||
		sel.SelectIntoOpt != nil || sel.Fields == nil || len(sel.Fields.Fields) != 1 {
		return "", "", false
	}
	field := sel.Fields.Fields[0]
	if !countsRows(field.Expr) {
		return "", "", false
	}
	if sel.From == nil || sel.From.TableRefs == nil || sel.From.TableRefs.Right != nil {
		return "", "", false
	}
	src, isSource := sel.From.TableRefs.Left.(*ast.TableSource)
	if !isSource {
		return "", "", false
	}
	query := src.Source
	if tn, isName := query.(*ast.TableName); isName {
		// WITH sub AS (SELECT ...) SELECT COUNT(*) FROM sub: the only
		// common table expression, read once.
		if sel.With == nil || len(sel.With.CTEs) != 1 {
			return "", "", false
		}
		query = router.CTERead(sel, tn)
	} else if sel.With != nil {
		return "", "", false
	}
	switch query.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
	default:
		return "", "", false
	}
	var b strings.Builder
	if err := query.Restore(format.NewRestoreCtx(restoreFlags, &b)); err != nil {
		return "", "", false
	}
	return b.String(), fieldName(field), true
}

// isDerivedCount reports whether a statement being prepared is COUNT(*)
// of one derived table (no INTO): its executes run as text.
func (s *Session) isDerivedCount(sql string, into *selectInto) bool {
	_, _, ok := s.derivedCount(sql)
	return ok && into == nil
}

// countsRows reports COUNT(*) or COUNT of a constant that is not NULL,
// which count every row.
func countsRows(e ast.ExprNode) bool {
	agg, ok := e.(*ast.AggregateFuncExpr)
	if !ok || !strings.EqualFold(agg.F, ast.AggFuncCount) || agg.Distinct || len(agg.Args) != 1 || agg.Order != nil {
		return false
	}
	v, ok := agg.Args[0].(ast.ValueExpr)
	return ok && v.GetValue() != nil
}

// countRows reads rows to their end and answers their count instead.
func (c *rowCounter) countRows(rows RowStream) (RowStream, error) {
	n, err := streamLength(rows)
	if err != nil {
		return nil, err
	}
	col := itemInt(c.name, mysql.MYSQL_TYPE_LONGLONG, 21, mysql.NOT_NULL_FLAG)
	return newMemStream([]*mysql.Field{col}, []Row{rowOf(n)}), nil
}

// streamLength reads rows to their end, closes them, and returns how many
// there were.
func streamLength(rows RowStream) (int64, error) {
	defer rows.Close()
	var n int64
	for {
		_, err := rows.Next()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return 0, err
		}
		n++
	}
}
