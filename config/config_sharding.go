package config

import (
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/shardflake/shardflake/algorithm"
)

// shardingConfig is the !SHARDING, !BROADCAST and !SINGLE rules as
// written, with the YAML nodes errors point at. build turns it into Rules.
type shardingConfig struct {
	node              *yaml.Node
	readwrite         *yaml.Node // the !READWRITE_SPLITTING rule
	tables            []*rawTable
	bindings          []rawBinding
	groupNodes        []*yaml.Node // per Rules.BindingGroups entry
	broadcast         []rawName
	defaultDB         *rawStrategy
	defaultTable      *rawStrategy
	defaultKey        *rawKeyGen
	defaultColumn     string
	algorithms        []*rawAlgorithm
	keyGenerators     []*rawAlgorithm
	singleDefault     string
	singleDefaultNode *yaml.Node
	// bindingFlow is set when bindingTables is a flow list of single
	// table names ([t_order, t_order_item]): groups of one table each,
	// most likely meant as one group. It holds the group as it should be
	// written.
	bindingFlow string
}

type rawName struct {
	name string
	node *yaml.Node
}

type rawBinding struct {
	tables []string
	node   *yaml.Node
}

// rawStrategy is one databaseStrategy/tableStrategy/shardingStrategy.
type rawStrategy struct {
	node     *yaml.Node
	none     bool
	kind     algorithm.StrategyKind
	columns  []string // as written; several for complex
	colNode  *yaml.Node
	algName  string
	algNode  *yaml.Node
	fromFile string // "tables.t_order.databaseStrategy", for messages
}

type rawKeyGen struct {
	node    *yaml.Node
	column  string
	gen     string
	genNode *yaml.Node
}

type rawTable struct {
	name        string
	node        *yaml.Node
	auto        bool
	nodes       string // actualDataNodes, or autoTables' actualDataSources
	nodesNode   *yaml.Node
	db, table   *rawStrategy // nil: the default applies
	key         *rawKeyGen
	hasKeyBlock bool
}

// rawAlgorithm is a shardingAlgorithms, keyGenerators or auditors entry.
type rawAlgorithm struct {
	name      string
	node      *yaml.Node
	typ       string
	typNode   *yaml.Node
	props     map[string]string
	propNodes map[string]*yaml.Node
}

// rules decodes the rules: list.
func (d *decoder) rules(r *Rules, n *yaml.Node) *shardingConfig {
	sh := &shardingConfig{}
	n = resolve(n)
	if n == nil || isNull(n) {
		return sh
	}
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, "rules must be a list of tagged rules (- !SHARDING ...)")
		return sh
	}
	seen := map[string]bool{}
	for _, it := range n.Content {
		it = resolve(it)
		tag := it.Tag
		if seen[tag] && strings.HasPrefix(tag, "!") && !strings.HasPrefix(tag, "!!") {
			d.errorf(it, "rule %s appears twice; merge them into one", tag)
			continue
		}
		seen[tag] = true
		switch tag {
		case "!SHARDING":
			sh.node = it
			d.sharding(sh, it)
		case "!BROADCAST":
			f := d.fields(it, "!BROADCAST", "tables")
			names, nodes := d.strList(f.get("tables"), "!BROADCAST tables")
			for i, name := range names {
				sh.broadcast = append(sh.broadcast, rawName{name, nodes[i]})
			}
		case "!SINGLE":
			d.single(sh, it)
		case "!READWRITE_SPLITTING":
			sh.readwrite = it
		case "!!map", "":
			d.errorf(it, "a rules item needs a tag: - !SHARDING or - !BROADCAST")
		default:
			d.errorf(it, "rule %s is not supported by shardflake (supported: !SHARDING, !BROADCAST, !SINGLE, !READWRITE_SPLITTING)", tag)
		}
	}
	return sh
}

// single decodes 5.4's !SINGLE rule: its defaultDataSource is honoured;
// tables may only use wildcards, since shardflake routes every table
// without a rule to the default data source.
func (d *decoder) single(sh *shardingConfig, n *yaml.Node) {
	f := d.fields(n, "!SINGLE", "tables", "defaultDataSource")
	if f == nil {
		return
	}
	sh.singleDefault = d.str(f.get("defaultDataSource"), "!SINGLE defaultDataSource")
	sh.singleDefaultNode = f.get("defaultDataSource")
	names, nodes := d.strList(f.get("tables"), "!SINGLE tables")
	for i, name := range names {
		if !strings.HasSuffix(name, ".*") {
			d.errorf(nodes[i], "!SINGLE table %q: shardflake loads single tables by wildcard only (*.* or ds.*); a table without a rule lives on the default data source", name)
		}
	}
}

// shardingKeys are the keys of the !SHARDING rule.
func shardingKeys() []string {
	return []string{"tables", "autoTables", "bindingTables", "broadcastTables",
		"defaultDatabaseStrategy", "defaultTableStrategy", "defaultKeyGenerateStrategy",
		"defaultShardingColumn", "shardingAlgorithms", "keyGenerators",
		"auditors", "defaultAuditStrategy", "shardingCache"}
}

func (d *decoder) sharding(sh *shardingConfig, n *yaml.Node) {
	f := d.fields(n, "!SHARDING", shardingKeys()...)
	if f == nil {
		return
	}
	if tables := d.fields(f.get("tables"), "!SHARDING tables"); tables != nil {
		for _, name := range tables.order {
			d.table(sh, name, tables.keys[name], tables.vals[name], false)
		}
	}
	if tables := d.fields(f.get("autoTables"), "!SHARDING autoTables"); tables != nil {
		for _, name := range tables.order {
			d.table(sh, name, tables.keys[name], tables.vals[name], true)
		}
	}
	refs, refNodes := d.strList(f.get("bindingTables"), "bindingTables")
	if n := resolve(f.get("bindingTables")); n != nil && n.Kind == yaml.SequenceNode && n.Style&yaml.FlowStyle != 0 && len(refs) > 1 {
		single := true
		for _, ref := range refs {
			single = single && !strings.ContainsAny(ref, ",:")
		}
		if single {
			sh.bindingFlow = strings.Join(refs, ",")
		}
	}
	for i, ref := range refs {
		// 5.4 allows a named group, "name:t_order,t_order_item".
		if j := strings.IndexByte(ref, ':'); j >= 0 {
			ref = ref[j+1:]
		}
		var group []string
		for _, t := range strings.Split(ref, ",") {
			if t = strings.TrimSpace(t); t != "" {
				group = append(group, t)
			}
		}
		sh.bindings = append(sh.bindings, rawBinding{group, refNodes[i]})
	}
	names, nodes := d.strList(f.get("broadcastTables"), "broadcastTables")
	for i, name := range names {
		sh.broadcast = append(sh.broadcast, rawName{name, nodes[i]})
	}
	sh.defaultDB = d.strategy(f.get("defaultDatabaseStrategy"), "defaultDatabaseStrategy")
	sh.defaultTable = d.strategy(f.get("defaultTableStrategy"), "defaultTableStrategy")
	if f.has("defaultKeyGenerateStrategy") {
		sh.defaultKey = d.keyGen(f.get("defaultKeyGenerateStrategy"), "defaultKeyGenerateStrategy")
	}
	sh.defaultColumn = d.str(f.get("defaultShardingColumn"), "defaultShardingColumn")
	sh.algorithms = d.algorithms(f.get("shardingAlgorithms"), "shardingAlgorithms")
	sh.keyGenerators = d.algorithms(f.get("keyGenerators"), "keyGenerators")
	if f.has("auditors") || f.has("defaultAuditStrategy") {
		d.algorithms(f.get("auditors"), "auditors")
		d.auditStrategy(f.get("defaultAuditStrategy"), "defaultAuditStrategy")
		k := "auditors"
		if !f.has(k) {
			k = "defaultAuditStrategy"
		}
		d.warnf(f.keyNode(k), "auditors and audit strategies are accepted and ignored: shardflake does not block statements without a sharding condition")
	}
	if f.has("shardingCache") {
		d.fields(f.get("shardingCache"), "shardingCache", "allowedMaxSqlLength", "routeCache")
		d.warnf(f.keyNode("shardingCache"), "shardingCache is ignored: shardflake caches plans per prepared statement")
	}
}

func (d *decoder) table(sh *shardingConfig, name string, key, n *yaml.Node, auto bool) {
	what := "table " + name
	known := []string{"actualDataNodes", "databaseStrategy", "tableStrategy", "keyGenerateStrategy", "auditStrategy"}
	if auto {
		known = []string{"actualDataSources", "shardingStrategy", "keyGenerateStrategy", "auditStrategy"}
	}
	f := d.fields(n, what, known...)
	if f == nil {
		return
	}
	t := &rawTable{name: name, node: key, auto: auto}
	if auto {
		t.nodes = d.str(f.get("actualDataSources"), what+" actualDataSources")
		t.nodesNode = f.keyNode("actualDataSources")
		if f.get("actualDataSources") != nil {
			t.nodesNode = f.get("actualDataSources")
		}
		t.table = d.strategy(f.get("shardingStrategy"), what+" shardingStrategy")
		if t.table == nil {
			d.errorf(f.keyNode("shardingStrategy"), "autoTables %s: shardingStrategy is required", name)
		}
		t.db = &rawStrategy{none: true, node: key}
	} else {
		t.nodes = d.str(f.get("actualDataNodes"), what+" actualDataNodes")
		t.nodesNode = key
		if f.get("actualDataNodes") != nil {
			t.nodesNode = f.get("actualDataNodes")
		}
		t.db = d.strategy(f.get("databaseStrategy"), what+" databaseStrategy")
		t.table = d.strategy(f.get("tableStrategy"), what+" tableStrategy")
	}
	if f.has("keyGenerateStrategy") {
		t.hasKeyBlock = true
		t.key = d.keyGen(f.get("keyGenerateStrategy"), what+" keyGenerateStrategy")
	}
	if f.has("auditStrategy") {
		d.auditStrategy(f.get("auditStrategy"), what+" auditStrategy")
		d.warnf(f.keyNode("auditStrategy"), "%s: auditStrategy is accepted and ignored", what)
	}
	sh.tables = append(sh.tables, t)
}

// strategy decodes a sharding strategy; nil when n is absent.
func (d *decoder) strategy(n *yaml.Node, what string) *rawStrategy {
	n = resolve(n)
	if n == nil {
		return nil
	}
	f := d.fields(n, what, "standard", "complex", "hint", "none")
	if f == nil {
		return nil
	}
	if len(f.order) != 1 {
		d.errorf(n, "%s needs exactly one of standard, complex, hint or none", what)
		return nil
	}
	s := &rawStrategy{node: n, fromFile: what}
	kind := f.order[0]
	body := f.vals[kind]
	switch kind {
	case "none":
		s.none = true
		if g := d.fields(body, what+" none"); g != nil && len(g.order) > 0 {
			d.errorf(body, "%s: none takes no settings", what)
		}
		return s
	case "standard":
		s.kind = algorithm.StrategyStandard
		g := d.fields(body, what+" standard", "shardingColumn", "shardingAlgorithmName")
		if g == nil {
			return nil
		}
		if c := d.str(g.get("shardingColumn"), what+" shardingColumn"); c != "" {
			s.columns = []string{c}
		}
		s.colNode = g.keyNode("shardingColumn")
		s.algName = d.str(g.get("shardingAlgorithmName"), what+" shardingAlgorithmName")
		s.algNode = g.keyNode("shardingAlgorithmName")
	case "complex":
		s.kind = algorithm.StrategyComplex
		g := d.fields(body, what+" complex", "shardingColumns", "shardingAlgorithmName")
		if g == nil {
			return nil
		}
		for _, c := range strings.Split(d.str(g.get("shardingColumns"), what+" shardingColumns"), ",") {
			if c = strings.TrimSpace(c); c != "" {
				s.columns = append(s.columns, c)
			}
		}
		s.colNode = g.keyNode("shardingColumns")
		if len(s.columns) == 0 {
			d.errorf(s.colNode, "%s: complex needs shardingColumns, e.g. user_id,order_id", what)
		}
		s.algName = d.str(g.get("shardingAlgorithmName"), what+" shardingAlgorithmName")
		s.algNode = g.keyNode("shardingAlgorithmName")
	case "hint":
		s.kind = algorithm.StrategyHint
		g := d.fields(body, what+" hint", "shardingAlgorithmName")
		if g == nil {
			return nil
		}
		s.algName = d.str(g.get("shardingAlgorithmName"), what+" shardingAlgorithmName")
		s.algNode = g.keyNode("shardingAlgorithmName")
	}
	if s.algName == "" {
		d.errorf(s.algNode, "%s: shardingAlgorithmName is required", what)
		return nil
	}
	return s
}

func (d *decoder) keyGen(n *yaml.Node, what string) *rawKeyGen {
	f := d.fields(n, what, "column", "keyGeneratorName")
	if f == nil {
		return nil
	}
	k := &rawKeyGen{node: f.node}
	k.column = d.str(f.get("column"), what+" column")
	k.gen = d.str(f.get("keyGeneratorName"), what+" keyGeneratorName")
	k.genNode = f.keyNode("keyGeneratorName")
	if k.gen == "" {
		d.errorf(k.genNode, "%s: keyGeneratorName is required", what)
		return nil
	}
	return k
}

func (d *decoder) auditStrategy(n *yaml.Node, what string) {
	f := d.fields(n, what, "auditorNames", "allowHintDisable")
	if f == nil {
		return
	}
	d.strList(f.get("auditorNames"), what+" auditorNames")
	d.boolean(f.get("allowHintDisable"), what+" allowHintDisable", false)
}

// algorithms decodes a name -> {type, props} mapping.
func (d *decoder) algorithms(n *yaml.Node, what string) []*rawAlgorithm {
	f := d.fields(n, what)
	if f == nil {
		return nil
	}
	var out []*rawAlgorithm
	for _, name := range f.order {
		g := d.fields(f.vals[name], what+" "+name, "type", "props")
		if g == nil {
			continue
		}
		a := &rawAlgorithm{name: name, node: f.keys[name]}
		a.typ = strings.ToUpper(strings.TrimSpace(d.str(g.get("type"), what+" "+name+" type")))
		a.typNode = g.keyNode("type")
		if g.get("type") != nil {
			a.typNode = g.get("type")
		}
		if a.typ == "" {
			d.errorf(a.typNode, "%s %s: type is required", what, name)
			continue
		}
		a.props, a.propNodes = d.props(g.get("props"), what+" "+name+" props")
		out = append(out, a)
	}
	return out
}
