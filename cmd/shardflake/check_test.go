package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestCheckSkewed(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := runCheck([]string{"--config", "../../config/testdata/rules/skewed.yaml"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d, want 0 (warnings allowed); stderr:\n%s", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"skewed.yaml: valid: database skew_db, 4 data sources",
		"skewed.yaml:18:24: table t_order: 24 of 32 data nodes are reached by no sampled value of order_id",
		"ds_0: t_order_0, t_order_1, t_order_2, t_order_3, t_order_4, t_order_5, t_order_6, t_order_7",
		"simulated distribution of 100000 rows (order_id: keys of SNOWFLAKE generator snowflake (datacenter 0, worker 1), one every 1ms of simulated time)",
		"warning: 24 of 32 data nodes get no rows (8 reached): ds_0.t_order_1,",
		"warning: ds_0.t_order_0 gets ",
		"more than twice its share of 3125",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`ds_0\.t_order_1 +0 +0\.0%`).MatchString(out) {
		t.Errorf("ds_0.t_order_1 should get 0 rows:\n%s", out)
	}
	// The 8 reached data nodes share the rows: each gets about 12500.
	if !regexp.MustCompile(`ds_0\.t_order_0 +1[12]\d\d\d +1[12]\.\d%`).MatchString(out) {
		t.Errorf("ds_0.t_order_0 should get about 12500 rows:\n%s", out)
	}
}

func TestCheckExample(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := runCheck([]string{"--config", "../../rules.example.yaml", "--rows", "20000"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"valid: database sharding_db, 2 data sources, 2 sharded tables, 1 broadcast table\n",
		"table t_order: 8 data nodes",
		"database strategy: standard on user_id, algorithm db_inline (INLINE ds_${user_id % 2})",
		"key: order_id from key generator snowflake",
		"user_id: uniformly random values",
		"binding group (joined data node by data node): t_order, t_order_item",
		"broadcast tables (on every data source): t_dict",
		"\nwarnings: 0\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "warning:") {
		t.Errorf("unexpected warning:\n%s", out)
	}
}

func TestCheckInvalid(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yaml")
	bad := "databaseName: db\ndataSources:\n  ds_0: {url: \"mysql://h/d\"}\nrules:\n- !SHARDING\n  tables:\n    t: {actualDataNodes: ds_9.t}\n"
	if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := runCheck([]string{"--config", path}, &stdout, &stderr); code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if want := path + ":7:"; !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), "data source ds_9 is not in dataSources") {
		t.Errorf("stderr lacks %q and the cause:\n%s", want, stderr.String())
	}
}

// TestCheckHints checks the did-you-mean of two YAML slips the check
// command meets: a flow list of binding tables, and an unquoted inline
// expression in a flow map.
func TestCheckHints(t *testing.T) {
	const head = "databaseName: db\ndataSources:\n  ds_0: {url: \"mysql://h/d\"}\n  ds_1: {url: \"mysql://h/e\"}\nrules:\n- !SHARDING\n  tables:\n"
	tests := []struct {
		name string
		give string
		want string
	}{
		{"binding flow list", head + "    a: {actualDataNodes: \"ds_${0..1}.a\", databaseStrategy: {standard: {shardingColumn: k, shardingAlgorithmName: m}}}\n" +
			"    b: {actualDataNodes: \"ds_${0..1}.b\", databaseStrategy: {standard: {shardingColumn: k, shardingAlgorithmName: m}}}\n" +
			"  bindingTables: [a,b]\n  shardingAlgorithms:\n    m: {type: MOD, props: {sharding-count: 2}}\n",
			`:10:19: bindingTables [a, b] is a list of 2 groups of one table each, and a binding group needs at least two tables: did you mean one group, written as the list entry "- a,b"`},
		{"unquoted flow expression", head + "    a: {actualDataNodes: ds_${0..1}.a}\n", ":8: inline expression ${0..1} unquoted inside { } or [ ]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "rules.yaml")
			if err := os.WriteFile(path, []byte(tt.give), 0o600); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			if code := runCheck([]string{"--config", path}, &stdout, &stderr); code != 1 {
				t.Fatalf("exit %d, want 1\n%s", code, stderr.String())
			}
			if !strings.Contains(stderr.String(), path+tt.want) {
				t.Errorf("stderr lacks %q:\n%s", path+tt.want, stderr.String())
			}
		})
	}
}

func TestCheckUsage(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--help"}, 0, "Usage: shardflake check --config FILE"},
		{nil, 2, "Usage: shardflake check --config FILE"},
		{[]string{"--config"}, 2, "flag needs an argument"},
		{[]string{"--config", "x.yaml", "extra"}, 2, "Usage:"},
		{[]string{"--config", "x.yaml", "--key-interval", "0s"}, 2, "Usage:"},
		{[]string{"--config", "does-not-exist.yaml"}, 1, "no such file"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		if code := runCheck(tt.args, &stdout, &stderr); code != tt.code || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("check %q: exit %d, stderr %q; want exit %d with %q", tt.args, code, stderr.String(), tt.code, tt.want)
		}
	}
}

// TestCheckTouchesNoState: check builds the key generator on a simulated
// clock without reading or writing its state file or contacting etcd.
func TestCheckTouchesNoState(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "hw.state")
	rules := `databaseName: db
dataSources:
  ds_0: {url: "mysql://h/ds_0"}
  ds_1: {url: "mysql://h/ds_1"}
rules:
- !SHARDING
  tables:
    t_a:
      actualDataNodes: ds_${0..1}.t_a_${0..1}
      databaseStrategy: {standard: {shardingColumn: id, shardingAlgorithmName: db}}
      tableStrategy: {standard: {shardingColumn: id, shardingAlgorithmName: tb}}
      keyGenerateStrategy: {column: id, keyGeneratorName: file}
    t_b:
      actualDataNodes: ds_${0..1}.t_b
      databaseStrategy: {standard: {shardingColumn: id, shardingAlgorithmName: db}}
      keyGenerateStrategy: {column: id, keyGeneratorName: lease}
  shardingAlgorithms:
    db: {type: MOD, props: {sharding-count: 2}}
    tb: {type: INLINE, props: {algorithm-expression: "t_a_${id.intdiv(2) % 2}"}}
  keyGenerators:
    file: {type: SNOWFLAKE, props: {worker-id: 2, state-file: "` + state + `"}}
    lease: {type: SNOWFLAKE, props: {worker-id-source: etcd, etcd-endpoints: "127.0.0.1:1"}}
`
	path := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(path, []byte(rules), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := runCheck([]string{"--config", path, "--rows", "4000"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s\nstdout:\n%s", code, stderr.String(), stdout.String())
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("check touched the state file: %v", err)
	}
	out := stdout.String()
	for _, want := range []string{"generator file (datacenter 0, worker 2)", "generator lease (datacenter 0, worker 0)", "\nwarnings: 1\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
