package config

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shardflake/shardflake/algorithm"
)

// TestLoadReadwriteSplitting loads a ShardingSphere 5.4 file with
// !READWRITE_SPLITTING unchanged: the groups are the data sources the
// sharding rule and the router see, their members are not.
func TestLoadReadwriteSplitting(t *testing.T) {
	r := load(t, "testdata/rules/ss_readwrite_splitting.yaml")
	if got := r.DataSourceNames(); !slices.Equal(got, []string{"readwrite_ds_0", "readwrite_ds_1"}) {
		t.Fatalf("data sources = %q", got)
	}
	if r.DefaultDataSource != "readwrite_ds_0" {
		t.Errorf("default data source = %q", r.DefaultDataSource)
	}
	if ds := r.DataSource("readwrite_ds_1"); ds == nil || ds.Port != 3309 || ds.Database != "demo_primary_ds_1" {
		t.Errorf("readwrite_ds_1 = %+v (want the primary's settings)", ds)
	}
	if r.DataSource("primary_ds_0") != nil || r.DataSource("replica_ds_0_0") != nil {
		t.Errorf("group members are data sources of their own")
	}
	g0, g1 := r.ReadwriteGroup("readwrite_ds_0"), r.ReadwriteGroup("readwrite_ds_1")
	if g0 == nil || g1 == nil || r.ReadwriteGroup("primary_ds_0") != nil {
		t.Fatalf("groups = %+v", r.ReadwriteGroups)
	}
	if g0.Primary.Name != "primary_ds_0" || g0.Primary.Port != 3306 || len(g0.Replicas) != 2 || g0.Replicas[1].Name != "replica_ds_0_1" || g0.Replicas[1].Port != 3308 {
		t.Errorf("group 0 = %+v", g0)
	}
	if g0.TransactionalReads != TransactionalPrimary || g1.TransactionalReads != TransactionalFixed {
		t.Errorf("strategies %s %s", g0.TransactionalReads, g1.TransactionalReads)
	}
	if g0.LoadBalancer.Type != "RANDOM" || g1.LoadBalancer.Type != "WEIGHT" || g1.Replicas[0].Weight != 2 || g1.Replicas[1].Weight != 1 {
		t.Errorf("load balancers %+v %+v, weights %v %v", g0.LoadBalancer, g1.LoadBalancer, g1.Replicas[0].Weight, g1.Replicas[1].Weight)
	}
	if g0.CausalReads != CausalSession || g0.WhenNoReplica != NoReplicaPrimary || g0.CausalTimeout != defaultCausalTimeout || g0.MaxReplicationLag != 0 {
		t.Errorf("defaults: causal %s, no replica %s, timeout %v, lag %v", g0.CausalReads, g0.WhenNoReplica, g0.CausalTimeout, g0.MaxReplicationLag)
	}
	order := r.Table("t_order")
	if got := routeRow(t, order, map[string]algorithm.Value{"user_id": int64(3), "order_id": int64(6)}); !slices.Equal(got, []string{"readwrite_ds_1.t_order_2"}) {
		t.Errorf("t_order user 3 order 6 -> %q", got)
	}
}

func TestReadwriteShardflakeKeys(t *testing.T) {
	src := strings.Replace(readFile(t, "testdata/rules/ss_readwrite_splitting.yaml"),
		"      transactionalReadQueryStrategy: PRIMARY\n",
		"      transactionalReadQueryStrategy: PRIMARY\n      maxReplicationLag: 3s\n      whenNoReplica: FAIL\n      causalReads: USER\n      causalTimeout: 250ms\n      causalWindow: 10s\n", 1)
	r, err := Parse([]byte(src), "rw.yaml")
	if err != nil {
		t.Fatal(err)
	}
	g := r.ReadwriteGroup("readwrite_ds_0")
	if g.MaxReplicationLag != 3*time.Second || g.WhenNoReplica != NoReplicaFail || g.CausalReads != CausalUser || g.CausalTimeout != 250*time.Millisecond || g.CausalWindow != 10*time.Second {
		t.Errorf("group = %+v", g)
	}
}

// TestReadwriteErrors: every mistake is reported with its line.
func TestReadwriteErrors(t *testing.T) {
	base := readFile(t, "testdata/rules/ss_readwrite_splitting.yaml")
	tests := []struct {
		name, old, new, want string
	}{
		{"unknown key", "      loadBalancerName: random\n", "      loadBalancerName: random\n      readWeight: 3\n",
			`rw.yaml:88:7: unknown key "readWeight" in readwrite group readwrite_ds_0`},
		{"unknown replica", "        - replica_ds_0_1\n", "        - replica_ds_0_9\n",
			`rw.yaml:85:11: readwrite group readwrite_ds_0: data source "replica_ds_0_9" is not in dataSources`},
		{"member twice", "        - replica_ds_1_1\n", "        - replica_ds_0_1\n",
			`readwrite group readwrite_ds_1: data source replica_ds_0_1 is already in group readwrite_ds_0`},
		{"strategy", "transactionalReadQueryStrategy: FIXED", "transactionalReadQueryStrategy: SOMETIMES",
			`rw.yaml:93:39: readwrite group readwrite_ds_1: transactionalReadQueryStrategy "SOMETIMES": want PRIMARY, FIXED or DYNAMIC`},
		{"undefined balancer", "loadBalancerName: random", "loadBalancerName: rr",
			`readwrite group readwrite_ds_0: loadBalancerName "rr" is not defined in loadBalancers`},
		{"balancer type", "type: RANDOM", "type: LEAST_LAG",
			`load balancer random: unknown type LEAST_LAG; supported: RANDOM, ROUND_ROBIN, WEIGHT`},
		{"weight missing", "        replica_ds_1_1: 1\n", "",
			`WEIGHT needs a weight for every replica; replica_ds_1_1 has none`},
		{"weight bad", "replica_ds_1_1: 1", "replica_ds_1_1: -1",
			`load balancer weight (WEIGHT): replica_ds_1_1: weight "-1" must be a number above 0`},
		{"member in data nodes", "actualDataNodes: readwrite_ds_${0..1}", "actualDataNodes: primary_ds_${0..1}",
			`data source primary_ds_0 is in readwrite group readwrite_ds_0; name the group (readwrite_ds_0) instead`},
		{"5.3 form", "  dataSourceGroups:\n", "  dataSources:\n",
			`!READWRITE_SPLITTING dataSources is ShardingSphere 5.3's form; 5.4 calls it dataSourceGroups`},
		{"no lag", "      loadBalancerName: random\n", "      loadBalancerName: random\n      maxReplicationLag: soon\n",
			`maxReplicationLag must be a duration such as 10s or 500ms, got "soon"`},
		{"when no replica", "      loadBalancerName: random\n", "      loadBalancerName: random\n      whenNoReplica: WAIT\n",
			`whenNoReplica "WAIT": want PRIMARY (read from the primary) or FAIL (refuse the read)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(base, tt.old) {
				t.Fatalf("test data lacks %q", tt.old)
			}
			_, err := Parse([]byte(strings.Replace(base, tt.old, tt.new, 1)), "rw.yaml")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v\nwant %s", err, tt.want)
			}
		})
	}
}

// TestLoadBalancers: ROUND_ROBIN takes turns, RANDOM and WEIGHT spread
// by weight, and every balancer picks only among the candidates.
func TestLoadBalancers(t *testing.T) {
	r := load(t, "testdata/rules/ss_readwrite_splitting.yaml")
	g0, g1 := *r.ReadwriteGroup("readwrite_ds_0"), r.ReadwriteGroup("readwrite_ds_1")
	g0.LoadBalancer = LoadBalancerConfig{Type: "ROUND_ROBIN"}
	rr := g0.NewLoadBalancer()
	var got []int
	for range 4 {
		got = append(got, rr.Pick([]int{0, 1}))
	}
	if !slices.Equal(got, []int{0, 1, 0, 1}) {
		t.Errorf("round robin = %v", got)
	}
	if p := rr.Pick([]int{1}); p != 1 {
		t.Errorf("round robin over [1] = %d", p)
	}
	w := g1.NewLoadBalancer()
	counts := [2]int{}
	for range 30000 {
		counts[w.Pick([]int{0, 1})]++
	}
	if ratio := float64(counts[0]) / float64(counts[1]); ratio < 1.8 || ratio > 2.2 {
		t.Errorf("weight 2:1 gave %v", counts)
	}
	for range 100 {
		if p := w.Pick([]int{1}); p != 1 {
			t.Fatalf("weight over [1] = %d", p)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPlanAccess: the router marks from the statement's tree whether a
