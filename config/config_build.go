package config

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/shardflake/shardflake/algorithm"
	"github.com/shardflake/shardflake/idgen"
)

// build turns the decoded sharding rules into Rules: algorithms, key
// generators, tables with their data nodes and strategies, binding groups
// and broadcast tables. Problems go to d.errs with their lines.
func (d *decoder) build(r *Rules, sh *shardingConfig) {
	r.Algorithms = map[string]algorithm.Algorithm{}
	for _, ra := range sh.algorithms {
		a, err := algorithm.New(ra.typ, ra.props)
		if err != nil {
			d.propError(ra, "sharding algorithm", err)
			continue
		}
		r.Algorithms[ra.name] = a
	}
	r.KeyGenerators = map[string]KeyGeneratorConfig{}
	for _, rk := range sh.keyGenerators {
		if err := checkKeyGenerator(rk.typ, rk.props); err != nil {
			d.propError(rk, "key generator", err)
			continue
		}
		t, _ := idgen.LookupType(rk.typ)
		r.KeyGenerators[rk.name] = KeyGeneratorConfig{Name: rk.name, Type: t.Name, Props: rk.props}
	}
	r.Tables = map[string]*TableRule{}
	for _, rt := range sh.tables {
		lower := strings.ToLower(rt.name)
		if r.Tables[lower] != nil {
			d.errorf(rt.node, "table %s is defined twice (tables and autoTables names are case-insensitive)", rt.name)
			continue
		}
		if t := d.tableRule(r, sh, rt); t != nil {
			r.Tables[lower] = t
		}
	}
	d.bindings(r, sh)
	d.broadcasts(r, sh)
	r.DefaultDataSource = r.Server.DefaultDataSource
	if sh.singleDefault != "" {
		switch {
		case r.dsByName[sh.singleDefault] == nil:
			d.errorf(sh.singleDefaultNode, "!SINGLE defaultDataSource %q is not in dataSources", sh.singleDefault)
		case r.DefaultDataSource != "" && r.DefaultDataSource != sh.singleDefault:
			d.errorf(sh.singleDefaultNode, "!SINGLE defaultDataSource %q differs from server.defaultDataSource %q", sh.singleDefault, r.DefaultDataSource)
		}
		r.DefaultDataSource = sh.singleDefault
	}
	if r.DefaultDataSource == "" && len(r.DataSources) > 0 {
		r.DefaultDataSource = r.DataSources[0].Name
	}
	r.Server.DefaultDataSource = r.DefaultDataSource
}

// propError reports an algorithm's problem at the line of the prop it is
// about, or of its type.
func (d *decoder) propError(ra *rawAlgorithm, what string, err error) {
	n := ra.typNode
	var pe *algorithm.PropError
	if errors.As(err, &pe) && ra.propNodes[pe.Prop] != nil {
		n = ra.propNodes[pe.Prop]
	}
	d.errorf(n, "%s %s (%s): %v", what, ra.name, ra.typ, err)
}

// checkKeyGenerator validates a key generator's type and props with the
// generator type's own check (idgen.Types), so a bad prop is reported at
// its line before the proxy listens.
func checkKeyGenerator(typ string, props map[string]string) error {
	t, ok := idgen.LookupType(typ)
	if !ok {
		return &algorithm.PropError{Reason: "unknown type; supported: " + strings.Join(idgen.TypeNames(), ", ")}
	}
	if err := t.Check(props); err != nil {
		var pe *idgen.PropError
		if errors.As(err, &pe) {
			if pe.Value == "" {
				return &algorithm.PropError{Prop: pe.Prop, Reason: pe.Reason}
			}
			return propErrorf(pe.Prop, "%q: %s", pe.Value, pe.Reason)
		}
		return &algorithm.PropError{Reason: err.Error()}
	}
	return nil
}

// tableRule builds one logical table's rule.
func (d *decoder) tableRule(r *Rules, sh *shardingConfig, rt *rawTable) *TableRule {
	t := &TableRule{Name: strings.ToLower(rt.name), Auto: rt.auto, Line: rt.node.Line}
	nerr := len(d.errs)
	if rt.auto {
		d.autoDataNodes(r, rt, t)
	} else {
		d.dataNodes(r, rt, t)
	}
	if len(d.errs) > nerr {
		return nil
	}
	t.index()
	dbRaw, tableRaw := rt.db, rt.table
	if dbRaw == nil {
		dbRaw = sh.defaultDB
	}
	if tableRaw == nil {
		tableRaw = sh.defaultTable
	}
	t.DatabaseStrategy = d.strategyFor(r, sh, dbRaw, "", t.dataSources)
	t.TableStrategy = d.strategyFor(r, sh, tableRaw, t.Name, t.allTables)
	key := rt.key
	if !rt.hasKeyBlock {
		key = sh.defaultKey
	}
	if key != nil {
		if r.KeyGenerators[key.gen].Name == "" && !hasAlgorithm(sh.keyGenerators, key.gen) {
			d.errorf(key.genNode, "table %s: keyGeneratorName %q is not defined in keyGenerators", rt.name, key.gen)
		}
		if key.column == "" {
			d.errorf(key.node, "table %s: keyGenerateStrategy needs a column", rt.name)
		}
		t.KeyColumn, t.KeyGenerator = strings.ToLower(key.column), key.gen
		d.checkUUIDRouting(r, t, key.node)
	}
	if len(d.errs) > nerr {
		return nil
	}
	return t
}

// checkUUIDRouting warns when a UUID generator fills a sharding column
// whose algorithm computes with integers: every INSERT would get 1235 (a
// UUID is no BIGINT). HASH_MOD hashes the text.
func (d *decoder) checkUUIDRouting(r *Rules, t *TableRule, n *yaml.Node) {
	kg, ok := r.KeyGenerators[t.KeyGenerator]
	if !ok {
		return
	}
	typ, ok := idgen.LookupType(kg.Type)
	if !ok || typ.Range(kg.Props).Integer {
		return
	}
	for _, s := range []*algorithm.Strategy{t.DatabaseStrategy, t.TableStrategy} {
		if s == nil || s.Algorithm == nil || s.Algorithm.Type() == algorithm.AlgHashMod || !slices.Contains(s.Columns, t.KeyColumn) {
			continue
		}
		d.warnf(n, "table %s: key column %s gets %s keys from %s, but sharding algorithm %s (%s) computes with integers: INSERTs will fail to route; use HASH_MOD", t.Name, t.KeyColumn, kg.Type, kg.Name, s.AlgorithmName, s.Algorithm.Type())
	}
}

func hasAlgorithm(list []*rawAlgorithm, name string) bool {
	for _, a := range list {
		if a.name == name {
			return true
		}
	}
	return false
}

// dataNodes expands actualDataNodes; empty means the logical table on
// every data source, as ShardingSphere does.
func (d *decoder) dataNodes(r *Rules, rt *rawTable, t *TableRule) {
	if strings.TrimSpace(rt.nodes) == "" {
		for _, ds := range r.DataSources {
			t.DataNodes = append(t.DataNodes, DataNode{DataSource: ds.Name, Table: t.Name})
		}
		return
	}
	names, err := algorithm.ExpandList(rt.nodes)
	if err != nil {
		d.errorf(rt.nodesNode, "table %s actualDataNodes: %v", rt.name, err)
		return
	}
	seen := map[DataNode]bool{}
	for _, name := range names {
		dot := strings.IndexByte(name, '.')
		if dot <= 0 || dot == len(name)-1 || strings.IndexByte(name[dot+1:], '.') >= 0 {
			d.errorf(rt.nodesNode, "table %s actualDataNodes %q: %q is not data_source.table", rt.name, rt.nodes, name)
			return
		}
		n := DataNode{DataSource: name[:dot], Table: name[dot+1:]}
		if r.dsByName[n.DataSource] == nil {
			if msg := r.groupMemberError(n.DataSource); msg != "" {
				d.errorf(rt.nodesNode, "table %s actualDataNodes %q: %s", rt.name, rt.nodes, msg)
				return
			}
			d.errorf(rt.nodesNode, "table %s actualDataNodes %q: data source %s is not in dataSources", rt.name, rt.nodes, n.DataSource)
			return
		}
		if seen[n] {
			d.errorf(rt.nodesNode, "table %s actualDataNodes %q: data node %s appears twice", rt.name, rt.nodes, n)
			return
		}
		seen[n] = true
		t.DataNodes = append(t.DataNodes, n)
	}
}

// autoDataNodes generates an autoTables table's data nodes as
// ShardingSphere does: name_0 .. name_N-1, spread round-robin over
// actualDataSources (all data sources when empty), N from the algorithm.
func (d *decoder) autoDataNodes(r *Rules, rt *rawTable, t *TableRule) {
	dss := r.DataSourceNames()
	if strings.TrimSpace(rt.nodes) != "" {
		var err error
		if dss, err = algorithm.ExpandList(rt.nodes); err != nil {
			d.errorf(rt.nodesNode, "autoTables %s actualDataSources: %v", rt.name, err)
			return
		}
		for _, ds := range dss {
			if r.dsByName[ds] == nil {
				d.errorf(rt.nodesNode, "autoTables %s actualDataSources: data source %s is not in dataSources", rt.name, ds)
				return
			}
		}
	}
	if rt.table == nil || rt.table.none {
		return
	}
	a, ok := r.Algorithms[rt.table.algName].(algorithm.Auto)
	if !ok {
		if r.Algorithms[rt.table.algName] != nil {
			d.errorf(rt.table.algNode, "autoTables %s: algorithm %s is not an auto algorithm (MOD, HASH_MOD, BOUNDARY_RANGE, VOLUME_RANGE, AUTO_INTERVAL)", rt.name, rt.table.algName)
		} else {
			d.errorf(rt.table.algNode, "autoTables %s: shardingAlgorithmName %q is not defined in shardingAlgorithms", rt.name, rt.table.algName)
		}
		return
	}
	for i := 0; i < a.AutoTablesAmount(); i++ {
		t.DataNodes = append(t.DataNodes, DataNode{DataSource: dss[i%len(dss)], Table: t.Name + "_" + strconv.Itoa(i)})
	}
}

// index fills the lookup structures behind DataSources, Tables and Node.
func (t *TableRule) index() {
	t.tables = map[string][]string{}
	t.nodes = map[DataNode]bool{}
	seenTable := map[string]bool{}
	for _, n := range t.DataNodes {
		if t.tables[n.DataSource] == nil {
			t.dataSources = append(t.dataSources, n.DataSource)
		}
		t.tables[n.DataSource] = append(t.tables[n.DataSource], n.Table)
		t.nodes[n] = true
		if !seenTable[n.Table] {
			seenTable[n.Table] = true
			t.allTables = append(t.allTables, n.Table)
		}
	}
}

// strategyFor builds one table's database or table strategy from raw
// (nil or none: no strategy); targets are the names it chooses among.
func (d *decoder) strategyFor(r *Rules, sh *shardingConfig, raw *rawStrategy, logical string, targets []string) *algorithm.Strategy {
	if raw == nil || raw.none {
		return nil
	}
	s := &algorithm.Strategy{Kind: raw.kind, AlgorithmName: raw.algName, Line: raw.node.Line}
	for _, c := range raw.columns {
		s.Columns = append(s.Columns, strings.ToLower(c))
	}
	if s.Kind == algorithm.StrategyStandard && len(s.Columns) == 0 {
		if sh.defaultColumn == "" {
			d.errorf(raw.colNode, "%s: shardingColumn is required (or set defaultShardingColumn)", raw.fromFile)
			return nil
		}
		s.Columns = []string{strings.ToLower(sh.defaultColumn)}
	}
	a := r.Algorithms[raw.algName]
	if a == nil {
		if !hasAlgorithm(sh.algorithms, raw.algName) {
			d.errorf(raw.algNode, "%s: shardingAlgorithmName %q is not defined in shardingAlgorithms", raw.fromFile, raw.algName)
		}
		return nil
	}
	s.Algorithm = a
	if !d.compatible(raw, s, a) {
		return nil
	}
	return s.WithTargets(logical, targets)
}

// compatible checks that the algorithm fits the strategy kind and reads
// only the strategy's columns.
func (d *decoder) compatible(raw *rawStrategy, s *algorithm.Strategy, a algorithm.Algorithm) bool {
	want := map[algorithm.StrategyKind]string{algorithm.StrategyStandard: "standard", algorithm.StrategyComplex: "complex", algorithm.StrategyHint: "hint"}[s.Kind]
	if kind := a.Kind(); kind != s.Kind {
		d.errorf(raw.algNode, "%s: algorithm %s (%s) cannot serve a %s strategy; it needs %s", raw.fromFile, raw.algName, a.Type(), want, kind)
		return false
	}
	cc, ok := a.(algorithm.ColumnChecker)
	if !ok || s.Kind == algorithm.StrategyHint {
		return true
	}
	if err := cc.CheckColumns(s.Columns); err != nil {
		d.errorf(raw.algNode, "%s: algorithm %s's %v", raw.fromFile, raw.algName, err)
		return false
	}
	return true
}

func (d *decoder) bindings(r *Rules, sh *shardingConfig) {
	r.binding = map[string][]string{}
	flowReported := false
	for _, b := range sh.bindings {
		var group []string
		for _, name := range b.tables {
			lower := strings.ToLower(name)
			switch {
			case r.Tables[lower] == nil && !tableDefined(sh, lower):
				d.errorf(b.node, "bindingTables %q: %s is not a sharded table", strings.Join(b.tables, ","), name)
			case r.binding[lower] != nil || slices.Contains(group, lower):
				d.errorf(b.node, "bindingTables %q: %s is already in a binding group", strings.Join(b.tables, ","), name)
			default:
				group = append(group, lower)
			}
		}
		if len(group) < 2 {
			switch {
			case len(b.tables) >= 2:
			case sh.bindingFlow != "":
				if !flowReported {
					d.errorf(b.node, "bindingTables [%s] is a list of %d groups of one table each, and a binding group needs at least two tables: did you mean one group, written as the list entry \"- %s\" (or [\"%s\"])?",
						strings.ReplaceAll(sh.bindingFlow, ",", ", "), len(sh.bindings), sh.bindingFlow, sh.bindingFlow)
					flowReported = true
				}
			default:
				d.errorf(b.node, "bindingTables %q: a binding group needs at least two tables", strings.Join(b.tables, ","))
			}
			continue
		}
		r.BindingGroups = append(r.BindingGroups, group)
		sh.groupNodes = append(sh.groupNodes, b.node)
		for _, name := range group {
			r.binding[name] = group
		}
	}
}

func tableDefined(sh *shardingConfig, lower string) bool {
	for _, t := range sh.tables {
		if strings.ToLower(t.name) == lower {
			return true
		}
	}
	return false
}

func (d *decoder) broadcasts(r *Rules, sh *shardingConfig) {
	r.broadcast = map[string]bool{}
	for _, b := range sh.broadcast {
		lower := strings.ToLower(b.name)
		switch {
		case r.Tables[lower] != nil || tableDefined(sh, lower):
			d.errorf(b.node, "broadcast table %s is also a sharded table", b.name)
		case r.broadcast[lower]:
			d.errorf(b.node, "broadcast table %s is listed twice", b.name)
		default:
			r.broadcast[lower] = true
			r.BroadcastTables = append(r.BroadcastTables, lower)
		}
	}
}

// ShardingColumns returns the table's distinct sharding columns: the
// database strategy's, then the table strategy's (lower-case).
func (t *TableRule) ShardingColumns() []string {
	var cols []string
	for _, s := range []*algorithm.Strategy{t.DatabaseStrategy, t.TableStrategy} {
		if s == nil {
			continue
		}
		for _, c := range s.Columns {
			if !slices.Contains(cols, c) {
				cols = append(cols, c)
			}
		}
	}
	return cols
}

// propErrorf is the *algorithm.PropError of a key generator's or a load
// balancer's prop, so the loader reports it at the prop's line as it does
// a sharding algorithm's.
func propErrorf(prop, format string, args ...any) error {
	return &algorithm.PropError{Prop: prop, Reason: fmt.Sprintf(format, args...)}
}
