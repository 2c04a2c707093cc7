package config

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestServerCluster: server.cluster decodes with its defaults, and its
// mistakes are errors naming the key.
func TestServerCluster(t *testing.T) {
	users := "server:\n  users: [{user: app, password: pw}]\n"
	tests := []struct {
		name    string
		give    string
		want    *Cluster
		wantErr string
	}{
		{name: "absent", give: ""},
		{name: "defaults", give: "  cluster: {endpoints: [http://127.0.0.1:2379]}\n",
			want: &Cluster{Endpoints: []string{"http://127.0.0.1:2379"}, Prefix: "/shardflake/db", LeaseTTL: 5 * time.Second, DialTimeout: 5 * time.Second}},
		{name: "all", give: "  cluster: {endpoints: [http://a:2379, https://b:2379], prefix: /sf/x/, leaseTTL: 3s, dialTimeout: 1s, nodeId: p1, advertise: '10.0.0.5:3307', advertiseAdmin: '10.0.0.5:9307'}\n",
			want: &Cluster{Endpoints: []string{"http://a:2379", "https://b:2379"}, Prefix: "/sf/x", LeaseTTL: 3 * time.Second, DialTimeout: time.Second, NodeID: "p1", Advertise: "10.0.0.5:3307", AdvertiseAdmin: "10.0.0.5:9307"}},
		{name: "no endpoints", give: "  cluster: {prefix: /x}\n", wantErr: "server.cluster.endpoints is required"},
		{name: "bad endpoint", give: "  cluster: {endpoints: [127.0.0.1:2379]}\n", wantErr: "is not an etcd client URL"},
		{name: "relative prefix", give: "  cluster: {endpoints: [http://a:2379], prefix: sf}\n", wantErr: "must start with /"},
		{name: "lease in ms", give: "  cluster: {endpoints: [http://a:2379], leaseTTL: 1500ms}\n", wantErr: "whole seconds"},
		{name: "node id with slash", give: "  cluster: {endpoints: [http://a:2379], nodeId: a/b}\n", wantErr: "must not hold /"},
		{name: "bad advertise", give: "  cluster: {endpoints: [http://a:2379], advertise: nowhere}\n", wantErr: "server.cluster.advertise must be host:port"},
		{name: "unknown key", give: "  cluster: {endpoints: [http://a:2379], ttl: 5s}\n", wantErr: `unknown key "ttl" in server.cluster`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Parse([]byte(edit(t, users, users+tt.give)), "rules.yaml")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(r.Server.Cluster, tt.want) {
				t.Fatalf("cluster = %+v, want %+v", r.Server.Cluster, tt.want)
			}
		})
	}
}
