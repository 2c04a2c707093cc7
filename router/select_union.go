package router

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"
)

// unionBranch reports whether sel, as every route of a multi-route
// SELECT runs it (rewritten for the merge), may be a branch of a UNION
// ALL and mean there what it means alone, with a result whose columns
// do not depend on the arguments or the session's variables: the
// proxy then may send the routes of one data source as one UNION ALL
// statement (Plan.Unionable). Refused: locking reads (not allowed in a
// UNION), INTO, options MariaDB allows only in a UNION's first SELECT
// (SQL_CALC_FOUND_ROWS, SQL_NO_CACHE, HIGH_PRIORITY, SQL_BUFFER_RESULT),
// a WITH clause or braces around the statement, no FROM, a subquery
// anywhere (whose select list could depend on them), a variable
// assignment (:=) anywhere, and placeholders, variables or string
// literals in the select list.
func unionBranch(sel *ast.SelectStmt) bool {
	if sel.Kind != ast.SelectStmtKindSelect || sel.From == nil || sel.With != nil || sel.IsInBraces ||
		sel.SelectIntoOpt != nil || sel.LockInfo != nil && sel.LockInfo.LockType != ast.SelectLockNone {
		return false
	}
	if o := sel.SelectStmtOpts; o != nil && (o.CalcFoundRows || !o.SQLCache || o.Priority > 0 || o.SQLBufferResult) {
		return false
	}
	v := &unionVisitor{root: sel}
	sel.Accept(v)
	if v.refused {
		return false
	}
	for _, f := range sel.Fields.Fields {
		if f.Expr == nil {
			continue
		}
		fv := &unionVisitor{root: f.Expr, selectList: true}
		f.Expr.Accept(fv)
		if fv.refused {
			return false
		}
	}
	return true
}

// unionVisitor looks for what keeps a statement out of a UNION ALL.
type unionVisitor struct {
	root ast.Node
	// selectList: placeholders, variables and string literals refuse.
	selectList bool
	refused    bool
}

func (v *unionVisitor) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.SelectStmt:
		v.refused = v.refused || n != v.root
	case *ast.SetOprStmt, *ast.SubqueryExpr:
		v.refused = true
	case *ast.VariableExpr:
		v.refused = v.refused || x.Value != nil || v.selectList
	case ast.ParamMarkerExpr:
		v.refused = v.refused || v.selectList
	case *ast.ColumnNameExpr:
		if _, ok := paramOf(x); ok && v.selectList {
			v.refused = true
		}
	case *driver.ValueExpr:
		switch x.Kind() {
		case driver.KindNull, driver.KindInt64, driver.KindUint64, driver.KindFloat32, driver.KindFloat64, driver.KindMysqlDecimal:
		default:
			// A string, or a literal written with quotes (X'..', DATE '..').
			v.refused = v.refused || v.selectList
		}
	}
	return n, v.refused
}

func (v *unionVisitor) Leave(n ast.Node) (ast.Node, bool) { return n, !v.refused }
