package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/proxy"
	"github.com/shardflake/shardflake/proxy/metrics"
)

// clusterRules starts a proxy whose rules file has server.cluster: it
// connects to the fleet's etcd and returns the rules there (seeding the
// key with the local file when it is empty), with this proxy's own
// settings (listen, metricsListen, cluster: from the local file and the
// flags) put over the shared ones. The fleet is joined once the
// listeners are open (serve).
func clusterRules(ctx context.Context, local *config.Rules, o *serveOptions) (*config.Rules, *proxy.Fleet, error) {
	src, err := os.ReadFile(local.File)
	if err != nil {
		return nil, nil, err
	}
	localize := func(r *config.Rules) {
		r.Server.Listen = local.Server.Listen
		r.Server.MetricsListen = local.Server.MetricsListen
		r.Server.Cluster = local.Server.Cluster
	}
	parse := func(src []byte, name string) (*config.Rules, error) {
		r, err := config.Parse(src, name)
		if err == nil {
			err = r.CheckServe()
		}
		if err != nil {
			return nil, err
		}
		localize(r)
		return r, nil
	}
	fleet, err := proxy.DialFleet(local.Server.Cluster, parse, o.log)
	if err != nil {
		return nil, nil, err
	}
	rules, shared, err := fleet.Rules(ctx, local, src)
	if err != nil {
		fleet.Close()
		return nil, nil, err
	}
	o.rulesSource = shared
	if o.reload != nil {
		// SIGHUP and RELOAD RULES read the local file, with this proxy's
		// settings, and share it with the fleet once applied here.
		load := o.reload
		o.reload = func() (*config.Rules, []byte, error) {
			r, b, err := load()
			if err != nil {
				return nil, nil, err
			}
			localize(r)
			return r, b, nil
		}
	}
	return rules, fleet, nil
}

// joinCluster makes the running proxy a member of the fleet.
func joinCluster(fleet *proxy.Fleet, srv *proxy.Server, obs *metrics.Metrics, mysqlAddr, adminAddr string) error {
	if err := fleet.Join(srv, mysqlAddr, adminAddr); err != nil {
		return err
	}
	if err := fleet.RegisterMetrics(obs.Registry()); err != nil {
		return fmt.Errorf("cluster metrics: %w", err)
	}
	return nil
}

// clusterFlags override server.cluster's per-proxy settings, for
// deployments where one rules file (a ConfigMap) serves every proxy.
type clusterFlags struct {
	nodeID, advertise, advertiseAdmin *string
}

func addClusterFlags(fs *flag.FlagSet) clusterFlags {
	return clusterFlags{
		nodeID:         fs.String("node-id", "", "the proxy's id in the fleet; overrides server.cluster.nodeId (default host-pid)"),
		advertise:      fs.String("advertise", "", "the MySQL address the fleet is told (SHOW COMPUTE NODES); overrides server.cluster.advertise"),
		advertiseAdmin: fs.String("advertise-admin", "", "the /metrics and /readyz address the fleet is told; overrides server.cluster.advertiseAdmin"),
	}
}

// apply puts the flags over rules' cluster section; they need one.
func (f clusterFlags) apply(rules *config.Rules) error {
	if *f.nodeID == "" && *f.advertise == "" && *f.advertiseAdmin == "" {
		return nil
	}
	c := rules.Server.Cluster
	if c == nil {
		return errors.New("--node-id, --advertise and --advertise-admin need a server.cluster section in the rules file")
	}
	if *f.nodeID != "" {
		c.NodeID = *f.nodeID
	}
	if *f.advertise != "" {
		c.Advertise = *f.advertise
	}
	if *f.advertiseAdmin != "" {
		c.AdvertiseAdmin = *f.advertiseAdmin
	}
	return nil
}
