package proxy

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/internal/etcdtest"
	"github.com/shardflake/shardflake/proxy/metrics"
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

// TestFleetRejoinsAfterLeaseLoss: when etcd loses the membership lease
// (revoked here, as an expiry would), the proxy takes a new one and
// writes its member record and connection-id prefix again; a rules text
// written to etcd is then still applied.
func TestFleetRejoinsAfterLeaseLoss(t *testing.T) {
	e := startReloadEnv(t, "flr", false, envOptions{})
	src, err := os.ReadFile(e.path)
	if err != nil {
		t.Fatal(err)
	}
	cli, key := joinTestFleet(t, e.srv, e.testEnv.rules, src)
	ctx := context.Background()
	member := "/sf-test/members/test"
	resp, err := cli.Get(ctx, member)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("member record: %v %v", resp, err)
	}
	old := clientv3.LeaseID(resp.Kvs[0].Lease)
	if _, err := cli.Revoke(ctx, old); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := cli.Get(ctx, member)
		if err == nil && len(resp.Kvs) == 1 && clientv3.LeaseID(resp.Kvs[0].Lease) != old {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no member record under a new lease 10 s after the old one was revoked")
		}
		time.Sleep(20 * time.Millisecond)
	}
	ids, err := cli.Get(ctx, "/sf-test/connids/", clientv3.WithPrefix())
	if err != nil || len(ids.Kvs) != 1 || string(ids.Kvs[0].Value) != "test" {
		t.Fatalf("connection-id prefixes after rejoining: %v %v", ids, err)
	}
	changed := strings.Replace(string(src), "databaseName: sharding_db", "databaseName: sharding_db\n# changed", 1)
	if _, err := cli.Put(ctx, key, changed); err != nil {
		t.Fatal(err)
	}
	for e.srv.RulesDigest() != metrics.RulesDigest(nil, []byte(changed)) {
		if time.Now().After(deadline) {
			t.Fatal("the rules written to etcd after rejoining are not in force")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
