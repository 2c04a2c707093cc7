package proxy

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/charset"
	"github.com/pingcap/tidb/pkg/parser/format"

	"github.com/shardflake/shardflake/proxy/internal/sqlarg"
	"github.com/shardflake/shardflake/proxy/internal/sqlvalue"
	"github.com/shardflake/shardflake/router"
)

// logicalInfoTables are the information_schema tables the proxy rewrites
// to describe the logical schema, and the columns naming schema and table
// in each.
var logicalInfoTables = map[string]infoTable{
	"tables":     {schemaCols: []string{"TABLE_SCHEMA"}, tableCol: "TABLE_NAME"},
	"columns":    {schemaCols: []string{"TABLE_SCHEMA"}, tableCol: "TABLE_NAME"},
	"statistics": {schemaCols: []string{"TABLE_SCHEMA", "INDEX_SCHEMA"}, tableCol: "TABLE_NAME", nameCols: []string{"INDEX_NAME"}},
	"schemata":   {schemaCols: []string{"SCHEMA_NAME"}},
	"key_column_usage": {schemaCols: []string{"CONSTRAINT_SCHEMA", "TABLE_SCHEMA", "REFERENCED_TABLE_SCHEMA"}, tableCol: "TABLE_NAME",
		nameCols: []string{"CONSTRAINT_NAME"}, refTableCol: "REFERENCED_TABLE_NAME"},
	"referential_constraints": {schemaCols: []string{"CONSTRAINT_SCHEMA", "UNIQUE_CONSTRAINT_SCHEMA"}, tableCol: "TABLE_NAME",
		nameCols: []string{"CONSTRAINT_NAME"}, refTableCol: "REFERENCED_TABLE_NAME", refNameCols: []string{"UNIQUE_CONSTRAINT_NAME"}},
	"table_constraints": {schemaCols: []string{"CONSTRAINT_SCHEMA", "TABLE_SCHEMA"}, tableCol: "TABLE_NAME", nameCols: []string{"CONSTRAINT_NAME"}},
	"check_constraints": {schemaCols: []string{"CONSTRAINT_SCHEMA"}, tableCol: "TABLE_NAME", nameCols: []string{"CONSTRAINT_NAME"}},
	// Stored routines and triggers live on the default data source
	// (routines.go); mysqldump finds a table's triggers in TRIGGERS,
	// JDBC's getProcedures and getProcedureColumns read ROUTINES and
	// PARAMETERS.
	"routines":   {schemaCols: []string{"ROUTINE_SCHEMA"}},
	"parameters": {schemaCols: []string{"SPECIFIC_SCHEMA"}},
	"triggers":   {schemaCols: []string{"TRIGGER_SCHEMA", "EVENT_OBJECT_SCHEMA"}, tableCol: "EVENT_OBJECT_TABLE"},
	// Views live on the default data source (none reads a sharded or
	// broadcast table); TypeORM's dropSchema drops them from VIEWS.
	"views": {schemaCols: []string{"TABLE_SCHEMA"}, tableCol: "TABLE_NAME", definitionCol: "VIEW_DEFINITION"},
}

// infoTable names the columns of an information_schema table that the
// logical schema changes.
type infoTable struct {
	schemaCols []string
	tableCol   string
	// nameCols are constraint or index names of the row's table, and
	// refNameCols of its referenced table (refTableCol): physical tables
	// name them apart (logicalConstraint).
	nameCols    []string
	refTableCol string
	refNameCols []string
	// definitionCol is SQL text MariaDB writes with every name qualified
	// by the schema, `db`.`table`: the logical schema's name replaces
	// the data source's.
	definitionCol string
}

// infoSchemaSelect answers a SELECT on information_schema. TABLES,
// COLUMNS, STATISTICS and SCHEMATA describe the logical schema: each is
// replaced in the statement by a derived table holding its rows for the
// logical tables (read from each table's first data node, or the default
// data source, with physical names replaced), and the statement, with its
// own WHERE, ORDER BY and joins, runs on the default data source: the plan
// it returns. Other information_schema tables are the default data
// source's.
//
// The derived tables' columns are literals: out.derived gives the client
// the information_schema columns' own definitions instead (types, lengths,
// NOT NULL), by which drivers type the values.
func (s *Session) infoSchemaSelect(ctx context.Context, sel ast.StmtNode, out *output) (*router.Plan, error) {
	if first := firstSelect(sel); first != nil {
		keepLabels(first)
	}
	type read struct {
		sql     string
		columns []*mysql.Field
	}
	derivedOf := map[string]read{} // each table is read once per statement
	unaliased := map[string]bool{} // derived tables named as the table they replace
	for _, t := range tablesOf(sel) {
		it, ok := logicalInfoTables[t.Name.L]
		if !ok {
			continue
		}
		derived, ok := derivedOf[t.Name.L]
		if !ok {
			var err error
			if derived.sql, derived.columns, err = s.derivedInfoTable(ctx, t.Name.O, it); err != nil {
				return nil, err
			}
			derivedOf[t.Name.L] = derived
		}
		node, err := s.parser.ParseOneStmt(derived.sql, "", "")
		if err != nil {
			return nil, &InternalError{Msg: "parse derived information_schema table: " + err.Error()}
		}
		r := &tableReplacer{target: t, with: node.(ast.ResultSetNode)}
		sel.Accept(r)
		if r.named {
			unaliased[t.Name.L] = true
		}
		if r.alias != "" {
			if out.derived == nil {
				out.derived = derivedTables{}
			}
			out.derived[r.alias] = derived.columns
		}
	}
	if len(unaliased) > 0 {
		// information_schema.STATISTICS.TABLE_SCHEMA (drizzle-kit pull)
		// names a column of the table a derived table has replaced: the
		// derived table, named STATISTICS, has no schema.
		sel.Accept(&infoColumnUnqualifier{tables: unaliased})
	}
	// DATABASE() must name the logical schema, not the backend's.
	sel.Accept(&localRewriter{s: s})
	var b strings.Builder
	if err := sel.Restore(format.NewRestoreCtx(restoreFlags, &b)); err != nil {
		return nil, &InternalError{Msg: "restore information_schema query: " + err.Error()}
	}
	return s.srv.dataSourcePlan("", b.String(), router.KindSelect), nil
}

// firstSelect returns the SELECT whose fields label a query's result: the
// statement itself, or the first branch of a UNION.
func firstSelect(n ast.Node) *ast.SelectStmt {
	switch x := n.(type) {
	case *ast.SelectStmt:
		return x
	case *ast.SetOprStmt:
		if x.SelectList != nil && len(x.SelectList.Selects) > 0 {
			return firstSelect(x.SelectList.Selects[0])
		}
	case *ast.SetOprSelectList:
		if len(x.Selects) > 0 {
			return firstSelect(x.Selects[0])
		}
	}
	return nil
}

// derivedInfoTable returns a SELECT ... UNION ALL ... of information_schema
// table name's rows for the logical schema.
func (s *Session) derivedInfoTable(ctx context.Context, name string, it infoTable) (string, []*mysql.Field, error) {
	rules := s.srv.rules
	// Which data sources to read: the default one, and each one holding
	// a sharded table's first data node.
	homes := map[string]map[string]string{} // ds -> physical -> logical
	dsOrder := []string{rules.DefaultDataSource}
	homes[rules.DefaultDataSource] = map[string]string{}
	for logical, t := range rules.Tables {
		if len(t.DataNodes) == 0 {
			continue
		}
		n := t.DataNodes[0]
		if homes[n.DataSource] == nil {
			homes[n.DataSource] = map[string]string{}
			dsOrder = append(dsOrder, n.DataSource)
		}
		homes[n.DataSource][n.Table] = logical
	}
	var columns []*mysql.Field
	var collations []uint16
	var rows []Row
	for _, ds := range dsOrder {
		db := rules.DataSource(ds).Database
		lit, _ := sqlarg.AppendLiteral(nil, db, sqlarg.Backslash)
		where := it.schemaCols[0] + " = " + string(lit)
		if it.tableCol == "" {
			where = it.schemaCols[0] + " IN (" + string(lit) + ", 'information_schema')"
		}
		if ds != rules.DefaultDataSource && it.tableCol == "" {
			continue
		}
		read := "SELECT * FROM information_schema." + name + " WHERE " + where
		res, err := s.queryResult(ctx, ds, read)
		if err != nil {
			return "", nil, err
		}
		if columns == nil {
			columns = res.columns
			if s.srv.collations != nil {
				// The rows sort and compare in their columns' own
				// collations, not the client's (derivedSQL).
				if collations, err = s.srv.collations.RouteCollations(ctx, router.Route{DataSource: ds, SQL: read}); err != nil {
					return "", nil, err
				}
			}
		}
		idx := func(col string) int {
			for i, f := range res.columns {
				if strings.EqualFold(string(f.Name), col) {
					return i
				}
			}
			return -1
		}
		tableIdx := -1
		if it.tableCol != "" {
			tableIdx = idx(it.tableCol)
		}
		for _, r := range res.rows {
			if tableIdx >= 0 {
				table := string(r[tableIdx])
				if r[tableIdx] != nil {
					s.srv.logicalRowNames(r, it, idx, table)
				}
				logical, isHome := homes[ds][table]
				_, isNode := s.srv.physicalTable[table]
				switch {
				case isHome:
					r[tableIdx] = []byte(logical)
				case isNode || ds != rules.DefaultDataSource || table == xaDecisions:
					continue // not a logical table (xa.go's decisions)
				}
			}
			for _, col := range it.schemaCols {
				if i := idx(col); i >= 0 && r[i] != nil && string(r[i]) == db {
					r[i] = []byte(rules.DatabaseName)
				}
			}
			if i := idx(it.definitionCol); it.definitionCol != "" && i >= 0 && r[i] != nil {
				r[i] = bytes.ReplaceAll(r[i], appendIdent(nil, db), appendIdent(nil, rules.DatabaseName))
			}
			rows = append(rows, r)
		}
	}
	if it.tableCol != "" && strings.EqualFold(name, "tables") {
		// A sharded table's size is all of its data nodes'.
		if err := s.sumTableSizes(ctx, columns, rows); err != nil {
			return "", nil, err
		}
	}
	sql, err := derivedSQL(columns, collations, rows)
	return sql, columns, err
}

// derivedSQL writes rows as SELECT literal AS col, ... UNION ALL ...; no
// rows gives a SELECT of NULLs that returns nothing. collations, when
// not nil, are the columns' own collation ids (0: not a string column),
// in which their strings are written (collatedLiteral); otherwise a
// string is in the connection's collation.
func derivedSQL(columns []*mysql.Field, collations []uint16, rows []Row) (string, error) {
	var b []byte
	if len(rows) == 0 {
		b = append(b, "SELECT "...)
		for i, f := range columns {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = append(b, "NULL AS "...)
			b = appendIdent(b, string(f.Name))
		}
		return string(append(b, " FROM DUAL WHERE 0"...)), nil
	}
	for ri, r := range rows {
		if ri > 0 {
			b = append(b, " UNION ALL "...)
		}
		b = append(b, "SELECT "...)
		for i, v := range r {
			if i > 0 {
				b = append(b, ", "...)
			}
			var err error
			switch {
			case v == nil:
				b = append(b, "NULL"...)
			case isNumeric(columns[i].Type):
				b = append(b, v...)
			case i < len(collations) && collations[i] != 0:
				if b, err = collatedLiteral(b, v, collations[i]); err != nil {
					return "", err
				}
			default:
				if b, err = sqlarg.AppendLiteral(b, string(v), sqlarg.Backslash); err != nil {
					return "", err
				}
			}
			if ri == 0 {
				b = append(b, " AS "...)
				b = appendIdent(b, string(columns[i].Name))
			}
		}
	}
	return string(b), nil
}

// collatedLiteral appends v as a string of collation id:
// CAST('v' AS CHAR CHARSET cs), which MariaDB gives cs's default
// collation and a column's derivation (IMPLICIT), also through the
// derived table's UNION ALL, so that the client's ORDER BY, comparisons
// and GROUP BY read it as the column it stands for; COLLATE names
// another collation than utf8mb3_general_ci (utf8mb3's default, and
// every MariaDB information_schema text column's). A collation the
// merge does not know, or TiDB's parser would not read back, leaves v a
// plain literal.
func collatedLiteral(b []byte, v []byte, id uint16) ([]byte, error) {
	c := sqlvalue.CollationByID(id)
	plain := c == nil || c.Charset == "binary"
	if !plain && id != sqlvalue.Utf8mb3GeneralCI {
		_, err := charset.GetCollationByName(c.Name)
		plain = err != nil
	}
	if plain {
		return sqlarg.AppendLiteral(b, string(v), sqlarg.Backslash)
	}
	b = append(b, "CAST("...)
	b, err := sqlarg.AppendLiteral(b, string(v), sqlarg.Backslash)
	if err != nil {
		return nil, err
	}
	b = append(b, " AS CHAR CHARSET "...)
	b = append(b, c.Charset...)
	b = append(b, ')')
	if id != sqlvalue.Utf8mb3GeneralCI {
		b = append(b, " COLLATE "...)
		b = append(b, c.Name...)
	}
	return b, nil
}

func appendIdent(b []byte, name string) []byte {
	b = append(b, '`')
	b = append(b, strings.ReplaceAll(name, "`", "``")...)
	return append(b, '`')
}

// buffered is a small result read completely.
type buffered struct {
	columns []*mysql.Field
	rows    []Row
}

// queryResult runs sql on data source ds and reads all of its result.
func (s *Session) queryResult(ctx context.Context, ds, sql string) (buffered, error) {
	return s.queryResultOn(ctx, poolSource{s}, ds, sql)
}

// queryResultOn is queryResult on a connection of conns.
func (s *Session) queryResultOn(ctx context.Context, conns connSource, ds, sql string) (buffered, error) {
	plan := &router.Plan{Kind: router.KindSelect, Type: router.RouteSingle, Routes: []router.Route{{DataSource: ds, SQL: sql}}}
	res, err := runPlan(ctx, plan, conns, s.srv.merger, 0, s.srv.obs)
	if err != nil {
		return buffered{}, err
	}
	if res.rows == nil {
		return buffered{}, fmt.Errorf("%s: no result set from %s", truncate(sql), ds)
	}
	out := buffered{columns: res.rows.Columns()}
	rows, err := drain(res.rows)
	out.rows = rows
	return out, err
}

// tableReplacer puts a derived table where a table name was, and says
// the derived table's name, and whether it is the table's own (named: the
// table had no alias).
type tableReplacer struct {
	target *ast.TableName
	with   ast.ResultSetNode
	alias  string
	named  bool
}

func (r *tableReplacer) Enter(n ast.Node) (ast.Node, bool) {
	if ts, ok := n.(*ast.TableSource); ok && ts.Source == r.target {
		if ts.AsName.O == "" {
			ts.AsName = r.target.Name
			r.named = true
		}
		ts.Source = r.with
		r.alias = ts.AsName.O
		return n, true
	}
	return n, false
}

// derivedTables are the column definitions of the information_schema
// tables that derived tables of a statement stand for, by the derived
// table's name.
type derivedTables map[string][]*mysql.Field

// columns returns cols with each column read straight from one of the
// derived tables (the derived table's name, no schema or original
// table) described as the information_schema column, as MariaDB
// describes it: its type, length, flags, original name and table, the
// name and table name the query gave it.
func (d derivedTables) columns(cols []*mysql.Field) []*mysql.Field {
	var out []*mysql.Field
	for i, f := range cols {
		orig := d.column(f)
		if orig == nil {
			continue
		}
		if out == nil {
			out = slices.Clone(cols)
		}
		c := *orig
		c.Name, c.Table = f.Name, f.Table
		out[i] = &c
	}
	if out == nil {
		return cols
	}
	return out
}

func (d derivedTables) column(f *mysql.Field) *mysql.Field {
	if len(f.Schema) > 0 || len(f.OrgTable) > 0 || len(f.OrgName) == 0 {
		return nil
	}
	for _, c := range d[string(f.Table)] {
		if strings.EqualFold(string(c.Name), string(f.OrgName)) {
			return c
		}
	}
	return nil
}

// relabeled is a result with other column definitions; its rows are
// converted for them, never forwarded as they came.
type relabeled struct {
	RowStream
	cols []*mysql.Field
}

func (r relabeled) Columns() []*mysql.Field { return r.cols }

func (r *tableReplacer) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// infoColumnUnqualifier drops information_schema from the columns that
// name it with one of tables (lower case), which derived tables of the
// same name have replaced.
type infoColumnUnqualifier struct {
	tables map[string]bool
}

func (u *infoColumnUnqualifier) Enter(n ast.Node) (ast.Node, bool) {
	if c, ok := n.(*ast.ColumnName); ok && isInfoSchema(c.Schema.O) && u.tables[c.Table.L] {
		c.Schema = ast.CIStr{}
	}
	return n, false
}

func (u *infoColumnUnqualifier) Leave(n ast.Node) (ast.Node, bool) { return n, true }
