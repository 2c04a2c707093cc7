package router

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// prepareWhole plans a statement whose SQL is the same on every route:
// writes to broadcast tables (every data source) and statements on tables
// without rules (the default data source), with table names rewritten
// where they are sharded.
func (r *Router) prepareWhole(p *Prepared, a *analysis, stmt ast.StmtNode, h *hints, write bool) error {
	rt, err := r.newRouting(a, h, write)
	if err != nil {
		return err
	}
	return r.finishWhole(p, a, stmt, h, rt, true)
}

func (r *Router) finishWhole(p *Prepared, a *analysis, stmt ast.StmtNode, h *hints, rt *routing, aliases bool) error {
	d := &dmlBinder{r: r, a: a, kind: statementKind(stmt), rt: rt, tables: a.tables()}
	if err := d.markInLists(); err != nil {
		return err
	}
	verbatim := a.verbatimOK(p.sql)
	a.rewrite(stmt, aliases)
	var err error
	if verbatim {
		d.single = verbatimTemplate(p.sql)
	} else if d.single, err = buildTemplate(stmt); err != nil {
		return err
	}
	if err := d.buildEmpty(stmt); err != nil {
		return err
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

// prepareInsertSelect plans INSERT ... SELECT. Into a sharded table it
// works when every selected row is certain to belong to the data node the
// SELECT runs on: the target's sharding columns are fed by the same
// sharding columns of the source (the same table or a binding table), so
// data node k of the source feeds data node k of the target; or they are
// literals, and the whole statement reaches one data source.
func (r *Router) prepareInsertSelect(p *Prepared, a *analysis, s *ast.InsertStmt, h *hints, target *tableRef) error {
	if err := a.walkResultSet(s.Select, nil, false); err != nil {
		return err
	}
	var odku []ast.ExprNode
	for _, as := range s.OnDuplicate {
		odku = append(odku, as.Expr)
	}
	if err := a.walkExprs(target.scope, odku); err != nil {
		return err
	}
	if a.system {
		return errNotSupported("INSERT ... SELECT from a system schema is not supported")
	}
	if target.kind != refSharded {
		return r.prepareWhole(p, a, s, h, true)
	}
	ti := target.info
	if len(s.Columns) == 0 && r.columns != nil {
		for _, c := range r.columns(target.name) {
			s.Columns = append(s.Columns, &ast.ColumnName{Name: ast.NewCIStr(c)})
		}
	}
	if len(s.Columns) == 0 {
		return errNotSupported("INSERT ... SELECT into sharded table %s needs a column list", target.name)
	}
	key := ti.rule.KeyColumn
	if key != "" && ti.keyGen != nil && columnIndex(s.Columns, key) < 0 {
		return errNotSupported("INSERT ... SELECT into %s must give key column %s: the router cannot generate keys for selected rows", target.name, key)
	}
	sel, ok := s.Select.(*ast.SelectStmt)
	if !ok || sel.Fields == nil || len(sel.Fields.Fields) != len(s.Columns) {
		return errNotSupported("INSERT ... SELECT into sharded table %s needs a plain SELECT with one expression per column", target.name)
	}
	ss := a.scopeOf[sel]
	follow, values := -1, map[string]operand{}
	roles := [][2][]string{{ti.dbCols, nil}, {ti.tableCols, nil}}
	for ri, role := range roles {
		for k, col := range role[0] {
			idx := columnIndex(s.Columns, col)
			if idx < 0 {
				return errNotSupported("INSERT ... SELECT into %s must give sharding column %s", target.name, col)
			}
			f := sel.Fields.Fields[idx]
			if f.Expr == nil {
				return errNotSupported("INSERT ... SELECT into sharded table %s cannot take its sharding columns from a wildcard", target.name)
			}
			if o, ok := operandOf(f.Expr); ok {
				values[col] = o
				continue
			}
			src := feedingRef(a, ss, f.Expr, ti, ri, k)
			if src < 0 {
				return errNotSupported("INSERT ... SELECT into %s: sharding column %s must come from the same sharding column of %s or a binding table (so each row stays on its data node), or be a literal", target.name, col, target.name)
			}
			follow = src
		}
	}
	if follow >= 0 && len(values) > 0 {
		return errNotSupported("INSERT ... SELECT into %s takes some sharding columns from a table and others from literals; take all from one binding table", target.name)
	}
	if follow >= 0 {
		target.nested = true
		target.follows = follow
	}
	rt, err := r.newRouting(a, h, true)
	if err != nil {
		return err
	}
	switch {
	case follow >= 0 && !rt.aligned:
		return errNotSupported("INSERT ... SELECT into %s reads tables that do not pair data node by data node with it; it needs binding tables", target.name)
	case follow < 0:
		var g []atom
		for col, o := range values {
			g = append(g, atom{ref: target.idx, col: col, values: []operand{o}})
		}
		sortAtoms(g)
		rt.aligned = false
		rt.strictHole = target.hole
		rt.holeGroups[target.hole] = [][]atom{g}
		rt.recompute(rt.paramDependent || anyParam(values))
	}
	return r.finishWhole(p, a, s, h, rt, true)
}

func columnIndex(cols []*ast.ColumnName, name string) int {
	for i, c := range cols {
		if c.Name.L == name {
			return i
		}
	}
	return -1
}

// feedingRef returns the source reference whose sharding column (role ri,
// position k) a select expression is, when that source shards like the
// target; -1 otherwise.
func feedingRef(a *analysis, s *scope, e ast.ExprNode, target *tableInfo, ri, k int) int {
	cn := columnOf(e)
	if cn == nil || s == nil {
		return -1
	}
	for _, i := range a.anyRefs(s, cn) {
		src := a.refs[i]
		if src.nested || src.scope != s {
			continue
		}
		if src.info != target && (src.info.group < 0 || src.info.group != target.group) {
			continue
		}
		cols := src.info.dbCols
		if ri == 1 {
			cols = src.info.tableCols
		}
		if k < len(cols) && cols[k] == cn.Name.L {
			return i
		}
	}
	return -1
}

func anyParam(values map[string]operand) bool {
	for _, o := range values {
		if o.param >= 0 {
			return true
		}
	}
	return false
}

func sortAtoms(g []atom) {
	for i := 1; i < len(g); i++ {
		for j := i; j > 0 && g[j].col < g[j-1].col; j-- {
			g[j], g[j-1] = g[j-1], g[j]
		}
	}
}

// InsertSelectParts splits an INSERT ... SELECT for the proxy to run in
// two steps when the data nodes cannot run it as it is (InsertFill): the
// SELECT as a statement of its own, a locking read (LOCK IN SHARE MODE,
// as MariaDB reads the rows an INSERT ... SELECT inserts), and the INSERT
// up to its rows, "INSERT INTO `t` (`a`,`b`) VALUES ". ok is false for
// other statements, for an INSERT without a column list, and for one
// with ON DUPLICATE KEY UPDATE, whose expressions may name the SELECT's
// columns. It changes stmt: parse again to use the statement elsewhere.
func InsertSelectParts(stmt ast.StmtNode) (sel, head string, ok bool) {
	s, isInsert := stmt.(*ast.InsertStmt)
	if !isInsert || s.Select == nil || len(s.Columns) == 0 || len(s.OnDuplicate) > 0 || s.Setlist {
		return "", "", false
	}
	if x, isSelect := s.Select.(*ast.SelectStmt); isSelect && x.LockInfo == nil && x.From != nil {
		x.LockInfo = &ast.SelectLockInfo{LockType: ast.SelectLockForShare}
	}
	sel, err := restoreSQL(s.Select)
	if err != nil {
		return "", "", false
	}
	row := make([]ast.ExprNode, len(s.Columns))
	for i := range row {
		row[i] = ast.NewValueExpr(nil, "", "")
	}
	s.Select, s.Lists = nil, [][]ast.ExprNode{row}
	text, err := restoreSQL(s)
	if err != nil {
		return "", "", false
	}
	i := strings.LastIndex(text, " VALUES (")
	if i < 0 {
		return "", "", false
	}
	return sel, text[:i] + " VALUES ", true
}
