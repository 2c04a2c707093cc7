package router

import (
	"fmt"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/shardflake/shardflake/algorithm"
	"github.com/shardflake/shardflake/config"
)

// nodeSet is a set of data node indexes of one table.
type nodeSet []uint64

func newNodeSet(n int) nodeSet { return make(nodeSet, (n+63)/64) }

func fullNodeSet(n int) nodeSet {
	s := newNodeSet(n)
	for i := 0; i < n; i++ {
		s.add(i)
	}
	return s
}

func (s nodeSet) add(i int)      { s[i/64] |= 1 << (i % 64) }
func (s nodeSet) has(i int) bool { return s[i/64]&(1<<(i%64)) != 0 }
func (s nodeSet) intersect(o nodeSet) {
	for i := range s {
		s[i] &= o[i]
	}
}
func (s nodeSet) union(o nodeSet) {
	for i := range s {
		s[i] |= o[i]
	}
}

func (s nodeSet) count() int {
	n := 0
	for _, w := range s {
		n += bits.OnesCount64(w)
	}
	return n
}

// first returns the lowest member, -1 when empty.
func (s nodeSet) first() int {
	for i, w := range s {
		if w != 0 {
			return i*64 + bits.TrailingZeros64(w)
		}
	}
	return -1
}

// unit is one route before rendering: the data source and, per sharded
// reference (hole), the data node it reads.
type unit struct {
	ds    string
	order int   // binding slot or node index of the primary table: sort key and slice position
	nodes []int // per hole: index into that table's DataNodes
}

// routing decides the units of a SELECT, UPDATE, DELETE, INSERT ... SELECT
// or DDL statement.
type routing struct {
	r     *Router
	a     *analysis
	hints *hints
	// holeGroups[h] are the condition groups restricting sharded reference
	// h: routing is the union over the groups; a nil group admits all.
	holeGroups [][][]atom
	// aligned: the sharded references are distinct tables of one binding
	// group (and nested ones are correlated on their sharding columns), so
	// they pair data node by data node.
	aligned bool
	// strictHole is the hole of an INSERT ... SELECT's target, whose
	// literal sharding values must name an existing data node (-1: none);
	// for every other hole a value without a data node matches no row.
	strictHole     int
	primary        int  // hole whose data nodes the slice hint divides
	singles        bool // a table without rules is involved
	broadcastW     bool // a write to broadcast tables: every data source
	write          bool
	paramDependent bool
	static         []unit // units when they depend on no argument
	staticEmpty    bool
	staticErr      error
	hasStatic      bool
	// keptOuterErr refuses a statement of several units whose outer join
	// would repeat its kept rows on each (keptOuterJoin), nil when none
	// can.
	keptOuterErr error
}

// newRouting prepares routing for a statement whose references a holds.
func (r *Router) newRouting(a *analysis, h *hints, write bool) (*routing, error) {
	rt := &routing{r: r, a: a, hints: h, write: write, primary: -1, strictHole: -1}
	for _, ref := range a.refs {
		switch ref.kind {
		case refSingle:
			rt.singles = true
		case refBroadcast:
			if ref.written {
				rt.broadcastW = true
			}
		}
	}
	if rt.broadcastW && (len(a.sharded) > 0 || rt.singles) {
		return nil, errNotSupported("a statement that changes broadcast table %s may not involve sharded or unsharded tables: the change must reach every data source alike", firstWrittenBroadcast(a))
	}
	a.bindCorrelated()
	// Condition groups per hole, from the hole's own block.
	dnfs := map[*scope]dnf{}
	paramDependent := false
	rt.holeGroups = make([][][]atom, len(a.sharded))
	for h, ref := range a.sharded {
		if ref.scope == nil {
			rt.holeGroups[h] = [][]atom{nil}
			continue
		}
		d, ok := dnfs[ref.scope]
		if !ok {
			d = a.conditions(ref.scope)
			dnfs[ref.scope] = d
		}
		groups := make([][]atom, 0, len(d))
		for _, g := range d {
			var mine []atom
			for _, at := range g {
				if at.ref == ref.idx {
					mine = append(mine, at)
					if at.hasParam() {
						paramDependent = true
					}
				}
			}
			if mine == nil {
				groups = [][]atom{nil}
				break
			}
			groups = append(groups, mine)
		}
		rt.holeGroups[h] = groups
	}
	rt.aligned = a.alignedRefs()
	rt.keptOuterErr = rt.keptOuterRepeats()
	for h, ref := range a.sharded {
		if !ref.nested {
			rt.primary = h
			break
		}
	}
	if rt.primary < 0 && len(a.sharded) > 0 {
		rt.primary = 0
	}
	rt.paramDependent = paramDependent
	rt.recompute(paramDependent)
	return rt, nil
}

// keptOuterRepeats returns the error for the first outer join of
// a.keptOuter whose NULL-extended rows the WHERE clause keeps: none of
// the references of its nullable side in its block is a sharded one that
// each condition group of the block restricts (holeGroups without a nil
// group), which NULL would fail.
func (rt *routing) keptOuterRepeats() error {
	for _, j := range rt.a.keptOuter {
		rejected := false
		for _, idx := range j.block {
			if h := rt.a.refs[idx].hole; h >= 0 && !slices.ContainsFunc(rt.holeGroups[h], func(g []atom) bool { return g == nil }) {
				rejected = true
				break
			}
		}
		if rejected || rt.a.nullsMerge(j) {
			continue
		}
		kept := j.kept
		if kept == "" {
			kept = "a derived table"
		}
		return errNotSupported("an outer join that keeps the rows of %s, which reads no sharded table, with sharded table %s on its nullable side must reach one data node: each data node would return the kept rows it finds no match for", kept, j.nullable)
	}
	return nil
}

// recompute refreshes the units cached for statements whose routing
// depends on no argument.
func (rt *routing) recompute(paramDependent bool) {
	rt.hasStatic = false
	if !paramDependent {
		rt.static, rt.staticEmpty, rt.staticErr = rt.compute(nil)
		rt.hasStatic = true
	}
}

func firstWrittenBroadcast(a *analysis) string {
	for _, ref := range a.refs {
		if ref.kind == refBroadcast && ref.written {
			return ref.name
		}
	}
	return ""
}

// units returns the units of one execution, in data-node order. empty
// is true when no data node can hold a matching row (contradicting
// conditions, NULL or nonexistent sharding values, a slice that holds no
// data node): the single unit returned must then run with a false
// condition, which gives the right empty answer and column metadata
// without touching an unrelated data node's rows.
func (rt *routing) units(args []any) (units []unit, empty bool, err error) {
	if rt.hasStatic {
		return rt.static, rt.staticEmpty, rt.staticErr
	}
	return rt.compute(args)
}

func (rt *routing) compute(args []any) ([]unit, bool, error) {
	units, err := rt.unsliced(args)
	if err != nil {
		return nil, false, err
	}
	if len(units) == 0 {
		u, err := rt.emptyUnit()
		if err != nil {
			return nil, false, err
		}
		return []unit{u}, true, nil
	}
	if rt.hints.sliceOf() == nil {
		return units, false, nil
	}
	kept := units[:0:0]
	for _, u := range units {
		if rt.sliced(u.order) {
			kept = append(kept, u)
		}
	}
	if len(kept) == 0 {
		return units[:1], true, nil
	}
	return kept, false, nil
}

func (rt *routing) unsliced(args []any) ([]unit, error) {
	a := rt.a
	if len(a.sharded) == 0 {
		return rt.unshardedUnits(), nil
	}
	sets := make([]nodeSet, len(a.sharded))
	for h := range a.sharded {
		s, err := rt.routeHole(h, args)
		if err != nil {
			return nil, err
		}
		sets[h] = s
	}
	var units []unit
	if rt.aligned {
		units = rt.alignedUnits(sets)
	} else {
		u, err := rt.singleUnit(sets)
		if err != nil {
			return nil, err
		}
		units = u
	}
	if len(units) > 1 && rt.keptOuterErr != nil {
		return nil, rt.keptOuterErr
	}
	if rt.singles {
		for _, u := range units {
			if u.ds != rt.r.defaultDS {
				return nil, errNotSupported("tables without sharding rules live on data source %s, but the sharded tables of this statement are routed to %s: such a statement must reach data nodes on %s only", rt.r.defaultDS, u.ds, rt.r.defaultDS)
			}
		}
	}
	return units, nil
}

func (rt *routing) unshardedUnits() []unit {
	if rt.broadcastW {
		units := make([]unit, len(rt.r.rules.DataSources))
		for i, ds := range rt.r.rules.DataSources {
			units[i] = unit{ds: ds.Name, order: i}
		}
		return units
	}
	return []unit{{ds: rt.r.defaultDS}}
}

// routeHole returns the data nodes sharded reference h can touch.
//
// SHARDINGSPHERE_HINT values for a strategy replace what the conditions
// say about that strategy's columns, as in ShardingSphere: the hint picks
// the data sources (or tables), the conditions still pick the other
// strategy's targets and still filter the rows.
func (rt *routing) routeHole(h int, args []any) (nodeSet, error) {
	ref := rt.a.sharded[h]
	ti := ref.info
	n := len(ti.rule.DataNodes)
	hv := routeOpts{db: rt.hints.values(ref.name, true), table: rt.hints.values(ref.name, false), missing: algorithm.TargetOptional}
	if h == rt.strictHole {
		hv.missing = algorithm.TargetRequired
	}
	var set nodeSet
	for _, g := range rt.holeGroups[h] {
		if g == nil && hv.none() {
			set = fullNodeSet(n)
			break
		}
		s, err := ti.routeAtoms(g, args, hv)
		if err != nil {
			return nil, errRouting(ref.name, err)
		}
		if set == nil {
			set = s
		} else {
			set.union(s)
		}
	}
	if set == nil {
		set = newNodeSet(n)
	}
	return set, nil
}

// routeOpts are the SHARDINGSPHERE_HINT values for one table's database
// and table strategies (nil when the hint gives none), and what a value
// without a target means.
type routeOpts struct {
	db, table []algorithm.Value
	missing   algorithm.TargetMode
}

func (hv routeOpts) none() bool { return hv.db == nil && hv.table == nil }

// condScratch is what a bind fills to route one group of atoms: the
// condition map handed to the algorithms and the exact values its
// conditions hold. Both escape to the heap through the algorithms'
// interface, so new ones per statement were allocations (a map's buckets
// and a values slice) per bind; they are pooled and cleared instead.
type condScratch struct {
	conds  map[string]algorithm.ColumnCondition
	values []algorithm.Value
}

var condScratches = sync.Pool{New: func() any {
	return &condScratch{conds: map[string]algorithm.ColumnCondition{}}
}}

// maxPooledValues bounds the values slice a pooled scratch keeps (a long
// IN list's is let go).
const maxPooledValues = 64

func getConds() *condScratch { return condScratches.Get().(*condScratch) }

func putConds(cs *condScratch) {
	if len(cs.conds) > 0 {
		clear(cs.conds)
	}
	clear(cs.values)
	cs.values = cs.values[:0]
	if cap(cs.values) > maxPooledValues {
		cs.values = nil
	}
	condScratches.Put(cs)
}

// routeAtoms returns the data nodes rows satisfying all atoms (one
// table's conditions of one group) can live on. Several atoms on one
// column are routed one by one and intersected; exact values go first, so
// a range an algorithm cannot route (INLINE without allow-range) is
// dropped when an exact value already pins the column (a superset).
func (ti *tableInfo) routeAtoms(atoms []atom, args []any, hv routeOpts) (nodeSet, error) {
	cs := getConds()
	defer putConds(cs)
	if len(atoms) == 1 {
		// One condition (WHERE id = ?): routed without the map.
		cond := atoms[0].condition(args, &cs.values)
		return ti.routeOne(&cond, hv)
	}
	conds := cs.conds
	var extra []int
	for pass := 0; pass < 2; pass++ {
		for i := range atoms {
			at := &atoms[i]
			if (at.values != nil) != (pass == 0) {
				continue
			}
			if _, dup := conds[at.col]; dup {
				extra = append(extra, i)
				continue
			}
			conds[at.col] = at.condition(args, &cs.values)
		}
	}
	set, err := ti.routeConds(conds, hv)
	if err != nil {
		return nil, err
	}
	for _, i := range extra {
		at := &atoms[i]
		prev := conds[at.col]
		conds[at.col] = at.condition(args, &cs.values)
		s, err := ti.routeConds(conds, hv)
		conds[at.col] = prev
		if err != nil {
			if at.values == nil {
				continue
			}
			return nil, err
		}
		set.intersect(s)
	}
	return set, nil
}

// routeConds routes by the database strategy, then on each chosen data
// source by the table strategy; hint values replace the conditions of
// the strategy they are given for.
func (ti *tableInfo) routeConds(conds map[string]algorithm.ColumnCondition, hv routeOpts) (nodeSet, error) {
	return ti.routeBy(conds, nil, hv)
}

// routeOne is routeConds for a map holding only one.
func (ti *tableInfo) routeOne(one *algorithm.ColumnCondition, hv routeOpts) (nodeSet, error) {
	return ti.routeBy(nil, one, hv)
}

// routeBy is routeConds by conds, or by the one condition one when it is
// not nil.
func (ti *tableInfo) routeBy(conds map[string]algorithm.ColumnCondition, one *algorithm.ColumnCondition, hv routeOpts) (nodeSet, error) {
	rule := ti.rule
	set := newNodeSet(len(rule.DataNodes))
	var dss []string
	var err error
	if hv.db != nil {
		dss, err = rule.DatabaseStrategy.RouteHint(rule.DataSources(), hv.db)
	} else if one != nil {
		dss, err = rule.DatabaseStrategy.RouteCondition(rule.DataSources(), *one, hv.missing)
	} else {
		dss, err = rule.DatabaseStrategy.RouteMode(rule.DataSources(), conds, hv.missing)
	}
	if err != nil {
		return nil, err
	}
	for _, ds := range dss {
		var tables []string
		if hv.table != nil {
			tables, err = rule.TableStrategy.RouteHint(rule.Tables(ds), hv.table)
		} else if one != nil {
			tables, err = rule.TableStrategy.RouteCondition(rule.Tables(ds), *one, hv.missing)
		} else {
			tables, err = rule.TableStrategy.RouteMode(rule.Tables(ds), conds, hv.missing)
		}
		if err != nil {
			return nil, err
		}
		for _, tb := range tables {
			if i, ok := ti.index[config.DataNode{DataSource: ds, Table: tb}]; ok {
				set.add(i)
			}
		}
	}
	return set, nil
}

// alignedUnits pairs the holes slot by slot: a slot is a unit when every
// top-level hole may touch its data node there.
func (rt *routing) alignedUnits(sets []nodeSet) []unit {
	a := rt.a
	if len(a.sharded) == 1 && !a.sharded[0].nested {
		return oneTableUnits(a.sharded[0].info, sets[0])
	}
	prim := a.sharded[rt.primary].info
	slots := fullNodeSet(len(prim.slotToNode))
	if a.unionLift {
		// A UNION's branches do not join: a data node is needed when
		// any branch reads it.
		slots = newNodeSet(len(prim.slotToNode))
	}
	for h, ref := range a.sharded {
		if ref.nested {
			continue
		}
		ss := newNodeSet(len(prim.slotToNode))
		ti := ref.info
		for node := range ti.rule.DataNodes {
			if sets[h].has(node) && ti.slot[node] < len(prim.slotToNode) {
				ss.add(ti.slot[node])
			}
		}
		if a.unionLift {
			slots.union(ss)
		} else {
			slots.intersect(ss)
		}
	}
	var units []unit
	for slot := range prim.slotToNode {
		if !slots.has(slot) {
			continue
		}
		u := unit{order: slot, nodes: make([]int, len(a.sharded))}
		ok := true
		for h, ref := range a.sharded {
			node := ref.info.slotToNode[slot]
			if node < 0 {
				ok = false
				break
			}
			u.nodes[h] = node
			if h == rt.primary {
				u.ds = ref.info.rule.DataNodes[node].DataSource
			}
		}
		if ok {
			units = append(units, u)
		}
	}
	return units
}

// oneTableUnits is alignedUnits for a statement on one sharded table
// (its own slots are then every slot): a unit per data node in set, in
// slot order, each unit's nodes a shared slice of ti.nodeIndex.
func oneTableUnits(ti *tableInfo, set nodeSet) []unit {
	if set.count() == 1 {
		// A point statement: the node's own unit, shared.
		for w, word := range set {
			if word != 0 {
				node := w*64 + bits.TrailingZeros64(word)
				if u := ti.nodeUnits[node : node+1 : node+1]; u[0].nodes != nil {
					return u
				}
			}
		}
	}
	units := make([]unit, 0, set.count())
	for slot, node := range ti.slotToNode {
		if node >= 0 && set.has(node) {
			units = append(units, unit{order: slot, ds: ti.rule.DataNodes[node].DataSource, nodes: ti.nodeIndex[node : node+1 : node+1]})
		}
	}
	return units
}

// singleUnit handles references that do not pair: each must reach exactly
// one data node, all on one data source.
//
// A subquery (or a set operation's branch) whose own conditions reach no
// data node reads no row wherever it runs: it takes a data node of the
// unit's data source, and the statement around it keeps its rows (NOT
// EXISTS, NOT IN, a COUNT in the select list). Only when a top-level
// table reaches none is the statement empty (emptyUnit's false
// condition), and then only if no subquery reads a data node: its rows
// would still count in the select list or HAVING of the statement's
// one row of aggregates (SELECT COUNT(*), (SELECT COUNT(*) FROM t)).
func (rt *routing) singleUnit(sets []nodeSet) ([]unit, error) {
	a := rt.a
	u := unit{nodes: make([]int, len(a.sharded))}
	if rt.strictHole >= 0 && sets[rt.strictHole].count() == 0 {
		return nil, errNotSupported("INSERT ... SELECT into %s: its literal sharding values name no data node (NULL has none)", a.sharded[rt.strictHole].name)
	}
	topEmpty, nestedReads := false, -1
	for h, ref := range a.sharded {
		switch n := sets[h].count(); {
		case n == 0 && !ref.nested:
			topEmpty = true
		case n > 0 && ref.nested && nestedReads < 0:
			nestedReads = h
		}
	}
	if topEmpty {
		if nestedReads >= 0 {
			return nil, rt.notPairableIn(nestedReads, sets)
		}
		return nil, nil
	}
	var readsNothing []int
	for h, ref := range a.sharded {
		if sets[h].count() == 0 {
			readsNothing = append(readsNothing, h)
			continue
		}
		if sets[h].count() > 1 {
			return nil, rt.notPairableIn(h, sets)
		}
		node := sets[h].first()
		u.nodes[h] = node
		ds := ref.info.rule.DataNodes[node].DataSource
		if u.ds == "" {
			u.ds = ds
		} else if ds != u.ds {
			return nil, rt.notPairableIn(h, sets)
		}
		if h == rt.primary {
			u.order = node
		}
	}
	if u.ds == "" {
		// Every sharded table is in a subquery that reads nothing: the
		// statement's own tables are single (on the default data
		// source) or broadcast ones.
		u.ds = rt.r.defaultDS
		if !rt.singles {
			u.ds = a.sharded[0].info.rule.DataNodes[0].DataSource
		}
	}
	for _, h := range readsNothing {
		node := a.sharded[h].info.firstNodeOn(u.ds)
		if node < 0 {
			return nil, rt.notPairableIn(h, sets)
		}
		u.nodes[h] = node
		if h == rt.primary {
			u.order = node
		}
	}
	return []unit{u}, nil
}

// notPairableIn is notPairable when the data nodes each hole reaches are
// known: an INSERT ... SELECT with literal sharding values says where its
// rows go and what the SELECT reads.
func (rt *routing) notPairableIn(h int, sets []nodeSet) error {
	if rt.strictHole < 0 {
		return rt.notPairable(h)
	}
	a := rt.a
	target := a.sharded[rt.strictHole]
	ti := target.info
	dest := ti.rule.DataNodes[sets[rt.strictHole].first()]
	var reads []string
	for o, ref := range a.sharded {
		if o == rt.strictHole {
			continue
		}
		switch n := sets[o].count(); {
		case n == 1:
			reads = append(reads, ref.info.rule.DataNodes[sets[o].first()].String())
		case n > 1:
			reads = append(reads, fmt.Sprintf("%d data nodes of %s", n, ref.name))
		}
	}
	return errNotSupported("INSERT ... SELECT into %s with literal sharding values puts its rows on %s and runs as one statement on %s, so its SELECT must read one data node of each sharded table, on %s; it reads %s. Make the SELECT's conditions pick data nodes on %s, or INSERT the rows with VALUES",
		target.name, dest, dest.DataSource, dest.DataSource, strings.Join(reads, ", "), dest.DataSource)
}

func (rt *routing) notPairable(h int) error {
	a := rt.a
	ref := a.sharded[h]
	if a.setOp {
		return errNotSupported("UNION, INTERSECT and EXCEPT over sharded table %s are supported only when every branch reaches the same single data node, or for plain SELECTs with one operator throughout (all UNION ALL, all UNION, all INTERSECT [ALL] or all EXCEPT [ALL]), without WITH, whose ORDER BY names result columns", ref.name)
	}
	for _, o := range a.sharded {
		if o.nested && o.follows < 0 {
			ref = o
			break
		}
	}
	if ref.nested && a.windowErr != nil {
		return a.windowErr
	}
	if ref.nested {
		return errNotSupported("a subquery or derived table on sharded table %s must reach the same single data node as the rest of the statement, or be correlated with a binding table on all its sharding columns (%s: equal to the outer table's, or pinned to the same literal in both)", ref.name, strings.Join(ref.info.rule.ShardingColumns(), ","))
	}
	var other *tableRef
	for _, o := range a.sharded {
		if o != ref {
			other = o
			break
		}
	}
	if other == nil {
		return errNotSupported("sharded table %s must reach one data node here", ref.name)
	}
	cols := strings.Join(ref.info.rule.ShardingColumns(), ",")
	first, second := other.name, ref.name
	if other.hole > ref.hole {
		first, second = second, first
	}
	switch {
	case other.name == ref.name:
		return errNotSupported("a self-join of sharded table %s across data nodes must equate all its sharding columns (%s) of both sides, in ON or WHERE (for an outer join in its ON clause); otherwise both sides must reach the same single data node", ref.name, cols)
	case ref.info.group >= 0 && ref.info.group == other.info.group:
		return errNotSupported("joining binding tables %s and %s across data nodes needs a join condition that equates all their sharding columns (%s), in ON or WHERE (for an outer join in its ON clause), so that joined rows live on paired data nodes; otherwise both must reach one data node on the same data source", first, second, cols)
	}
	return errNotSupported("joining sharded tables %s and %s, which are not binding tables, is supported only when both reach one data node on the same data source", first, second)
}

// emptyUnit is the unit a statement that no data node can match runs on,
// with a false condition: a data node of each sharded table on one data
// source (the default one when tables without rules are involved).
func (rt *routing) emptyUnit() (unit, error) {
	a := rt.a
	u := unit{nodes: make([]int, len(a.sharded))}
	if len(a.sharded) == 0 {
		u.ds = rt.r.defaultDS
		return u, nil
	}
	candidates := []string{rt.r.defaultDS}
	if !rt.singles {
		candidates = a.sharded[rt.primary].info.rule.DataSources()
	}
	for _, ds := range candidates {
		ok := true
		for h, ref := range a.sharded {
			node := ref.info.firstNodeOn(ds)
			if node < 0 {
				ok = false
				break
			}
			u.nodes[h] = node
		}
		if ok {
			u.ds = ds
			u.order = u.nodes[rt.primary]
			return u, nil
		}
	}
	return u, errNotSupported("no data node can hold a row this statement matches, and its tables share no data source to answer it empty")
}

// firstNodeOn returns the index of the table's first data node on data
// source ds, -1 when none is there.
func (ti *tableInfo) firstNodeOn(ds string) int {
	return slices.IndexFunc(ti.rule.DataNodes, func(n config.DataNode) bool { return n.DataSource == ds })
}

// sliced reports whether a unit at position order belongs to the slice
// the shardflake hint asks for.
func (rt *routing) sliced(order int) bool {
	s := rt.hints.sliceOf()
	return s == nil || order%s.Count == s.Index
}

func (h *hints) sliceOf() *slice {
	if h == nil {
		return nil
	}
	return h.slice
}

// routeType classifies the units of a plan.
func (rt *routing) routeType(units []unit) RouteType {
	switch {
	case rt.broadcastW && len(units) > 1:
		return RouteBroadcast
	case len(units) == 1:
		return RouteSingle
	case len(rt.a.sharded) > 0 && len(units) == len(rt.a.sharded[rt.primary].info.rule.DataNodes):
		return RouteAll
	}
	return RouteMulti
}

// sortUnits orders units by data node.
func sortUnits(units []unit) {
	sort.SliceStable(units, func(i, j int) bool { return units[i].order < units[j].order })
}

// argValue converts a Bind argument to a routing Value.
func argValue(v any) algorithm.Value {
	switch x := v.(type) {
	case nil, int64, uint64, float64, string:
		return x
	case []byte:
		return string(x)
	case int:
		return int64(x)
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case uint:
		return uint64(x)
	case uint8:
		return uint64(x)
	case uint16:
		return uint64(x)
	case uint32:
		return uint64(x)
	case float32:
		return float64(x)
	case bool:
		if x {
			return int64(1)
		}
		return int64(0)
	case time.Time:
		if x.Nanosecond() == 0 {
			return x.Format("2006-01-02 15:04:05")
		}
		return x.Format("2006-01-02 15:04:05.999999")
	case time.Duration:
		return mysqlTime(x)
	}
	return nil
}

// mysqlTime writes a duration as a MySQL TIME literal, [-]H:MM:SS[.ffffff].
func mysqlTime(d time.Duration) string {
	sign := ""
	if d < 0 {
		sign, d = "-", -d
	}
	us := d.Microseconds()
	s := fmt.Sprintf("%s%02d:%02d:%02d", sign, us/3600e6, us/60e6%60, us/1e6%60)
	if frac := us % 1e6; frac != 0 {
		s += fmt.Sprintf(".%06d", frac)
	}
	return s
}
