package config

import (
	"net"
	"net/url"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Cluster is server.cluster: the proxy runs in a fleet whose rules live
// in etcd. Present means cluster mode; nil means standalone (the rules
// file is the rules).
//
//	server:
//	  cluster:
//	    endpoints: [http://127.0.0.1:2379]
//	    prefix: /shardflake/sharding_db   # default /shardflake/<databaseName>
//	    leaseTTL: 5s                      # membership lease (default 5s)
//	    nodeId: p1                        # default host-pid
//	    advertise: 10.0.0.5:3307          # MySQL address others are told (default listen)
//	    advertiseAdmin: 10.0.0.5:9307     # HTTP address others are told (default metricsListen)
//
// The rules are the text under <prefix>/rules; a proxy that finds the key
// empty seeds it with its own file. listen, metricsListen and cluster
// stay each proxy's own: they are read from the local file and override
// the copy in etcd.
type Cluster struct {
	Endpoints      []string
	Prefix         string
	LeaseTTL       time.Duration
	DialTimeout    time.Duration
	NodeID         string
	Advertise      string
	AdvertiseAdmin string
}

// Cluster defaults.
const (
	DefaultClusterLeaseTTL    = 5 * time.Second
	DefaultClusterDialTimeout = 5 * time.Second
)

// RulesKey is the etcd key that holds the fleet's rules file.
func (c *Cluster) RulesKey() string { return c.Prefix + "/rules" }

func (d *decoder) cluster(r *Rules, n *yaml.Node) {
	f := d.fields(n, "server.cluster", "endpoints", "prefix", "leaseTTL", "dialTimeout", "nodeId", "advertise", "advertiseAdmin")
	if f == nil {
		return
	}
	c := &Cluster{}
	eps, nodes := d.strList(f.get("endpoints"), "server.cluster.endpoints")
	if len(eps) == 0 {
		d.errorf(f.keyNode("endpoints"), "server.cluster.endpoints is required: the etcd client URLs the fleet shares (http://host:2379)")
	}
	for i, ep := range eps {
		u, err := url.Parse(ep)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			d.errorf(nodes[i], "server.cluster.endpoints: %q is not an etcd client URL (http://host:port)", ep)
		}
	}
	c.Endpoints = eps
	c.Prefix = strings.TrimRight(d.str(f.get("prefix"), "server.cluster.prefix"), "/")
	if c.Prefix == "" {
		c.Prefix = "/shardflake/" + r.DatabaseName
	}
	if !strings.HasPrefix(c.Prefix, "/") {
		d.errorf(f.get("prefix"), "server.cluster.prefix %q must start with /", c.Prefix)
	}
	c.LeaseTTL = d.duration(f.get("leaseTTL"), "server.cluster.leaseTTL", DefaultClusterLeaseTTL)
	if c.LeaseTTL < time.Second || c.LeaseTTL%time.Second != 0 {
		d.errorf(f.get("leaseTTL"), "server.cluster.leaseTTL must be whole seconds, at least 1s (etcd leases count seconds), got %s", c.LeaseTTL)
	}
	c.DialTimeout = d.duration(f.get("dialTimeout"), "server.cluster.dialTimeout", DefaultClusterDialTimeout)
	c.NodeID = d.str(f.get("nodeId"), "server.cluster.nodeId")
	if strings.ContainsAny(c.NodeID, "/ \t\n") {
		d.errorf(f.get("nodeId"), "server.cluster.nodeId %q must not hold / or spaces (it names an etcd key)", c.NodeID)
	}
	c.Advertise = d.clusterAddress(f, "advertise")
	c.AdvertiseAdmin = d.clusterAddress(f, "advertiseAdmin")
	r.Server.Cluster = c
}

// clusterAddress reads an optional host:port of server.cluster.
func (d *decoder) clusterAddress(f *fieldSet, key string) string {
	a := d.str(f.get(key), "server.cluster."+key)
	if a == "" {
		return ""
	}
	if host, port, err := net.SplitHostPort(a); err != nil || host == "" || port == "" {
		d.errorf(f.get(key), "server.cluster.%s must be host:port, got %q", key, a)
	}
	return a
}
