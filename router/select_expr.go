package router

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"
)

// exprContext is the clause an expression over the merged row comes
// from; it decides how a bare name resolves.
type exprContext int

const (
	// inSelect: a column of the select list; names are table columns.
	inSelect exprContext = iota + 1
	// inHaving: HAVING; a name is a select-list alias first.
	inHaving
	// inOrder: an ORDER BY expression over aggregates, which the routes
	// also compute as a hidden column, where an alias would not resolve.
	inOrder
)

// String names the clause, for messages.
func (c exprContext) String() string {
	switch c {
	case inSelect:
		return "the select list"
	case inHaving:
		return "HAVING"
	case inOrder:
		return "ORDER BY"
	}
	return "unknown"
}

// computedSpec is a Computed column being planned.
type computedSpec struct {
	field  int
	expr   *Expr
	params bool // expr has ? leaves to bind
}

// expr converts an expression over aggregates and columns into an Expr
// over result columns: aggregates become the columns of merge entries
// (AVG an ExprAvg of its SUM and COUNT columns), names become result
// columns, and a part without aggregates that the merge cannot evaluate
// (a function of columns) becomes a hidden column the routes compute. The
// column leaves carry field indexes in Column until finishExpr; params
// reports a ? among the leaves (a paramValue until bindExpr).
func (b *mergeBuilder) expr(e ast.ExprNode, ctx exprContext) (x *Expr, params bool, err error) {
	switch n := e.(type) {
	case *ast.ParenthesesExpr:
		return b.expr(n.Expr, ctx)
	case *ast.BinaryOperationExpr:
		if op, ok := binaryOps(n.Op); ok {
			return b.exprOp(op, ctx, n.L, n.R)
		}
	case *ast.UnaryOperationExpr:
		switch n.Op {
		case opcode.Not, opcode.Not2:
			return b.exprOp(ExprNot, ctx, n.V)
		case opcode.Minus:
			return b.exprOp(ExprNeg, ctx, n.V)
		case opcode.Plus:
			return b.expr(n.V, ctx)
		}
	case *ast.IsNullExpr:
		x, p, err := b.exprOp(ExprIsNull, ctx, n.Expr)
		return negated(x, n.Not), p, err
	case *ast.IsTruthExpr:
		op := ExprIsTrue
		if n.True == 0 {
			op = ExprIsFalse
		}
		x, p, err := b.exprOp(op, ctx, n.Expr)
		return negated(x, n.Not), p, err
	case *ast.PatternInExpr:
		if n.Sel != nil {
			break
		}
		if len(n.List) == 1 {
			// MariaDB reads x IN (y) as x = y, and compares as = does.
			x, p, err := b.exprOp(ExprEQ, ctx, n.Expr, n.List[0])
			return negated(x, n.Not), p, err
		}
		x, p, err := b.exprOp(ExprIn, ctx, append([]ast.ExprNode{n.Expr}, n.List...)...)
		return negated(x, n.Not), p, err
	case *ast.BetweenExpr:
		x, p, err := b.exprOp(ExprBetween, ctx, n.Expr, n.Left, n.Right)
		return negated(x, n.Not), p, err
	case *driver.ValueExpr:
		switch n.Kind() {
		case driver.KindMysqlDecimal:
			return &Expr{Op: ExprDecimal, Value: n.GetMysqlDecimal().String()}, false, nil
		case driver.KindNull, driver.KindInt64, driver.KindUint64, driver.KindFloat32, driver.KindFloat64, driver.KindString:
			v, _ := literalValue(n)
			return &Expr{Op: ExprValue, Value: v}, false, nil
		}
	case *ast.AggregateFuncExpr:
		return b.aggregateExpr(n)
	case *ast.ColumnNameExpr:
		if p, ok := paramOf(n); ok {
			return &Expr{Op: ExprValue, Value: paramValue{param: p}}, true, nil
		}
		return b.nameExpr(n, ctx)
	case *ast.FuncCallExpr:
		if !containsAggregate(n) && (ctx == inSelect || !b.namesAlias(n)) {
			break // the routes compute it exactly
		}
		switch n.FnName.L {
		case ast.Round:
			if len(n.Args) == 2 && containsColumn(n.Args[1]) {
				return nil, false, errNotSupported("ROUND over several data nodes needs a constant number of places")
			}
			if len(n.Args) == 1 || len(n.Args) == 2 {
				return b.exprOp(ExprRound, ctx, n.Args...)
			}
		case ast.Ifnull:
			if len(n.Args) == 2 {
				return b.exprOp(ExprIfNull, ctx, n.Args...)
			}
		case ast.Coalesce:
			if len(n.Args) > 0 {
				return b.exprOp(ExprCoalesce, ctx, n.Args...)
			}
		case ast.Abs:
			if len(n.Args) == 1 {
				return b.exprOp(ExprAbs, ctx, n.Args...)
			}
		}
	}
	if !containsAggregate(e) {
		return b.pushdown(e, ctx)
	}
	text, _ := restoreSQL(e)
	return nil, false, errNotSupported("%s over several data nodes supports aggregates and columns combined with arithmetic (+ - * / DIV %%), comparisons, AND/OR/NOT, IN, BETWEEN, IS NULL, ROUND, ABS, IFNULL and COALESCE, not %s", ctx, strings.ReplaceAll(text, "\x00", ""))
}

// exprOp converts the arguments and returns them under op.
func (b *mergeBuilder) exprOp(op ExprOp, ctx exprContext, args ...ast.ExprNode) (*Expr, bool, error) {
	x := &Expr{Op: op, Args: make([]*Expr, 0, len(args))}
	params := false
	for _, a := range args {
		v, p, err := b.expr(a, ctx)
		if err != nil {
			return nil, false, err
		}
		x.Args = append(x.Args, v)
		params = params || p
	}
	return x, params, nil
}

// aggregateExpr is the merged value of an aggregate: the column of its
// merge entry, or for AVG its merged SUM and COUNT (ExprAvg), which is
// how MariaDB computes AVG, before rounding it for display.
func (b *mergeBuilder) aggregateExpr(agg *ast.AggregateFuncExpr) (*Expr, bool, error) {
	if strings.ToLower(agg.F) == ast.AggFuncAvg && agg.Order == nil {
		sum, err := b.aggregate(&ast.AggregateFuncExpr{F: ast.AggFuncSum, Args: agg.Args, Distinct: agg.Distinct}, -1)
		if err != nil {
			return nil, false, err
		}
		count, err := b.aggregate(&ast.AggregateFuncExpr{F: ast.AggFuncCount, Args: agg.Args, Distinct: agg.Distinct}, -1)
		if err != nil {
			return nil, false, err
		}
		x := &Expr{Op: ExprAvg, Args: []*Expr{{Op: ExprColumn, Column: ColumnRef(sum)}, {Op: ExprColumn, Column: ColumnRef(count)}}}
		b.markUnrounded(x)
		return x, false, nil
	}
	j, err := b.aggregate(agg, -1)
	if err != nil {
		return nil, false, err
	}
	return &Expr{Op: ExprColumn, Column: ColumnRef(j)}, false, nil
}

// nameExpr resolves a name: in HAVING a select-list alias first. A name
// of a computed column or of an AVG stands for its expression, so that
// arithmetic on it sees the unrounded value as MariaDB's does.
func (b *mergeBuilder) nameExpr(n *ast.ColumnNameExpr, ctx exprContext) (*Expr, bool, error) {
	if ctx == inOrder && b.aliasOf(n) >= 0 {
		return nil, false, errNotSupported("ORDER BY an expression over aggregates that names the select-list alias %s is not supported over several data nodes; order by the alias alone", n.Name.Name.O)
	}
	j := b.match(n, ctx != inSelect)
	if j < 0 {
		return &Expr{Op: ExprColumn, Column: ColumnRef(b.addHidden(n))}, false, nil
	}
	if ctx != inSelect {
		for _, c := range b.computed {
			if c.field == j {
				x := cloneExpr(c.expr)
				b.markUnrounded(x)
				return x, c.params, nil
			}
		}
		if agg, ok := b.fields[j].Expr.(*ast.AggregateFuncExpr); ok && (strings.ToLower(agg.F) == ast.AggFuncAvg || varianceName(agg.F)) {
			return b.aggregateExpr(agg)
		}
	}
	return &Expr{Op: ExprColumn, Column: ColumnRef(b.field(j).field)}, false, nil
}

// markUnrounded notes a value MariaDB may compute with unrounded (an AVG,
// a computed column named by its alias) or rounded to its decimals,
// depending on its plan: see dependsOnPlan.
func (b *mergeBuilder) markUnrounded(x *Expr) {
	if b.unrounded == nil {
		b.unrounded = map[*Expr]bool{}
	}
	b.unrounded[x] = true
}

// dependsOnPlan reports whether an expression uses a value noted by
// markUnrounded other than as an operand of =, <>, <, <=, >, >= or <=>,
// which round it to its decimals anyway.
//
// MariaDB computes an AVG inside an expression (and a select-list
// expression that HAVING names by its alias) from the exact quotient,
// except when it groups the rows in sorted order (an index on the group
// key, or DISTINCT aggregates) and then writes the groups to a temporary
// table (to order them otherwise, or for DISTINCT): then from the value
// rounded to the AVG's decimals. Which plan it takes depends on indexes
// the router does not know.
func (b *mergeBuilder) dependsOnPlan(x *Expr, compared bool) bool {
	if b.unrounded[x] {
		return !compared
	}
	switch x.Op {
	case ExprEQ, ExprNE, ExprLT, ExprLE, ExprGT, ExprGE, ExprNullSafeEQ:
		compared = true
	default:
		compared = false
	}
	for _, a := range x.Args {
		if b.dependsOnPlan(a, compared) {
			return true
		}
	}
	return false
}

// pushdown makes an expression without aggregates a result column: a
// select-list column with the same text, or a hidden column the routes
// compute (its value in a merged row is that of the group's first row,
// exact for an expression of the group keys).
func (b *mergeBuilder) pushdown(e ast.ExprNode, ctx exprContext) (*Expr, bool, error) {
	if ctx != inSelect {
		var names nameFinder
		e.Accept(&names)
		for _, n := range names.names {
			j := b.aliasOf(n)
			if j < 0 {
				continue
			}
			// The routes compute it in their select list, where only a
			// column's alias can become the column.
			fc, ok := b.fields[j].Expr.(*ast.ColumnNameExpr)
			if !ok {
				text, _ := restoreSQL(e)
				return nil, false, errNotSupported("%s over several data nodes cannot compute %s, which names the select-list alias %s; name the column itself", ctx, strings.ReplaceAll(text, "\x00", ""), n.Name.Name.O)
			}
			n.Name = fc.Name
		}
		if names.params {
			// The routes would need the parameter in the select list.
			text, _ := restoreSQL(e)
			return nil, false, errNotSupported("%s over several data nodes cannot compute %s with a parameter", ctx, strings.ReplaceAll(text, "\x00", ""))
		}
	}
	if j := b.match(e, false); j >= 0 {
		return &Expr{Op: ExprColumn, Column: ColumnRef(b.field(j).field)}, false, nil
	}
	return &Expr{Op: ExprColumn, Column: ColumnRef(b.addHidden(e))}, false, nil
}

// aliasOf returns the visible field whose alias an unqualified name is,
// or -1.
func (b *mergeBuilder) aliasOf(n *ast.ColumnNameExpr) int {
	if n.Name.Table.L != "" {
		return -1
	}
	for j := 0; j < b.visible; j++ {
		if f := b.fields[j]; f.Expr != nil && f.AsName.L == n.Name.Name.L {
			return j
		}
	}
	return -1
}

// namesAlias reports a select-list alias among the names of e.
func (b *mergeBuilder) namesAlias(e ast.ExprNode) bool {
	var names nameFinder
	e.Accept(&names)
	for _, n := range names.names {
		if b.aliasOf(n) >= 0 {
			return true
		}
	}
	return false
}

// containsColumn reports a column name or an aggregate in e (a ? is
// neither).
func containsColumn(e ast.ExprNode) bool {
	var f nameFinder
	e.Accept(&f)
	return len(f.names) > 0 || containsAggregate(e)
}

// nameFinder collects the column names of an expression outside
// subqueries and notes parameter holes among them.
type nameFinder struct {
	names  []*ast.ColumnNameExpr
	params bool
}

func (f *nameFinder) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.SubqueryExpr:
		return n, true
	case *ast.ColumnNameExpr:
		if _, ok := paramOf(x); ok {
			f.params = true
		} else {
			f.names = append(f.names, x)
		}
	}
	return n, false
}

func (f *nameFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

func negated(x *Expr, not bool) *Expr {
	if not && x != nil {
		return &Expr{Op: ExprNot, Args: []*Expr{x}}
	}
	return x
}

func binaryOps(op opcode.Op) (ExprOp, bool) {
	switch op {
	case opcode.LogicAnd:
		return ExprAnd, true
	case opcode.LogicOr:
		return ExprOr, true
	case opcode.LogicXor:
		return ExprXor, true
	case opcode.EQ:
		return ExprEQ, true
	case opcode.NE:
		return ExprNE, true
	case opcode.LT:
		return ExprLT, true
	case opcode.LE:
		return ExprLE, true
	case opcode.GT:
		return ExprGT, true
	case opcode.GE:
		return ExprGE, true
	case opcode.NullEQ:
		return ExprNullSafeEQ, true
	case opcode.Plus:
		return ExprPlus, true
	case opcode.Minus:
		return ExprMinus, true
	case opcode.Mul:
		return ExprMul, true
	case opcode.Div:
		return ExprDiv, true
	case opcode.IntDiv:
		return ExprIntDiv, true
	case opcode.Mod:
		return ExprMod, true
	}
	return 0, false
}

// cloneExpr copies x deeply, so that finishExpr can rewrite each use.
func cloneExpr(x *Expr) *Expr {
	c := *x
	if len(x.Args) > 0 {
		c.Args = make([]*Expr, len(x.Args))
		for i, a := range x.Args {
			c.Args[i] = cloneExpr(a)
		}
	}
	return &c
}

// finishExpr turns the field indexes of column leaves into ColumnRefs.
func (b *mergeBuilder) finishExpr(x *Expr, total int) {
	if x.Op == ExprColumn {
		x.Column = b.colRef(mref{field: int(x.Column), abs: -1}, total)
	}
	for _, a := range x.Args {
		b.finishExpr(a, total)
	}
}

// bindExpr copies x with its ? leaves bound to args.
func bindExpr(x *Expr, args []any) *Expr {
	c := *x
	if p, ok := x.Value.(paramValue); ok {
		c.Value = argValue(args[p.param])
	}
	if len(x.Args) > 0 {
		c.Args = make([]*Expr, len(x.Args))
		for i, a := range x.Args {
			c.Args[i] = bindExpr(a, args)
		}
	}
	return &c
}
