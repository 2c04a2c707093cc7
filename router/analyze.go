package router

import (
	"sort"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"
)

// refKind classifies a table reference.
type refKind int

const (
	refSharded   refKind = iota + 1 // has a sharding rule
	refBroadcast                    // exists on every data source
	refSingle                       // no rule: one table on the default data source
)

// tableRef is one appearance of a logical table in a statement.
type tableRef struct {
	idx   int
	name  string // lower-case logical name
	orig  string // as written
	kind  refKind
	info  *tableInfo // sharded only
	tn    *ast.TableName
	ts    *ast.TableSource // nil outside FROM clauses (INSERT target, DDL)
	alias string           // lower-case alias, "" when none
	scope *scope
	// nested marks a reference inside a subquery, derived table, CTE or a
	// branch of a set operation: its conditions do not narrow the
	// statement's routing.
	nested bool
	// hole is the reference's index among the sharded references (the
	// table-name hole of the SQL templates), -1 for others.
	hole int
	// written marks the table a write statement changes.
	written bool
	// follows is the index of the top-level sharded reference a correlated
	// subquery reference is bound to by equal sharding columns, -1 if none.
	follows int
}

// scope is one query block: the tables of its FROM clause and the
// conditions that restrict them.
type scope struct {
	parent *scope
	refs   []int
	// derived are the lower-case aliases of derived tables and CTEs
	// visible in the block: names that resolve to no table reference.
	derived map[string]bool
	// lifted are the derived tables of the block that route as the
	// sharded table they read (liftJoinedDerived), by alias.
	lifted map[string]*liftedDerived
	// conds are the conjuncts that must hold for every row of the block:
	// WHERE and the ON conditions of inner joins.
	conds []ast.ExprNode
	// joinConds are the other ON conditions (outer joins, and inner joins
	// on the nullable side of one): they do not narrow the routing, but
	// their column equalities may pair binding tables (see pairingEqs).
	joinConds []joinCond
	// usingEqs are the column equalities of JOIN ... USING and NATURAL
	// JOIN between sharded tables.
	usingEqs []colEq
	// nested marks a block inside another (subquery, derived table, CTE,
	// set operation branch).
	nested bool
}

// joinCond is the ON condition of a join whose rows need not all match
// it. nullable are the references on the join's nullable side, nil for an
// inner join: an equality of an outer join's ON clause pairs two tables
// only when it reads one of them.
type joinCond struct {
	expr     ast.ExprNode
	nullable []int
}

// analysis is what Prepare learns about one statement's tables.
type analysis struct {
	r       *Router
	db      string  // session schema, lower-case
	zeroKey ZeroKey // what a 0 for a generated key column means
	refs    []*tableRef
	scopes  []*scope
	ctes    map[string]bool
	params  []*driver.ParamMarkerExpr // in text order
	// setsInsertID: the statement calls LAST_INSERT_ID(expr), which
	// sets the session's value (collectParams notes it on its walk).
	setsInsertID bool
	sharded      []*tableRef // refs with a hole, in hole order
	// setOp marks UNION/INTERSECT/EXCEPT: branches are nested blocks.
	setOp bool
	// unionLift: a UNION whose branches each read one sharded table, the
	// same one (liftUnion); its references are top-level and every route
	// runs the whole UNION on one data node.
	unionLift bool
	// system marks a statement on information_schema, mysql,
	// performance_schema or sys: the proxy's to answer.
	system bool
	// subqueries are IN (SELECT ...) predicates, checked for correlation
	// on sharding columns.
	inSubqueries []inSubquery
	// inLists are the IN (value, ...) predicates and their blocks.
	inLists []inSubquery
	scopeOf map[*ast.SelectStmt]*scope
	// shareHoles gives every mention of one sharded table the same hole
	// (DDL names a table several times, as one table).
	shareHoles bool
	// windowErr says why a derived table (or CTE) was not lifted: its
	// windows may span data nodes (rowwise).
	windowErr error
	// names are the constraint names a sharded table's DDL gives each
	// physical table (ddl_names.go), by name hole.
	names []constraintName
	// keptOuter are the outer joins whose kept side reads no sharded
	// table while their nullable side does.
	keptOuter []keptOuterJoin
}

// keptOuterJoin is an outer join whose kept side reads only broadcast
// tables, tables without rules or no table (t_dict LEFT JOIN t_order):
// every data node it runs on returns the kept rows it finds no match
// for, with NULLs, so the statement must reach one data node, unless its
// block's WHERE clause drops those rows (a routing condition on a
// sharding column of the nullable side, which NULL fails).
type keptOuterJoin struct {
	kept     string // the kept side's first table, "" for none
	nullable string // the nullable side's first sharded table
	// block are the nullable side's references of the join's own block,
	// keptBlock the kept side's; scope is that block.
	block, keptBlock []int
	scope            *scope
}

// noteOuterJoin records in a.keptOuter an outer join whose kept side
// (all its references, derived tables' too) reads no sharded table and
// whose nullable side does; block are the nullable side's references of
// the join's block.
func (a *analysis) noteOuterJoin(s *scope, kept, nullable []*tableRef, keptBlock, block []int) {
	j := keptOuterJoin{block: block, keptBlock: keptBlock, scope: s}
	for _, ref := range kept {
		if ref.kind == refSharded {
			return
		}
		if j.kept == "" {
			j.kept = ref.orig
		}
	}
	for _, ref := range nullable {
		if ref.kind == refSharded {
			j.nullable = ref.orig
			a.keptOuter = append(a.keptOuter, j)
			return
		}
	}
}

// inSubquery is "outer IN (SELECT inner ...)" or "x IN (list)" in block s.
type inSubquery struct {
	s    *scope
	expr *ast.PatternInExpr
}

func (r *Router) newAnalysis(db string) *analysis {
	return &analysis{r: r, db: strings.ToLower(db)}
}

// IsSystemSchema reports whether a schema is one of the server's own
// (information_schema, mysql, performance_schema, sys), which the default
// data source answers for.
func IsSystemSchema(s string) bool {
	switch strings.ToLower(s) {
	case "information_schema", "mysql", "performance_schema", "sys":
		return true
	}
	return false
}

// classify resolves one table name to a logical table. ok is false for a
// name that is not a table (a CTE) or a system table.
func (a *analysis) classify(tn *ast.TableName) (name string, kind refKind, info *tableInfo, ok bool, err error) {
	schema := tn.Schema.L
	if schema == "" {
		if a.ctes[tn.Name.L] {
			return "", 0, nil, false, nil
		}
		if a.db == "" {
			return "", 0, nil, false, newError(CodeNoDB, "3D000", "No database selected")
		}
		schema = a.db
	}
	if IsSystemSchema(schema) {
		a.system = true
		return "", 0, nil, false, nil
	}
	if schema != a.r.dbLower {
		return "", 0, nil, false, newError(CodeBadDB, "42000", "Unknown database '%s'", firstNonEmpty(tn.Schema.O, a.db))
	}
	name = tn.Name.L
	if ti := a.r.tables[name]; ti != nil {
		return name, refSharded, ti, true, nil
	}
	if a.r.rules.IsBroadcast(name) {
		return name, refBroadcast, nil, true, nil
	}
	if _, ok := a.r.physical[name]; ok {
		// A physical table of a sharded table read as a table without
		// rules would bypass routing (and its rows be counted twice).
		// DATA_SOURCE_NAME is the operator's way to name one.
		return "", 0, nil, false, newError(CodeNoSuchTable, "42S02", "Table '%s.%s' doesn't exist", a.r.rules.DatabaseName, tn.Name.O)
	}
	return name, refSingle, nil, true, nil
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// addRef records a table reference in scope s.
func (a *analysis) addRef(tn *ast.TableName, ts *ast.TableSource, s *scope, nested bool) (*tableRef, error) {
	name, kind, info, ok, err := a.classify(tn)
	if err != nil || !ok {
		return nil, err
	}
	ref := &tableRef{idx: len(a.refs), name: name, orig: tn.Name.O, kind: kind, info: info, tn: tn, ts: ts, scope: s, nested: nested, hole: -1, follows: -1}
	if ts != nil {
		ref.alias = ts.AsName.L
	}
	if s != nil {
		// MySQL rejects two tables of one FROM clause under one name; so
		// does the router, which resolves qualified columns by that name.
		own := firstNonEmpty(ref.alias, name)
		if a.nameTaken(s, own) {
			shown := tn.Name.O
			if ts != nil && ts.AsName.O != "" {
				shown = ts.AsName.O
			}
			return nil, newError(CodeNonUniqTable, "42000", "Not unique table/alias: '%s'", shown)
		}
	}
	if kind == refSharded {
		ref.hole = -1
		if a.shareHoles {
			for _, o := range a.sharded {
				if o.name == name {
					ref.hole = o.hole
				}
			}
		}
		if ref.hole < 0 {
			ref.hole = len(a.sharded)
			a.sharded = append(a.sharded, ref)
		}
	}
	a.refs = append(a.refs, ref)
	if s != nil {
		s.refs = append(s.refs, ref.idx)
	}
	return ref, nil
}

// nameTaken reports whether a table or derived table of block s already
// goes by name (lower-case).
func (a *analysis) nameTaken(s *scope, name string) bool {
	if s.derived[name] {
		return true
	}
	for _, i := range s.refs {
		if o := a.refs[i]; firstNonEmpty(o.alias, o.name) == name {
			return true
		}
	}
	return false
}

func (a *analysis) newScope(parent *scope, nested bool) *scope {
	s := &scope{parent: parent, nested: nested}
	a.scopes = append(a.scopes, s)
	return s
}

// walkResultSet analyzes a SELECT, a set operation or a derived table.
func (a *analysis) walkResultSet(n ast.Node, parent *scope, nested bool) error {
	switch n := n.(type) {
	case *ast.SelectStmt:
		return a.walkSelect(n, parent, nested)
	case *ast.SetOprStmt:
		a.setOp = true
		if err := a.walkWith(n.With, parent); err != nil {
			return err
		}
		if n.SelectList != nil {
			if err := a.walkWith(n.SelectList.With, parent); err != nil {
				return err
			}
			for _, sel := range n.SelectList.Selects {
				if err := a.walkResultSet(sel, parent, true); err != nil {
					return err
				}
			}
		}
		s := a.newScope(parent, true)
		return a.walkExprs(s, orderExprs(n.OrderBy), limitExprs(n.Limit))
	case *ast.SetOprSelectList:
		a.setOp = true
		if err := a.walkWith(n.With, parent); err != nil {
			return err
		}
		for _, sel := range n.Selects {
			if err := a.walkResultSet(sel, parent, true); err != nil {
				return err
			}
		}
		return nil
	case *ast.SubqueryExpr:
		return a.walkResultSet(n.Query, parent, true)
	case nil:
		return nil
	}
	return errNotSupported("unsupported query block %T", n)
}

func (a *analysis) walkWith(w *ast.WithClause, parent *scope) error {
	if w == nil {
		return nil
	}
	if a.ctes == nil {
		a.ctes = map[string]bool{}
	}
	for _, cte := range w.CTEs {
		a.ctes[cte.Name.L] = true
		if parent != nil {
			if parent.derived == nil {
				parent.derived = map[string]bool{}
			}
			parent.derived[cte.Name.L] = true
		}
		if cte.Query != nil {
			if err := a.walkResultSet(cte.Query.Query, parent, true); err != nil {
				return err
			}
		}
	}
	return nil
}

func (a *analysis) walkSelect(sel *ast.SelectStmt, parent *scope, nested bool) error {
	if err := a.walkWith(sel.With, parent); err != nil {
		return err
	}
	s := a.newScope(parent, nested)
	if a.scopeOf == nil {
		a.scopeOf = map[*ast.SelectStmt]*scope{}
	}
	a.scopeOf[sel] = s
	if sel.From != nil && sel.From.TableRefs != nil {
		if err := a.walkFrom(sel.From.TableRefs, s, nested, true); err != nil {
			return err
		}
	}
	if sel.Where != nil {
		s.conds = append(s.conds, sel.Where)
	}
	var exprs []ast.ExprNode
	if sel.Fields != nil {
		for _, f := range sel.Fields.Fields {
			if f.Expr != nil {
				exprs = append(exprs, f.Expr)
			}
		}
	}
	exprs = append(exprs, sel.Where)
	if sel.GroupBy != nil {
		for _, it := range sel.GroupBy.Items {
			exprs = append(exprs, it.Expr)
		}
	}
	if sel.Having != nil {
		exprs = append(exprs, sel.Having.Expr)
	}
	if sel.Kind == ast.SelectStmtKindValues {
		for _, row := range sel.Lists {
			exprs = append(exprs, row)
		}
	}
	return a.walkExprs(s, exprs, orderExprs(sel.OrderBy), limitExprs(sel.Limit))
}

func orderExprs(o *ast.OrderByClause) []ast.ExprNode {
	if o == nil {
		return nil
	}
	out := make([]ast.ExprNode, 0, len(o.Items))
	for _, it := range o.Items {
		out = append(out, it.Expr)
	}
	return out
}

func limitExprs(l *ast.Limit) []ast.ExprNode {
	if l == nil {
		return nil
	}
	return []ast.ExprNode{l.Count, l.Offset}
}

// walkFrom registers the tables of a FROM clause. inner is false below
// the nullable side of an outer join, whose ON conditions must not narrow
// the routing.
func (a *analysis) walkFrom(n ast.ResultSetNode, s *scope, nested, inner bool) error {
	switch n := n.(type) {
	case *ast.Join:
		// The nullable side of an outer join keeps the other side's rows
		// whatever its own ON conditions say.
		start, allStart := len(s.refs), len(a.refs)
		if n.Left != nil {
			if err := a.walkFrom(n.Left, s, nested, inner && n.Tp != ast.RightJoin); err != nil {
				return err
			}
		}
		mid, allMid := len(s.refs), len(a.refs)
		if n.Right != nil {
			if err := a.walkFrom(n.Right, s, nested, inner && n.Tp != ast.LeftJoin); err != nil {
				return err
			}
		}
		left, right := s.refs[start:mid:mid], s.refs[mid:len(s.refs):len(s.refs)]
		switch n.Tp {
		case ast.LeftJoin:
			a.noteOuterJoin(s, a.refs[allStart:allMid], a.refs[allMid:], left, right)
		case ast.RightJoin:
			a.noteOuterJoin(s, a.refs[allMid:], a.refs[allStart:allMid], right, left)
		}
		if len(n.Using) > 0 || n.NaturalJoin {
			a.addUsingEqs(s, n, left, right)
		}
		if n.On != nil {
			switch {
			case n.Tp == ast.CrossJoin && inner:
				s.conds = append(s.conds, n.On.Expr)
			case n.Tp == ast.LeftJoin:
				s.joinConds = append(s.joinConds, joinCond{expr: n.On.Expr, nullable: right})
			case n.Tp == ast.RightJoin:
				s.joinConds = append(s.joinConds, joinCond{expr: n.On.Expr, nullable: left})
			default:
				s.joinConds = append(s.joinConds, joinCond{expr: n.On.Expr})
			}
			return a.walkExprs(s, []ast.ExprNode{n.On.Expr})
		}
		return nil
	case *ast.TableSource:
		switch src := n.Source.(type) {
		case *ast.TableName:
			_, err := a.addRef(src, n, s, nested)
			return err
		case *ast.SelectStmt, *ast.SetOprStmt:
			if n.AsName.L != "" {
				if a.nameTaken(s, n.AsName.L) {
					return newError(CodeNonUniqTable, "42000", "Not unique table/alias: '%s'", n.AsName.O)
				}
				if s.derived == nil {
					s.derived = map[string]bool{}
				}
				s.derived[n.AsName.L] = true
			}
			return a.walkResultSet(src, s, true)
		case *ast.Join:
			return a.walkFrom(src, s, nested, inner)
		}
		return errNotSupported("unsupported table source %T", n.Source)
	case *ast.TableName:
		_, err := a.addRef(n, nil, s, nested)
		return err
	case *ast.SelectStmt, *ast.SetOprStmt:
		return a.walkResultSet(n, s, true)
	}
	return errNotSupported("unsupported table source %T", n)
}

// addUsingEqs records the equalities JOIN ... USING (cols) or NATURAL
// JOIN states between the sharded tables of its two sides: a USING column
// (for NATURAL JOIN, a sharding column both tables have) is equal in both.
func (a *analysis) addUsingEqs(s *scope, n *ast.Join, left, right []int) {
	for _, li := range left {
		l := a.refs[li]
		if l.kind != refSharded {
			continue
		}
		for _, ri := range right {
			r := a.refs[ri]
			if r.kind != refSharded {
				continue
			}
			if n.NaturalJoin {
				for _, col := range r.info.rule.ShardingColumns() {
					if l.info.role(col) != 0 {
						s.usingEqs = append(s.usingEqs, colEq{li, col, ri, col})
					}
				}
				continue
			}
			for _, cn := range n.Using {
				if l.info.role(cn.Name.L) != 0 && r.info.role(cn.Name.L) != 0 {
					s.usingEqs = append(s.usingEqs, colEq{li, cn.Name.L, ri, cn.Name.L})
				}
			}
		}
	}
}

// walkExprs finds the subqueries in expressions of block s and analyzes
// them as nested blocks.
func (a *analysis) walkExprs(s *scope, lists ...[]ast.ExprNode) error {
	v := subqueryFinder{a: a, s: s}
	for _, list := range lists {
		for _, e := range list {
			if e == nil {
				continue
			}
			e.Accept(&v)
			if v.err != nil {
				return v.err
			}
		}
	}
	return nil
}

type subqueryFinder struct {
	a   *analysis
	s   *scope
	err error
}

func (v *subqueryFinder) Enter(n ast.Node) (ast.Node, bool) {
	if v.err != nil {
		return n, true
	}
	switch n := n.(type) {
	case *ast.SubqueryExpr:
		v.err = v.a.walkResultSet(n.Query, v.s, true)
		return n, true
	case *ast.PatternInExpr:
		if n.Sel != nil {
			v.a.inSubqueries = append(v.a.inSubqueries, inSubquery{s: v.s, expr: n})
		} else {
			v.a.inLists = append(v.a.inLists, inSubquery{s: v.s, expr: n})
		}
	}
	return n, false
}

func (v *subqueryFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// collectParams finds the ? markers of the statement, in text order.
func (a *analysis) collectParams(stmt ast.Node) {
	var c paramCollector
	stmt.Accept(&c)
	sort.Slice(c.params, func(i, j int) bool { return c.params[i].Offset < c.params[j].Offset })
	for i, p := range c.params {
		p.Order = i
	}
	a.params = c.params
	a.setsInsertID = c.setsInsertID
}

type paramCollector struct {
	params       []*driver.ParamMarkerExpr
	setsInsertID bool
}

func (c *paramCollector) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *driver.ParamMarkerExpr:
		c.params = append(c.params, x)
	case *ast.FuncCallExpr:
		if x.FnName.L == "last_insert_id" && len(x.Args) > 0 {
			c.setsInsertID = true
		}
	}
	return n, false
}

func (c *paramCollector) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// resolve finds the table reference a qualified column name belongs to,
// looking through enclosing blocks. -1 when it names no table reference
// (a derived table, an unknown name).
func (a *analysis) resolve(s *scope, cn *ast.ColumnName) int {
	if cn.Table.L == "" {
		return -1
	}
	if cn.Schema.L != "" && cn.Schema.L != a.r.dbLower {
		return -1
	}
	for ; s != nil; s = s.parent {
		if s.derived[cn.Table.L] {
			return -1
		}
		for _, i := range s.refs {
			ref := a.refs[i]
			if ref.alias == cn.Table.L || (ref.alias == "" && ref.name == cn.Table.L) {
				return i
			}
		}
	}
	return -1
}

// columnRefs returns the sharded references of block s a column names:
// the qualified one, or for an unqualified name every sharded table of the
// block with a sharding column of that name (a valid statement names only
// one, or several joined with USING).
func (a *analysis) columnRefs(s *scope, cn *ast.ColumnName, buf []int) []int {
	buf = buf[:0]
	if cn.Table.L != "" {
		i := a.resolve(s, cn)
		if i >= 0 && a.refs[i].kind == refSharded && a.refs[i].scope == s {
			buf = append(buf, i)
		}
		return buf
	}
	for _, i := range s.refs {
		ref := a.refs[i]
		if ref.kind == refSharded && ref.info.role(cn.Name.L) != 0 {
			buf = append(buf, i)
		}
	}
	return buf
}

// release drops the analysis' references into the statement's tree once
// the templates are built, so a cached Prepared does not keep the tree
// alive; Bind needs only the references' names, kinds and holes.
func (a *analysis) release() {
	for _, ref := range a.refs {
		ref.tn, ref.ts, ref.scope = nil, nil, nil
	}
	a.scopes, a.scopeOf, a.inLists, a.inSubqueries, a.params = nil, nil, nil, nil, nil
}

// tables returns the distinct logical tables of the statement, in order.
func (a *analysis) tables() []string {
	var out []string
	for _, ref := range a.refs {
		dup := false
		for _, t := range out {
			if t == ref.name {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, ref.name)
		}
	}
	return out
}
