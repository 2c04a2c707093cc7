package config

import (
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// readwriteGroupKeys are the keys of one dataSourceGroups entry:
// ShardingSphere 5.4's, then shardflake's own.
func readwriteGroupKeys() []string {
	return []string{"writeDataSourceName", "readDataSourceNames", "transactionalReadQueryStrategy", "loadBalancerName",
		"maxReplicationLag", "whenNoReplica", "causalReads", "causalTimeout", "causalWindow"}
}

// Defaults of shardflake's group keys.
const (
	defaultCausalTimeout = 100 * time.Millisecond
	defaultCausalWindow  = 5 * time.Second
)

// readwrite decodes the !READWRITE_SPLITTING rule and turns the data
// sources: each group takes the place of its write data source in
// r.DataSources (under the group's name, with the primary's connection
// settings), and the group's members leave the list, so that the rest of
// the rules, and broadcast writes, see one data source per group.
func (d *decoder) readwrite(r *Rules, n *yaml.Node) {
	if n == nil {
		return
	}
	f := d.fields(n, "!READWRITE_SPLITTING", "dataSourceGroups", "loadBalancers", "dataSources")
	if f == nil {
		return
	}
	if f.has("dataSources") {
		d.errorf(f.keyNode("dataSources"), "!READWRITE_SPLITTING dataSources is ShardingSphere 5.3's form; 5.4 calls it dataSourceGroups (with writeDataSourceName, readDataSourceNames, transactionalReadQueryStrategy, loadBalancerName)")
		return
	}
	lbs := map[string]*rawAlgorithm{}
	for _, a := range d.algorithms(f.get("loadBalancers"), "loadBalancers") {
		if loadBalancerTypes[a.typ] == nil {
			d.errorf(a.typNode, "load balancer %s: unknown type %s; supported: %s", a.name, a.typ, loadBalancerTypeNames())
			continue
		}
		lbs[a.name] = a
	}
	groups := d.fields(f.get("dataSourceGroups"), "!READWRITE_SPLITTING dataSourceGroups")
	if groups == nil || len(groups.order) == 0 {
		d.errorf(f.keyNode("dataSourceGroups"), "!READWRITE_SPLITTING needs dataSourceGroups: at least one group with writeDataSourceName and readDataSourceNames")
		return
	}
	member := map[string]string{} // data source -> group
	usedLB := map[string]bool{}
	for _, name := range groups.order {
		g := d.group(r, name, groups.keys[name], groups.vals[name], lbs, member)
		if g == nil {
			continue
		}
		usedLB[g.LoadBalancer.Name] = true
		r.ReadwriteGroups = append(r.ReadwriteGroups, *g)
	}
	for name, a := range lbs {
		if !usedLB[name] {
			d.warnf(a.node, "load balancer %s is named by no dataSourceGroups entry", name)
		}
	}
	if len(d.errs) > 0 {
		return
	}
	var dss []DataSource
	for _, ds := range r.DataSources {
		gname, in := member[ds.Name]
		if !in {
			dss = append(dss, ds)
			continue
		}
		if g := r.ReadwriteGroup(gname); g.Primary.Name == ds.Name {
			gds := ds
			gds.Name = g.Name
			dss = append(dss, gds)
		}
	}
	r.DataSources = dss
	r.dsByName = map[string]*DataSource{}
	for i := range r.DataSources {
		r.dsByName[r.DataSources[i].Name] = &r.DataSources[i]
	}
	r.groupMember = member
}

// group decodes one dataSourceGroups entry.
func (d *decoder) group(r *Rules, name string, key, n *yaml.Node, lbs map[string]*rawAlgorithm, member map[string]string) *ReadwriteGroup {
	what := "readwrite group " + name
	f := d.fields(n, what, readwriteGroupKeys()...)
	if f == nil {
		return nil
	}
	nerr := len(d.errs)
	g := &ReadwriteGroup{Name: name, Line: key.Line}
	if r.dsByName[name] != nil {
		d.errorf(key, "%s has the name of a data source; the group is the data source the other rules name, so give it its own name (e.g. readwrite_%s)", what, name)
	}
	claim := func(ds string, n *yaml.Node) *DataSource {
		src := r.dsByName[ds]
		switch {
		case src == nil:
			d.errorf(n, "%s: data source %q is not in dataSources", what, ds)
		case member[ds] != "":
			d.errorf(n, "%s: data source %s is already in group %s; a data source belongs to one group", what, ds, member[ds])
		default:
			member[ds] = name
			return src
		}
		return nil
	}
	primary := d.str(f.get("writeDataSourceName"), what+" writeDataSourceName")
	if primary == "" {
		d.errorf(f.keyNode("writeDataSourceName"), "%s: writeDataSourceName is required", what)
	} else if src := claim(primary, f.get("writeDataSourceName")); src != nil {
		g.Primary = *src
	}
	names, nodes := d.strList(f.get("readDataSourceNames"), what+" readDataSourceNames")
	if len(names) == 0 {
		d.errorf(f.keyNode("readDataSourceNames"), "%s: readDataSourceNames needs at least one replica", what)
	}
	for i, rn := range names {
		if src := claim(rn, nodes[i]); src != nil {
			g.Replicas = append(g.Replicas, Replica{DataSource: *src, Weight: 1})
		}
	}
	g.TransactionalReads = TransactionalDynamic
	if s := d.str(f.get("transactionalReadQueryStrategy"), what+" transactionalReadQueryStrategy"); s != "" {
		i := slices.Index([]string{"DYNAMIC", "FIXED", "PRIMARY"}, strings.ToUpper(s))
		if i < 0 {
			d.errorf(f.get("transactionalReadQueryStrategy"), "%s: transactionalReadQueryStrategy %q: want PRIMARY, FIXED or DYNAMIC", what, s)
		}
		g.TransactionalReads = TransactionalReads(i + 1)
	}
	g.LoadBalancer = LoadBalancerConfig{Name: "", Type: "ROUND_ROBIN"}
	if lbName := d.str(f.get("loadBalancerName"), what+" loadBalancerName"); lbName != "" {
		a := lbs[lbName]
		if a == nil {
			d.errorf(f.get("loadBalancerName"), "%s: loadBalancerName %q is not defined in loadBalancers", what, lbName)
		} else {
			g.LoadBalancer = LoadBalancerConfig{Name: lbName, Type: a.typ, Props: a.props}
			if len(d.errs) == nerr {
				if _, weights, err := loadBalancerTypes[a.typ](a.props, g.replicaNames()); err != nil {
					d.propError(a, "load balancer", err)
				} else {
					for i, w := range weights {
						g.Replicas[i].Weight = w
					}
				}
			}
		}
	}
	g.MaxReplicationLag = d.duration(f.get("maxReplicationLag"), what+" maxReplicationLag", 0)
	g.WhenNoReplica = NoReplicaPrimary
	if s := d.str(f.get("whenNoReplica"), what+" whenNoReplica"); s != "" {
		switch strings.ToUpper(s) {
		case "PRIMARY":
		case "FAIL":
			g.WhenNoReplica = NoReplicaFail
		default:
			d.errorf(f.get("whenNoReplica"), "%s: whenNoReplica %q: want PRIMARY (read from the primary) or FAIL (refuse the read)", what, s)
		}
	}
	g.CausalReads = CausalSession
	if s := d.str(f.get("causalReads"), what+" causalReads"); s != "" {
		i := slices.Index([]string{"SESSION", "USER", "OFF"}, strings.ToUpper(s))
		if i < 0 {
			d.errorf(f.get("causalReads"), "%s: causalReads %q: want SESSION, USER or OFF", what, s)
		}
		g.CausalReads = CausalScope(i + 1)
	}
	g.CausalTimeout = d.duration(f.get("causalTimeout"), what+" causalTimeout", defaultCausalTimeout)
	g.CausalWindow = d.duration(f.get("causalWindow"), what+" causalWindow", defaultCausalWindow)
	if len(d.errs) > nerr {
		return nil
	}
	return g
}

// groupMemberError is the message for a data node that names a member of
// a readwrite group instead of the group; "" when ds is in no group.
func (r *Rules) groupMemberError(ds string) string {
	if g := r.groupMember[ds]; g != "" {
		return "data source " + ds + " is in readwrite group " + g + "; name the group (" + g + ") instead"
	}
	return ""
}
