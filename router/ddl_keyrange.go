package router

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/shardflake/shardflake/idgen"
)

// checkKeyColumn rejects a CREATE or ALTER TABLE that gives a sharded
// table's key column a type its key generator's keys do not fit (a
// SNOWFLAKE key into INT, a UUID into BIGINT), so it is found at DDL
// time, not as an out-of-range error on the first INSERT.
func (r *Router) checkKeyColumn(stmt ast.StmtNode) error {
	var table *ast.TableName
	var cols []*ast.ColumnDef
	switch s := stmt.(type) {
	case *ast.CreateTableStmt:
		table, cols = s.Table, s.Cols
	case *ast.AlterTableStmt:
		table = s.Table
		for _, spec := range s.Specs {
			switch spec.Tp {
			case ast.AlterTableAddColumns, ast.AlterTableModifyColumn, ast.AlterTableChangeColumn:
				cols = append(cols, spec.NewColumns...)
			}
		}
	default:
		return nil
	}
	if table.Schema.L != "" && table.Schema.L != r.dbLower {
		return nil
	}
	ti := r.tables[table.Name.L]
	if ti == nil || ti.rule.KeyColumn == "" {
		return nil
	}
	kg, ok := r.rules.KeyGenerators[ti.rule.KeyGenerator]
	if !ok {
		return nil
	}
	typ, ok := idgen.LookupType(kg.Type)
	if !ok {
		return nil
	}
	for _, c := range cols {
		if c.Name == nil || c.Tp == nil || c.Name.Name.L != ti.rule.KeyColumn {
			continue
		}
		if _, err := typ.Range(kg.Props).CheckColumn(c.Tp.String()); err != nil {
			return newError(CodeWrongFieldSpec, "42000", "Incorrect column specifier for column '%s': key generator %s (%s) fills it: %v", c.Name.Name.O, kg.Name, kg.Type, err)
		}
	}
	return nil
}
