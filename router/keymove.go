package router

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/shardflake/shardflake/algorithm"
)

// An UPDATE that assigns a sharding column (Django's save(), GORM's
// Save() and Hibernate write every column) runs as planned when no row it
// matches can change data node: the WHERE clause pins the column to the
// value assigned, or every sharding column's new value is known (assigned,
// or pinned by the WHERE clause) and routes to the one data node the WHERE
// clause reaches. Otherwise the plan carries a KeyMove and the proxy
// decides per row, inside the statement's atomic write: it reads the rows
// the UPDATE matches, runs the UPDATE, and moves each updated row whose
// sharding values now belong to another data node (INSERT there, DELETE
// here), or refuses the statement when moving is switched off
// (server.moveUpdatedRows: false).

// KeyMove says how to find the rows an UPDATE of sharding columns
// matches, so that those whose new values belong on another data node
// can be moved there.
type KeyMove struct {
	// Table is the logical table updated.
	Table string `json:"table"`
	// Probes are, per route of the plan and in the same order, a SELECT
	// of the rows the route's UPDATE matches (every column, FOR UPDATE).
	Probes []Route `json:"probes"`
	// DataSources are all data sources of the table's data nodes: those
	// a row may move to.
	DataSources []string `json:"dataSources"`
	// Set are the values the UPDATE assigns to sharding columns, where
	// they are literals or arguments: a row whose primary key is one of
	// them is found again by its new key.
	Set map[string]algorithm.Value `json:"set,omitempty"`
}

// prepareKeyMove collects, before the statement is rewritten, the values
// the WHERE clause pins each column of a single-table UPDATE to.
func (d *dmlBinder) collectPins(where ast.ExprNode) {
	if len(d.a.refs) != 1 || d.a.refs[0].kind != refSharded {
		return
	}
	d.wherePins = map[string][]operand{}
	eachPin(where, func(cn *ast.ColumnName, o operand) {
		d.wherePins[cn.Name.L] = append(d.wherePins[cn.Name.L], o)
	})
}

// buildProbe prepares, from the rewritten single-table UPDATE, the
// SELECT * ... FOR UPDATE of the rows it matches.
func (d *dmlBinder) buildProbe(u *ast.UpdateStmt) error {
	if d.wherePins == nil || u.Order != nil || u.Limit != nil {
		return nil
	}
	sel := &ast.SelectStmt{
		Kind:           ast.SelectStmtKindSelect,
		SelectStmtOpts: &ast.SelectStmtOpts{SQLCache: true},
		Fields:         &ast.FieldList{Fields: []*ast.SelectField{{WildCard: &ast.WildCardField{}}}},
		From:           u.TableRefs,
		Where:          u.Where,
		LockInfo:       &ast.SelectLockInfo{LockType: ast.SelectLockForUpdate},
	}
	var err error
	d.probe, err = buildTemplate(sel)
	return err
}

// unprovenKeyChanges reports whether some sharding-column assignment may
// move a row: the WHERE clause does not pin the column to the value
// assigned.
func (d *dmlBinder) unprovenKeyChanges(args []any) bool {
	for _, kc := range d.keyChanges {
		ok := false
		if kc.hasVal {
			v := kc.value.value(args)
			for _, p := range kc.pinned {
				if (p.param >= 0 && p.param == kc.value.param) || sameValue(p.value(args), v) {
					ok = true
					break
				}
			}
		}
		if !ok {
			return true
		}
	}
	return false
}

// staysOn reports whether every row the UPDATE matches on unit u's one
// data node stays there: each sharding column's new value is known (the
// value assigned, else the one the WHERE clause pins) and together they
// route to that data node alone.
func (d *dmlBinder) staysOn(u *unit, args []any) bool {
	ref := d.a.refs[0]
	ti := ref.info
	assigned := map[string]operand{}
	for _, kc := range d.keyChanges {
		if !kc.hasVal {
			return false
		}
		assigned[kc.col] = kc.value
	}
	conds := map[string]algorithm.ColumnCondition{}
	for _, col := range append(append([]string(nil), ti.dbCols...), ti.tableCols...) {
		o, ok := assigned[col]
		if !ok {
			pins := d.wherePins[col]
			if len(pins) == 0 {
				return false
			}
			o = pins[0]
		}
		v := o.value(args)
		if v == nil {
			return false
		}
		conds[col] = algorithm.ColumnCondition{Column: col, Values: []algorithm.Value{v}}
	}
	set, err := ti.routeConds(conds, routeOpts{missing: algorithm.TargetOptional})
	return err == nil && set.count() == 1 && set.first() == u.nodes[ref.hole]
}

// keyMove decides what an UPDATE of sharding columns needs: nothing
// (no row can move), a KeyMove with the probes of routes (each rendered
// for its unit), or the error that such an UPDATE (of several tables, or
// with ORDER BY/LIMIT) cannot be checked.
func (d *dmlBinder) keyMove(units []unit, empty bool, f *unitFiller, args []any) (*KeyMove, error) {
	if len(d.keyChanges) == 0 || empty || !d.unprovenKeyChanges(args) {
		return nil, nil
	}
	if len(units) == 1 && d.wherePins != nil && d.staysOn(&units[0], args) {
		return nil, nil
	}
	if d.probe == nil {
		kc := d.keyChanges[0]
		return nil, errNotSupported("UPDATE may not change sharding column %s of %s here: a row may have to move to another data node, which the proxy does only for an UPDATE of one table without ORDER BY or LIMIT. Assign only the value the WHERE clause already fixes (%s = value), or DELETE the row and INSERT it again", kc.col, kc.table, kc.col)
	}
	rule := d.a.refs[0].info.rule
	m := &KeyMove{Table: d.a.refs[0].name, DataSources: rule.DataSources()}
	for _, kc := range d.keyChanges {
		if kc.hasVal {
			if m.Set == nil {
				m.Set = map[string]algorithm.Value{}
			}
			m.Set[kc.col] = kc.value.value(args)
		}
	}
	for i := range units {
		f.u = &units[i]
		sql, rargs, err := d.probe.render(f, args)
		if err != nil {
			return nil, err
		}
		m.Probes = append(m.Probes, Route{DataSource: units[i].ds, Nodes: d.nodes(&units[i]), SQL: sql, Args: rargs})
	}
	return m, nil
}
