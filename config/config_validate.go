package config

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/shardflake/shardflake/algorithm"
)

// Validation after building, before the proxy listens:
//
//   - Errors: a table whose strategies could send one row to several data
//     nodes (no database strategy over several data sources, no table
//     strategy over several tables on one data source) — ShardingSphere
//     fails such INSERTs at run time ("Insert statement does not support
//     sharding table routing to multiple data nodes"); a sampled row that
//     reaches no data node, or whose expression names a data source or
//     table that is not in actualDataNodes; binding tables that do not
//     shard alike.
//   - Warnings: data nodes that no sampled row reaches (e.g. ds_${id % 2}
//     with t_order_${id % 4}: ds_0 only ever gets t_order_0 and t_order_2).
//     They are warnings, not errors, because such rules still route every
//     statement correctly (the unreachable tables stay empty) and because
//     sampling cannot prove a node unreachable for every expression; check
//     prints them and serve logs them.
//
// Sampling routes each sharding column's sample values (integers 0..4095
// plus values spread over every magnitude up to 2^62; for date-time
// algorithms, points in every window) through TableRule.Route; with
// several columns, rows combine the columns' samples at random (fixed seed,
// so results are reproducible). Tables with a hint strategy, or with an
// inline expression that uses its column as text (e.g. t_user_${region}),
// are not sampled; a warning says so.

// sampleRows bounds the random combinations tried for tables with several
// sharding columns.
const sampleRows = 8192

func (d *decoder) validate(r *Rules, sh *shardingConfig) {
	for _, rt := range sh.tables {
		if t := r.Tables[strings.ToLower(rt.name)]; t != nil {
			d.validateTable(t, rt)
		}
	}
	for i, g := range r.BindingGroups {
		d.validateBinding(r, g, sh.groupNodes[i])
	}
}

func (d *decoder) validateTable(t *TableRule, rt *rawTable) {
	if t.DatabaseStrategy == nil && len(t.dataSources) > 1 && !t.Auto {
		d.errorf(rt.node, "table %s has no database strategy but %d data sources (%s): one row would go to every one of them; add a databaseStrategy or defaultDatabaseStrategy",
			rt.name, len(t.dataSources), strings.Join(t.dataSources, ", "))
		return
	}
	if t.TableStrategy == nil {
		for _, ds := range t.dataSources {
			if n := len(t.tables[ds]); n > 1 {
				d.errorf(rt.node, "table %s has no table strategy but %d tables on %s: one row would go to every one of them; add a tableStrategy or defaultTableStrategy",
					rt.name, n, ds)
				return
			}
		}
	}
	doms, why := t.columnDomains()
	if why != "" {
		d.warnf(rt.nodesNode, "table %s: data nodes not analysed: %s", rt.name, why)
		return
	}
	cols := t.ShardingColumns()
	reached := make(map[DataNode]bool, len(t.DataNodes))
	err := forEachSample(cols, doms, func(vals []algorithm.Value, conds map[string]algorithm.ColumnCondition) error {
		nodes, err := t.Route(conds)
		var re *algorithm.RouteError
		switch {
		case errors.As(err, &re):
			return fmt.Errorf("a row with %s cannot be routed: %s", rowString(cols, vals), re.Message)
		case err != nil:
			return err
		case len(nodes) == 0:
			return fmt.Errorf("a row with %s reaches no data node", rowString(cols, vals))
		case len(nodes) > 1:
			return fmt.Errorf("a row with %s reaches %d data nodes (%s)", rowString(cols, vals), len(nodes), nodeList(nodes, 8))
		}
		reached[nodes[0]] = true
		return nil
	})
	if err != nil {
		d.errorf(rt.node, "table %s: %v", rt.name, err)
		return
	}
	var missed []DataNode
	for _, n := range t.DataNodes {
		if !reached[n] {
			missed = append(missed, n)
		}
	}
	if len(missed) > 0 {
		d.warnf(rt.nodesNode, "table %s: %d of %d data nodes are reached by no sampled value of %s: %s",
			rt.name, len(missed), len(t.DataNodes), strings.Join(cols, ","), nodeList(missed, 12))
	}
}

// forEachSample calls fn with sampled rows of the columns: every sample of
// a single column, or for several columns the diagonal (sample i of each)
// plus random combinations.
func forEachSample(cols []string, doms map[string]algorithm.Domain, fn func([]algorithm.Value, map[string]algorithm.ColumnCondition) error) error {
	if len(cols) == 0 {
		return fn(nil, map[string]algorithm.ColumnCondition{})
	}
	rng := rand.New(rand.NewPCG(0x5eed, 0x5f1a))
	samples := make([][]algorithm.Value, len(cols))
	longest := 0
	for i, c := range cols {
		samples[i] = doms[c].Samples(rng)
		longest = max(longest, len(samples[i]))
	}
	vals := make([]algorithm.Value, len(cols))
	conds := make(map[string]algorithm.ColumnCondition, len(cols))
	row := func(pick func(i int) int) error {
		for i, c := range cols {
			vals[i] = samples[i][pick(i)]
			conds[c] = algorithm.ColumnCondition{Column: c, Values: vals[i : i+1 : i+1]}
		}
		return fn(vals, conds)
	}
	for k := 0; k < longest; k++ {
		if err := row(func(i int) int { return k % len(samples[i]) }); err != nil {
			return err
		}
	}
	if len(cols) == 1 {
		return nil
	}
	for k := 0; k < sampleRows; k++ {
		if err := row(func(i int) int { return rng.IntN(len(samples[i])) }); err != nil {
			return err
		}
	}
	return nil
}

// validateBinding checks that binding tables shard alike: the same data
// sources with as many tables on each, and every sampled row reaching the
// data node at the same position in each table's DataNodes (the planner
// joins binding tables node by node).
func (d *decoder) validateBinding(r *Rules, group []string, n *yaml.Node) {
	first := r.Tables[group[0]]
	for _, name := range group[1:] {
		t := r.Tables[name]
		if len(t.dataSources) != len(first.dataSources) || len(t.DataNodes) != len(first.DataNodes) {
			d.errorf(n, "binding tables %s and %s have different data nodes (%d on %s vs %d on %s)", first.Name, t.Name,
				len(first.DataNodes), strings.Join(first.dataSources, ","), len(t.DataNodes), strings.Join(t.dataSources, ","))
			return
		}
		for i, ds := range first.dataSources {
			if t.dataSources[i] != ds || len(t.tables[ds]) != len(first.tables[ds]) {
				d.errorf(n, "binding tables %s and %s have different data nodes on %s", first.Name, t.Name, ds)
				return
			}
		}
	}
	var cols []string
	doms := map[string]algorithm.Domain{}
	for _, name := range group {
		dm, why := r.Tables[name].columnDomains()
		if why != "" {
			return // not sampleable; validateTable warned
		}
		for c, dom := range dm {
			if prev, ok := doms[c]; ok && prev.Kind != dom.Kind {
				return
			}
			doms[c] = dom
		}
		for _, c := range r.Tables[name].ShardingColumns() {
			if !slices.Contains(cols, c) {
				cols = append(cols, c)
			}
		}
	}
	index := make([]map[DataNode]int, len(group))
	for i, name := range group {
		index[i] = map[DataNode]int{}
		for j, dn := range r.Tables[name].DataNodes {
			index[i][dn] = j
		}
	}
	err := forEachSample(cols, doms, func(vals []algorithm.Value, conds map[string]algorithm.ColumnCondition) error {
		want := -1
		var wantNode DataNode
		for i, name := range group {
			nodes, err := r.Tables[name].Route(conds)
			if err != nil || len(nodes) != 1 {
				return nil // reported by validateTable
			}
			pos := index[i][nodes[0]]
			if want < 0 {
				want, wantNode = pos, nodes[0]
				continue
			}
			if pos != want {
				return fmt.Errorf("a row with %s goes to %s (data node %d of %s) but to %s (data node %d of %s)",
					rowString(cols, vals), wantNode, want+1, group[0], nodes[0], pos+1, name)
			}
		}
		return nil
	})
	if err != nil {
		d.errorf(n, "binding tables %s do not shard alike: %v", strings.Join(group, ","), err)
	}
}

// nodeList prints up to limit data nodes.
func nodeList(nodes []DataNode, limit int) string {
	var b strings.Builder
	for i, n := range nodes {
		if i == limit {
			fmt.Fprintf(&b, ", ... (%d more)", len(nodes)-limit)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(n.String())
	}
	return b.String()
}
