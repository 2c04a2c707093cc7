package proxy

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/internal/etcdtest"
)

// joinTestFleet starts an etcd, seeds it with src (srv's rules) and makes
// srv a member of a fleet on it; it returns a client and the rules key.
func joinTestFleet(t *testing.T, srv *Server, rules *config.Rules, src []byte) (*clientv3.Client, string) {
	t.Helper()
	etcd := etcdtest.New(t)
	etcd.Start()
	c := &config.Cluster{Endpoints: []string{etcd.Endpoint()}, Prefix: "/sf-test", LeaseTTL: 2 * time.Second, DialTimeout: 5 * time.Second, NodeID: "test"}
	parse := func(src []byte, name string) (*config.Rules, error) {
		r, err := config.Parse(src, name)
		if err == nil {
			err = r.CheckServe()
		}
		return r, err
	}
	f, err := DialFleet(c, parse, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if _, _, err := f.Rules(context.Background(), rules, src); err != nil {
		t.Fatal(err)
	}
	if err := f.Join(srv, "127.0.0.1:1", ""); err != nil {
		t.Fatal(err)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{etcd.Endpoint()}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli, c.RulesKey()
}
