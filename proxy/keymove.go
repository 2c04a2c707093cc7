package proxy

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/router"
)

// An UPDATE that assigns a sharding column and may move rows (the plan's
// Move, router/keymove.go) runs in one atomic write over every data
// source of the table (stmtGuard): the rows each route's UPDATE matches
// are read and locked (the probe), the UPDATE runs as planned, and each
// updated row is read back by its primary key and planned as an INSERT
// of the logical table: when that INSERT routes to another data node, the
// row is inserted there and deleted where it was. Any failure (a
// duplicate key on the new data node, a table without a primary key,
// moving switched off) undoes the whole statement.

// keyMoveRow is a row an UPDATE matched: where it is, and its primary key.
type keyMoveRow struct {
	probe router.Route
	pk    []any
}

// runKeyMove runs plan, whose Move is set, in its own atomic write.
func (s *Session) runKeyMove(ctx context.Context, plan *router.Plan, src connSource, inTxn bool) (result, error) {
	return s.atomically(ctx, keyMoveGuardPlan(plan), src, inTxn, func(conns connSource) (result, error) {
		return s.moveRows(ctx, plan, conns)
	})
}

// keyMoveGuardPlan is the plan the guard takes connections for: one
// route on each data source plan reaches or a row may move to. One
// connection per data source, so that the probe's locks, the UPDATE and
// the moves all run on the connection that holds them (two connections
// of one data source would wait on each other's row locks).
func keyMoveGuardPlan(plan *router.Plan) *router.Plan {
	seen := map[string]bool{}
	gp := *plan
	gp.Routes = nil
	for _, r := range plan.Routes {
		if !seen[r.DataSource] {
			seen[r.DataSource] = true
			gp.Routes = append(gp.Routes, router.Route{DataSource: r.DataSource})
		}
	}
	for _, ds := range plan.Move.DataSources {
		if !seen[ds] {
			seen[ds] = true
			gp.Routes = append(gp.Routes, router.Route{DataSource: ds})
		}
	}
	return &gp
}

func (s *Session) moveRows(ctx context.Context, plan *router.Plan, conns connSource) (result, error) {
	var matched []keyMoveRow
	pkCols := map[string][]string{} // physical table -> primary key columns
	for _, probe := range plan.Move.Probes {
		cols, rows, err := s.srv.fetch(ctx, conns, probe)
		if err != nil {
			return result{}, err
		}
		if len(rows) == 0 {
			continue
		}
		table := probeTable(probe)
		pk, ok := pkCols[table]
		if !ok {
			if pk, err = s.srv.primaryKey(ctx, conns, probe.DataSource, table); err != nil {
				return result{}, err
			}
			pkCols[table] = pk
		}
		at, err := columnIndexes(cols, pk)
		if err != nil {
			return result{}, err
		}
		for _, row := range rows {
			kr := keyMoveRow{probe: probe}
			for _, i := range at {
				kr.pk = append(kr.pk, argOf(cols[i], row[i]))
			}
			matched = append(matched, kr)
		}
	}
	res, err := runPlanMode(ctx, plan, conns, s.srv.merger, s.srv.rules.Server.MergeMemoryBytes, s.srv.obs, backendText, nil)
	if err != nil || len(matched) == 0 {
		return res, err
	}
	for _, kr := range matched {
		if err := s.moveRow(ctx, plan.Move, kr, pkCols[probeTable(kr.probe)], conns); err != nil {
			return result{}, err
		}
	}
	return res, nil
}

// moveRow reads an updated row back by its primary key and, when its
// sharding values now route it to another data node, moves it there.
func (s *Session) moveRow(ctx context.Context, move *router.KeyMove, kr keyMoveRow, pk []string, conns connSource) error {
	table := move.Table
	phys := probeTable(kr.probe)
	where := make([]string, len(pk))
	for i, c := range pk {
		where[i] = quoteName(c) + " = ?"
	}
	cond := strings.Join(where, " AND ")
	// The UPDATE may have given the row a new primary key.
	key := slices.Clone(kr.pk)
	for i, c := range pk {
		for col, v := range move.Set {
			if strings.EqualFold(col, c) && v != nil {
				key[i] = v
			}
		}
	}
	kr.pk = key
	read := router.Route{DataSource: kr.probe.DataSource, Nodes: kr.probe.Nodes, SQL: "SELECT * FROM " + quoteName(phys) + " WHERE " + cond, Args: kr.pk}
	cols, rows, err := s.srv.fetch(ctx, conns, read)
	if err != nil {
		return err
	}
	if len(rows) != 1 {
		return &NotSupportedError{What: fmt.Sprintf("an UPDATE of a sharding column of %s that also changes the row's primary key (the row cannot be found again to check where it belongs)", table)}
	}
	names := make([]string, len(cols))
	marks := make([]string, len(cols))
	args := make([]any, len(cols))
	for i, c := range cols {
		names[i] = quoteName(string(c.Name))
		marks[i] = "?"
		args[i] = argOf(c, rows[0][i])
	}
	insertSQL := "INSERT INTO " + quoteName(table) + " (" + strings.Join(names, ", ") + ") VALUES (" + strings.Join(marks, ", ") + ")"
	stmts, err := s.parse(insertSQL)
	if err != nil || len(stmts) != 1 {
		return &InternalError{Msg: fmt.Sprintf("moving a row of %s: %v", table, err)}
	}
	pp, err := s.srv.planner.Prepare(stmts[0], insertSQL, s.db, s.prepareOptions())
	if err != nil {
		return err
	}
	ins, err := pp.Bind(args)
	if err != nil {
		return err
	}
	if len(ins.Routes) != 1 || len(ins.Routes[0].Nodes) != 1 || len(kr.probe.Nodes) != 1 {
		return &InternalError{Msg: fmt.Sprintf("moving a row of %s: it routes to %d data nodes", table, len(ins.Routes))}
	}
	from, to := kr.probe.Nodes[0], ins.Routes[0].Nodes[0]
	if from == to {
		return nil
	}
	if !s.srv.rules.Server.MoveUpdatedRows {
		return &NotSupportedError{What: fmt.Sprintf("moving the updated row of %s from data node %s to %s (server.moveUpdatedRows is false); nothing was changed", table, from, to)}
	}
	if _, err := runPlanMode(ctx, ins, conns, s.srv.merger, 0, s.srv.obs, backendText, nil); err != nil {
		return err
	}
	del := &router.Plan{Kind: router.KindDelete, Type: router.RouteSingle, Tables: []string{table}, Routes: []router.Route{{
		DataSource: from.DataSource, Nodes: kr.probe.Nodes, SQL: "DELETE FROM " + quoteName(phys) + " WHERE " + cond, Args: kr.pk,
	}}}
	res, err := runPlanMode(ctx, del, conns, s.srv.merger, 0, s.srv.obs, backendText, nil)
	if err == nil && res.ok.AffectedRows != 1 {
		err = &InternalError{Msg: fmt.Sprintf("moving a row of %s: the old row on %s was not deleted", table, from)}
	}
	s.log.Debug("moved an updated row", "table", table, "from", from.String(), "to", to.String())
	return err
}

// fetch runs one route's SELECT and returns all its rows.
func (srv sessionServer) fetch(ctx context.Context, conns connSource, r router.Route) ([]*mysql.Field, []Row, error) {
	plan := &router.Plan{Kind: router.KindSelect, Type: router.RouteSingle, Routes: []router.Route{r}}
	res, err := runPlanMode(ctx, plan, conns, srv.merger, 0, srv.obs, backendText, nil)
	if err != nil {
		return nil, nil, err
	}
	if res.rows == nil {
		return nil, nil, &InternalError{Msg: "a probe of an UPDATE returned no result set"}
	}
	cols := res.rows.Columns()
	rows, err := drain(res.rows)
	for i, r := range rows {
		rows[i] = r.Clone()
	}
	return cols, rows, err
}

// primaryKey returns the primary key columns of a physical table.
func (srv sessionServer) primaryKey(ctx context.Context, conns connSource, ds, table string) ([]string, error) {
	r := router.Route{DataSource: ds, SQL: "SHOW KEYS FROM " + quoteName(table) + " WHERE Key_name = 'PRIMARY'"}
	cols, rows, err := srv.fetch(ctx, conns, r)
	if err != nil {
		return nil, err
	}
	at, err := columnIndexes(cols, []string{"Column_name"})
	if err != nil {
		return nil, err
	}
	var pk []string
	for _, row := range rows {
		pk = append(pk, string(row[at[0]]))
	}
	if len(pk) == 0 {
		return nil, &NotSupportedError{What: fmt.Sprintf("an UPDATE that may move rows of %s, which has no primary key to find them by", table)}
	}
	return pk, nil
}

func probeTable(r router.Route) string {
	if len(r.Nodes) == 1 {
		return r.Nodes[0].Table
	}
	return ""
}

func columnIndexes(cols []*mysql.Field, names []string) ([]int, error) {
	out := make([]int, len(names))
	for i, n := range names {
		out[i] = -1
		for j, c := range cols {
			if strings.EqualFold(string(c.Name), n) {
				out[i] = j
				break
			}
		}
		if out[i] < 0 {
			return nil, &InternalError{Msg: fmt.Sprintf("column %s not in the result", n)}
		}
	}
	return out, nil
}

// argOf turns a text-protocol value back into an argument of the column's
// type class: integers as integers (so the router computes with them),
// binary strings as []byte, the rest as strings, NULL as nil.
func argOf(f *mysql.Field, v []byte) any {
	if v == nil {
		return nil
	}
	switch f.Type {
	case mysql.MYSQL_TYPE_TINY, mysql.MYSQL_TYPE_SHORT, mysql.MYSQL_TYPE_INT24, mysql.MYSQL_TYPE_LONG,
		mysql.MYSQL_TYPE_LONGLONG, mysql.MYSQL_TYPE_YEAR:
		if f.Flag&mysql.UNSIGNED_FLAG != 0 {
			if n, err := strconv.ParseUint(string(v), 10, 64); err == nil {
				return n
			}
		} else if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return n
		}
	case mysql.MYSQL_TYPE_TINY_BLOB, mysql.MYSQL_TYPE_MEDIUM_BLOB, mysql.MYSQL_TYPE_LONG_BLOB, mysql.MYSQL_TYPE_BLOB,
		mysql.MYSQL_TYPE_VAR_STRING, mysql.MYSQL_TYPE_STRING, mysql.MYSQL_TYPE_BIT:
		if f.Charset == 63 { // binary
			return append([]byte(nil), v...)
		}
	}
	return string(v)
}
