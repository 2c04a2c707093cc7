package router

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/shardflake/shardflake/config"
)

// prepareShow plans SHOW CREATE TABLE, SHOW COLUMNS (DESCRIBE) and SHOW
// INDEX: a sharded table is asked of its first data node, whose physical
// name the result carries and the proxy renames back (Plan.Rename).
func (r *Router) prepareShow(p *Prepared, a *analysis, s *ast.ShowStmt) error {
	if s.Table == nil {
		p.kind = KindOther
		return nil
	}
	tn := s.Table
	if s.DBName != "" && tn.Schema.L == "" {
		tn.Schema = ast.NewCIStr(s.DBName)
	}
	ref, err := a.addRef(tn, nil, nil, false)
	if err != nil || ref == nil {
		return err
	}
	s.DBName = ""
	tn.Schema = ast.CIStr{}
	route := Route{DataSource: r.defaultDS}
	plan := &Plan{Kind: KindShow, Type: RouteSingle, Tables: []string{ref.name}}
	if ref.kind == refSharded {
		dn := ref.info.rule.DataNodes[0]
		route.DataSource = dn.DataSource
		tn.Name = ast.NewCIStr(dn.Table)
		plan.Rename = &TableRename{Physical: dn.Table, Logical: ref.info.rule.Name}
		route.Nodes = []config.DataNode{dn}
	} else {
		route.Nodes = []config.DataNode{{DataSource: route.DataSource, Table: ref.name}}
	}
	sql, err := restoreSQL(s)
	if err != nil {
		return err
	}
	route.SQL = sql
	plan.Routes = []Route{route}
	p.kind = KindShow
	p.static = plan
	return nil
}

// prepareDDL plans CREATE/ALTER/DROP/TRUNCATE TABLE, CREATE/DROP INDEX,
// RENAME TABLE and CREATE VIEW: a sharded table's statement runs on every
// data node with the physical name, a broadcast table's on every data
// source, others' on the default data source.
func (r *Router) prepareDDL(p *Prepared, a *analysis, stmt ast.StmtNode, h *hints) error {
	if h.sliceOf() != nil {
		return errNotSupported("the slice hint applies to SELECT, UPDATE and DELETE, not DDL")
	}
	switch s := stmt.(type) {
	case *ast.DropTableStmt:
		if len(s.Tables) > 1 {
			return r.prepareDropMany(p, s, h, a.db)
		}
	case *ast.CreateTableStmt:
		if s.Select != nil {
			return errNotSupported("CREATE TABLE ... SELECT is not supported through the router; create the table, then INSERT ... SELECT")
		}
	}
	switch s := stmt.(type) {
	case *ast.CreateTableStmt:
		if err := r.checkNewName(s.Table); err != nil {
			return err
		}
	case *ast.CreateViewStmt:
		if err := r.checkNewName(s.ViewName); err != nil {
			return err
		}
	}
	a.shareHoles = true
	var c tableCollector
	stmt.Accept(&c)
	targets := ddlTargets(stmt)
	for _, tn := range c.names {
		ref, err := a.addRef(tn, nil, nil, false)
		if err != nil {
			return err
		}
		if ref != nil {
			for _, t := range targets {
				if t == tn {
					ref.written = true
				}
			}
		}
	}
	if a.system {
		return nil
	}
	if err := r.checkDDL(a, stmt); err != nil {
		return err
	}
	if err := r.checkKeyColumn(stmt); err != nil {
		return err
	}
	if err := r.prepareConstraints(a, stmt); err != nil {
		return err
	}
	rt, err := r.newRouting(a, h, true)
	if err != nil {
		return err
	}
	// Every data node of the table, even those the tables pair with none.
	return r.finishWhole(p, a, stmt, h, rt, true)
}

// checkNewName rejects creating a logical table under the name of a
// physical table of a sharded table.
func (r *Router) checkNewName(tn *ast.TableName) error {
	if logical, ok := r.physical[tn.Name.L]; ok && (tn.Schema.L == "" || tn.Schema.L == r.dbLower) {
		return errNotSupported("%s is the name of a physical table of sharded table %s (in its actualDataNodes), not of a logical table; create %s to create its physical tables, or name the data source with a SHARDINGSPHERE_HINT DATA_SOURCE_NAME", tn.Name.O, logical, logical)
	}
	return nil
}

// checkDDL rejects DDL that would change the rules' meaning.
func (r *Router) checkDDL(a *analysis, stmt ast.StmtNode) error {
	ruled := func() string {
		for _, ref := range a.refs {
			if ref.kind != refSingle {
				return ref.name
			}
		}
		return ""
	}
	switch s := stmt.(type) {
	case *ast.RenameTableStmt:
		if t := ruled(); t != "" {
			return errNotSupported("RENAME TABLE on %s is not supported: its name is in the sharding rules; change the rules instead", t)
		}
	case *ast.AlterTableStmt:
		for _, spec := range s.Specs {
			if spec.Tp == ast.AlterTableRenameTable {
				if t := ruled(); t != "" {
					return errNotSupported("ALTER TABLE ... RENAME on %s is not supported: its name is in the sharding rules; change the rules instead", t)
				}
			}
		}
	case *ast.CreateViewStmt:
		if t := ruled(); t != "" {
			return errNotSupported("CREATE VIEW over sharded or broadcast table %s is not supported", t)
		}
	}
	return nil
}

// ddlTargets returns the tables a DDL statement changes (not those it
// only refers to, as a foreign key or LIKE does).
func ddlTargets(stmt ast.StmtNode) []*ast.TableName {
	switch s := stmt.(type) {
	case *ast.CreateTableStmt:
		return []*ast.TableName{s.Table}
	case *ast.AlterTableStmt:
		return []*ast.TableName{s.Table}
	case *ast.CreateIndexStmt:
		return []*ast.TableName{s.Table}
	case *ast.DropIndexStmt:
		return []*ast.TableName{s.Table}
	case *ast.TruncateTableStmt:
		return []*ast.TableName{s.Table}
	case *ast.DropTableStmt:
		return s.Tables
	case *ast.CreateViewStmt:
		return []*ast.TableName{s.ViewName}
	case *ast.RenameTableStmt:
		var out []*ast.TableName
		for _, t := range s.TableToTables {
			out = append(out, t.OldTable, t.NewTable)
		}
		return out
	}
	return nil
}

// tableCollector finds the table names of a DDL statement.
type tableCollector struct{ names []*ast.TableName }

func (c *tableCollector) Enter(n ast.Node) (ast.Node, bool) {
	if tn, ok := n.(*ast.TableName); ok {
		c.names = append(c.names, tn)
	}
	return n, false
}

func (c *tableCollector) Leave(n ast.Node) (ast.Node, bool) { return n, true }
