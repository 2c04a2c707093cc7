package router

import (
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/shardflake/shardflake/algorithm"
	"github.com/shardflake/shardflake/config"

	"github.com/pingcap/tidb/pkg/parser/ast"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/shardflake/shardflake/idgen"
)

// insertBinder plans INSERT and REPLACE ... VALUES (or SET) into a
// sharded table: it fills in generated keys, routes every row and splits
// the rows by data node.
type insertBinder struct {
	r      *Router
	a      *analysis
	rt     *routing
	target *tableRef
	tables []string
	tmpl   *sqlTemplate // INSERT ... VALUES (<rows>) ...
	// flat is tmpl with the rows written in, when their values hold no
	// hole but ?s and no key is generated into them (flatInsert); nil
	// otherwise.
	flat    *sqlTemplate
	rows    []insertRow
	allRows []int // 0, 1, ... len(rows)-1
	// rowsSize is about the length of the rows' text, generated keys
	// included.
	rowsSize int
	cols     []string // lower-case column list, as sent (key column included)
	// keyIdx is the key column's position in the client's list, -1 when
	// the router appends it; gen is nil when the table has no generator.
	keyIdx int
	keyCol string
	gen    idgen.KeyGenerator
	// zeroGen: a 0 given for the key column asks for a generated key (the
	// column is AUTO_INCREMENT and the session's sql_mode lets a 0 do so).
	zeroGen bool
	// dup is what the statement does with a row whose key is taken.
	dup   Duplicates
	shard []shardCol
}

// shardCol is one sharding column: its position in the rows, -1 when it
// is the key column the router appends.
type shardCol struct {
	name string
	idx  int
}

// insertRow is one row of VALUES.
type insertRow struct {
	values []*sqlTemplate
	ops    []operand // sharding value operands by shardCol; param -2 marks the generated key
	keyOp  operand   // the key column's operand when the client gave one
	keyOK  bool      // keyOp is a literal or ?
	keyGen bool      // the client's key value is NULL, DEFAULT or (as the session's sql_mode has it) 0: generate
}

const generatedKey = -2

func (r *Router) prepareInsert(p *Prepared, a *analysis, s *ast.InsertStmt, h *hints) error {
	if err := checkMarkers(s, p.sql); err != nil {
		return err
	}
	if h.sliceOf() != nil {
		return errNotSupported("the slice hint applies to SELECT, UPDATE and DELETE, not INSERT")
	}
	tn := insertTarget(s)
	if tn == nil {
		return errNotSupported("INSERT into a table expression is not supported")
	}
	top := a.newScope(nil, false)
	target, err := a.addRef(tn, nil, top, false)
	if err != nil || target == nil {
		return err
	}
	target.written = true
	if s.Select != nil {
		return r.prepareInsertSelect(p, a, s, h, target)
	}
	var exprs []ast.ExprNode
	for _, row := range s.Lists {
		exprs = append(exprs, row...)
	}
	for _, as := range s.OnDuplicate {
		exprs = append(exprs, as.Expr)
	}
	if err := a.walkExprs(top, exprs); err != nil {
		return err
	}
	if a.system {
		return nil
	}
	if len(a.sharded) > 1 || (len(a.sharded) == 1 && target.kind != refSharded) {
		return errNotSupported("a subquery on sharded table %s inside INSERT ... VALUES is not supported", a.sharded[len(a.sharded)-1].name)
	}
	if target.kind != refSharded {
		// Broadcast: every data source gets the statement; no rule: the
		// default data source.
		return r.prepareWhole(p, a, s, h, true)
	}
	b := &insertBinder{r: r, a: a, target: target, keyIdx: -1, tables: a.tables(), dup: duplicatesOf(s)}
	if err := b.columns(s); err != nil {
		return err
	}
	if err := b.checkDuplicateUpdate(s.OnDuplicate); err != nil {
		return err
	}
	if b.rt, err = r.newRouting(a, h, true); err != nil {
		return err
	}
	a.rewrite(s, false)
	for i, row := range s.Lists {
		ir, err := b.row(i, row)
		if err != nil {
			return err
		}
		b.rows = append(b.rows, ir)
	}
	if b.keyIdx < 0 && b.gen != nil {
		s.Columns = append(s.Columns, &ast.ColumnName{Name: ast.NewCIStr(b.keyCol)})
	}
	s.Setlist = false
	s.Lists = [][]ast.ExprNode{{markerExpr(holeRows, 0)}}
	if b.tmpl, err = buildTemplate(s); err != nil {
		return err
	}
	b.allRows = make([]int, len(b.rows))
	for i, r := range b.rows {
		b.allRows[i] = i
		b.rowsSize += 24 // separators, a generated key
		for _, v := range r.values {
			b.rowsSize += v.size + 16*len(v.segs)
		}
	}
	if b.keyIdx >= 0 || b.gen == nil {
		b.flat = flatInsert(b.tmpl, b.rows)
	}
	p.b = b
	if p.params == 0 && !b.generates() {
		plan, err := b.bind(nil)
		if err != nil {
			return err
		}
		p.static = plan
	}
	return nil
}

// duplicatesOf reads what an INSERT does with a row whose key is taken.
func duplicatesOf(s *ast.InsertStmt) Duplicates {
	switch {
	case s.IsReplace:
		return DuplicatesReplaced
	case s.IgnoreErr && len(s.OnDuplicate) > 0:
		return DuplicatesSkippedOrUpdated
	case s.IgnoreErr:
		return DuplicatesSkipped
	case len(s.OnDuplicate) > 0:
		return DuplicatesUpdated
	}
	return 0
}

// flatInsert is tmpl with the rows written into it, for rows whose values
// hold no hole but ?s: on one data node, such an INSERT's text depends on
// the data node alone and its arguments are the statement's in order, so
// renderNode keeps the text per data node. nil when a value holds another
// hole.
func flatInsert(tmpl *sqlTemplate, rows []insertRow) *sqlTemplate {
	t := &sqlTemplate{}
	var text strings.Builder
	add := func(sg segment) {
		text.WriteString(sg.text)
		if sg.kind == 0 {
			return
		}
		t.segs = append(t.segs, segment{text: text.String(), kind: sg.kind, id: sg.id})
		t.size += text.Len()
		if sg.kind == holeParam {
			t.params++
		}
		text.Reset()
	}
	for _, sg := range tmpl.segs {
		if sg.kind != holeRows {
			add(sg)
			continue
		}
		add(segment{text: sg.text})
		for n, r := range rows {
			if n > 0 {
				add(segment{text: "),("})
			}
			for j, v := range r.values {
				if j > 0 {
					add(segment{text: ","})
				}
				for _, vs := range v.segs {
					if vs.kind != 0 && vs.kind != holeParam {
						return nil
					}
					add(vs)
				}
			}
		}
	}
	t.segs = append(t.segs, segment{text: text.String()})
	t.size += text.Len()
	return t.finish()
}

func insertTarget(s *ast.InsertStmt) *ast.TableName {
	if s.Table == nil || s.Table.TableRefs == nil {
		return nil
	}
	ts, ok := s.Table.TableRefs.Left.(*ast.TableSource)
	if !ok || s.Table.TableRefs.Right != nil {
		return nil
	}
	tn, _ := ts.Source.(*ast.TableName)
	return tn
}

// columns reads the column list (or the known columns of the table) and
// finds the key and sharding columns in it.
func (b *insertBinder) columns(s *ast.InsertStmt) error {
	ti := b.target.info
	if len(s.Columns) == 0 {
		var known []string
		if b.r.columns != nil {
			known = b.r.columns(b.target.name)
		}
		if known == nil {
			return errNotSupported("INSERT into sharded table %s needs a column list: the router must find the sharding columns (%s) in every row", b.target.name, strings.Join(ti.rule.ShardingColumns(), ","))
		}
		// Rows with one value fewer than the table has columns leave out
		// the generated key column, as ShardingSphere reads them: the
		// values are the other columns in table order, and the key is
		// generated.
		key := strings.ToLower(ti.rule.KeyColumn)
		omitKey := key != "" && ti.keyGen != nil && len(s.Lists) > 0 && !s.Setlist
		for _, row := range s.Lists {
			omitKey = omitKey && len(row) == len(known)-1
		}
		for _, c := range known {
			if omitKey && strings.ToLower(c) == key {
				continue
			}
			s.Columns = append(s.Columns, &ast.ColumnName{Name: ast.NewCIStr(c)})
		}
	}
	for i, c := range s.Columns {
		name := c.Name.L
		for _, prev := range b.cols {
			if prev == name {
				return newError(CodeFieldTwice, "42000", "Column '%s' specified twice", c.Name.O)
			}
		}
		b.cols = append(b.cols, name)
		if name == strings.ToLower(ti.rule.KeyColumn) {
			b.keyIdx = i
		}
	}
	for ri, row := range s.Lists {
		if len(row) != len(b.cols) {
			return newError(CodeWrongValueCnt, "21S01", "Column count doesn't match value count at row %d", ri+1)
		}
	}
	if ti.rule.KeyColumn != "" {
		b.keyCol = strings.ToLower(ti.rule.KeyColumn)
		b.gen = ti.keyGen
		// Asked only when the client gives the key column: the answer
		// may cost the proxy a metadata read.
		b.zeroGen = b.keyIdx >= 0 && b.a.zeroKey == ZeroKeyGenerates && b.r.autoIncrement != nil && b.r.autoIncrement(b.target.name)
	}
	for _, col := range ti.rule.ShardingColumns() {
		idx := -1
		for i, c := range b.cols {
			if c == col {
				idx = i
			}
		}
		if idx < 0 && !(col == b.keyCol && b.gen != nil) {
			return errNotSupported("INSERT into %s must give sharding column %s, which picks the data node of each row", b.target.name, col)
		}
		b.shard = append(b.shard, shardCol{name: col, idx: idx})
	}
	if b.keyIdx < 0 && b.gen != nil {
		b.cols = append(b.cols, b.keyCol)
	}
	return nil
}

// checkDuplicateUpdate rejects ON DUPLICATE KEY UPDATE assignments that
// could change a sharding column (col = col and col = VALUES(col) keep
// the row on its data node).
func (b *insertBinder) checkDuplicateUpdate(list []*ast.Assignment) error {
	ti := b.target.info
	for _, as := range list {
		col := as.Column.Name.L
		if ti.role(col) == 0 {
			continue
		}
		same := false
		switch x := as.Expr.(type) {
		case *ast.ColumnNameExpr:
			same = x.Name.Name.L == col
		case *ast.ValuesExpr:
			same = x.Column != nil && x.Column.Name.Name.L == col
		}
		if !same {
			return errNotSupported("ON DUPLICATE KEY UPDATE may not change sharding column %s of %s: the row would have to move to another data node", col, b.target.name)
		}
	}
	return nil
}

// row prepares one row of VALUES (parameters already replaced by holes).
func (b *insertBinder) row(i int, row []ast.ExprNode) (insertRow, error) {
	ir := insertRow{values: make([]*sqlTemplate, len(row))}
	for j, e := range row {
		t, err := buildTemplate(e)
		if err != nil {
			return ir, err
		}
		ir.values[j] = t
	}
	if b.keyIdx >= 0 {
		ir.keyOp, ir.keyOK = rowOperand(row[b.keyIdx])
		if _, isDefault := row[b.keyIdx].(*ast.DefaultExpr); isDefault && b.gen != nil {
			ir.keyGen = true
		} else if ir.keyOK && ir.keyOp.param < 0 && b.generatesFor(ir.keyOp.val) && b.gen != nil {
			ir.keyGen = true
		}
	}
	for _, sc := range b.shard {
		if sc.idx < 0 {
			ir.ops = append(ir.ops, operand{param: generatedKey})
			continue
		}
		if sc.idx == b.keyIdx && ir.keyGen {
			ir.ops = append(ir.ops, operand{param: generatedKey})
			continue
		}
		o, ok := rowOperand(row[sc.idx])
		if !ok {
			return ir, errNotSupported("row %d of the INSERT into %s gives sharding column %s an expression; it must be a literal or a parameter so the router can pick the data node", i+1, b.target.name, sc.name)
		}
		ir.ops = append(ir.ops, o)
	}
	return ir, nil
}

// rowOperand reads a VALUES item after parameters became holes.
func rowOperand(e ast.ExprNode) (operand, bool) {
	if p, ok := paramOf(e); ok {
		return operand{param: p}, true
	}
	if _, ok := e.(*driver.ParamMarkerExpr); ok {
		return operand{}, false
	}
	return operandOf(e)
}

func (b *insertBinder) generates() bool {
	if b.gen == nil {
		return false
	}
	if b.keyIdx < 0 {
		return true
	}
	for _, r := range b.rows {
		if r.keyGen || (r.keyOK && r.keyOp.param >= 0) {
			return true
		}
	}
	return false
}

func (b *insertBinder) bind(args []any) (*Plan, error) {
	keys, rowKeys, n, err := b.generatedKeys(args)
	if err != nil {
		return nil, err
	}
	// Route every row.
	ti := b.target.info
	dbv, tv := b.rt.hints.values(b.target.name, true), b.rt.hints.values(b.target.name, false)
	sc := getRowScratch(len(b.shard))
	defer putRowScratch(sc)
	first, oneNode := -1, true
	var nodes []int // by row, once the rows go to more than one node
	for i := range b.rows {
		node, err := b.routeRow(i, sc, dbv, tv, rowKeys, args)
		if err != nil {
			return nil, err
		}
		switch {
		case i == 0:
			first = node
		case oneNode && node != first:
			oneNode = false
			nodes = make([]int, len(b.rows))
			for j := range i {
				nodes[j] = first
			}
		}
		if !oneNode {
			nodes[i] = node
		}
	}
	if oneNode {
		// The common case, every row on one data node: one allocation
		// for the plan, its route and the filler.
		one := &oneInsertPlan{f: rowFiller{b: b, node: first, rows: b.allRows, keys: rowKeys, bind: args}}
		dn := ti.rule.DataNodes[first]
		if b.rt.singles && dn.DataSource != b.r.defaultDS {
			return nil, b.singlesErr(dn)
		}
		var sql string
		var rargs []any
		if n == 0 && b.flat != nil {
			// Only ?s in the rows: the text depends on the data node alone.
			sql, rargs, err = b.flat.renderNode(&one.f, args, len(ti.rule.DataNodes), first)
		} else {
			sql, rargs, err = b.tmpl.renderSized(&one.f, args, b.rowsSize, len(args))
		}
		if err != nil {
			return nil, err
		}
		one.routes[0] = Route{DataSource: dn.DataSource, Nodes: ti.rule.DataNodes[first : first+1 : first+1], SQL: sql, Args: rargs}
		one.plan = Plan{Kind: KindInsert, Type: RouteSingle, Duplicates: b.dup, Tables: b.tables, Routes: one.routes[:]}
		if n > 0 {
			b.setKeys(&one.plan, &one.keys, keys, n)
		}
		return &one.plan, nil
	}
	byNode := map[int][]int{}
	var order []int
	for i, node := range nodes {
		if _, ok := byNode[node]; !ok {
			order = append(order, node)
		}
		byNode[node] = append(byNode[node], i)
	}
	sort.Ints(order)
	routes := make([]Route, 0, len(order))
	for _, node := range order {
		dn := ti.rule.DataNodes[node]
		if b.rt.singles && dn.DataSource != b.r.defaultDS {
			return nil, b.singlesErr(dn)
		}
		f := &rowFiller{b: b, node: node, rows: byNode[node], keys: rowKeys, bind: args}
		sql, rargs, err := b.tmpl.renderSized(f, args, b.rowsSize*len(byNode[node])/len(b.rows), len(args))
		if err != nil {
			return nil, err
		}
		routes = append(routes, Route{DataSource: dn.DataSource, Nodes: ti.rule.DataNodes[node : node+1 : node+1], SQL: sql, Args: rargs, Rows: byNode[node]})
	}
	plan := &Plan{Kind: KindInsert, Type: RouteMulti, Duplicates: b.dup, Tables: b.tables, Routes: routes}
	if n > 0 {
		b.setKeys(plan, new(GeneratedKeys), keys, n)
	}
	return plan, nil
}

// oneInsertPlan is an INSERT's plan of one route with its route, the
// filler that rendered it and its generated keys, allocated together.
type oneInsertPlan struct {
	plan   Plan
	routes [1]Route
	f      rowFiller
	keys   GeneratedKeys
}

func (b *insertBinder) singlesErr(dn config.DataNode) error {
	return errNotSupported("tables without sharding rules live on data source %s, but the rows of this INSERT go to %s", b.r.defaultDS, dn.DataSource)
}

// setKeys records in plan, at gk, the n (> 0) keys generated for its
// rows.
func (b *insertBinder) setKeys(plan *Plan, gk *GeneratedKeys, keys []algorithm.Value, n int) {
	if first, ok := keys[0].(int64); ok {
		*gk = GeneratedKeys{Column: b.keyCol, First: first, Count: n}
		plan.Keys = gk
	}
}

// generatedKeys generates the n keys of the rows that get one and gives
// each such row its key: rowKeys[i] is row i's, nil for a row that gets
// none (a generated key is never nil); rowKeys is keys itself when every
// row gets one, and nil when none does.
func (b *insertBinder) generatedKeys(args []any) (keys, rowKeys []algorithm.Value, n int, err error) {
	if b.gen == nil {
		return nil, nil, 0, nil
	}
	for i := range b.rows {
		if b.needsKey(&b.rows[i], args) {
			n++
		}
	}
	if n == 0 {
		return nil, nil, 0, nil
	}
	if keys, err = b.generate(n); err != nil {
		return nil, nil, 0, err
	}
	if n == len(b.rows) {
		return keys, keys, n, nil
	}
	rowKeys = make([]algorithm.Value, len(b.rows))
	k := 0
	for i := range b.rows {
		if b.needsKey(&b.rows[i], args) {
			rowKeys[i] = keys[k]
			k++
		}
	}
	return keys, rowKeys, n, nil
}

// needsKey reports whether row r gets a generated key: the router adds
// the key column, or the client's value is NULL, DEFAULT or 0.
func (b *insertBinder) needsKey(r *insertRow, args []any) bool {
	return b.keyIdx < 0 || r.keyGen || (r.keyOK && r.keyOp.param >= 0 && b.generatesFor(argValue(args[r.keyOp.param])))
}

// generatesFor reports whether the client's key value v asks for a
// generated key, as MariaDB reads a key column's value: NULL does, and a
// numeric 0 when the column is AUTO_INCREMENT and the session's sql_mode
// has no NO_AUTO_VALUE_ON_ZERO (zeroGen); a 0 given to another column is
// stored as 0.
func (b *insertBinder) generatesFor(v algorithm.Value) bool {
	switch x := v.(type) {
	case nil:
		return true
	case int64:
		return x == 0 && b.zeroGen
	case uint64:
		return x == 0 && b.zeroGen
	case float64:
		return x == 0 && b.zeroGen
	}
	return false
}

// generatedFor is row i's generated key, nil when it gets none.
func generatedFor(rowKeys []algorithm.Value, i int) algorithm.Value {
	if rowKeys == nil {
		return nil
	}
	return rowKeys[i]
}

// rowScratch is what routing a row fills: the conditions handed to the
// algorithms (which escape to the heap through their interface) and the
// one value of each sharding column, kept in a pool.
type rowScratch struct {
	conds map[string]algorithm.ColumnCondition
	vals  []algorithm.Value
}

var rowScratches = sync.Pool{New: func() any { return &rowScratch{conds: map[string]algorithm.ColumnCondition{}} }}

func getRowScratch(cols int) *rowScratch {
	sc := rowScratches.Get().(*rowScratch)
	if cap(sc.vals) < cols {
		sc.vals = make([]algorithm.Value, cols)
	}
	sc.vals = sc.vals[:cols]
	return sc
}

func putRowScratch(sc *rowScratch) {
	clear(sc.conds)
	clear(sc.vals)
	rowScratches.Put(sc)
}

// routeRow picks the data node of row i from its sharding values,
// which must agree with the hint values dbv and tv when there are any.
// scratch is overwritten for each row.
func (b *insertBinder) routeRow(i int, scratch *rowScratch, dbv, tv []algorithm.Value, rowKeys []algorithm.Value, args []any) (int, error) {
	ti, r, conds := b.target.info, &b.rows[i], scratch.conds
	key := generatedFor(rowKeys, i)
	for j, sc := range b.shard {
		var v algorithm.Value
		if r.ops[j].param == generatedKey || (sc.idx == b.keyIdx && key != nil) {
			v = key
		} else {
			v = r.ops[j].value(args)
		}
		scratch.vals[j] = v
		conds[sc.name] = algorithm.ColumnCondition{Column: sc.name, Values: scratch.vals[j : j+1 : j+1]}
	}
	set, err := ti.routeConds(conds, routeOpts{missing: algorithm.TargetRequired})
	if err != nil {
		return 0, errRouting(b.target.name, err)
	}
	if dbv != nil || tv != nil {
		// The hint picks the data node, but a row it would put where
		// its sharding values do not route would be lost to every
		// later statement: they must agree.
		hs, err := ti.routeConds(conds, routeOpts{db: dbv, table: tv, missing: algorithm.TargetRequired})
		if err != nil {
			return 0, errRouting(b.target.name, err)
		}
		own := set.first()
		set.intersect(hs)
		if set.count() == 0 && own >= 0 && hs.count() > 0 {
			return 0, errNotSupported("row %d of the INSERT into %s (%s) belongs to data node %s, but the SHARDINGSPHERE_HINT values route it to %s: an INSERT's hint values must agree with its rows' sharding values", i+1, b.target.name, b.describe(conds), ti.rule.DataNodes[own], ti.rule.DataNodes[hs.first()])
		}
	}
	switch set.count() {
	case 1:
	case 0:
		if col := b.nullColumn(conds); col != "" {
			// As MariaDB answers a NULL in a NOT NULL column (23000,
			// which ORMs read as a constraint violation): a sharding
			// column cannot hold NULL, no data node would have it.
			return 0, newError(CodeBadNull, "23000", "Column '%s' cannot be null (row %d of the INSERT into %s: a NULL sharding value belongs to no data node)", col, i+1, b.target.name)
		}
		return 0, errNotSupported("row %d of the INSERT into %s (%s) matches no data node of the table", i+1, b.target.name, b.describe(conds))
	default:
		if len(b.shard) == 0 {
			return 0, errNotSupported("row %d of the INSERT into %s could belong to %d data nodes: the table's hint strategy needs SHARDINGSPHERE_HINT values", i+1, b.target.name, set.count())
		}
		return 0, errNotSupported("row %d of the INSERT into %s (%s) could belong to %d data nodes; give every sharding column", i+1, b.target.name, b.describe(conds), set.count())
	}
	return set.first(), nil
}

func (b *insertBinder) describe(conds map[string]algorithm.ColumnCondition) string {
	parts := make([]string, 0, len(b.shard))
	for _, sc := range b.shard {
		parts = append(parts, sc.name+"="+algorithm.FormatValue(conds[sc.name].Values[0]))
	}
	return strings.Join(parts, ", ")
}

// nullColumn names a sharding column whose value in conds is NULL, "" for
// none.
func (b *insertBinder) nullColumn(conds map[string]algorithm.ColumnCondition) string {
	for _, sc := range b.shard {
		if conds[sc.name].Values[0] == nil {
			return sc.name
		}
	}
	return ""
}

// generate asks the key generator for n keys, in as few calls as its
// MaxBatch allows: int64 values from an integer generator, strings (or
// the raw bytes of a BINARY(16) column) from a UUID generator.
func (b *insertBinder) generate(n int) ([]algorithm.Value, error) {
	if n == 0 {
		return nil, nil
	}
	keys := make([]algorithm.Value, 0, n)
	for len(keys) < n {
		k := min(n-len(keys), b.gen.MaxBatch())
		if err := b.generateBatch(k, &keys); err != nil {
			return nil, &Error{Code: CodeUnknown, State: "HY000", Message: fmt.Sprintf("key generator %s for %s.%s: %v", b.target.info.rule.KeyGenerator, b.target.name, b.keyCol, err), Err: err}
		}
	}
	return keys, nil
}

func (b *insertBinder) generateBatch(k int, keys *[]algorithm.Value) error {
	return AppendKeys(b.gen, k, keys)
}

// writeKey renders a generated key as a SQL literal.
func writeKey(sb *strings.Builder, v algorithm.Value) {
	switch x := v.(type) {
	case int64:
		var buf [20]byte
		sb.Write(strconv.AppendInt(buf[:0], x, 10))
	case []byte:
		var buf [2 * 16]byte // a BINARY(16) UUID
		sb.WriteString("X'")
		sb.Write(hex.AppendEncode(buf[:0], x))
		sb.WriteByte('\'')
	case string:
		// Generated text keys are hex digits and hyphens: nothing to escape.
		sb.WriteByte('\'')
		sb.WriteString(x)
		sb.WriteByte('\'')
	}
}

// rowFiller fills the holes of one data node's INSERT.
type rowFiller struct {
	b    *insertBinder
	node int
	rows []int
	keys []algorithm.Value // by row (generatedKeys)
	bind []any
}

func (f *rowFiller) fill(sb *strings.Builder, k holeKind, id int, out []any) ([]any, error) {
	switch k {
	case holeTable:
		writeName(sb, f.b.target.info.rule.DataNodes[f.node].Table)
	case holeRows:
		for n, ri := range f.rows {
			if n > 0 {
				sb.WriteString("),(")
			}
			r := f.b.rows[ri]
			for j, v := range r.values {
				if j > 0 {
					sb.WriteByte(',')
				}
				if j == f.b.keyIdx {
					if key := generatedFor(f.keys, ri); key != nil {
						writeKey(sb, key)
						continue
					}
				}
				if err := v.renderTo(sb, f, f.bind, &out); err != nil {
					return nil, err
				}
			}
			if f.b.keyIdx < 0 && f.b.gen != nil {
				sb.WriteByte(',')
				writeKey(sb, f.keys[ri])
			}
		}
	default:
		return nil, errNotSupported("cannot rewrite the statement: unexpected %c hole", k)
	}
	return out, nil
}
