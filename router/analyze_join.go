package router

import (
	"slices"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"github.com/shardflake/shardflake/algorithm"
)

// Which sharded references of a statement pair data node by data node:
// binding tables joined on all their sharding columns, and subqueries
// correlated with them on all their sharding columns.

// alignedRefs reports whether the sharded references pair data node by
// data node: at the top level, tables of one binding group (or one table
// joined with itself) whose join conditions equate all their sharding
// columns, so that rows that join always live on paired data nodes; and
// nested references correlated with one of them. bindingTables only
// declares which tables pair; a join on other columns (or none) must not
// pair them, or rows joining across data nodes would be lost.
func (a *analysis) alignedRefs() bool {
	if a.unionLift {
		return true
	}
	if a.setOp || len(a.sharded) == 0 {
		return false
	}
	var tops []*tableRef
	for _, ref := range a.sharded {
		if ref.nested {
			if ref.follows < 0 {
				return false
			}
			continue
		}
		if len(tops) > 0 && ref.name != tops[0].name && (ref.info.group < 0 || ref.info.group != tops[0].info.group) {
			return false
		}
		tops = append(tops, ref)
	}
	switch len(tops) {
	case 0:
		return false
	case 1:
		return true
	}
	var eqs []colEq
	var pins []colPin
	var seen []*scope
	for _, ref := range tops {
		if ref.scope == nil {
			// DDL names tables without a FROM clause: a foreign key
			// between binding tables pairs their data nodes.
			return distinctNames(tops)
		}
		if !containsScope(seen, ref.scope) {
			seen = append(seen, ref.scope)
			eqs = append(eqs, a.pairingEqs(ref.scope)...)
			pins = a.pins(ref.scope, pins)
		}
	}
	// Every top-level reference must be connected to the first through
	// equalities on all sharding columns.
	comp := make([]int, len(tops))
	for i := range comp {
		comp[i] = i
	}
	var find func(i int) int
	find = func(i int) int {
		for comp[i] != i {
			i = comp[i]
		}
		return i
	}
	for i := range tops {
		for j := i + 1; j < len(tops); j++ {
			if find(i) != find(j) && (correlatedOn(tops[i], tops[j], eqs, pins) || a.boundJoin(tops[i], tops[j], eqs)) {
				comp[find(j)] = find(i)
			}
		}
	}
	for i := range tops {
		if find(i) != find(0) {
			return false
		}
	}
	return true
}

func distinctNames(refs []*tableRef) bool {
	for i, r := range refs {
		for _, o := range refs[:i] {
			if o.name == r.name {
				return false
			}
		}
	}
	return true
}

func containsScope(list []*scope, s *scope) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// pairingEqs returns the column equalities that hold for every row block
// s produces from two non-NULL rows: those of WHERE and inner-join ON
// conditions, USING and NATURAL joins, and those of an outer join's ON
// clause that read a table of its nullable side (a row of the preserved
// side is kept whatever its ON clause says).
func (a *analysis) pairingEqs(s *scope) []colEq {
	out := append(a.equalities(s), s.usingEqs...)
	for _, jc := range s.joinConds {
		for _, e := range a.conjunctEqs(s, jc.expr, nil) {
			if jc.nullable == nil || slices.Contains(jc.nullable, e.ref1) || slices.Contains(jc.nullable, e.ref2) {
				out = append(out, e)
			}
		}
	}
	return out
}

// bindCorrelated marks nested sharded references whose block equates all
// their sharding columns with those of a top-level reference of the same
// table or binding group, or, as a join may (boundJoin), a child's column
// with its parent's key (Django's Subquery(OuterRef("pk")) and Exists()):
// their rows live on that reference's data node.
func (a *analysis) bindCorrelated() {
	for _, ref := range a.sharded {
		if !ref.nested || ref.scope == nil || a.setOp {
			continue
		}
		eqs := a.equalities(ref.scope)
		for _, o := range a.sharded {
			if o.nested || (o.name != ref.name && (o.info.group < 0 || o.info.group != ref.info.group)) {
				continue
			}
			pins := a.pins(ref.scope, nil)
			if o.scope != nil && o.scope != ref.scope {
				pins = a.pins(o.scope, pins)
			}
			if correlatedOn(ref, o, eqs, pins) || a.boundJoin(ref, o, eqs) {
				ref.follows = o.idx
				break
			}
		}
	}
}

// colEq is "ref.col = ref2.col2".
type colEq struct {
	ref1 int
	col1 string
	ref2 int
	col2 string
}

// equalities returns the column equalities of block s's conjuncts, plus
// those an IN (SELECT ...) predicate implies for the subquery's block.
func (a *analysis) equalities(s *scope) []colEq {
	var out []colEq
	for _, c := range s.conds {
		out = a.conjunctEqs(s, c, out)
	}
	for _, in := range a.inSubqueries {
		sub, ok := in.expr.Sel.(*ast.SubqueryExpr)
		if !ok || in.expr.Not {
			continue
		}
		sel, ok := sub.Query.(*ast.SelectStmt)
		if !ok || a.scopeOf[sel] != s || sel.Fields == nil {
			continue
		}
		var outer []ast.ExprNode
		if row, ok := in.expr.Expr.(*ast.RowExpr); ok {
			outer = row.Values
		} else {
			outer = []ast.ExprNode{in.expr.Expr}
		}
		if len(outer) != len(sel.Fields.Fields) {
			continue
		}
		for i, f := range sel.Fields.Fields {
			l, r := columnOf(outer[i]), columnOf(f.Expr)
			if l != nil && r != nil {
				out = append(out, a.colEqs(in.s, l, s, r)...)
			}
		}
	}
	return out
}

// conjunctEqs appends the column equalities among the conjuncts of e, an
// expression of block s, to out.
func (a *analysis) conjunctEqs(s *scope, e ast.ExprNode, out []colEq) []colEq {
	switch x := e.(type) {
	case *ast.ParenthesesExpr:
		return a.conjunctEqs(s, x.Expr, out)
	case *ast.BinaryOperationExpr:
		switch x.Op {
		case opcode.LogicAnd:
			return a.conjunctEqs(s, x.R, a.conjunctEqs(s, x.L, out))
		case opcode.EQ, opcode.NullEQ:
			l, r := columnOf(x.L), columnOf(x.R)
			if l != nil && r != nil {
				out = append(out, a.colEqs(s, l, s, r)...)
			}
		}
	}
	return out
}

// colEqs resolves both sides of an equality (x in block sx, y in block sy).
func (a *analysis) colEqs(sx *scope, x *ast.ColumnName, sy *scope, y *ast.ColumnName) []colEq {
	rx, ry := a.anyRefs(sx, x), a.anyRefs(sy, y)
	cx, cy := x.Name.L, y.Name.L
	if ref, col, ok := a.derivedColumn(sx, x); ok {
		rx, cx = []int{ref}, col
	}
	if ref, col, ok := a.derivedColumn(sy, y); ok {
		ry, cy = []int{ref}, col
	}
	var out []colEq
	for _, i := range rx {
		for _, j := range ry {
			out = append(out, colEq{i, cx, j, cy})
		}
	}
	return out
}

// anyRefs resolves a column to sharded references, qualified through
// enclosing blocks, unqualified in its own block.
func (a *analysis) anyRefs(s *scope, cn *ast.ColumnName) []int {
	if cn.Table.L != "" {
		if i := a.resolve(s, cn); i >= 0 && a.refs[i].kind == refSharded {
			return []int{i}
		}
		return nil
	}
	return a.columnRefs(s, cn, nil)
}

// correlatedOn reports whether every sharding column of ref is equal to
// the column in the same strategy position of o: equated by eqs, or both
// pinned to the same literal (user_id = 13 in both blocks).
func correlatedOn(ref, o *tableRef, eqs []colEq, pins []colPin) bool {
	pairs := [][2][]string{{ref.info.dbCols, o.info.dbCols}, {ref.info.tableCols, o.info.tableCols}}
	for _, p := range pairs {
		if len(p[0]) != len(p[1]) {
			return false
		}
		for k := range p[0] {
			found := false
			for _, e := range eqs {
				if (e.ref1 == ref.idx && e.col1 == p[0][k] && e.ref2 == o.idx && e.col2 == p[1][k]) ||
					(e.ref2 == ref.idx && e.col2 == p[0][k] && e.ref1 == o.idx && e.col1 == p[1][k]) {
					found = true
					break
				}
			}
			if !found && !samePin(pins, ref.idx, p[0][k], o.idx, p[1][k]) {
				return false
			}
		}
	}
	return true
}

// colPin is "ref.col = literal", a conjunct of the reference's block.
type colPin struct {
	ref int
	col string
	val algorithm.Value
}

// pins appends to out the sharding columns block s's conjuncts pin to one
// non-NULL literal (col = v, col IN (v)).
func (a *analysis) pins(s *scope, out []colPin) []colPin {
	var walk func(e ast.ExprNode)
	walk = func(e ast.ExprNode) {
		var cn *ast.ColumnName
		var o operand
		switch x := e.(type) {
		case *ast.ParenthesesExpr:
			walk(x.Expr)
			return
		case *ast.BinaryOperationExpr:
			if x.Op == opcode.LogicAnd {
				walk(x.L)
				walk(x.R)
				return
			}
			if x.Op != opcode.EQ {
				return
			}
			var ok bool
			if cn, o, ok = columnOperand(x.L, x.R); !ok {
				return
			}
		case *ast.PatternInExpr:
			if x.Not || x.Sel != nil || len(x.List) != 1 {
				return
			}
			var ok bool
			if cn = columnOf(x.Expr); cn == nil {
				return
			}
			if o, ok = operandOf(x.List[0]); !ok {
				return
			}
		default:
			return
		}
		if o.param >= 0 || o.val == nil {
			return
		}
		for _, i := range a.columnRefs(s, cn, nil) {
			if a.refs[i].info.role(cn.Name.L) != 0 {
				out = append(out, colPin{i, cn.Name.L, o.val})
			}
		}
	}
	for _, c := range s.conds {
		walk(c)
	}
	return out
}

// samePin reports whether ref1.col1 and ref2.col2 are pinned to the same
// literal.
func samePin(pins []colPin, ref1 int, col1 string, ref2 int, col2 string) bool {
	for _, p := range pins {
		if p.ref != ref1 || p.col != col1 {
			continue
		}
		for _, q := range pins {
			if q.ref == ref2 && q.col == col2 && sameValue(p.val, q.val) {
				return true
			}
		}
	}
	return false
}
