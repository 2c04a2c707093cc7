package router

import (
	"slices"
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

// InsertSelectText is an INSERT ... SELECT split for the proxy to run in
// two steps (InsertFill): the SELECT as a statement of its own, and the
// INSERT around the rows it reads.
type InsertSelectText struct {
	// Select is the SELECT, a locking read (LOCK IN SHARE MODE, as
	// MariaDB reads the rows an INSERT ... SELECT inserts).
	Select string
	// Head is the INSERT up to its rows: "INSERT INTO `t` (`a`,`b`)
	// VALUES ".
	Head string
	// Tail follows the rows: the ON DUPLICATE KEY UPDATE clause, or "".
	Tail string
	// Columns is how many values each row needs: the column list's, or
	// the table's when the statement has none.
	Columns int
}

// TableColumns gives a table's columns in table order: the ones an
// INSERT without a column list fills (MariaDB leaves INVISIBLE ones out)
// and all of them, which a statement may name; nil when they are
// unknown. schema is "" when the statement does not name one.
type TableColumns func(schema, table string) (insert, all []string)

// InsertSelectParts splits an INSERT ... SELECT for the proxy to run in
// two steps when the data nodes cannot run it as it is (InsertFill).
// Without a column list the rows fill the table's columns in table order,
// as in MariaDB. ON DUPLICATE KEY UPDATE stays after the rows, where
// VALUES(col) and the target's columns mean what they meant; a column
// that may be the SELECT's (MariaDB's clause sees the SELECT's tables)
// or a subquery cannot be rewritten, and err is 1235 with the reason. ok
// is false, with no error, for other statements. It changes stmt: parse
// again to use the statement elsewhere.
func InsertSelectParts(stmt ast.StmtNode, columns TableColumns) (parts InsertSelectText, ok bool, err error) {
	s, isInsert := stmt.(*ast.InsertStmt)
	if !isInsert || s.Select == nil || s.Setlist {
		return parts, false, nil
	}
	tn := insertTarget(s)
	if tn == nil {
		return parts, false, nil
	}
	var insertCols, targetCols []string
	if columns != nil {
		insertCols, targetCols = columns(tn.Schema.O, tn.Name.O)
	}
	if len(s.Columns) == 0 {
		if insertCols == nil {
			return parts, false, errNotSupported("INSERT ... SELECT into %s without a column list: the proxy cannot read the table's columns", tn.Name.O)
		}
		for _, c := range insertCols {
			s.Columns = append(s.Columns, &ast.ColumnName{Name: ast.NewCIStr(c)})
		}
	}
	if len(s.OnDuplicate) > 0 {
		c := &duplicateUpdateCheck{target: tn, targetCols: map[string]bool{}}
		for _, col := range targetCols {
			c.targetCols[strings.ToLower(col)] = true
		}
		if targetCols == nil {
			c.targetCols = nil
		}
		c.sources = selectSources(s.Select, columns, nil)
		for _, as := range s.OnDuplicate {
			as.Expr.Accept(c)
			if c.err != nil {
				return parts, false, c.err
			}
		}
	}
	if x, isSelect := s.Select.(*ast.SelectStmt); isSelect && x.LockInfo == nil && x.From != nil {
		x.LockInfo = &ast.SelectLockInfo{LockType: ast.SelectLockForShare}
	}
	if parts.Select, err = restoreSQL(s.Select); err != nil {
		return parts, false, nil
	}
	row := make([]ast.ExprNode, len(s.Columns))
	for i := range row {
		row[i] = ast.NewValueExpr(nil, "", "")
	}
	odku := s.OnDuplicate
	s.Select, s.Lists, s.OnDuplicate = nil, [][]ast.ExprNode{row}, nil
	text, err := restoreSQL(s)
	if err != nil {
		return parts, false, nil
	}
	i := strings.LastIndex(text, " VALUES (")
	if i < 0 {
		return parts, false, nil
	}
	if len(odku) > 0 {
		s.OnDuplicate = odku
		whole, err := restoreSQL(s)
		if err != nil || !strings.HasPrefix(whole, text) {
			return parts, false, nil
		}
		parts.Tail = whole[len(text):]
	}
	parts.Head, parts.Columns = text[:i]+" VALUES ", len(s.Columns)
	return parts, true, nil
}

// selectSource is a table the SELECT of an INSERT ... SELECT reads at its
// top level, whose columns ON DUPLICATE KEY UPDATE may name.
type selectSource struct {
	name string   // its alias, else its name, in lower case
	cols []string // nil when unknown: a derived table, a CTE, a table the proxy cannot read
}

// selectSources lists the tables in the FROM clauses of a SELECT (of each
// SELECT of a UNION), appended to out.
func selectSources(n ast.Node, columns TableColumns, out []selectSource) []selectSource {
	switch x := n.(type) {
	case *ast.SelectStmt:
		ctes := map[string]bool{}
		if x.With != nil {
			for _, c := range x.With.CTEs {
				ctes[c.Name.L] = true
			}
		}
		if x.From != nil {
			out = joinSources(x.From.TableRefs, columns, ctes, out)
		}
	case *ast.SetOprStmt:
		out = selectSources(x.SelectList, columns, out)
		if x.With != nil {
			// A CTE may shadow a table: the branches' tables are unknown.
			out = append(out, selectSource{})
		}
	case *ast.SetOprSelectList:
		for _, sel := range x.Selects {
			out = selectSources(sel, columns, out)
		}
		if x.With != nil {
			out = append(out, selectSource{})
		}
	}
	return out
}

func joinSources(n ast.ResultSetNode, columns TableColumns, ctes map[string]bool, out []selectSource) []selectSource {
	switch x := n.(type) {
	case *ast.Join:
		out = joinSources(x.Left, columns, ctes, out)
		if x.Right != nil {
			out = joinSources(x.Right, columns, ctes, out)
		}
	case *ast.TableSource:
		src := selectSource{name: x.AsName.L}
		if tn, isName := x.Source.(*ast.TableName); isName {
			if src.name == "" {
				src.name = tn.Name.L
			}
			if columns != nil && !(tn.Schema.L == "" && ctes[tn.Name.L]) {
				_, src.cols = columns(tn.Schema.O, tn.Name.O)
			}
		}
		out = append(out, src)
	}
	return out
}

// duplicateUpdateCheck finds what in an INSERT ... SELECT's ON DUPLICATE
// KEY UPDATE expressions cannot move after rows of literals: a column
// that may be the SELECT's, a subquery. VALUES(col) names the row's
// value and stays.
type duplicateUpdateCheck struct {
	target     *ast.TableName
	targetCols map[string]bool // lower case; nil when unknown
	sources    []selectSource
	err        error
}

func (c *duplicateUpdateCheck) Enter(n ast.Node) (ast.Node, bool) {
	if c.err != nil {
		return n, true
	}
	switch x := n.(type) {
	case *ast.ValuesExpr:
		return n, true
	case *ast.SubqueryExpr:
		c.err = errNotSupported("INSERT ... SELECT into %s whose ON DUPLICATE KEY UPDATE holds a subquery: the proxy inserts the SELECT's rows as INSERT ... VALUES, and cannot tell what the subquery's columns name there", c.target.Name.O)
		return n, true
	case *ast.ColumnNameExpr:
		c.err = c.column(x.Name)
		return n, true
	}
	return n, false
}

func (c *duplicateUpdateCheck) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// column checks that a column of the clause is the target's beyond
// doubt, as it stays after rows of literals; MariaDB's clause would see
// the SELECT's tables too.
func (c *duplicateUpdateCheck) column(cn *ast.ColumnName) error {
	target := c.target.Name.O
	if cn.Table.L != "" {
		if cn.Table.L != c.target.Name.L || (cn.Schema.L != "" && cn.Schema.L != c.target.Schema.L) {
			return errNotSupported("INSERT ... SELECT into %s whose ON DUPLICATE KEY UPDATE names %s, a column of the SELECT: the proxy inserts the SELECT's rows as INSERT ... VALUES, where it is not there; write VALUES(col) for the value of the row", target, columnText(cn))
		}
		for _, src := range c.sources {
			if src.name == cn.Table.L {
				return errNotSupported("INSERT ... SELECT into %s whose ON DUPLICATE KEY UPDATE names %s, where the SELECT reads a table of that name too", target, columnText(cn))
			}
		}
		if c.targetCols != nil && !c.targetCols[cn.Name.L] {
			return newError(CodeBadField, "42S22", "Unknown column '%s' in 'UPDATE'", columnText(cn))
		}
		return nil
	}
	if c.targetCols == nil {
		return errNotSupported("INSERT ... SELECT into %s whose ON DUPLICATE KEY UPDATE names %s: the proxy cannot read the table's columns to tell it from a column of the SELECT", target, cn.Name.O)
	}
	known := true
	for _, src := range c.sources {
		known = known && src.cols != nil
		if !slices.ContainsFunc(src.cols, func(col string) bool { return strings.EqualFold(col, cn.Name.O) }) {
			continue
		}
		if c.targetCols[cn.Name.L] {
			return errNotSupported("INSERT ... SELECT into %s whose ON DUPLICATE KEY UPDATE names %s, a column of both %s and the SELECT's %s; write VALUES(%s) for the value of the row, or %s.%s for the table's", target, cn.Name.O, target, src.name, cn.Name.O, target, cn.Name.O)
		}
		return errNotSupported("INSERT ... SELECT into %s whose ON DUPLICATE KEY UPDATE names %s, a column of the SELECT's %s: the proxy inserts the SELECT's rows as INSERT ... VALUES, where it is not there; write VALUES(col) for the value of the row", target, cn.Name.O, src.name)
	}
	if c.targetCols[cn.Name.L] {
		if !known {
			return errNotSupported("INSERT ... SELECT into %s whose ON DUPLICATE KEY UPDATE names %s, and the SELECT reads a derived table or CTE that may have it too; write VALUES(%s) for the value of the row, or %s.%s for the table's", target, cn.Name.O, cn.Name.O, target, cn.Name.O)
		}
		return nil
	}
	if known {
		return newError(CodeBadField, "42S22", "Unknown column '%s' in 'UPDATE'", cn.Name.O)
	}
	return errNotSupported("INSERT ... SELECT into %s whose ON DUPLICATE KEY UPDATE names %s, a column of the SELECT: the proxy inserts the SELECT's rows as INSERT ... VALUES, where it is not there; write VALUES(col) for the value of the row", target, cn.Name.O)
}

func columnText(cn *ast.ColumnName) string {
	parts := []string{cn.Name.O}
	if cn.Table.O != "" {
		parts = append([]string{cn.Table.O}, parts...)
	}
	if cn.Schema.O != "" {
		parts = append([]string{cn.Schema.O}, parts...)
	}
	return strings.Join(parts, ".")
}
