package router

import (
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/pingcap/tidb/pkg/parser/types"
)

// Django on MariaDB writes filter(related__x=...).update() as
//
//	UPDATE t SET ... WHERE t.id IN (SELECT U0.id FROM t U0 INNER JOIN rel U1 ON ... WHERE U1.x = ...)
//
// and a delete filtered on an aggregate as DELETE ... WHERE id IN
// (SELECT ... GROUP BY ... HAVING ...); on MySQL it wraps the subquery in
// a derived table, IN (SELECT * FROM (SELECT ...) subquery). Such a
// subquery is uncorrelated: its value is one list for the whole
// statement, which MariaDB reads before it changes a row. When the
// statement cannot run on each data node as it is, the proxy evaluates
// the subquery first, as a SELECT of its own (a locking read, in the
// statement's transaction), and routes the statement with the list in
// its place: InSubqueries finds the subqueries, ReplaceSubqueries puts
// their values in.

// Decimal is a DECIMAL value, in MariaDB's text, for ReplaceSubqueries:
// it is written as a decimal literal, which compares exactly, where a
// string would compare as a floating-point number.
type Decimal string

// InSubqueries returns, for each `expr [NOT] IN (SELECT ...)` of an
// UPDATE's or DELETE's WHERE clause (outside other subqueries) whose
// subquery names no table or alias of the statement around it, that
// subquery as the text of a SELECT ... FOR UPDATE, in the order of the
// WHERE clause; the derived-table wrapping SELECT * FROM (SELECT ...) x
// is taken off. A subquery with LIMIT that is not so wrapped is left
// alone (MariaDB refuses it). InSubqueries marks the statement's
// subqueries FOR UPDATE: parse again to use the statement elsewhere.
func InSubqueries(stmt ast.StmtNode) ([]string, error) {
	switch stmt.(type) {
	case *ast.UpdateStmt, *ast.DeleteStmt:
	default:
		return nil, nil
	}
	subs, err := subqueriesOf(stmt)
	sqls := make([]string, len(subs))
	for i, sub := range subs {
		sqls[i] = sub.SQL
	}
	return sqls, err
}

// subqueriesOf returns the subqueries eachSubquery finds in stmt.
func subqueriesOf(stmt ast.StmtNode) ([]Subquery, error) {
	var subs []Subquery
	var err error
	eachSubquery(stmt, func(at subqueryAt) ast.ExprNode {
		if err == nil {
			var sql string
			if sql, err = restoreSQL(at.sel); err == nil {
				sub := Subquery{SQL: sql, Kind: at.kind, Strings: at.strings, Field: at.field,
					Expression: at.expression, Rounded: at.expression && rounded(at.sel), Aggregated: at.aggregated, PerRow: at.perRow}
				if at.field == 0 && at.kind != SubqueryExists {
					sub.Average, err = averageParts(at.sel)
				}
				subs = append(subs, sub)
			}
		}
		return at.node
	})
	if len(subs) == 0 {
		return nil, err
	}
	return subs, err
}

// SubqueryKind is how a statement uses the rows of a subquery the proxy
// evaluates first.
type SubqueryKind int

const (
	// SubqueryIn is expr [NOT] IN (SELECT ...): its distinct values.
	SubqueryIn SubqueryKind = iota + 1
	// SubqueryScalar is (SELECT ...) as a value: its one row's one
	// column, NULL without a row.
	SubqueryScalar
	// SubqueryExists is [NOT] EXISTS (SELECT ...): whether it has a row.
	SubqueryExists
	// SubqueryDerived is a derived table of the FROM clause with LIMIT
	// (DerivedLimit): the rows it chooses, by key (ChosenRows).
	SubqueryDerived
)

// Subquery is an uncorrelated subquery of a SELECT that the proxy
// evaluates first (SelectSubqueries).
type Subquery struct {
	// SQL is the subquery's SELECT, to plan alone.
	SQL  string
	Kind SubqueryKind
	// Strings is set when a string value, written as a literal, keeps
	// the subquery's meaning: the subquery is compared with a column,
	// whose collation then decides, as it does against the subquery's.
	// Elsewhere a literal would compare in the connection's collation.
	Strings bool
	// Field is the position, from 1, of the select field the scalar
	// subquery is by itself (0 in WHERE and HAVING): the proxy describes
	// that result column as MariaDB describes a subquery's, not the
	// literal's.
	Field int
	// Expression is set when the scalar subquery stands inside the
	// expression of select field Field: its value is written in typed as
	// the subquery (TypedNumber), for MariaDB to compute and describe the
	// field as it does with the subquery.
	Expression bool
	// Rounded is set when the subquery's value may hold more digits
	// than its column's decimals (an AVG, a division: MariaDB keeps
	// nine decimal digits and shows fewer), so that the value as read
	// is not the value an expression around it computes with.
	Rounded bool
	// Aggregated is set when that subquery stands inside an aggregate
	// or window function, which MariaDB evaluates for the rows it
	// reads, not for those it returns.
	Aggregated bool
	// PerRow is set when the expression of that select field reads a
	// column, an aggregate, a window, a variable or a function whose
	// value changes from row to row: MariaDB evaluates it for rows only.
	// Otherwise it is constant, and MariaDB evaluates it before it reads
	// a row where GROUP BY, ORDER BY or HAVING names the field.
	PerRow bool
	// Average, when set, is the subquery of a WHERE or HAVING clause as
	// a SELECT of the SUM and the COUNT it averages (averageParts): the
	// proxy runs it instead of SQL and writes in a Quotient.
	Average string
	// Derived describes a SubqueryDerived's read.
	Derived *DerivedLimit
	// Name is that column's name when the statement run is not the
	// client's text (a prepared statement's, with its arguments written
	// in: MariaDB names the column by the text with its ?s); the proxy
	// sets it.
	Name string
}

// SelectSubqueries returns the uncorrelated subqueries of a SELECT's
// select list, WHERE and HAVING clauses (outside other subqueries), in
// their order: scalar subqueries of the select fields, by themselves
// (Django's Subquery annotation) or inside a field's expression
// (F('amount') - Subquery(...)), and in WHERE and HAVING `expr [NOT] IN (SELECT ...)`
// as InSubqueries finds them, scalar subqueries and [NOT] EXISTS. Row
// comparisons, ANY/ALL and subqueries over UNION are left alone, as is a
// locking SELECT. ReplaceSubqueries puts their values in.
func SelectSubqueries(stmt ast.StmtNode) ([]Subquery, error) {
	sel, ok := stmt.(*ast.SelectStmt)
	if !ok {
		return nil, nil
	}
	subs, err := subqueriesOf(stmt)
	if err != nil {
		return subs, err
	}
	return derivedLimits(sel, subs)
}

// ReplaceSubqueries replaces the subqueries InSubqueries or
// SelectSubqueries find in stmt, in the same order, by their values, and
// returns the statement's text (to parse again and plan). The values are
// nil, int64, uint64, string, Decimal or TypedNumber: for an IN subquery its list,
// expr IN (v1, v2, ...); for a scalar subquery none (NULL) or one; for
// EXISTS none (FALSE) or any; nil leaves a subquery inside a select
// field's expression in place. An empty list is FALSE for IN and TRUE for
// NOT IN, whatever expr is, as MariaDB evaluates an empty subquery. With
// values nil, every IN and EXISTS becomes TRUE and every scalar NULL: an
// UPDATE or DELETE then reaches every data node the rest of its WHERE
// clause does, which includes those it reaches with any list.
func ReplaceSubqueries(stmt ast.StmtNode, values [][]any) (string, error) {
	n := 0
	eachSubquery(stmt, func(at subqueryAt) ast.ExprNode {
		i := n
		n++
		switch {
		case values == nil && at.kind == SubqueryScalar:
			return ast.NewValueExpr(nil, "", "")
		case values == nil:
			return ast.NewValueExpr(int64(1), "", "")
		case i >= len(values), at.expression && values[i] == nil:
			return at.node
		case at.kind == SubqueryScalar:
			if len(values[i]) == 0 {
				return ast.NewValueExpr(nil, "", "")
			}
			return valueExpr(values[i][0])
		case len(values[i]) == 0 && at.not, len(values[i]) > 0 && at.kind == SubqueryExists && !at.not:
			return ast.NewValueExpr(int64(1), "", "")
		case len(values[i]) == 0, at.kind == SubqueryExists:
			return ast.NewValueExpr(int64(0), "", "")
		}
		p := at.node.(*ast.PatternInExpr)
		list := make([]ast.ExprNode, len(values[i]))
		for j, v := range values[i] {
			list[j] = valueExpr(v)
		}
		p.Sel, p.List = nil, list
		return p
	})
	if sel, ok := stmt.(*ast.SelectStmt); ok {
		var rest [][]any
		if values != nil {
			rest = values[min(n, len(values)):]
		}
		derived, err := replaceDerived(sel, rest, values == nil)
		if err != nil {
			return "", err
		}
		n += derived
	}
	if values != nil && n != len(values) {
		return "", errNotSupported("the statement has %d subqueries to replace, not %d", n, len(values))
	}
	return restoreSQL(stmt)
}

// averageParts returns sel as a SELECT of the SUM and the COUNT of what it
// averages, when its one field is AVG([DISTINCT] x) and neither ORDER BY
// nor HAVING may name it; "" otherwise. MariaDB shows an average with
// four more decimals than x has, but computes with more (22.34 / 7 is
// 3.191429 shown, 3.191428571 as a DOUBLE), and a value compared as a
// DOUBLE, or multiplied, is the one it computed: the proxy writes in
// (SUM / COUNT) (Quotient), which MariaDB computes as it computes the
// AVG (read on 10.11), instead of the value it shows.
func averageParts(sel *ast.SelectStmt) (string, error) {
	if sel.Fields == nil || len(sel.Fields.Fields) != 1 || sel.OrderBy != nil || sel.Having != nil {
		return "", nil
	}
	field := sel.Fields.Fields[0]
	avg, ok := field.Expr.(*ast.AggregateFuncExpr)
	if !ok || !strings.EqualFold(avg.F, ast.AggFuncAvg) || len(avg.Args) != 1 {
		return "", nil
	}
	fields := sel.Fields.Fields
	sel.Fields.Fields = []*ast.SelectField{
		{Expr: &ast.AggregateFuncExpr{F: ast.AggFuncSum, Args: avg.Args, Distinct: avg.Distinct}},
		{Expr: &ast.AggregateFuncExpr{F: ast.AggFuncCount, Args: avg.Args, Distinct: avg.Distinct}},
	}
	defer func() { sel.Fields.Fields = fields }()
	return restoreSQL(sel)
}

// Quotient is the value of an AVG subquery read as its SUM and COUNT
// (Subquery.Average), written in as (Sum / Count).
type Quotient struct {
	Sum   Decimal
	Count int64
}

// TypedNumber is the value of a scalar subquery inside an expression of
// the select list, for ReplaceSubqueries, written typed as the subquery's
// column: IF(1, CAST(Value AS DECIMAL(Precision, Scale)), NULL) for a
// signed DECIMAL; for a BIGINT (As CastSigned or CastUnsigned) that
// DECIMAL of scale 0 cast again AS SIGNED or UNSIGNED, which MariaDB
// gives the length Precision+1, or 20. Value is NULL when Null is set.
// MariaDB gives the form the subquery's type, length, decimals and
// nullability, so an expression around it is computed and described as
// around the subquery (read on 10.11), where a bare literal would change
// the expression's length and decimals and make it NOT NULL.
type TypedNumber struct {
	Value            Decimal
	Null             bool
	Precision, Scale int
	As               NumberCast
}

// NumberCast is the type a TypedNumber is cast to at last.
type NumberCast int

const (
	// CastDecimal leaves it a DECIMAL.
	CastDecimal NumberCast = iota
	// CastSigned casts it AS SIGNED (BIGINT).
	CastSigned
	// CastUnsigned casts it AS UNSIGNED (BIGINT UNSIGNED).
	CastUnsigned
)

// valueExpr is a subquery's value as a literal; a Decimal is written as
// a decimal literal, a TypedNumber as the typed expression it describes.
func valueExpr(v any) ast.ExprNode {
	if q, ok := v.(Quotient); ok {
		return &ast.ParenthesesExpr{Expr: &ast.BinaryOperationExpr{Op: opcode.Div, L: valueExpr(q.Sum), R: ast.NewValueExpr(q.Count, "", "")}}
	}
	if t, ok := v.(TypedNumber); ok {
		var value ast.ExprNode = ast.NewValueExpr(nil, "", "")
		if !t.Null {
			value = valueExpr(t.Value)
		}
		tp := types.NewFieldType(mysql.TypeNewDecimal)
		tp.SetFlen(t.Precision)
		tp.SetDecimal(t.Scale)
		value = &ast.FuncCastExpr{Expr: value, Tp: tp, FunctionType: ast.CastFunction}
		if t.As != CastDecimal {
			tp := types.NewFieldType(mysql.TypeLonglong)
			if t.As == CastUnsigned {
				tp.AddFlag(mysql.UnsignedFlag)
			}
			value = &ast.FuncCastExpr{Expr: value, Tp: tp, FunctionType: ast.CastFunction}
		}
		return &ast.FuncCallExpr{FnName: ast.NewCIStr(ast.If), Args: []ast.ExprNode{ast.NewValueExpr(int64(1), "", ""), value, ast.NewValueExpr(nil, "", "")}}
	}
	if d, ok := v.(Decimal); ok {
		dec := new(driver.MyDecimal)
		if dec.FromString([]byte(d)) == nil {
			v = dec
		} else {
			v = string(d)
		}
	}
	return ast.NewValueExpr(v, "", "")
}

// subqueryAt is a subquery InSubqueries or SelectSubqueries describes:
// node is what its value replaces (the IN predicate, the scalar
// subquery, the EXISTS), sel the SELECT that gives its values.
type subqueryAt struct {
	node ast.ExprNode
	sel  *ast.SelectStmt
	kind SubqueryKind
	// not: NOT IN, NOT EXISTS.
	not     bool
	strings bool
	// field: the select field's position, from 1, for a scalar
	// subquery that is a field by itself or inside its expression
	// (expression).
	field      int
	expression bool
	// aggregated: inside an aggregate or window function; perRow: the
	// field's expression is not constant (Subquery.PerRow).
	aggregated, perRow bool
}

// eachSubquery calls fn for each subquery InSubqueries (an UPDATE or
// DELETE) or SelectSubqueries (a SELECT) describes, and puts what fn
// returns in its place.
func eachSubquery(stmt ast.StmtNode, fn func(subqueryAt) ast.ExprNode) {
	w := &subqueryWalker{fn: fn}
	var clauses []*ast.ExprNode
	switch s := stmt.(type) {
	case *ast.UpdateStmt:
		w.forUpdate, clauses = true, []*ast.ExprNode{&s.Where}
	case *ast.DeleteStmt:
		w.forUpdate, clauses = true, []*ast.ExprNode{&s.Where}
	case *ast.SelectStmt:
		if s.Kind != ast.SelectStmtKindSelect || s.LockInfo != nil || s.With != nil {
			// A subquery may read the statement's common table
			// expressions, which it cannot run without.
			return
		}
		w.scalars, w.columnCompared = true, map[*ast.SubqueryExpr]bool{}
		fieldSubqueries(s, fn)
		clauses = []*ast.ExprNode{&s.Where}
		if s.Having != nil {
			clauses = append(clauses, &s.Having.Expr)
		}
	}
	for _, c := range clauses {
		if *c == nil {
			continue
		}
		if n, ok := (*c).Accept(w); ok {
			*c = n.(ast.ExprNode)
		}
	}
}

// fieldSubqueries calls fn for each uncorrelated scalar subquery of
// sel's select fields, a field by itself or inside a field's expression
// (outside other subqueries), and puts what fn returns in its place. A
// field's value is only shown, so a string written as a literal means
// the same, unless HAVING may compare it by its alias.
func fieldSubqueries(sel *ast.SelectStmt, fn func(subqueryAt) ast.ExprNode) {
	if sel.Fields == nil {
		return
	}
	for i, f := range sel.Fields.Fields {
		x, ok := f.Expr.(*ast.SubqueryExpr)
		if !ok {
			if f.Expr != nil {
				rows := &rowReader{}
				f.Expr.Accept(rows)
				w := &expressionSubqueries{fn: fn, field: i + 1, perRow: rows.found}
				if n, ok := f.Expr.Accept(w); ok {
					f.Expr = n.(ast.ExprNode)
				}
			}
			continue
		}
		// One of several columns is MariaDB's 1241 here, which the
		// proxy gives when it reads the subquery.
		if sub := uncorrelatedSelect(x); sub != nil {
			f.Expr = fn(subqueryAt{node: x, sel: sub, kind: SubqueryScalar, strings: sel.Having == nil, field: i + 1})
		}
	}
}

// expressionSubqueries calls fn for each uncorrelated scalar subquery
// inside the expression of select field field, outside other subqueries,
// and puts what fn returns in its place: of one column, or of any number
// as an argument of a function or a unary operator, where several are
// MariaDB's 1241, which the proxy gives when it reads the subquery (an
// operand of a binary operator gets MariaDB's 4078, naming the other
// operand's type: left as it is).
type expressionSubqueries struct {
	fn    func(subqueryAt) ast.ExprNode
	field int
	// arguments are the subqueries that are arguments of a function or
	// a unary operator.
	arguments map[*ast.SubqueryExpr]bool
	// aggregates counts the aggregate and window functions Enter is
	// inside.
	aggregates int
	perRow     bool
}

func (w *expressionSubqueries) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.SubqueryExpr:
		if sel := uncorrelatedSelect(x); sel != nil && (oneColumn(sel) || w.arguments[x]) {
			return w.fn(subqueryAt{node: x, sel: sel, kind: SubqueryScalar, field: w.field, expression: true, aggregated: w.aggregates > 0, perRow: w.perRow}), true
		}
		return n, true
	case *ast.FuncCallExpr:
		if rowArgument(x.FnName.L) {
			w.noteArguments(x.Args)
		}
	case *ast.UnaryOperationExpr:
		switch x.Op {
		case opcode.Minus, opcode.Plus, opcode.Not, opcode.Not2:
			w.noteArguments([]ast.ExprNode{x.V})
		}
	case *ast.AggregateFuncExpr:
		if rowArgument(strings.ToLower(x.F)) {
			w.noteArguments(x.Args)
		}
		w.aggregates++
	case *ast.WindowFuncExpr:
		w.aggregates++
	case *ast.PatternInExpr, *ast.ExistsSubqueryExpr, *ast.CompareSubqueryExpr:
		// IN, EXISTS, ANY and ALL over a subquery are left as they are.
		return n, true
	}
	return n, false
}

// rowArgument reports whether MariaDB refuses a subquery of several
// columns as an argument of function name (lower case) with 1241 (read
// on 10.11; GREATEST and LEAST, for two, answer 4078).
func rowArgument(name string) bool {
	switch name {
	case ast.Coalesce, ast.Ifnull, ast.Nullif, ast.If, ast.Abs, ast.Round, ast.Floor, ast.Truncate,
		ast.IsNull, ast.Interval, ast.Field, ast.Elt, ast.Concat, ast.ConcatWS, ast.JSONArray,
		ast.AggFuncCount, ast.AggFuncMax, ast.AggFuncMin, ast.AggFuncSum, ast.AggFuncAvg, ast.AggFuncGroupConcat:
		return true
	}
	return false
}

func (w *expressionSubqueries) noteArguments(args []ast.ExprNode) {
	for _, a := range args {
		if sq, ok := a.(*ast.SubqueryExpr); ok {
			if w.arguments == nil {
				w.arguments = map[*ast.SubqueryExpr]bool{}
			}
			w.arguments[sq] = true
		}
	}
}

func (w *expressionSubqueries) Leave(n ast.Node) (ast.Node, bool) {
	switch n.(type) {
	case *ast.AggregateFuncExpr, *ast.WindowFuncExpr:
		w.aggregates--
	}
	return n, true
}

// rowReader looks, outside subqueries, for what makes an expression's
// value change from row to row (Subquery.PerRow).
type rowReader struct{ found bool }

func (r *rowReader) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.SubqueryExpr:
		return n, true
	case *ast.ColumnNameExpr, *ast.AggregateFuncExpr, *ast.WindowFuncExpr, *ast.VariableExpr:
		r.found = true
	case *ast.FuncCallExpr:
		switch x.FnName.L {
		case ast.Rand, ast.UUID, ast.UUIDShort, ast.Sleep, "nextval", "lastval", "sys_guid":
			r.found = true
		}
	}
	return n, r.found
}

func (r *rowReader) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// rounded reports whether sel's value may hold more decimal digits than
// MariaDB shows: an AVG or a division in it.
func rounded(sel *ast.SelectStmt) bool {
	f := &roundedFinder{}
	sel.Accept(f)
	return f.found
}

type roundedFinder struct{ found bool }

func (f *roundedFinder) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.AggregateFuncExpr:
		f.found = f.found || strings.EqualFold(x.F, ast.AggFuncAvg)
	case *ast.BinaryOperationExpr:
		f.found = f.found || x.Op == opcode.Div
	}
	return n, f.found
}

func (f *roundedFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

type subqueryWalker struct {
	fn func(subqueryAt) ast.ExprNode
	// scalars: scalar subqueries and EXISTS too (a SELECT's).
	scalars bool
	// forUpdate: the subqueries read FOR UPDATE (an UPDATE's or
	// DELETE's).
	forUpdate bool
	// columnCompared are the scalar subqueries compared with a column.
	columnCompared map[*ast.SubqueryExpr]bool
}

func (w *subqueryWalker) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.PatternInExpr:
		if w.scalars && x.Sel == nil && slices.ContainsFunc(x.List, isSubquery) {
			if len(x.List) > 1 {
				return n, true // IN ((SELECT ...), 2): left as it is
			}
			// MariaDB reads expr IN ((SELECT ...)), goqu's form, as
			// expr IN (SELECT ...), not as a list of one scalar.
			x.Sel, x.List = x.List[0], nil
		}
		if sel := uncorrelatedInSelect(x); sel != nil {
			if w.forUpdate && sel.LockInfo == nil {
				sel.LockInfo = &ast.SelectLockInfo{LockType: ast.SelectLockForUpdate}
			}
			_, column := x.Expr.(*ast.ColumnNameExpr)
			return w.fn(subqueryAt{node: x, sel: sel, kind: SubqueryIn, not: x.Not, strings: column || !w.scalars}), true
		}
		// A row's or another kind of subquery: left as it is.
		return n, x.Sel != nil
	case *ast.SubqueryExpr:
		if sel := uncorrelatedSelect(x); w.scalars && sel != nil && oneColumn(sel) {
			return w.fn(subqueryAt{node: x, sel: sel, kind: SubqueryScalar, strings: w.columnCompared[x]}), true
		}
		return n, true
	case *ast.ExistsSubqueryExpr:
		if sq, ok := x.Sel.(*ast.SubqueryExpr); ok && w.scalars {
			if sel := uncorrelatedSelect(sq); sel != nil {
				return w.fn(subqueryAt{node: x, sel: sel, kind: SubqueryExists, not: x.Not}), true
			}
		}
		return n, true
	case *ast.CompareSubqueryExpr, *ast.RowExpr:
		return n, true // ANY, ALL; a row
	case *ast.BinaryOperationExpr:
		return n, w.scalars && w.rowComparison(x)
	}
	return n, false
}

// rowComparison reports whether x may compare rows (a row or two
// subqueries), which are left as they are, and notes a scalar subquery
// compared with a column.
func (w *subqueryWalker) rowComparison(x *ast.BinaryOperationExpr) bool {
	_, lrow := x.L.(*ast.RowExpr)
	_, rrow := x.R.(*ast.RowExpr)
	lsub, lok := x.L.(*ast.SubqueryExpr)
	rsub, rok := x.R.(*ast.SubqueryExpr)
	if lrow || rrow || (lok && rok) {
		return true
	}
	switch x.Op {
	case opcode.EQ, opcode.NE, opcode.LT, opcode.LE, opcode.GT, opcode.GE, opcode.NullEQ:
		if _, col := x.R.(*ast.ColumnNameExpr); col && lok {
			w.columnCompared[lsub] = true
		}
		if _, col := x.L.(*ast.ColumnNameExpr); col && rok {
			w.columnCompared[rsub] = true
		}
	}
	return false
}

func (w *subqueryWalker) Leave(n ast.Node) (ast.Node, bool) { return n, true }

func isSubquery(e ast.ExprNode) bool {
	_, ok := e.(*ast.SubqueryExpr)
	return ok
}

// uncorrelatedSelect returns the SELECT of a scalar or EXISTS subquery
// that names no table or alias of the statement around it.
func uncorrelatedSelect(sq *ast.SubqueryExpr) *ast.SelectStmt {
	sel, ok := sq.Query.(*ast.SelectStmt)
	if !ok || correlated(sel) {
		return nil
	}
	return sel
}

// oneColumn reports whether sel selects one column and no wildcard: a
// scalar subquery of several is a row, whose error MariaDB words by
// where it stands (4078 in a comparison, 1241 elsewhere).
func oneColumn(sel *ast.SelectStmt) bool {
	return sel.Fields != nil && len(sel.Fields.Fields) == 1 && sel.Fields.Fields[0].WildCard == nil
}

// uncorrelatedInSelect returns the SELECT whose values the IN predicate p
// tests, or nil when p does not test one uncorrelated single value.
func uncorrelatedInSelect(p *ast.PatternInExpr) *ast.SelectStmt {
	if p.Sel == nil {
		return nil
	}
	if _, ok := p.Expr.(*ast.RowExpr); ok {
		return nil
	}
	sq, ok := p.Sel.(*ast.SubqueryExpr)
	if !ok {
		return nil
	}
	sel, ok := sq.Query.(*ast.SelectStmt)
	if !ok {
		return nil
	}
	if inner := derivedOnly(sel); inner != nil {
		sel = inner
	} else if sel.Limit != nil {
		return nil
	}
	if correlated(sel) {
		return nil
	}
	return sel
}

// derivedOnly returns the SELECT of sel's one derived table when sel is
// just SELECT * FROM (SELECT ...) alias (Django's wrapping), or SELECT
// alias.c FROM (SELECT ... c ...) alias of the derived table's one column
// (MikroORM's, for a page of parents with their children: WHERE
// a0.id IN (SELECT a0.id FROM (SELECT a0.id ... LIMIT 3) AS a0)).
func derivedOnly(sel *ast.SelectStmt) *ast.SelectStmt {
	if sel.From == nil || sel.From.TableRefs == nil || sel.From.TableRefs.Right != nil || sel.Where != nil ||
		sel.GroupBy != nil || sel.Having != nil || sel.OrderBy != nil || sel.Limit != nil || sel.Distinct ||
		sel.LockInfo != nil || len(sel.WindowSpecs) > 0 || sel.With != nil || sel.Fields == nil || len(sel.Fields.Fields) != 1 {
		return nil
	}
	ts, ok := sel.From.TableRefs.Left.(*ast.TableSource)
	if !ok {
		return nil
	}
	inner, ok := ts.Source.(*ast.SelectStmt)
	if !ok {
		return nil
	}
	if wc := sel.Fields.Fields[0].WildCard; wc != nil {
		if wc.Table.L != "" {
			return nil
		}
		return inner
	}
	if !derivedColumn(sel.Fields.Fields[0].Expr, ts.AsName.L, inner) {
		return nil
	}
	return inner
}

// derivedColumn reports whether e names the one column of inner, a
// derived table called alias, unqualified or by that alias.
func derivedColumn(e ast.ExprNode, alias string, inner *ast.SelectStmt) bool {
	c, ok := e.(*ast.ColumnNameExpr)
	if !ok || c.Name.Schema.L != "" || c.Name.Table.L != "" && c.Name.Table.L != alias ||
		inner.Fields == nil || len(inner.Fields.Fields) != 1 {
		return false
	}
	f := inner.Fields.Fields[0]
	name := f.AsName.L
	if ic, ok := f.Expr.(*ast.ColumnNameExpr); ok && name == "" {
		name = ic.Name.Name.L
	}
	return name != "" && name == c.Name.Name.L
}

// correlated reports whether sel qualifies a column with a name that no
// table or alias inside it declares: a reference to the statement
// around it. (An unqualified column of the outer statement is found when
// the SELECT runs alone: MariaDB answers that it knows no such column.)
func correlated(sel *ast.SelectStmt) bool {
	c := &nameCollector{declared: map[string]bool{}}
	sel.Accept(c)
	for _, q := range c.qualifiers {
		if !c.declared[q] {
			return true
		}
	}
	return false
}

type nameCollector struct {
	declared   map[string]bool
	qualifiers []string
}

func (c *nameCollector) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.TableSource:
		if x.AsName.L != "" {
			c.declared[x.AsName.L] = true
		} else if t, ok := x.Source.(*ast.TableName); ok {
			c.declared[t.Name.L] = true
		}
	case *ast.ColumnName:
		if x.Table.L != "" {
			c.qualifiers = append(c.qualifiers, strings.ToLower(x.Table.O))
		}
	}
	return n, false
}

func (c *nameCollector) Leave(n ast.Node) (ast.Node, bool) { return n, true }
