package proxy

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"

	"github.com/shardflake/shardflake/proxy/internal/sqlarg"
)

// SHOW TABLE STATUS (Navicat, DBeaver, phpMyAdmin) lists the logical
// tables: a sharded table is its first data node's row under the logical
// name, with Rows, Data_length and Index_length summed over every data
// node (and Avg_row_length recomputed from them); a broadcast table is
// one copy (the default data source's); a table without rules is the
// default data source's row. LIKE, WHERE and FROM <logical schema> work
// as in MySQL.

// statusSums are the columns summed over data nodes.
var statusSums = []string{"Rows", "Data_length", "Index_length"}

// showTableStatus answers SHOW TABLE STATUS.
func (s *Session) showTableStatus(ctx context.Context, st *ast.ShowStmt, out output) error {
	if _, err := s.schema(st.DBName); err != nil {
		return err
	}
	tables, err := s.logicalTables(ctx)
	if err != nil {
		return err
	}
	var want []logicalTable
	for _, t := range tables {
		ok, err := matchPattern(st.Pattern, t.name)
		if err != nil {
			return err
		}
		if ok {
			want = append(want, t)
		}
	}
	columns, rows, err := s.tableStatusRows(ctx, want)
	if err != nil {
		return err
	}
	if st.Where != nil && len(rows) > 0 {
		if rows, err = s.whereRows(ctx, columns, rows, st.Where); err != nil {
			return err
		}
	}
	return s.writeRows(newMemStream(columns, rows), out)
}

// tableStatusRows is the SHOW TABLE STATUS row of each wanted table.
func (s *Session) tableStatusRows(ctx context.Context, want []logicalTable) ([]*mysql.Field, []Row, error) {
	rules := s.srv.rules
	// Every data source holding a data node of a wanted sharded table, and
	// the default one, in the rules' order.
	need := map[string]bool{rules.DefaultDataSource: true}
	for _, t := range want {
		if tr := rules.Table(t.name); tr != nil {
			for _, n := range tr.DataNodes {
				need[n.DataSource] = true
			}
		}
	}
	var columns []*mysql.Field
	byDS := map[string]map[string]Row{} // data source -> table -> row
	for _, ds := range rules.DataSourceNames() {
		if !need[ds] {
			continue
		}
		res, err := s.queryResult(ctx, ds, "SHOW TABLE STATUS")
		if err != nil {
			return nil, nil, err
		}
		if columns == nil {
			columns = res.columns
		}
		rows := map[string]Row{}
		for _, r := range res.rows {
			rows[string(r[0])] = r
		}
		byDS[ds] = rows
	}
	idx := func(name string) int {
		return slices.IndexFunc(columns, func(f *mysql.Field) bool { return strings.EqualFold(string(f.Name), name) })
	}
	var out []Row
	for _, t := range want {
		tr := rules.Table(t.name)
		if tr == nil || len(tr.DataNodes) == 0 {
			if r, ok := byDS[rules.DefaultDataSource][t.name]; ok {
				out = append(out, r)
			}
			continue
		}
		first, ok := byDS[tr.DataNodes[0].DataSource][tr.DataNodes[0].Table]
		if !ok {
			continue // not created yet
		}
		row := first.Clone()
		row[0] = []byte(t.name)
		for _, col := range statusSums {
			i := idx(col)
			if i < 0 {
				continue
			}
			var sum uint64
			known := false
			for _, n := range tr.DataNodes {
				if r, ok := byDS[n.DataSource][n.Table]; ok && r[i] != nil {
					if v, err := strconv.ParseUint(string(r[i]), 10, 64); err == nil {
						sum += v
						known = true
					}
				}
			}
			if known {
				row[i] = strconv.AppendUint(nil, sum, 10)
			}
		}
		if ar, rc, dl := idx("Avg_row_length"), idx("Rows"), idx("Data_length"); ar >= 0 && rc >= 0 && dl >= 0 && row[rc] != nil && row[dl] != nil {
			n, _ := strconv.ParseUint(string(row[rc]), 10, 64)
			d, _ := strconv.ParseUint(string(row[dl]), 10, 64)
			if n > 0 {
				row[ar] = strconv.AppendUint(nil, d/n, 10)
			}
		}
		out = append(out, row)
	}
	return columns, out, nil
}

// whereRows keeps the rows (whose first column is a name) that a SHOW
// ... WHERE condition selects, evaluated by the default data source over
// the rows written as a derived table.
func (s *Session) whereRows(ctx context.Context, columns []*mysql.Field, rows []Row, where ast.ExprNode) ([]Row, error) {
	derived, err := derivedSQL(columns, showCollations(columns), rows)
	if err != nil {
		return nil, err
	}
	var cond strings.Builder
	if err := where.Restore(format.NewRestoreCtx(restoreFlags, &cond)); err != nil {
		return nil, &InternalError{Msg: "restore SHOW condition: " + err.Error()}
	}
	first := string(appendIdent(nil, string(columns[0].Name)))
	sql := "SELECT " + first + " FROM (" + derived + ") AS `status` WHERE " + cond.String()
	got, err := s.queryRows(ctx, s.srv.rules.DefaultDataSource, sql)
	if err != nil {
		return nil, err
	}
	keep := map[string]bool{}
	for _, r := range got {
		keep[string(r[0])] = true
	}
	return slices.DeleteFunc(rows, func(r Row) bool { return !keep[string(r[0])] }), nil
}

// shardedTableSizes returns, for each sharded logical table, TABLE_ROWS,
// DATA_LENGTH and INDEX_LENGTH of information_schema.TABLES summed over
// its data nodes: one query per data source holding data nodes.
func (s *Session) shardedTableSizes(ctx context.Context) (map[string][3]uint64, error) {
	rules := s.srv.rules
	nodes := map[string]map[string]string{} // ds -> physical -> logical
	for _, t := range rules.Tables {
		for _, n := range t.DataNodes {
			if nodes[n.DataSource] == nil {
				nodes[n.DataSource] = map[string]string{}
			}
			nodes[n.DataSource][n.Table] = t.Name
		}
	}
	out := map[string][3]uint64{}
	for _, ds := range rules.DataSourceNames() {
		if nodes[ds] == nil {
			continue
		}
		lit, _ := sqlarg.AppendLiteral(nil, rules.DataSource(ds).Database, sqlarg.Backslash)
		rows, err := s.queryRows(ctx, ds, "SELECT TABLE_NAME, TABLE_ROWS, DATA_LENGTH, INDEX_LENGTH FROM information_schema.TABLES WHERE TABLE_SCHEMA = "+string(lit))
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			logical, ok := nodes[ds][string(r[0])]
			if !ok {
				continue
			}
			sums := out[logical]
			for i := range 3 {
				if r[i+1] != nil {
					v, _ := strconv.ParseUint(string(r[i+1]), 10, 64)
					sums[i] += v
				}
			}
			out[logical] = sums
		}
	}
	return out, nil
}

// sumTableSizes puts the summed sizes of sharded tables into rows of
// information_schema.TABLES (whose TABLE_NAME the proxy already made
// logical), recomputing AVG_ROW_LENGTH from them.
func (s *Session) sumTableSizes(ctx context.Context, columns []*mysql.Field, rows []Row) error {
	idx := func(name string) int {
		return slices.IndexFunc(columns, func(f *mysql.Field) bool { return strings.EqualFold(string(f.Name), name) })
	}
	name := idx("TABLE_NAME")
	cols := [3]int{idx("TABLE_ROWS"), idx("DATA_LENGTH"), idx("INDEX_LENGTH")}
	avg := idx("AVG_ROW_LENGTH")
	if name < 0 || slices.Contains(cols[:], -1) {
		return nil
	}
	var sizes map[string][3]uint64
	for _, r := range rows {
		t := s.srv.rules.Table(string(r[name]))
		if t == nil {
			continue
		}
		if sizes == nil {
			var err error
			if sizes, err = s.shardedTableSizes(ctx); err != nil {
				return err
			}
		}
		sum, ok := sizes[t.Name]
		if !ok {
			continue
		}
		for i, c := range cols {
			r[c] = strconv.AppendUint(nil, sum[i], 10)
		}
		if avg >= 0 && sum[0] > 0 {
			r[avg] = strconv.AppendUint(nil, sum[1]/sum[0], 10)
		}
	}
	return nil
}
