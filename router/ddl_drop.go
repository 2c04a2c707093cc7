package router

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/shardflake/shardflake/config"
)

// prepareDropMany plans DROP TABLE a, b, ...: each table is planned as a
// DROP of its own (its physical tables, on their data sources), and the
// parts become one DROP per data source that lists that data source's
// physical tables in the client's order. One DROP per table in parallel
// dropped part of a set of tables related by foreign keys (1451 on the
// parents whose children's DROP had not run yet); one statement per data
// source drops them as MariaDB drops the client's list. The plan of a
// DROP TABLE keeps each table's data nodes (Plan.Drop).
func (r *Router) prepareDropMany(p *Prepared, s *ast.DropTableStmt, h *hints, db string) error {
	var parts []*Plan
	var dropped DroppedTables
	for _, tn := range s.Tables {
		// Named before planning, which gives tn the physical name.
		name := firstNonEmpty(tn.Schema.O, r.rules.DatabaseName) + "." + tn.Name.O
		one := *s
		one.Tables = []*ast.TableName{tn}
		// No text: each part is a statement of its own, restored from
		// the tree, never the client's whole DROP.
		sub := &Prepared{}
		a := r.newAnalysis(db)
		if err := r.prepareDDL(sub, a, &one, h); err != nil {
			return err
		}
		if a.system {
			return errNotSupported("DROP TABLE of system tables is not supported")
		}
		part, err := sub.Bind(nil)
		if err != nil {
			return err
		}
		parts = append(parts, part)
		p.tables = append(p.tables, a.tables()...)
		d := DroppedTable{Name: name}
		for _, rt := range part.Routes {
			d.Nodes = append(d.Nodes, rt.Nodes...)
		}
		dropped = append(dropped, d)
	}
	plan, err := joinDrops(s, parts)
	if err != nil {
		return err
	}
	if !s.IsView {
		// MariaDB names missing views in another message (4092).
		plan.Drop = &dropped
	}
	p.static = plan
	return nil
}

// joinDrops makes one DROP per data source of the parts' routes, each
// listing its physical tables in the parts' order.
func joinDrops(s *ast.DropTableStmt, parts []*Plan) (*Plan, error) {
	plan := *parts[0]
	plan.Routes = nil
	plan.Tables = nil
	var order []string
	nodes := map[string][]config.DataNode{}
	for _, part := range parts {
		plan.Tables = append(plan.Tables, part.Tables...)
		for _, rt := range part.Routes {
			if _, seen := nodes[rt.DataSource]; !seen {
				order = append(order, rt.DataSource)
			}
			nodes[rt.DataSource] = append(nodes[rt.DataSource], rt.Nodes...)
		}
	}
	for _, ds := range order {
		one := *s
		one.Tables = nil
		for _, n := range nodes[ds] {
			one.Tables = append(one.Tables, &ast.TableName{Name: ast.NewCIStr(n.Table)})
		}
		sql, err := restoreSQL(&one)
		if err != nil {
			return nil, err
		}
		plan.Routes = append(plan.Routes, Route{DataSource: ds, Nodes: nodes[ds], SQL: sql})
	}
	plan.Type = RouteMulti
	if len(plan.Routes) == 1 {
		plan.Type = RouteSingle
	}
	return &plan, nil
}
