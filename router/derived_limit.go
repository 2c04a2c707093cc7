package router

import (
	"math"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
)

// ORMs page parents with their children by reading the parents in a
// derived table that carries the LIMIT and joining the children to it:
// Sequelize's findAll({ include: [...], limit }) writes SELECT `Order`.*,
// `Items`.`item_id` AS `Items.item_id`, ... FROM (SELECT ... FROM
// `t_order` AS `Order` ORDER BY ... LIMIT 3) AS `Order` LEFT OUTER JOIN
// `t_order_item` AS `Items` ON `Order`.`order_id` = `Items`.`order_id`.
// Over several data nodes each would choose its own first rows. The
// proxy evaluates such a derived table first, as a SELECT of its own
// merged across data nodes (its ORDER BY and LIMIT exact), and reads
// which rows it chose by a unique key among its columns; the statement
// then runs with the derived table restricted to those rows (key IN
// (...)) under LIMIT 18446744073709551615, which keeps MariaDB
// materializing it as it did and cuts nothing, and routes as a derived
// table read row by row (derived_join.go).

// DerivedLimit is how the proxy reads a SubqueryDerived: Subquery.SQL is
// the derived table's SELECT with its LIMIT widened by a row on each side
// of the chosen rows, so that the proxy can tell whether rows equal in
// the ORDER BY straddle a boundary (which rows of them MariaDB chooses
// is then its own, not the data nodes').
type DerivedLimit struct {
	// Skip is the rows the read returns before the first chosen one (1
	// with an OFFSET, the row before it; else 0); Count is how many rows
	// are chosen at most. A row past them, when the read has it, is the
	// first row not chosen.
	Skip  int64 `json:"skip"`
	Count int64 `json:"count"`
	// Columns are the positions (from 0) of the select fields that are
	// plain columns: the rows are read by a unique key among them.
	Columns []int `json:"columns"`
	// Order are the positions of the select fields the ORDER BY names,
	// in its order; nil without ORDER BY.
	Order []int `json:"order,omitempty"`
	// Refused, when set, says why the derived table cannot be evaluated
	// first: the statement keeps 1235 with it.
	Refused string `json:"refused,omitempty"`
}

// ChosenRows is the value of a SubqueryDerived: the rows the derived
// table chose, by the values of the select fields at Key (positions from
// 0, plain columns that together are unique).
type ChosenRows struct {
	Key  []int
	Rows [][]any
}

// derivedLimits appends to subs the derived tables with LIMIT of sel's
// FROM clause that the proxy may evaluate first.
func derivedLimits(sel *ast.SelectStmt, subs []Subquery) ([]Subquery, error) {
	if sel.Kind != ast.SelectStmtKindSelect || sel.LockInfo != nil || sel.With != nil {
		return subs, nil
	}
	var err error
	eachDerivedLimit(sel, func(inner *ast.SelectStmt) {
		if err != nil {
			return
		}
		var sub Subquery
		sub, err = derivedRead(inner)
		subs = append(subs, sub)
	})
	return subs, err
}

// eachDerivedLimit calls fn for each derived table of sel's FROM clause
// whose SELECT reads rows (no grouping, aggregate, DISTINCT, window or
// wildcard) under a LIMIT that may cut them.
func eachDerivedLimit(sel *ast.SelectStmt, fn func(inner *ast.SelectStmt)) {
	eachDerivedTable(sel, func(_ *ast.TableSource, inner *ast.SelectStmt) {
		if limitedRows(inner) {
			fn(inner)
		}
	})
}

// limitedRows reports a plain SELECT of rows with a LIMIT that may cut
// them.
func limitedRows(sel *ast.SelectStmt) bool {
	if sel.Kind != ast.SelectStmtKindSelect || sel.Limit == nil || unboundedLimit(sel.Limit) || sel.With != nil ||
		sel.LockInfo != nil || sel.SelectIntoOpt != nil || sel.GroupBy != nil || sel.Having != nil || sel.Distinct ||
		sel.Fields == nil || !oneRow(sel.Fields) || hasWindows(sel) {
		return false
	}
	for _, f := range sel.Fields.Fields {
		if f.WildCard != nil {
			return false
		}
	}
	return true
}

// derivedRead describes how the proxy reads inner, a derived table's
// SELECT with LIMIT.
func derivedRead(inner *ast.SelectStmt) (Subquery, error) {
	d := &DerivedLimit{}
	sub := Subquery{Kind: SubqueryDerived, Strings: true, Derived: d}
	for i, f := range inner.Fields.Fields {
		if _, ok := f.Expr.(*ast.ColumnNameExpr); ok {
			d.Columns = append(d.Columns, i)
		}
	}
	if inner.OrderBy != nil {
		for _, by := range inner.OrderBy.Items {
			i := orderedField(inner.Fields.Fields, by.Expr)
			if i < 0 {
				d.Refused = "its ORDER BY names an expression it does not select"
				break
			}
			d.Order = append(d.Order, i)
		}
	}
	limit := inner.Limit
	count, countOK := literalLimit(limit.Count)
	offset, offsetOK := int64(0), true
	if limit.Offset != nil {
		offset, offsetOK = literalLimit(limit.Offset)
	}
	if countOK && offsetOK {
		// One row on each side of the chosen ones.
		d.Count = count
		if offset > 0 {
			d.Skip = 1
		}
		widened := &ast.Limit{Count: ast.NewValueExpr(min(count, math.MaxInt64-2)+1+d.Skip, "", "")}
		if d.Skip > 0 {
			widened.Offset = ast.NewValueExpr(offset-1, "", "")
		}
		inner.Limit = widened
		defer func() { inner.Limit = limit }()
	}
	var err error
	sub.SQL, err = restoreSQL(inner)
	return sub, err
}

// orderedField returns the position of the select field an ORDER BY item
// names (by position, alias or column), -1 for any other expression.
func orderedField(fields []*ast.SelectField, e ast.ExprNode) int {
	switch x := e.(type) {
	case *ast.PositionExpr:
		if x.P == nil && x.N >= 1 && x.N <= len(fields) {
			return x.N - 1
		}
	case *ast.ColumnNameExpr:
		name := x.Name
		for i, f := range fields {
			if name.Table.L == "" && f.AsName.L == name.Name.L {
				return i
			}
		}
		for i, f := range fields {
			c, ok := f.Expr.(*ast.ColumnNameExpr)
			if ok && c.Name.Name.L == name.Name.L && (name.Table.L == "" || name.Table.L == c.Name.Table.L) &&
				(f.AsName.L == "" || f.AsName.L == name.Name.L) {
				return i
			}
		}
	}
	return -1
}

// literalLimit is a LIMIT operand's literal value (a ? has none).
func literalLimit(e ast.ExprNode) (int64, bool) {
	v, ok := e.(ast.ValueExpr)
	if !ok {
		return 0, false
	}
	n, err := limitValue(v.GetValue())
	return n, err == nil
}

// replaceDerived restricts each derived table derivedLimits finds in sel
// to the rows values gives it (a ChosenRows each), or with wide to no
// row in particular, under LIMIT 18446744073709551615 without ORDER BY,
// and returns how many it found.
func replaceDerived(sel *ast.SelectStmt, values [][]any, wide bool) (int, error) {
	if sel.Kind != ast.SelectStmtKindSelect || sel.LockInfo != nil || sel.With != nil {
		return 0, nil
	}
	n := 0
	var err error
	eachDerivedLimit(sel, func(inner *ast.SelectStmt) {
		i := n
		n++
		if err != nil || (!wide && i >= len(values)) {
			return
		}
		inner.OrderBy = nil
		inner.Limit = &ast.Limit{Count: ast.NewValueExpr(uint64(math.MaxUint64), "", "")}
		if wide {
			return
		}
		chosen, ok := firstValue(values[i]).(ChosenRows)
		if !ok {
			err = errNotSupported("a derived table's chosen rows are missing")
			return
		}
		inner.Where = andExpr(inner.Where, chosenPredicate(inner, chosen))
	})
	return n, err
}

func firstValue(vs []any) any {
	if len(vs) == 0 {
		return nil
	}
	return vs[0]
}

// chosenPredicate is key IN (v, ...), (k1, k2) IN ((v1, v2), ...), or
// FALSE without a row.
func chosenPredicate(inner *ast.SelectStmt, chosen ChosenRows) ast.ExprNode {
	if len(chosen.Rows) == 0 || len(chosen.Key) == 0 {
		return ast.NewValueExpr(int64(0), "", "")
	}
	keys := make([]ast.ExprNode, len(chosen.Key))
	for j, k := range chosen.Key {
		keys[j] = inner.Fields.Fields[k].Expr
	}
	list := make([]ast.ExprNode, len(chosen.Rows))
	for r, row := range chosen.Rows {
		if len(keys) == 1 {
			list[r] = valueExpr(row[0])
			continue
		}
		tuple := &ast.RowExpr{Values: make([]ast.ExprNode, len(row))}
		for j, v := range row {
			tuple.Values[j] = valueExpr(v)
		}
		list[r] = tuple
	}
	var expr ast.ExprNode = keys[0]
	if len(keys) > 1 {
		expr = &ast.RowExpr{Values: keys}
	}
	return &ast.PatternInExpr{Expr: expr, List: list}
}

// andExpr is (where) AND cond, or cond without a WHERE clause.
func andExpr(where, cond ast.ExprNode) ast.ExprNode {
	if where == nil {
		return cond
	}
	return &ast.BinaryOperationExpr{Op: opcode.LogicAnd, L: &ast.ParenthesesExpr{Expr: where}, R: cond}
}
