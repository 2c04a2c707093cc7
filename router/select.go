package router

import (
	"math"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/shardflake/shardflake/algorithm"
)

// selectMerge is the multi-route form of a SELECT: the SQL every route
// runs and the merge of their results (bound per execution for LIMIT and
// HAVING parameters).
type selectMerge struct {
	tmpl *sqlTemplate
	// describe is the describing route's SQL when merge.Describe.
	describe *sqlTemplate
	merge    Merge // without Limit and with unbound HAVING
	// having has parameters to bind; nil when merge.Having is final.
	having *Expr
	// compute has parameters to bind; nil when merge.Compute is final.
	compute []Computed
	limit   *limitOperands
	// pushLimit: routes are sent LIMIT offset+count.
	pushLimit bool
	// unionable: the routes may be branches of one UNION ALL
	// (Plan.Unionable).
	unionable bool
	// oneGroup: per GROUP BY column, the operands the WHERE binds it to,
	// when the merge sorts in memory (select_onegroup.go); nil otherwise.
	oneGroup [][]operand
}

// limitOperands are LIMIT's count and offset, literals or ?s.
type limitOperands struct {
	count, offset operand
}

// paramValue is an unbound ? inside a HAVING template.
type paramValue struct{ param int }

// mref is a result column while the select list still grows: a field
// index, or (abs >= 0) a position counted from the first column.
type mref struct {
	field int
	abs   int
}

// mergeBuilder rewrites a SELECT for several routes and builds its merge.
type mergeBuilder struct {
	a        *analysis
	sel      *ast.SelectStmt
	fields   []*ast.SelectField
	visible  int
	wildLo   int      // first wildcard field, -1 when none
	wildHi   int      // last wildcard field
	texts    []string // restored expression text per field, lower-case
	hidden   int
	aggs     []aggSpec
	distinct []ast.ExprNode // arguments of DISTINCT aggregates, grouped by on routes
	// distinctFields are the hidden fields of distinct.
	distinctFields []int
	// exactArgs marks the distinct arguments whose every spelling counts
	// (a GROUP_CONCAT without DISTINCT): routes group by their bytes too.
	exactArgs []bool
	computed  []computedSpec
	// partials are the hidden fields with an AVG's partial SUM and COUNT,
	// which a merged SUM or COUNT of the same argument may reuse.
	partials []int
	// unrounded are the Expr nodes of markUnrounded.
	unrounded map[*Expr]bool
	// groupKeys are GROUP BY's keys (planGroupKeys).
	groupKeys []mref
	// orderRefs and orderDesc are ORDER BY's non-constant keys
	// (planOrder), then the order the routes are sent (planShape).
	orderRefs []mref
	orderDesc []bool
	// having is HAVING's merge expression, nil without HAVING;
	// havingParams says it has parameters to bind (planHaving).
	having       *Expr
	havingParams bool
	// clause is the clause being planned (zero: the select list), and
	// hiddenClauses the clause of each hidden field, in order.
	clause        Clause
	hiddenClauses []Clause
}

// aggSpec is an aggregate being planned.
type aggSpec struct {
	fn       AggregateFunc
	field    int
	distinct bool
	args     []mref
	sum      mref
	count    mref
	text     string
	concat   *groupConcatSpec // GROUP_CONCAT and JSON_ARRAYAGG only
	varPop   mref             // the variance family only
}

// prepareMerge rewrites sel (already carrying table and parameter holes)
// into the statement every route runs and builds the merge. An error
// means the SELECT cannot be answered correctly across data nodes; it is
// returned only when an execution reaches several.
func (a *analysis) prepareMerge(sel *ast.SelectStmt, lists func(ast.ExprNode) []operand) (*selectMerge, error) {
	if err := a.unmergeable(sel); err != nil {
		return nil, err
	}
	b := &mergeBuilder{a: a, sel: sel, fields: sel.Fields.Fields, visible: len(sel.Fields.Fields), wildLo: -1, wildHi: -1}
	if err := b.readFields(); err != nil {
		return nil, err
	}
	if err := b.planAggregates(); err != nil {
		return nil, err
	}
	if err := b.planComputed(); err != nil {
		return nil, err
	}
	if err := b.foldPositions(); err != nil {
		return nil, err
	}
	if err := b.planGroupKeys(); err != nil {
		return nil, err
	}
	if err := b.planHaving(); err != nil {
		return nil, err
	}
	// After HAVING's pushdown, before planShape rewrites GROUP BY.
	bindings := b.oneGroupBindings(lists)
	if err := b.planOrder(); err != nil {
		return nil, err
	}
	m := &selectMerge{}
	var err error
	if m.limit, err = limitOperandsOf(sel.Limit); err != nil {
		return nil, err
	}
	if err := checkRollup(sel); err != nil {
		return nil, err
	}
	if err := b.planShape(m); err != nil {
		return nil, err
	}
	if err := b.planRollup(m); err != nil {
		return nil, err
	}
	b.rewriteRoutes(m)
	// Every column is known now: turn field indexes into ColumnRefs.
	total := len(b.fields)
	b.finishSort(m, total)
	b.finishGroup(m, total)
	b.finishComputed(m, total)
	b.finishHaving(m, total)
	b.finishUnlisted(m)
	if len(b.computed) > 0 || m.merge.Group != nil && m.merge.Group.Rollup {
		if err := b.describe(m, sel); err != nil {
			return nil, err
		}
		m.merge.Describe = true
	}
	m.unionable = unionBranch(sel)
	if len(m.merge.OrderBy) > 0 {
		m.oneGroup = bindings
	}
	t, err := buildTemplate(sel)
	if err != nil {
		return nil, err
	}
	m.tmpl = t
	return m, nil
}

// describe builds the describing route's SQL: the statement with its
// computed columns and LIMIT 0, which MariaDB answers with the columns'
// definitions and no rows, evaluating nothing. Then it replaces the
// computed columns by NULL in sel, for the routes that return rows: a
// route would compute them from its own partial aggregates, for groups
// HAVING or LIMIT may drop, and could fail where MariaDB does not (BIGINT
// UNSIGNED value is out of range).
//
// Under ROLLUP it describes every visible column, WITH ROLLUP kept:
// MariaDB describes a ROLLUP's columns as its temporary table holds them
// (COUNT's BINARY flag, no NUM flag on an integer key), not as the
// routes' plain GROUP BY does.
func (b *mergeBuilder) describe(m *selectMerge, sel *ast.SelectStmt) error {
	limit, orderBy := sel.Limit, sel.OrderBy
	sel.Limit, sel.OrderBy = &ast.Limit{Count: ast.NewValueExpr(0, "", "")}, nil
	rollup := m.merge.Group != nil && m.merge.Group.Rollup
	if rollup {
		sel.GroupBy.Rollup = true
	}
	t, err := buildTemplate(sel)
	sel.Limit, sel.OrderBy = limit, orderBy
	if rollup {
		sel.GroupBy.Rollup = false
	}
	if err != nil {
		return err
	}
	m.describe = t
	for _, c := range b.computed {
		f := *b.fields[c.field]
		f.Expr = ast.NewValueExpr(nil, "", "")
		b.fields[c.field] = &f
	}
	sel.Fields.Fields = b.fields
	return nil
}

// unmergeable rejects SELECT features whose results cannot be combined
// from several data nodes.
func (a *analysis) unmergeable(sel *ast.SelectStmt) error {
	switch {
	case sel.Kind != ast.SelectStmtKindSelect:
		return errNotSupported("TABLE and VALUES statements over several data nodes are not supported")
	case sel.SelectIntoOpt != nil:
		return errNotSupported("SELECT ... INTO over several data nodes is not supported")
	case sel.SelectStmtOpts != nil && sel.SelectStmtOpts.CalcFoundRows:
		return errNotSupported("SQL_CALC_FOUND_ROWS over several data nodes is not supported")
	}
	if hasWindows(sel) {
		return a.windowsAcross(sel)
	}
	return nil
}

// hasWindows reports a window function or WINDOW clause in block sel,
// outside subqueries.
func hasWindows(sel *ast.SelectStmt) bool {
	return len(blockWindows(sel, false)) > 0
}

// blockWindows returns the windows of block sel: its WINDOW clause's and
// those of the window functions in its select list and ORDER BY (not in
// subqueries, which are blocks of their own); only the first unless all.
func blockWindows(sel *ast.SelectStmt, all bool) []*ast.WindowSpec {
	w := windowFinder{all: all}
	for i := range sel.WindowSpecs {
		w.specs = append(w.specs, &sel.WindowSpecs[i])
	}
	for _, f := range sel.Fields.Fields {
		if f.Expr != nil {
			f.Expr.Accept(&w)
		}
	}
	if sel.OrderBy != nil {
		sel.OrderBy.Accept(&w)
	}
	return w.specs
}

// windowFinder gathers the window functions' windows of the nodes it
// visits, outside subqueries; it stops at the first unless all.
type windowFinder struct {
	all   bool
	specs []*ast.WindowSpec
}

func (w *windowFinder) Enter(n ast.Node) (ast.Node, bool) {
	if !w.all && len(w.specs) > 0 {
		return n, true
	}
	switch x := n.(type) {
	case *ast.WindowFuncExpr:
		w.specs = append(w.specs, &x.Spec)
	case *ast.SubqueryExpr:
		return n, true
	}
	return n, false
}

func (w *windowFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// containsAggregate reports an aggregate function in e outside subqueries.
func containsAggregate(e ast.ExprNode) bool {
	var f aggFinder
	e.Accept(&f)
	return f.found
}

type aggFinder struct{ found bool }

func (f *aggFinder) Enter(n ast.Node) (ast.Node, bool) {
	switch n.(type) {
	case *ast.AggregateFuncExpr:
		f.found = true
	case *ast.SubqueryExpr:
		return n, true
	}
	return n, f.found
}

func (f *aggFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

func exprText(e ast.ExprNode) (string, error) {
	s, err := restoreSQL(e)
	return strings.ToLower(s), err
}

// addressable reports whether field j can be named by a ColumnRef: no
// wildcard before it, or none after it.
func (b *mergeBuilder) addressable(j int) bool {
	return j >= b.visible || b.wildLo < 0 || j < b.wildLo || j > b.wildHi
}

// colRef converts a field index into a ColumnRef once the list is final.
func (b *mergeBuilder) colRef(r mref, total int) ColumnRef {
	if r.abs >= 0 {
		return ColumnRef(r.abs)
	}
	if r.field < b.visible && (b.wildLo < 0 || r.field < b.wildLo) {
		return ColumnRef(r.field)
	}
	return ColumnRef(r.field - total)
}

// addHidden appends a helper column and returns its field index.
func (b *mergeBuilder) addHidden(e ast.ExprNode) int {
	name := "__sf_hidden_" + strconv.Itoa(b.hidden)
	b.fields = append(b.fields, &ast.SelectField{Expr: e, AsName: ast.CIStr{O: name, L: name}})
	t, _ := exprText(e)
	b.texts = append(b.texts, t)
	b.hiddenClauses = append(b.hiddenClauses, b.clause)
	b.hidden++
	return len(b.fields) - 1
}

// field returns a reference to field j, through a hidden copy when j
// cannot be addressed.
func (b *mergeBuilder) field(j int) mref {
	if b.addressable(j) {
		return mref{field: j, abs: -1}
	}
	return mref{field: b.addHidden(b.fields[j].Expr), abs: -1}
}

// aggregate plans one aggregate function found at field j (-1: a hidden
// aggregate needed by HAVING or ORDER BY) and returns its field.
func (b *mergeBuilder) aggregate(agg *ast.AggregateFuncExpr, j int) (int, error) {
	text, err := exprText(agg)
	if err != nil {
		return 0, err
	}
	if j < 0 {
		// A hidden use reads the merged value of any equal aggregate; a
		// column of the select list gets an entry of its own even when it
		// repeats another, since the merge replaces only the columns its
		// entries name.
		for _, s := range b.aggs {
			// Not a visible variance: it prints rounded to its column's
			// decimals, where an expression reads the DOUBLE itself
			// (a hidden one prints every digit, proxy/merge).
			if s.text == text && !(s.fn.Variance() && s.field < b.visible) {
				return s.field, nil
			}
		}
		for _, k := range b.partials {
			if b.texts[k] == text {
				// Merging the partials in place: the AVG reads them from
				// the routes' rows, before the merge writes its result.
				j = k
				break
			}
		}
	}
	var fn AggregateFunc
	switch strings.ToLower(agg.F) {
	case ast.AggFuncCount:
		fn = AggCount
	case ast.AggFuncSum:
		fn = AggSum
	case ast.AggFuncMin:
		fn = AggMin
	case ast.AggFuncMax:
		fn = AggMax
	case ast.AggFuncAvg:
		fn = AggAvg
	case ast.AggFuncBitOr:
		fn = AggBitOr
	case ast.AggFuncBitAnd:
		fn = AggBitAnd
	case ast.AggFuncBitXor:
		fn = AggBitXor
	case ast.AggFuncGroupConcat:
		return b.groupConcat(agg, j, text)
	case ast.AggFuncVarPop, ast.AggFuncVarSamp, ast.AggFuncStddevPop, ast.AggFuncStddevSamp:
		return b.variance(agg, j, text)
	case ast.AggFuncJsonObjectAgg:
		fn = AggJSONObjectAgg
	case ast.AggFuncJsonArrayagg:
		return b.jsonArrayAgg(agg, j, text)
	default:
		return 0, errNotSupported("aggregate function %s over several data nodes is not supported", strings.ToUpper(agg.F))
	}
	if agg.Order != nil {
		return 0, errNotSupported("ORDER BY inside %s over several data nodes is not supported", strings.ToUpper(agg.F))
	}
	if j < 0 {
		j = b.addHidden(agg)
	}
	s := aggSpec{fn: fn, field: j, text: text, distinct: agg.Distinct && fn != AggMin && fn != AggMax}
	switch {
	case s.distinct:
		if fn == AggSum || fn == AggAvg {
			if len(agg.Args) != 1 {
				return 0, errNotSupported("%s(DISTINCT ...) takes one argument", fn)
			}
		}
		for _, arg := range agg.Args {
			s.args = append(s.args, mref{field: b.distinctArg(arg), abs: -1})
		}
	case fn == AggAvg:
		shared := false
		for _, o := range b.aggs {
			if o.text == text && !o.distinct {
				// A repeated AVG shares the partial SUM and COUNT.
				s.sum, s.count, shared = o.sum, o.count, true
				break
			}
		}
		if !shared {
			s.sum = mref{field: b.addHidden(&ast.AggregateFuncExpr{F: ast.AggFuncSum, Args: agg.Args}), abs: -1}
			s.count = mref{field: b.addHidden(&ast.AggregateFuncExpr{F: ast.AggFuncCount, Args: agg.Args}), abs: -1}
			b.partials = append(b.partials, s.sum.field, s.count.field)
		}
	}
	b.aggs = append(b.aggs, s)
	return j, nil
}

// distinctArg returns the hidden field holding a DISTINCT aggregate's
// argument, shared by aggregates over the same expression; routes group
// by it.
func (b *mergeBuilder) distinctArg(arg ast.ExprNode) int {
	t, _ := exprText(arg)
	for i, d := range b.distinct {
		if dt, _ := exprText(d); dt == t {
			return b.distinctFields[i]
		}
	}
	j := b.addHidden(arg)
	b.distinct = append(b.distinct, arg)
	b.distinctFields = append(b.distinctFields, j)
	b.exactArgs = append(b.exactArgs, false)
	return j
}

// keyRef resolves a GROUP BY or ORDER BY item (of b.clause) to a result
// column, adding a hidden column when the select list does not hold it.
func (b *mergeBuilder) keyRef(e ast.ExprNode, aliasFirst bool) (mref, error) {
	if pe, ok := e.(*ast.PositionExpr); ok {
		if err := b.badPosition(pe.N); err != nil {
			return mref{}, err
		}
		if b.wildLo >= 0 {
			return mref{abs: pe.N - 1}, nil
		}
		return b.field(pe.N - 1), nil
	}
	if agg, ok := e.(*ast.AggregateFuncExpr); ok {
		j, err := b.aggregate(agg, -1)
		return mref{field: j, abs: -1}, err
	}
	if j := b.match(e, aliasFirst); j >= 0 {
		return b.field(j), nil
	}
	if containsAggregate(e) {
		if b.clause != ClauseOrderBy {
			return mref{}, errNotSupported("an expression over aggregates in the %s cannot be merged across data nodes", b.clause)
		}
		// The routes compute it for its type; the merge replaces the
		// value before sorting.
		x, params, err := b.expr(e, inOrder)
		if err != nil {
			return mref{}, err
		}
		j := b.addHidden(e)
		b.computed = append(b.computed, computedSpec{field: j, expr: x, params: params})
		return mref{field: j, abs: -1}, nil
	}
	return mref{field: b.addHidden(e), abs: -1}, nil
}

// badPosition is MariaDB's 1054 for a position of the select list in
// b.clause that the list lacks; nil for one it has (any from 1 on with a
// wildcard, whose columns the routes' own answers count).
func (b *mergeBuilder) badPosition(p int) error {
	if p < 1 || p > b.visible && b.wildLo < 0 {
		return newError(CodeBadField, "42S22", "Unknown column '%d' in '%s'", p, b.clause)
	}
	return nil
}

// foldPositions makes a position of each ORDER BY and GROUP BY item that
// MariaDB's parser folds into an integer literal ((2), +1, -(-1), TRUE),
// which it reads as a position of the select list as it reads 2: TiDB's
// parser makes a position of the bare literal alone, and the merge would
// take the others for constants it need not sort or group by. Then it
// gives MariaDB's 1054 for an ORDER BY position the list lacks, before
// planGroupKeys looks at GROUP BY's: MariaDB resolves ORDER BY first.
func (b *mergeBuilder) foldPositions() error {
	if b.sel.GroupBy != nil {
		foldPositions(b.sel.GroupBy.Items)
	}
	if b.sel.OrderBy == nil {
		return nil
	}
	foldPositions(b.sel.OrderBy.Items)
	b.clause = ClauseOrderBy
	defer func() { b.clause = 0 }()
	for _, it := range b.sel.OrderBy.Items {
		if pe, ok := it.Expr.(*ast.PositionExpr); ok {
			if err := b.badPosition(pe.N); err != nil {
				return err
			}
		}
	}
	return nil
}

func foldPositions(items []*ast.ByItem) {
	for _, it := range items {
		if _, ok := it.Expr.(*ast.PositionExpr); ok {
			continue
		}
		if n, ok := foldedInteger(it.Expr); ok {
			it.Expr = &ast.PositionExpr{N: n}
		}
	}
}

// foldedInteger returns the integer MariaDB's parser folds e into: an
// integer literal in parentheses or after signs, each - negating it.
// Within int32, where the number is the one MariaDB prints.
func foldedInteger(e ast.ExprNode) (int, bool) {
	switch x := e.(type) {
	case *driver.ValueExpr:
		if x.Kind() == driver.KindInt64 {
			n := x.GetInt64()
			return int(n), n >= math.MinInt32 && n <= math.MaxInt32
		}
	case *ast.PositionExpr:
		return x.N, x.P == nil
	case *ast.ParenthesesExpr:
		return foldedInteger(x.Expr)
	case *ast.UnaryOperationExpr:
		n, ok := foldedInteger(x.V)
		switch x.Op {
		case opcode.Plus:
			return n, ok
		case opcode.Minus:
			return -n, ok
		}
	}
	return 0, false
}

// match finds the visible field an expression names: by alias (for an
// unqualified name), by identical text, or by column name.
func (b *mergeBuilder) match(e ast.ExprNode, aliasFirst bool) int {
	cn := columnOf(e)
	byAlias := func() int {
		if cn == nil || cn.Table.L != "" {
			return -1
		}
		for j := 0; j < b.visible; j++ {
			if f := b.fields[j]; f.Expr != nil && f.AsName.L == cn.Name.L {
				return j
			}
		}
		return -1
	}
	if aliasFirst {
		if j := byAlias(); j >= 0 {
			return j
		}
	}
	t, err := exprText(e)
	if err == nil {
		for j := 0; j < b.visible; j++ {
			if b.texts[j] != "" && b.texts[j] == t {
				return j
			}
		}
	}
	if cn != nil {
		for j := 0; j < b.visible; j++ {
			f := b.fields[j]
			fc, ok := f.Expr.(*ast.ColumnNameExpr)
			if !ok || fc.Name.Name.L != cn.Name.L {
				continue
			}
			if cn.Table.L == "" || fc.Name.Table.L == "" || cn.Table.L == fc.Name.Table.L {
				return j
			}
		}
	}
	if !aliasFirst {
		return byAlias()
	}
	return -1
}

// planDependent reports an expression of the merge (HAVING, computed
// columns) whose value MariaDB derives differently in different plans.
func (b *mergeBuilder) planDependent(having *Expr) bool {
	if len(b.unrounded) == 0 {
		return false
	}
	if having != nil && b.dependsOnPlan(having, false) {
		return true
	}
	for _, c := range b.computed {
		if b.dependsOnPlan(c.expr, false) {
			return true
		}
	}
	return false
}

// groupOrder reports an ORDER BY that MariaDB serves by the grouping
// itself: none, or the group keys in their order, all ascending or all
// descending.
func groupOrder(order []mref, desc []bool, group []mref) bool {
	if len(order) == 0 {
		return true
	}
	if len(order) != len(group) {
		return false
	}
	for i := range order {
		if order[i] != group[i] || desc[i] != desc[0] {
			return false
		}
	}
	return true
}

func sameKeys(order, group []mref) bool {
	if len(order) != len(group) {
		return false
	}
	for _, o := range order {
		found := false
		for _, g := range group {
			if o == g {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// isConstant reports an ORDER BY item that orders nothing: NULL, a
// string, or a ? (which MySQL takes as a value, not a position).
func isConstant(e ast.ExprNode) bool {
	switch x := e.(type) {
	case *driver.ValueExpr:
		return true
	case *ast.ColumnNameExpr:
		return strings.HasPrefix(x.Name.Name.O, markerPrefix+string(holeParam))
	}
	return false
}

// paramOf returns the ? a parameter hole stands for.
func paramOf(e ast.ExprNode) (int, bool) { return markerID(e, holeParam) }

// markerID is the id of e when e is a marker of kind k (markerExpr).
func markerID(e ast.ExprNode, k holeKind) (int, bool) {
	x, ok := e.(*ast.ColumnNameExpr)
	if !ok || x.Name.Table.O != "" || !strings.HasPrefix(x.Name.Name.O, markerPrefix+string(k)) {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSuffix(x.Name.Name.O[len(markerPrefix)+1:], "\x00"))
	return n, err == nil
}

func limitOperand(e ast.ExprNode) (operand, bool) {
	if p, ok := paramOf(e); ok {
		return operand{param: p}, true
	}
	if v, ok := e.(*driver.ValueExpr); ok {
		switch v.Kind() {
		case driver.KindInt64, driver.KindUint64:
			lv, _ := literalValue(v)
			return operand{param: -1, val: lv}, true
		}
	}
	return operand{}, false
}

// bind binds the LIMIT and HAVING parameters of one execution; limit is
// the count each route is sent (-1 when routes get no LIMIT).
func (m *selectMerge) bind(args []any) (*Merge, int64, error) {
	mg := m.merge
	limit := int64(-1)
	if m.limit != nil {
		count, err := limitValue(m.limit.count.value(args))
		if err != nil {
			return nil, 0, err
		}
		offset, err := limitValue(m.limit.offset.value(args))
		if err != nil {
			return nil, 0, err
		}
		mg.Limit = &Limit{Offset: offset, Count: count, Pushed: m.pushLimit}
		if m.pushLimit {
			limit = count
			if count > math.MaxInt64-offset {
				limit = math.MaxInt64
			} else {
				limit += offset
			}
		}
	}
	if m.having != nil {
		mg.Having = bindExpr(m.having, args)
	}
	if m.compute != nil {
		mg.Compute = make([]Computed, len(m.compute))
		for i, c := range m.compute {
			mg.Compute[i] = Computed{Column: c.Column, Expr: bindExpr(c.Expr, args)}
		}
	}
	if oneGroup(m.oneGroup, args) {
		// At most one group: MariaDB does not sort it, nor evaluate the
		// ORDER BY's expressions.
		mg.OrderBy = nil
	}
	return &mg, limit, nil
}

func limitValue(v algorithm.Value) (int64, error) {
	switch n := v.(type) {
	case int64:
		if n >= 0 {
			return n, nil
		}
	case uint64:
		if n > math.MaxInt64 {
			return math.MaxInt64, nil
		}
		return int64(n), nil
	case string:
		if u, err := strconv.ParseUint(strings.TrimSpace(n), 10, 64); err == nil {
			return limitValue(u)
		}
	case float64:
		if n >= 0 && n == math.Trunc(n) {
			if n >= math.MaxInt64 {
				return math.MaxInt64, nil
			}
			return int64(n), nil
		}
	}
	return 0, newError(CodeWrongArgs, "HY000", "Incorrect arguments to LIMIT: %s", algorithm.FormatValue(v))
}
