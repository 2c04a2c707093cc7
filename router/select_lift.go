package router

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
)

// Three ORM shapes read sharded tables only inside one query block that
// returns rows, not groups: a count query over a derived table (SELECT
// COUNT(*) FROM (SELECT ... FROM t_order WHERE ...) sub, as MyBatis
// PageHelper and Spring Data write it), an existence check (SELECT
// EXISTS(SELECT 1 FROM t_order WHERE ...)), and TypeORM's existence check
// (SELECT 1 AS row_exists FROM (SELECT 1 AS dummy_column) dummy_table
// WHERE EXISTS (SELECT 1 FROM t_order WHERE ...) LIMIT 1). The inner
// block's rows are the union of its rows on each data node, so each route
// can run the whole statement on its data nodes and the merge combines
// the answers: the outer query's merge as for any SELECT, OR (MAX) of the
// routes' EXISTS, and for TypeORM's shape, whose outer block has at most
// one row, the one row any route returned. Such a block is lifted: its
// tables route the statement as if they were the outer block's.

// liftKind says which shape a SELECT was recognised as.
type liftKind int

const (
	liftNone        liftKind = iota + 1
	liftDerived              // the outer block reads one derived table
	liftExists               // the select list is EXISTS (subquery) only
	liftWhereExists          // one row at most, kept WHERE EXISTS (subquery)
)

func (k liftKind) String() string {
	switch k {
	case liftNone:
		return "none"
	case liftDerived:
		return "derived"
	case liftExists:
		return "exists"
	case liftWhereExists:
		return "where exists"
	}
	return "unknown"
}

// lift recognises the shapes above in sel (already walked) and marks the
// sharded references of the inner block as top-level ones.
func (a *analysis) lift(sel *ast.SelectStmt) liftKind {
	if len(a.sharded) == 0 || sel.Kind != ast.SelectStmtKindSelect {
		return liftNone
	}
	if a.setOp {
		// SELECT ... FROM (SELECT ... UNION ALL SELECT ...) u: the
		// derived table's rows are the union of its rows on each data
		// node as a SELECT's are (setop_lift.go).
		if so := derivedUnionAll(sel); so != nil && a.liftUnion(so) {
			return liftDerived
		}
		return liftNone
	}
	// TypeORM's shape reads a derived table too, one without tables.
	kind, inner := liftWhereExists, whereExistsSource(sel)
	if inner == nil {
		kind, inner = liftDerived, derivedSource(sel)
	}
	if inner == nil {
		kind, inner = liftExists, existsSource(sel)
	}
	if inner == nil || !a.rowwise(inner, kind) {
		return liftNone
	}
	s := a.scopeOf[inner]
	if s == nil {
		return liftNone
	}
	found := false
	for _, ref := range a.sharded {
		if !within(ref.scope, s) {
			return liftNone // a sharded table outside the block
		}
		found = found || ref.scope == s
	}
	if !found {
		return liftNone
	}
	for _, ref := range a.sharded {
		if ref.scope == s {
			ref.nested = false
		}
	}
	return kind
}

// derivedSource returns the SELECT of the one derived table sel reads:
// FROM (SELECT ...) alias, or FROM name where name is a common table
// expression of sel's own WITH clause (cteQuery).
func derivedSource(sel *ast.SelectStmt) *ast.SelectStmt {
	if sel.From == nil || sel.From.TableRefs == nil || sel.From.TableRefs.Right != nil {
		return nil
	}
	ts, ok := sel.From.TableRefs.Left.(*ast.TableSource)
	if !ok {
		return nil
	}
	switch src := ts.Source.(type) {
	case *ast.SelectStmt:
		return src
	case *ast.TableName:
		return cteQuery(sel, src)
	}
	return nil
}

// cteQuery returns the SELECT of the common table expression tn names in
// sel's WITH clause, when the statement reads it once (CTERead).
func cteQuery(sel *ast.SelectStmt, tn *ast.TableName) *ast.SelectStmt {
	q, _ := CTERead(sel, tn).(*ast.SelectStmt)
	return q
}

// CTERead returns the query (a SELECT or a set operation) of the common
// table expression tn names in sel's WITH clause, when the statement
// names it nowhere else, or nil: WITH x AS (SELECT ...) SELECT ... FROM x
// reads x once, as a derived table written first (SQLAlchemy's cte(),
// Laravel's and jOOQ's WITH builders). A recursive WITH, or a CTE read
// twice, is not a derived table: each route would join or repeat its own
// data nodes' rows only.
func CTERead(sel *ast.SelectStmt, tn *ast.TableName) ast.ResultSetNode {
	if sel.With == nil || sel.With.IsRecursive || tn.Schema.L != "" {
		return nil
	}
	var q ast.ResultSetNode
	for _, cte := range sel.With.CTEs {
		if cte.Name.L == tn.Name.L && cte.Query != nil {
			q = cte.Query.Query
		}
	}
	if q == nil {
		return nil
	}
	c := tableNameCounter{name: tn.Name.L}
	sel.Accept(&c)
	if c.n != 1 {
		return nil
	}
	return q
}

// tableNameCounter counts the unqualified table names equal to name.
type tableNameCounter struct {
	name string
	n    int
}

func (c *tableNameCounter) Enter(n ast.Node) (ast.Node, bool) {
	if tn, ok := n.(*ast.TableName); ok && tn.Schema.L == "" && tn.Name.L == c.name {
		c.n++
	}
	return n, false
}

func (c *tableNameCounter) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// existsSource returns the subquery of SELECT [NOT] EXISTS (subquery),
// a SELECT with no other field and no other clause.
func existsSource(sel *ast.SelectStmt) *ast.SelectStmt {
	if sel.From != nil || sel.Where != nil || sel.GroupBy != nil || sel.Having != nil || sel.OrderBy != nil ||
		sel.Limit != nil || sel.Distinct || sel.Fields == nil || len(sel.Fields.Fields) != 1 {
		return nil
	}
	inner, _ := existsQuery(sel.Fields.Fields[0].Expr)
	return inner
}

// whereExistsSource returns the subquery of SELECT fields [FROM (SELECT
// constants) alias] WHERE EXISTS (subquery) [ORDER BY ...] [LIMIT ...]:
// the FROM gives exactly one row and the WHERE only keeps or drops it, so
// the statement returns at most one row, whatever its data nodes. Its
// fields may not aggregate (an aggregate answers a row even when the
// WHERE drops it) nor hold a window function.
func whereExistsSource(sel *ast.SelectStmt) *ast.SelectStmt {
	if sel.Where == nil || sel.GroupBy != nil || sel.Having != nil || len(sel.WindowSpecs) > 0 ||
		sel.SelectIntoOpt != nil || sel.With != nil || sel.Fields == nil || !oneRow(sel.Fields) {
		return nil
	}
	if sel.OrderBy != nil {
		for _, by := range sel.OrderBy.Items {
			if containsAggregate(by.Expr) {
				return nil
			}
		}
	}
	if sel.From != nil {
		src := derivedSource(sel)
		if src == nil || src.Kind != ast.SelectStmtKindSelect || src.From != nil || src.Where != nil ||
			src.GroupBy != nil || src.Having != nil || src.Limit != nil || src.With != nil ||
			len(src.WindowSpecs) > 0 || src.Fields == nil || !oneRow(src.Fields) {
			return nil
		}
	}
	inner, not := existsQuery(sel.Where)
	if not {
		return nil
	}
	return inner
}

// existsQuery returns the query block of [NOT] EXISTS (SELECT ...), nil
// for any other expression; not reports the negation.
func existsQuery(e ast.ExprNode) (inner *ast.SelectStmt, not bool) {
	ex, not := existsOf(e)
	if ex == nil {
		return nil, false
	}
	sub, ok := ex.Sel.(*ast.SubqueryExpr)
	if !ok {
		return nil, false
	}
	inner, _ = sub.Query.(*ast.SelectStmt)
	return inner, not
}

// oneRow reports whether a select list keeps its block's row count:
// no aggregate and no window function.
func oneRow(fields *ast.FieldList) bool {
	var w windowFinder
	for _, f := range fields.Fields {
		if f.WildCard != nil {
			continue
		}
		if containsAggregate(f.Expr) {
			return false
		}
		f.Expr.Accept(&w)
	}
	return len(w.specs) == 0
}

// existsOf unwraps [NOT] EXISTS (subquery); not reports the negation.
func existsOf(e ast.ExprNode) (ex *ast.ExistsSubqueryExpr, not bool) {
	for {
		switch x := e.(type) {
		case *ast.ParenthesesExpr:
			e = x.Expr
		case *ast.UnaryOperationExpr:
			if x.Op != opcode.Not && x.Op != opcode.Not2 {
				return nil, false
			}
			not = !not
			e = x.V
		case *ast.ExistsSubqueryExpr:
			return x, not != x.Not
		default:
			return nil, false
		}
	}
}

// rowwise reports whether block sel's rows are the union of its rows on
// each data node: no grouping, aggregates, DISTINCT or LIMIT (an EXISTS
// may keep a LIMIT without OFFSET, which does not change whether a row
// exists), and window functions only over partitions that live on one
// data node each (windowsAcross).
func (a *analysis) rowwise(sel *ast.SelectStmt, kind liftKind) bool {
	if sel.Kind != ast.SelectStmtKindSelect || sel.GroupBy != nil || sel.Having != nil || sel.Distinct ||
		sel.SelectIntoOpt != nil || sel.With != nil || sel.Fields == nil {
		return false
	}
	if sel.Limit != nil && !unboundedLimit(sel.Limit) && (kind == liftDerived || sel.Limit.Offset != nil) {
		return false
	}
	for _, f := range sel.Fields.Fields {
		if f.Expr != nil && containsAggregate(f.Expr) {
			return false
		}
	}
	if !hasWindows(sel) {
		return true
	}
	if err := a.windowsAcross(sel); err != nil {
		a.windowErr = err
		return false
	}
	return true
}

// within reports whether block s is b or nested inside it.
func within(s, b *scope) bool {
	for ; s != nil; s = s.parent {
		if s == b {
			return true
		}
	}
	return false
}

// whereExistsMerge is the merge of TypeORM's existence check: each route
// answers the statement's one row when its data nodes hold a matching
// row, none otherwise, so the answer is the first row any route returns.
func whereExistsMerge(tmpl *sqlTemplate) *selectMerge {
	return &selectMerge{tmpl: tmpl, limit: &limitOperands{
		count:  operand{param: -1, val: int64(1)},
		offset: operand{param: -1, val: int64(0)},
	}}
}

// existsMerge is the merge of the EXISTS shape: each route answers one
// row, whose value is 1 when its data nodes hold a matching row; EXISTS
// is their OR (MAX), NOT EXISTS their AND (MIN).
func existsMerge(sel *ast.SelectStmt, tmpl *sqlTemplate) *selectMerge {
	fn := AggMax
	if _, not := existsOf(sel.Fields.Fields[0].Expr); not {
		fn = AggMin
	}
	return &selectMerge{tmpl: tmpl, merge: Merge{Group: &Group{Streamed: true, Aggregates: []Aggregate{{Func: fn, Column: 0}}}}}
}
