package router

import (
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/shardflake/shardflake/algorithm"
)

// Window functions across data nodes. A window's partition is the rows
// with equal PARTITION BY values; when those values include every sharding
// column of a sharded table the block reads, the rows of one partition
// share that table's sharding values and so live on one of its data
// nodes (binding tables joined on their sharding columns pair data nodes
// by the same values). Each route then computes every window over whole
// partitions, its rows carry MariaDB's values, and the block's rows are
// the union of the routes' rows: the merge of a plain SELECT (ORDER BY,
// LIMIT, and a derived table's outer block) applies. The proof needs the
// sharding algorithm to send values MariaDB finds equal to one data node,
// the precondition of routing an equality on a sharding column too.

// windowsAcross returns nil when every window of block sel (in its select
// list, its ORDER BY and its WINDOW clause) can be computed on each data
// node alone, else the 1235 error saying why not.
func (a *analysis) windowsAcross(sel *ast.SelectStmt) error {
	if sel.GroupBy != nil || sel.Having != nil || sel.Distinct || blockAggregates(sel) {
		return errNotSupported("window functions over several data nodes are not supported with GROUP BY, HAVING, DISTINCT or aggregates: the windows run on groups that the merge combines from several data nodes")
	}
	s := a.scopeOf[sel]
	var refs []*tableRef
	if s != nil {
		nullable := map[*ast.TableName]bool{}
		if sel.From != nil && sel.From.TableRefs != nil {
			nullableTables(sel.From.TableRefs, false, nullable)
		}
		for _, i := range s.refs {
			if ref := a.refs[i]; ref.kind == refSharded && !nullable[ref.tn] {
				refs = append(refs, ref)
			}
		}
	}
	if len(refs) == 0 {
		return errNotSupported("window functions over several data nodes are supported only when their PARTITION BY names every sharding column of a sharded table of their own query block, read outside the nullable side of an outer join: a window spans rows of every data node")
	}
	specs := blockWindows(sel, true)
	for _, spec := range specs {
		items := partitionItems(spec, sel.WindowSpecs)
		if !a.partitionsOneNode(sel, s, refs, items) {
			return errWindowPartition(refs[0])
		}
	}
	return nil
}

// errWindowPartition is the 1235 error of a window whose partitions may
// span data nodes, naming the columns PARTITION BY would need.
func errWindowPartition(ref *tableRef) error {
	if hinted(ref.info) {
		return errNotSupported("window functions over several data nodes are not supported on %s, whose rows are placed by hints: a window spans rows of every data node", ref.info.name)
	}
	cols := append(append([]string(nil), ref.info.dbCols...), ref.info.tableCols...)
	var uniq []string
	for _, c := range cols {
		if !slices.Contains(uniq, c) {
			uniq = append(uniq, c)
		}
	}
	return errNotSupported("window functions over several data nodes need every window's PARTITION BY to name the sharding columns of %s (%s), so that each partition lives on one data node", ref.info.name, strings.Join(uniq, ", "))
}

// partitionsOneNode reports whether the PARTITION BY items name, as plain
// columns, every sharding column of one of refs.
func (a *analysis) partitionsOneNode(sel *ast.SelectStmt, s *scope, refs []*tableRef, items []*ast.ByItem) bool {
	type colOf struct {
		ref int
		col string
	}
	named := map[colOf]bool{}
	var buf []int
	for _, it := range items {
		c, ok := unparen(it.Expr).(*ast.ColumnNameExpr)
		if !ok {
			continue // an extra key only splits partitions further
		}
		cn := c.Name
		if cn.Table.L == "" {
			if aliasShadows(sel, cn.Name.L) {
				continue
			}
			// A sharding column named alone is the one table's that
			// has it, or the coalesced column of a USING join.
			buf = a.columnRefs(s, cn, buf)
			for _, i := range buf {
				named[colOf{i, cn.Name.L}] = true
			}
			continue
		}
		if i := a.resolve(s, cn); i >= 0 && a.refs[i].scope == s {
			named[colOf{i, cn.Name.L}] = true
		}
	}
	for _, ref := range refs {
		if hinted(ref.info) {
			continue
		}
		all := true
		for _, cols := range [][]string{ref.info.dbCols, ref.info.tableCols} {
			for _, col := range cols {
				all = all && named[colOf{ref.idx, col}]
			}
		}
		if all {
			return true
		}
	}
	return false
}

// hinted reports a strategy that routes by hint values, not columns: its
// rows may be anywhere.
func hinted(ti *tableInfo) bool {
	for _, st := range []*algorithm.Strategy{ti.rule.DatabaseStrategy, ti.rule.TableStrategy} {
		if st != nil && st.Kind == algorithm.StrategyHint {
			return true
		}
	}
	return false
}

// aliasShadows reports a select field aliased name whose expression is not
// the column name itself: a name that might read the alias.
func aliasShadows(sel *ast.SelectStmt, name string) bool {
	for _, f := range sel.Fields.Fields {
		if f.AsName.L != name {
			continue
		}
		c, ok := unparen(f.Expr).(*ast.ColumnNameExpr)
		if !ok || c.Name.Name.L != name {
			return true
		}
	}
	return false
}

func unparen(e ast.ExprNode) ast.ExprNode {
	for {
		p, ok := e.(*ast.ParenthesesExpr)
		if !ok {
			return e
		}
		e = p.Expr
	}
}

// partitionItems returns the PARTITION BY of spec, following the windows
// it names (OVER w, OVER (w ORDER BY ...), WINDOW w2 AS (w1 ...)): a
// window that names another takes its PARTITION BY.
func partitionItems(spec *ast.WindowSpec, named []ast.WindowSpec) []*ast.ByItem {
	for range len(named) + 1 {
		if spec.PartitionBy != nil {
			return spec.PartitionBy.Items
		}
		ref := spec.Ref.L
		if spec.OnlyAlias {
			ref = spec.Name.L
		}
		if ref == "" {
			return nil
		}
		var next *ast.WindowSpec
		for i := range named {
			if named[i].Name.L == ref && &named[i] != spec {
				next = &named[i]
			}
		}
		if next == nil {
			return nil
		}
		spec = next
	}
	return nil // a cycle, which MariaDB refuses
}

// blockAggregates reports an aggregate in block sel's select list or
// ORDER BY (outside subqueries): the block groups its rows.
func blockAggregates(sel *ast.SelectStmt) bool {
	for _, f := range sel.Fields.Fields {
		if f.Expr != nil && containsAggregate(f.Expr) {
			return true
		}
	}
	if sel.OrderBy != nil {
		for _, by := range sel.OrderBy.Items {
			if containsAggregate(by.Expr) {
				return true
			}
		}
	}
	return false
}

// nullableTables marks the tables of a FROM clause on the nullable side
// of an outer join: their columns are NULL in the rows of the other side
// that match none, rows of every data node.
func nullableTables(n ast.ResultSetNode, nullable bool, out map[*ast.TableName]bool) {
	switch n := n.(type) {
	case *ast.Join:
		if n.Left != nil {
			nullableTables(n.Left, nullable || n.Tp == ast.RightJoin, out)
		}
		if n.Right != nil {
			nullableTables(n.Right, nullable || n.Tp == ast.LeftJoin, out)
		}
	case *ast.TableSource:
		if tn, ok := n.Source.(*ast.TableName); ok && nullable {
			out[tn] = true
		}
	}
}
