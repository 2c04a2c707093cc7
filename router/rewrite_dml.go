package router

import (
	"math"
	"strconv"
	"strings"

	"github.com/shardflake/shardflake/algorithm"
	"github.com/shardflake/shardflake/config"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
)

// inList is an IN list on a sharding column whose items are literals or
// ?s: each route gets only the items whose rows can live on its data node.
type inList struct {
	hole  int
	col   string
	items []operand
	texts []*sqlTemplate // each item restored
	// static holds the data nodes of each item when no item is a ?.
	static []nodeSet
}

// dmlBinder plans SELECT, UPDATE and DELETE executions.
type dmlBinder struct {
	r      *Router
	kind   StatementKind
	a      *analysis
	rt     *routing
	tables []string
	single *sqlTemplate // SQL for one route
	empty  *sqlTemplate // SQL with a false condition, for no data node
	// emptyErr is why the statement has no false-condition form (DDL),
	// returned when no data node can hold a row it matches.
	emptyErr error
	multi    *selectMerge // SQL and merge for several routes (SELECT)
	// multiErr is why a SELECT cannot run on several routes (returned only
	// when it does).
	multiErr error
	// orderLimit is the ORDER BY/LIMIT of an UPDATE or DELETE, which
	// cannot run on several data nodes of a sharded table alike.
	orderLimit bool
	// rowLimit is the LIMIT count of an UPDATE or DELETE, and limited
	// the statement with that count a hole: over several data nodes of a
	// sharded table the proxy runs it node after node, each taking what
	// the ones before left of the count (Plan.RowLimit). ordered is, for
	// such a statement with ORDER BY, the SELECT of the first rows each
	// data node would take, ordered, with the route's position last
	// (RowLimit.Order); orderKeys sort its rows.
	rowLimit   *operand
	unbounded  bool // ORDER BY without LIMIT: rowLimit is MaxInt64
	limited    *sqlTemplate
	ordered    *sqlTemplate
	orderKeys  []OrderKey
	inLists    []*inList
	keyChanges []keyChange
	// wherePins are the values top-level col = v conjuncts of a
	// single-table UPDATE's WHERE clause give each column, and probe the
	// SELECT of the rows it matches (keymove.go); set only for an UPDATE
	// of sharding columns.
	wherePins map[string][]operand
	probe     *sqlTemplate
	// branches plans a UNION's branches apart, for when the statement
	// cannot be routed whole (setop_branches.go).
	branches *setOpBranches
}

// keyChange is an UPDATE assignment to a sharding column; it is allowed
// only when the WHERE clause pins the column to the same value.
type keyChange struct {
	table  string
	col    string
	value  operand
	hasVal bool
	pinned []operand // values of top-level col = v conjuncts
}

func (r *Router) prepareDML(p *Prepared, a *analysis, stmt ast.StmtNode, h *hints) error {
	if err := checkMarkers(stmt, p.sql); err != nil {
		return err
	}
	d := &dmlBinder{r: r, a: a, kind: statementKind(stmt)}
	var top *scope
	lifted := liftNone
	aliases := true
	var where ast.ExprNode
	switch s := stmt.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
		if err := a.walkResultSet(s, nil, false); err != nil {
			return err
		}
		if sel, ok := s.(*ast.SelectStmt); ok && !a.system {
			if lifted = a.lift(sel); lifted == liftNone {
				a.liftJoinedDerived(sel)
			}
		} else if so, ok := s.(*ast.SetOprStmt); ok && !a.system && !a.liftUnion(so) && len(a.sharded) > 0 && h == nil {
			d.branches = r.prepareBranches(a, so)
			if d.branches == nil {
				if err := unionOrderError(so); err != nil {
					return err
				}
			}
		}
	case *ast.UpdateStmt:
		var err error
		if top, err = d.walkUpdate(s); err != nil {
			return err
		}
		where = s.Where
	case *ast.DeleteStmt:
		var err error
		if top, err = d.walkDelete(s); err != nil {
			return err
		}
		where = s.Where
		aliases = s.IsMultiTable
	}
	if a.system {
		return nil
	}
	rt, err := r.newRouting(a, h, d.kind != KindSelect)
	if err != nil {
		return err
	}
	if (d.kind == KindUpdate || d.kind == KindDelete) && rt.keptOuterErr != nil {
		// A kept row without a match changes nothing, on any data node.
		rt.keptOuterErr = nil
		rt.recompute(rt.paramDependent)
	}
	d.rt = rt
	d.tables = a.tables()
	if top != nil && len(d.keyChanges) > 0 {
		d.pinKeyChanges(top, where)
		d.collectPins(where)
	}

	if err := d.markInLists(); err != nil {
		return err
	}
	verbatim := a.verbatimOK(p.sql)
	a.rewrite(stmt, aliases)
	if verbatim {
		d.single = verbatimTemplate(p.sql)
	} else if d.single, err = buildTemplate(stmt); err != nil {
		return err
	}
	if err := d.buildEmpty(stmt); err != nil {
		return err
	}
	if err := d.buildLimited(stmt); err != nil {
		return err
	}
	if u, ok := stmt.(*ast.UpdateStmt); ok && len(d.keyChanges) > 0 {
		if err := d.buildProbe(u); err != nil {
			return err
		}
	}
	// A statement whose routing is fixed at one data node never needs
	// the multi-route form.
	fixedSingle := rt.hasStatic && rt.staticErr == nil && len(rt.static) == 1
	if sel, ok := stmt.(*ast.SelectStmt); ok && len(a.sharded) > 0 && !fixedSingle {
		switch lifted {
		case liftExists:
			d.multi = existsMerge(sel, d.single)
		case liftWhereExists:
			d.multi = whereExistsMerge(d.single)
		default:
			d.multi, d.multiErr = a.prepareMerge(sel, d.inListItems)
		}
	}
	if so, ok := stmt.(*ast.SetOprStmt); ok && d.branches != nil && !d.branches.bindLimit(so) {
		d.branches = nil
	}
	if so, ok := stmt.(*ast.SetOprStmt); ok && a.unionLift && !fixedSingle {
		d.multi, d.multiErr = prepareUnionMerge(so)
	}
	p.b = d
	if p.params == 0 {
		plan, err := d.bind(nil)
		if err != nil {
			return err
		}
		p.static = plan
	}
	return nil
}

// walkDMLTables walks an UPDATE's or DELETE's WITH and tables into a new
// top scope, whose conditions are where.
func (a *analysis) walkDMLTables(with *ast.WithClause, refs *ast.Join, where ast.ExprNode) (*scope, error) {
	if err := a.walkWith(with, nil); err != nil {
		return nil, err
	}
	top := a.newScope(nil, false)
	if err := a.walkFrom(refs, top, false, true); err != nil {
		return nil, err
	}
	if where != nil {
		top.conds = append(top.conds, where)
	}
	return top, nil
}

// walkUpdate analyzes an UPDATE: its WITH, its tables (the top scope it
// returns), its WHERE, assignments, ORDER BY and LIMIT, and marks the
// tables it changes.
func (d *dmlBinder) walkUpdate(s *ast.UpdateStmt) (*scope, error) {
	a := d.a
	top, err := a.walkDMLTables(s.With, s.TableRefs.TableRefs, s.Where)
	if err != nil {
		return nil, err
	}
	exprs := []ast.ExprNode{s.Where}
	for _, as := range s.List {
		exprs = append(exprs, as.Expr)
	}
	if err := a.walkExprs(top, exprs, orderExprs(s.Order), limitExprs(s.Limit)); err != nil {
		return nil, err
	}
	d.orderLimit = s.Order != nil || s.Limit != nil
	if err := d.markUpdated(top, s); err != nil {
		return nil, err
	}
	return top, nil
}

// walkDelete analyzes a DELETE: its WITH, its tables (the top scope it
// returns), its WHERE, ORDER BY and LIMIT, and marks the tables it
// deletes from.
func (d *dmlBinder) walkDelete(s *ast.DeleteStmt) (*scope, error) {
	a := d.a
	top, err := a.walkDMLTables(s.With, s.TableRefs.TableRefs, s.Where)
	if err != nil {
		return nil, err
	}
	if err := a.walkExprs(top, []ast.ExprNode{s.Where}, orderExprs(s.Order), limitExprs(s.Limit)); err != nil {
		return nil, err
	}
	d.orderLimit = s.Order != nil || s.Limit != nil
	markDeleted(a, top, s)
	return top, nil
}

// markUpdated marks the tables an UPDATE changes and records assignments
// to sharding columns.
func (d *dmlBinder) markUpdated(s *scope, u *ast.UpdateStmt) error {
	a := d.a
	for _, as := range u.List {
		cn := as.Column
		var refs []int
		if cn.Table.L != "" {
			if i := a.resolve(s, cn); i >= 0 {
				refs = []int{i}
			}
		} else {
			refs = s.refs // unqualified: any table of the statement may own it
		}
		for _, i := range refs {
			ref := a.refs[i]
			ref.written = true
			if ref.kind != refSharded || ref.info.role(cn.Name.L) == 0 || a.sameColumn(s, i, cn, as.Expr) {
				continue
			}
			kc := keyChange{table: ref.name, col: cn.Name.L}
			kc.value, kc.hasVal = operandOf(as.Expr)
			d.keyChanges = append(d.keyChanges, kc)
		}
	}
	return nil
}

// sameColumn reports whether e is column cn of reference i itself (SET
// user_id = user_id): assigning a column its own value changes nothing.
// An unqualified e names reference i only when the statement has one
// table.
func (a *analysis) sameColumn(s *scope, i int, cn *ast.ColumnName, e ast.ExprNode) bool {
	x := columnOf(e)
	if x == nil || x.Name.L != cn.Name.L {
		return false
	}
	if x.Table.L == "" {
		return len(s.refs) == 1
	}
	return a.resolve(s, x) == i
}

func markDeleted(a *analysis, s *scope, del *ast.DeleteStmt) {
	if !del.IsMultiTable || del.Tables == nil {
		for _, i := range s.refs {
			a.refs[i].written = true
		}
		return
	}
	for _, tn := range del.Tables.Tables {
		if i := a.resolve(s, &ast.ColumnName{Schema: tn.Schema, Table: tn.Name}); i >= 0 {
			a.refs[i].written = true
		}
	}
}

// pinKeyChanges finds, for each sharding-column assignment, the values the
// WHERE clause pins that column to (top-level AND of col = value).
func (d *dmlBinder) pinKeyChanges(s *scope, where ast.ExprNode) {
	eachPin(where, func(cn *ast.ColumnName, o operand) {
		for i := range d.keyChanges {
			kc := &d.keyChanges[i]
			if kc.col != cn.Name.L {
				continue
			}
			for _, ri := range d.a.columnRefs(s, cn, nil) {
				if d.a.refs[ri].name == kc.table {
					kc.pinned = append(kc.pinned, o)
					break
				}
			}
		}
	})
}

// eachPin calls pin for each col = value conjunct at the top level of
// where (an AND of them, in any parentheses).
func eachPin(where ast.ExprNode, pin func(*ast.ColumnName, operand)) {
	switch x := where.(type) {
	case *ast.ParenthesesExpr:
		eachPin(x.Expr, pin)
	case *ast.BinaryOperationExpr:
		switch x.Op {
		case opcode.LogicAnd:
			eachPin(x.L, pin)
			eachPin(x.R, pin)
		case opcode.EQ:
			if cn, o, ok := columnOperand(x.L, x.R); ok {
				pin(cn, o)
			}
		}
	}
}

func columnOperand(l, r ast.ExprNode) (*ast.ColumnName, operand, bool) {
	if cn := columnOf(l); cn != nil {
		if o, ok := operandOf(r); ok {
			return cn, o, true
		}
	}
	if cn := columnOf(r); cn != nil {
		if o, ok := operandOf(l); ok {
			return cn, o, true
		}
	}
	return nil, operand{}, false
}

// sameValue reports whether two routing values are certainly equal.
func sameValue(x, y algorithm.Value) bool {
	if x == nil || y == nil {
		return false
	}
	if x == y {
		return true
	}
	fx, okx := asFloat(x)
	fy, oky := asFloat(y)
	if okx && oky {
		_, ix := x.(float64)
		_, iy := y.(float64)
		if !ix && !iy {
			return compareInts(x, y)
		}
		return fx == fy
	}
	return false
}

func asFloat(v algorithm.Value) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

func compareInts(x, y algorithm.Value) bool {
	switch a := x.(type) {
	case int64:
		switch b := y.(type) {
		case int64:
			return a == b
		case uint64:
			return a >= 0 && uint64(a) == b
		}
	case uint64:
		switch b := y.(type) {
		case uint64:
			return a == b
		case int64:
			return b >= 0 && uint64(b) == a
		}
	}
	return false
}

// markInLists puts IN-list holes in place of the lists that can be
// pruned per route.
func (d *dmlBinder) markInLists() error {
	a := d.a
	for _, il := range a.inLists {
		e := il.expr
		if e.Not || e.Sel != nil || len(e.List) < 2 {
			continue
		}
		cn := columnOf(e.Expr)
		if cn == nil {
			continue
		}
		refs := a.columnRefs(il.s, cn, nil)
		if len(refs) != 1 {
			continue
		}
		ref := a.refs[refs[0]]
		if ref.info.role(cn.Name.L) == 0 {
			continue
		}
		items := make([]operand, len(e.List))
		ok := true
		for i, it := range e.List {
			if items[i], ok = operandOf(it); !ok {
				break
			}
		}
		if !ok {
			continue
		}
		l := &inList{hole: ref.hole, col: cn.Name.L, items: items, texts: make([]*sqlTemplate, len(items))}
		replaceParamsIn(e.List) // the list leaves the AST before the main rewrite walk
		for i, it := range e.List {
			t, err := buildTemplate(it)
			if err != nil {
				return err
			}
			l.texts[i] = t
		}
		e.List = []ast.ExprNode{markerExpr(holeIn, len(d.inLists))}
		d.inLists = append(d.inLists, l)
		l.static, _ = d.itemNodes(l, nil)
	}
	return nil
}

func replaceParamsIn(list []ast.ExprNode) {
	for i, e := range list {
		n, _ := e.Accept(paramReplacer{})
		list[i] = n.(ast.ExprNode)
	}
}

// itemNodes returns the data nodes of each item of an IN list; nil when
// the list has a ? and args are not given.
func (d *dmlBinder) itemNodes(l *inList, args []any) ([]nodeSet, error) {
	if l.static != nil {
		return l.static, nil
	}
	if args == nil {
		for _, it := range l.items {
			if it.param >= 0 {
				return nil, nil
			}
		}
	}
	ti := d.a.sharded[l.hole].info
	out := make([]nodeSet, len(l.items))
	numeric := false
	for _, it := range l.items {
		switch it.value(args).(type) {
		case int64, uint64, float64:
			numeric = true
		}
	}
	for i, it := range l.items {
		v := it.value(args)
		if v == nil {
			continue // NULL matches nothing; the item is kept everywhere
		}
		if s, ok := v.(string); ok && numeric && !cleanNumber(s) {
			// A list of numbers is compared with a numeric column, and
			// MariaDB compares a string such as 'ä' or '15abc' with it as
			// the number it truncates to: with a warning, or in an
			// UPDATE in strict mode (its default) with 1292 for the
			// whole statement once a row is compared. Split per data
			// node, the nodes without that row would apply what MariaDB
			// refuses, so an UPDATE is refused before it runs; a SELECT
			// or DELETE keeps the item on every route, where each data
			// node answers it as MariaDB answers the list.
			if d.kind == KindUpdate {
				return nil, &Error{Code: 1292, State: "22007", Message: "Truncated incorrect DECIMAL value: '" + s + "'"}
			}
			continue
		}
		s, err := ti.routeOne(&algorithm.ColumnCondition{Column: l.col, Values: []algorithm.Value{v}}, routeOpts{missing: algorithm.TargetOptional})
		if err != nil {
			continue // keep an item the algorithm cannot place
		}
		out[i] = s
	}
	return out, nil
}

// buildEmpty prepares the false-condition form of the statement (its AST
// already rewritten) when an execution may reach no data node.
func (d *dmlBinder) buildEmpty(stmt ast.StmtNode) error {
	rt := d.rt
	if rt.hasStatic && !rt.staticEmpty && rt.hints.sliceOf() == nil {
		return nil
	}
	var err error
	if d.empty, err = falseTemplate(stmt); err != nil {
		if rt.hints.sliceOf() != nil {
			return errNotSupported("the slice hint needs a SELECT, UPDATE or DELETE")
		}
		d.empty, d.emptyErr = nil, errNotSupported("no data node can hold a row this %s touches (the SHARDINGSPHERE_HINT values and the rules select none)", strings.ToUpper(d.kind.String()))
	}
	return nil
}

// falseTemplate renders the statement with its WHERE clause made false
// (every branch's, for a set operation), for an execution that reaches no
// data node.
func falseTemplate(stmt ast.StmtNode) (*sqlTemplate, error) {
	f := ast.NewValueExpr(0, "", "")
	var undo []func()
	defer func() {
		for _, u := range undo {
			u()
		}
	}()
	falsify := func(w *ast.ExprNode) {
		old := *w
		*w = andFalse(old, f)
		undo = append(undo, func() { *w = old })
	}
	var branches func(n ast.Node) bool
	branches = func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.SelectStmt:
			falsify(&x.Where)
			return true
		case *ast.SetOprStmt:
			return x.SelectList != nil && branches(x.SelectList)
		case *ast.SetOprSelectList:
			for _, sel := range x.Selects {
				if !branches(sel) {
					return false
				}
			}
			return len(x.Selects) > 0
		}
		return false
	}
	switch s := stmt.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
		if !branches(s) {
			return nil, errNotSupported("cannot make this query match no rows")
		}
	case *ast.UpdateStmt:
		falsify(&s.Where)
	case *ast.DeleteStmt:
		falsify(&s.Where)
	case *ast.InsertStmt:
		if s.Select == nil || !branches(s.Select) {
			return nil, errNotSupported("cannot make this INSERT match no rows")
		}
	default:
		return nil, errNotSupported("cannot make this statement match no rows")
	}
	return buildTemplate(stmt)
}

// buildLimited builds, for an UPDATE or DELETE with LIMIT that may reach
// several data nodes of a sharded table, the statement with its LIMIT
// count a hole (rowLimit, limited) and, when it has ORDER BY, the SELECT
// that finds how many rows each data node takes (ordered).
func (d *dmlBinder) buildLimited(stmt ast.StmtNode) error {
	if len(d.a.sharded) == 0 {
		return nil
	}
	var (
		limit *ast.Limit
		order *ast.OrderByClause
		refs  *ast.TableRefsClause
		where ast.ExprNode
		set   func(*ast.Limit)
	)
	switch s := stmt.(type) {
	case *ast.UpdateStmt:
		limit, order, refs, where = s.Limit, s.Order, s.TableRefs, s.Where
		set = func(l *ast.Limit) { s.Limit = l }
	case *ast.DeleteStmt:
		if s.IsMultiTable {
			return nil
		}
		limit, order, refs, where = s.Limit, s.Order, s.TableRefs, s.Where
		set = func(l *ast.Limit) { s.Limit = l }
	default:
		return nil
	}
	var o operand
	switch {
	case limit == nil && order != nil:
		// ORDER BY without LIMIT: every row the WHERE clause matches, in
		// that order, which each data node keeps for its own rows; the
		// order over all of them matters only to the rows a RETURNING
		// gives back, which the ordered read (below) interleaves.
		o, d.unbounded = operand{param: -1, val: int64(math.MaxInt64)}, true
	case limit == nil || limit.Offset != nil:
		return nil
	default:
		var ok bool
		if o, ok = limitOperand(limit.Count); !ok {
			return nil
		}
	}
	set(&ast.Limit{Count: markerExpr(holeLimit, 0)})
	defer set(limit)
	var err error
	if d.limited, err = buildTemplate(stmt); err != nil {
		return err
	}
	d.rowLimit = &o
	if order == nil {
		return nil
	}
	// SELECT <order expressions>, <route> FROM ... WHERE ... ORDER BY ...
	// LIMIT <count> FOR UPDATE: a data node's first rows in the
	// statement's order, locked as the statement will change them.
	sel := &ast.SelectStmt{
		SelectStmtOpts: &ast.SelectStmtOpts{SQLCache: true},
		Kind:           ast.SelectStmtKindSelect,
		Fields:         &ast.FieldList{},
		From:           refs,
		Where:          where,
		OrderBy:        &ast.OrderByClause{Items: order.Items},
		Limit:          &ast.Limit{Count: markerExpr(holeLimit, 0)},
		LockInfo:       &ast.SelectLockInfo{LockType: ast.SelectLockForUpdate},
	}
	d.orderKeys = nil
	for i, it := range order.Items {
		sel.Fields.Fields = append(sel.Fields.Fields, &ast.SelectField{Expr: it.Expr})
		d.orderKeys = append(d.orderKeys, OrderKey{Column: ColumnRef(i), Desc: it.Desc})
	}
	sel.Fields.Fields = append(sel.Fields.Fields, &ast.SelectField{Expr: markerExpr(holeRoute, 0)})
	d.ordered, err = buildTemplate(sel)
	return err
}

func andFalse(where, f ast.ExprNode) ast.ExprNode {
	if where == nil {
		return f
	}
	return &ast.BinaryOperationExpr{Op: opcode.LogicAnd, L: &ast.ParenthesesExpr{Expr: where}, R: f}
}

func (d *dmlBinder) bind(args []any) (*Plan, error) {
	units, empty, err := d.rt.units(args)
	if err != nil || empty && d.branches != nil {
		// A UNION's routing pairs its tables' data nodes as a join's
		// would: none in common is no answer for a UNION, only for the
		// branch whose conditions reach no data node.
		if d.branches != nil {
			return d.branches.bind(args, d.tables)
		}
		return nil, err
	}
	tmpl := d.single
	var merge *Merge
	var limit int64 = -1
	var rowLimit *RowLimit
	switch {
	case empty:
		if d.empty == nil {
			if d.emptyErr != nil {
				return nil, d.emptyErr
			}
			return nil, errNotSupported("no data node can hold a row this statement touches")
		}
		tmpl = d.empty
	case len(units) > 1 && d.orderLimit && !d.rt.broadcastW && d.limited != nil:
		// LIMIT: rows up to the count, which the proxy takes node after
		// node (Plan.RowLimit), in the statement's order when it has
		// one (RowLimit.Order); ORDER BY alone: every row, each node in
		// that order (RowLimit.Unbounded).
		count, err := limitValue(d.rowLimit.value(args))
		if err != nil {
			return nil, err
		}
		tmpl, limit, rowLimit = d.limited, count, &RowLimit{Count: count, Unbounded: d.unbounded}
	case len(units) > 1 && d.orderLimit && !d.rt.broadcastW:
		// A broadcast table's data sources hold the same rows, so each
		// keeps the order and the row count; a sharded table's data nodes
		// hold parts of it, where the order would be per data node.
		return nil, errNotSupported("%s with this ORDER BY or LIMIT reaches %d data nodes, where the proxy takes a LIMIT only as an integer or a parameter; add conditions on the sharding columns that pick one data node", strings.ToUpper(d.kind.String()), len(units))
	case len(units) > 1 && d.kind == KindSelect:
		if d.multiErr != nil {
			return nil, d.multiErr
		}
		if d.multi != nil {
			tmpl = d.multi.tmpl
			if merge, limit, err = d.multi.bind(args); err != nil {
				return nil, err
			}
		}
	}
	var items [][]nodeSet
	if len(d.inLists) > 0 && len(units) > 1 {
		items = make([][]nodeSet, len(d.inLists))
		for i, l := range d.inLists {
			if items[i], err = d.itemNodes(l, args); err != nil {
				return nil, err
			}
		}
	}
	var (
		routes []Route
		plan   *Plan
		f      *unitFiller
	)
	if len(units) == 1 && merge == nil {
		// The common case, a point statement: one allocation for all.
		one := &oneRoutePlan{f: unitFiller{d: d, items: items, limit: limit, bind: args}}
		routes, plan, f = one.routes[:0], &one.plan, &one.f
	} else {
		routes, plan = make([]Route, 0, len(units)+1), &Plan{}
		f = &unitFiller{d: d, items: items, limit: limit, bind: args}
	}
	if merge != nil && merge.Describe {
		// The describing route reads the first route's data node.
		f.u = &units[0]
		sql, rargs, err := d.multi.describe.render(f, args)
		if err != nil {
			return nil, err
		}
		routes = append(routes, Route{DataSource: units[0].ds, Nodes: d.nodes(&units[0]), SQL: sql, Args: rargs})
	}
	for i := range units {
		f.u = &units[i]
		sql, rargs, err := d.render(tmpl, f, args)
		if err != nil {
			return nil, err
		}
		routes = append(routes, Route{DataSource: units[i].ds, Nodes: d.nodes(&units[i]), SQL: sql, Args: rargs})
	}
	*plan = Plan{Kind: d.kind, Type: d.rt.routeType(units), Tables: d.tables, Routes: routes, Merge: merge, RowLimit: rowLimit}
	if rowLimit != nil && d.ordered != nil {
		if rowLimit.Order, err = d.rowOrder(units, f, args, rowLimit.Count); err != nil {
			return nil, err
		}
	}
	if merge != nil {
		plan.Unionable = d.multi.unionable
	}
	if plan.Move, err = d.keyMove(units, empty, f, args); err != nil {
		return nil, err
	}
	return plan, nil
}

// rowOrder plans the SELECT of an UPDATE or DELETE with ORDER BY and
// LIMIT over several data nodes (RowLimit.Order): on each, its first count
// rows in the statement's order and the route's position; merged in that
// order and cut at count, the rows say how many rows each route takes.
func (d *dmlBinder) rowOrder(units []unit, f *unitFiller, args []any, count int64) (*Plan, error) {
	routes := make([]Route, len(units))
	for i := range units {
		f.u = &units[i]
		sql, rargs, err := d.ordered.render(routeFiller{f, i}, args)
		if err != nil {
			return nil, err
		}
		routes[i] = Route{DataSource: units[i].ds, Nodes: d.nodes(&units[i]), SQL: sql, Args: rargs}
	}
	return &Plan{Kind: KindSelect, Type: d.rt.routeType(units), Tables: d.tables, Routes: routes, Access: AccessLockingRead,
		Merge: &Merge{Sort: d.orderKeys, Limit: &Limit{Count: count, Pushed: true}}}, nil
}

// oneRoutePlan is a plan of one route with its route and the filler that
// rendered it, allocated together.
type oneRoutePlan struct {
	plan   Plan
	routes [1]Route
	f      unitFiller
}

// render renders tmpl for the unit f is at: for a statement on one
// sharded table, the same text for the same data node (renderNode).
func (d *dmlBinder) render(tmpl *sqlTemplate, f *unitFiller, args []any) (string, []any, error) {
	if len(d.a.sharded) == 1 && len(f.u.nodes) == 1 {
		return tmpl.renderNode(f, args, len(d.a.sharded[0].info.rule.DataNodes), f.u.nodes[0])
	}
	return tmpl.render(f, args)
}

// nodes lists the data nodes a unit touches.
func (d *dmlBinder) nodes(u *unit) []config.DataNode {
	return unitNodes(d.a, u)
}

func unitNodes(a *analysis, u *unit) []config.DataNode {
	if len(a.refs) == 1 && a.refs[0].kind == refSharded {
		n := u.nodes[0]
		return a.refs[0].info.rule.DataNodes[n : n+1 : n+1] // shared, never modified
	}
	out := make([]config.DataNode, 0, len(a.refs))
	for _, ref := range a.refs {
		var n config.DataNode
		if ref.kind == refSharded {
			n = ref.info.rule.DataNodes[u.nodes[ref.hole]]
		} else {
			n = config.DataNode{DataSource: u.ds, Table: ref.name}
		}
		dup := false
		for _, x := range out {
			if x == n {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, n)
		}
	}
	return out
}

// unitFiller fills the holes of one route.
type unitFiller struct {
	d     *dmlBinder
	u     *unit
	items [][]nodeSet
	limit int64
	bind  []any
}

// routeFiller fills the holes of one route of a RowLimit's Order: the
// route's position, and what unitFiller fills.
type routeFiller struct {
	*unitFiller
	route int
}

func (f routeFiller) fill(b *strings.Builder, k holeKind, id int, out []any) ([]any, error) {
	if k == holeRoute {
		b.WriteString(strconv.Itoa(f.route))
		return out, nil
	}
	return f.unitFiller.fill(b, k, id, out)
}

func (f *unitFiller) fill(b *strings.Builder, k holeKind, id int, out []any) ([]any, error) {
	switch k {
	case holeTable:
		ref := f.d.a.sharded[id]
		writeName(b, ref.info.rule.DataNodes[f.u.nodes[id]].Table)
	case holeName:
		f.d.a.fillName(b, id, f.u.nodes)
	case holeLimit:
		b.WriteString(strconv.FormatInt(f.limit, 10))
	case holeIn:
		l := f.d.inLists[id]
		var keep []bool
		if f.items != nil && f.items[id] != nil {
			node := f.u.nodes[l.hole]
			keep = make([]bool, len(l.items))
			any := false
			for i, s := range f.items[id] {
				keep[i] = s == nil || s.has(node)
				if s != nil && s.has(node) {
					any = true
				}
			}
			if !any {
				keep = nil // nothing routes here: keep the list whole
			}
		}
		first := true
		for i, t := range l.texts {
			if keep != nil && !keep[i] {
				continue
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			if err := t.renderTo(b, f, f.bind, &out); err != nil {
				return nil, err
			}
		}
	default:
		return nil, errNotSupported("cannot rewrite the statement: unexpected %c hole", k)
	}
	return out, nil
}

// writeName writes a back-quoted identifier.
func writeName(b *strings.Builder, name string) {
	b.WriteByte('`')
	b.WriteString(strings.ReplaceAll(name, "`", "``"))
	b.WriteByte('`')
}

// cleanNumber reports whether s reads as a number without truncation
// (surrounding spaces allowed), as MariaDB converts a string compared
// with a numeric column.
func cleanNumber(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return false
	}
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// inListItems returns the items of the IN list whose hole e is
// (markInLists), nil when e is no such hole.
func (d *dmlBinder) inListItems(e ast.ExprNode) []operand {
	if i, ok := markerID(e, holeIn); ok && i < len(d.inLists) {
		return d.inLists[i].items
	}
	return nil
}
