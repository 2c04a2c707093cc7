package config

import (
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// baseRules is a small valid rules file the validation cases edit.
const baseRules = `databaseName: db
server:
  users: [{user: app, password: pw}]
dataSources:
  ds_0: {url: "jdbc:mysql://127.0.0.1:3306/ds_0", username: root}
  ds_1: {url: "jdbc:mysql://127.0.0.1:3306/ds_1", username: root}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order_${0..3}
      databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: db}}
      tableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: tb}}
      keyGenerateStrategy: {column: order_id, keyGeneratorName: snowflake}
    t_item:
      actualDataNodes: ds_${0..1}.t_item_${0..3}
      databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: db}}
      tableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: item}}
  bindingTables:
    - t_order,t_item
  shardingAlgorithms:
    db: {type: INLINE, props: {algorithm-expression: "ds_${user_id % 2}"}}
    tb: {type: INLINE, props: {algorithm-expression: "t_order_${order_id % 4}"}}
    item: {type: INLINE, props: {algorithm-expression: "t_item_${order_id % 4}"}}
  keyGenerators:
    snowflake: {type: SNOWFLAKE, props: {worker-id: 1}}
- !BROADCAST
  tables: [t_dict]
`

// edit applies old->new replacements (each must match) to baseRules.
func edit(t *testing.T, pairs ...string) string {
	t.Helper()
	s := baseRules
	for i := 0; i+1 < len(pairs); i += 2 {
		if !strings.Contains(s, pairs[i]) {
			t.Fatalf("edit: %q not in baseRules", pairs[i])
		}
		s = strings.Replace(s, pairs[i], pairs[i+1], 1)
	}
	return s
}

// markedLine returns the 1-based line holding the "# ERR" marker.
func markedLine(t *testing.T, doc string) int {
	t.Helper()
	for i, l := range strings.Split(doc, "\n") {
		if strings.Contains(l, "# ERR") {
			return i + 1
		}
	}
	t.Fatalf("no # ERR marker in:\n%s", doc)
	return 0
}

func TestBaseRulesLoad(t *testing.T) {
	r, err := Parse([]byte(baseRules), "base.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Warnings) != 0 {
		t.Errorf("warnings: %v", r.Warnings)
	}
}

func TestValidationErrors(t *testing.T) {
	tests := []struct {
		name string
		doc  func(t *testing.T) string
		want string // substring of the error at the marked line
	}{
		{"unknown top-level key", func(t *testing.T) string {
			return edit(t, "databaseName: db\n", "databaseName: db\ndatabseName: x # ERR\n")
		}, `unknown key "databseName" in the rules file (did you mean databaseName?)`},
		{"unknown data source key", func(t *testing.T) string {
			return edit(t, `username: root}`+"\n", `username: root, maxPoolSise: 5} # ERR`+"\n")
		}, `unknown key "maxPoolSise" in data source ds_0 (did you mean maxPoolSize?)`},
		{"unknown table key", func(t *testing.T) string {
			return edit(t, "      keyGenerateStrategy:", "      keyGenerator: {} # ERR\n      keyGenerateStrategy:")
		}, `unknown key "keyGenerator" in table t_order (known keys: actualDataNodes, databaseStrategy, tableStrategy, keyGenerateStrategy, auditStrategy)`},
		{"unknown strategy key", func(t *testing.T) string {
			return edit(t, "{shardingColumn: order_id, shardingAlgorithmName: tb}}", "{shardingColum: order_id, shardingAlgorithmName: tb}} # ERR")
		}, `unknown key "shardingColum" in table t_order tableStrategy standard (did you mean shardingColumn?)`},
		{"unknown server key", func(t *testing.T) string {
			return edit(t, "server:\n", "server:\n  lisen: 127.0.0.1:1 # ERR\n")
		}, `unknown key "lisen" in server (did you mean listen?)`},
		{"unknown sharding key", func(t *testing.T) string {
			return edit(t, "  bindingTables:", "  bindingTable: [] # ERR\n  bindingTables:")
		}, `unknown key "bindingTable" in !SHARDING (did you mean bindingTables?)`},
		{"duplicate key", func(t *testing.T) string {
			return edit(t, "databaseName: db\n", "databaseName: db\ndatabaseName: db2 # ERR\n")
		}, `key "databaseName" appears twice`},
		{"undefined algorithm", func(t *testing.T) string {
			return edit(t, "shardingAlgorithmName: tb}}", "shardingAlgorithmName: nope}} # ERR")
		}, `shardingAlgorithmName "nope" is not defined in shardingAlgorithms`},
		{"undefined key generator", func(t *testing.T) string {
			return edit(t, "keyGeneratorName: snowflake}", "keyGeneratorName: nope} # ERR")
		}, `keyGeneratorName "nope" is not defined in keyGenerators`},
		{"data source not in dataSources", func(t *testing.T) string {
			return edit(t, "actualDataNodes: ds_${0..1}.t_order_${0..3}", "actualDataNodes: ds_${0..2}.t_order_${0..3} # ERR")
		}, `data source ds_2 is not in dataSources`},
		{"data node without a data source", func(t *testing.T) string {
			return edit(t, "actualDataNodes: ds_${0..1}.t_order_${0..3}", "actualDataNodes: t_order_${0..3} # ERR")
		}, `"t_order_0" is not data_source.table`},
		{"bad actualDataNodes expression", func(t *testing.T) string {
			return edit(t, "actualDataNodes: ds_${0..1}.t_order_${0..3}", "actualDataNodes: ds_${0..1}.t_order_${order_id} # ERR")
		}, `column order_id cannot be used in a list of data nodes`},
		{"bad algorithm expression", func(t *testing.T) string {
			return edit(t, `tb: {type: INLINE, props: {algorithm-expression: "t_order_${order_id % 4}"}}`,
				"tb:\n      type: INLINE\n      props:\n        algorithm-expression: t_order_${order_id.toString()} # ERR")
		}, `sharding algorithm tb (INLINE): algorithm-expression: inline expression "t_order_${order_id.toString()}": method .toString()`},
		{"expression reads another column", func(t *testing.T) string {
			return edit(t, "databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: db}}",
				"databaseStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: db}} # ERR")
		}, `expression "ds_${user_id % 2}" reads user_id, which is not the strategy's sharding column (order_id)`},
		{"expression names a table that does not exist", func(t *testing.T) string {
			return edit(t, "    t_order:\n", "    t_order: # ERR\n", `"t_order_${order_id % 4}"`, `"t_order_${order_id % 8}"`)
		}, `a row with user_id=4, order_id=4 cannot be routed: cannot route order_id = 4 with sharding algorithm tb (INLINE): t_order_${order_id % 8} evaluates to t_order_4, which is not among t_order_0,t_order_1,t_order_2,t_order_3`},
		{"MOD count above the tables", func(t *testing.T) string {
			return edit(t, "    t_order:\n", "    t_order: # ERR\n", `tb: {type: INLINE, props: {algorithm-expression: "t_order_${order_id % 4}"}}`, `tb: {type: MOD, props: {sharding-count: 8}}`)
		}, `a row with user_id=4, order_id=4 reaches no data node`},
		{"no database strategy over two data sources", func(t *testing.T) string {
			return edit(t, "    t_order:\n", "    t_order: # ERR\n", "      databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: db}}\n      tableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: tb}}", "      tableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: tb}}")
		}, `table t_order has no database strategy but 2 data sources (ds_0, ds_1): one row would go to every one of them`},
		{"none database strategy over two data sources", func(t *testing.T) string {
			return edit(t, "    t_order:\n", "    t_order: # ERR\n", "databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: db}}\n      tableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: tb}}", "databaseStrategy: {none: }\n      tableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: tb}}")
		}, `table t_order has no database strategy but 2 data sources`},
		{"no table strategy over four tables", func(t *testing.T) string {
			return edit(t, "    t_item:\n", "    t_item: # ERR\n", "      tableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: item}}\n", "")
		}, `table t_item has no table strategy but 4 tables on ds_0`},
		{"binding tables that shard differently", func(t *testing.T) string {
			return edit(t, "    - t_order,t_item", "    - t_order,t_item # ERR", `"t_item_${order_id % 4}"`, `"t_item_${(order_id + 1) % 4}"`)
		}, `binding tables t_order,t_item do not shard alike: a row with user_id=0, order_id=0 goes to ds_0.t_order_0 (data node 1 of t_order) but to ds_0.t_item_1 (data node 2 of t_item)`},
		{"binding tables with different data nodes", func(t *testing.T) string {
			return edit(t, "    - t_order,t_item", "    - t_order,t_item # ERR", "actualDataNodes: ds_${0..1}.t_item_${0..3}", "actualDataNodes: ds_${0..1}.t_item_${0..1}", `"t_item_${order_id % 4}"`, `"t_item_${order_id % 2}"`)
		}, `binding tables t_order and t_item have different data nodes (8 on ds_0,ds_1 vs 4 on ds_0,ds_1)`},
		{"binding a table without rules", func(t *testing.T) string {
			return edit(t, "    - t_order,t_item", "    - t_order,t_user # ERR")
		}, `bindingTables "t_order,t_user": t_user is not a sharded table`},
		{"broadcast table that is sharded", func(t *testing.T) string {
			return edit(t, "  tables: [t_dict]", "  tables: [t_dict,\n    t_order] # ERR")
		}, `broadcast table t_order is also a sharded table`},
		{"strategy with two kinds", func(t *testing.T) string {
			return edit(t, "tableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: tb}}", "tableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: tb}, none: } # ERR")
		}, `table t_order tableStrategy needs exactly one of standard, complex, hint or none`},
		{"algorithm kind mismatch", func(t *testing.T) string {
			return edit(t, "tableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: tb}}", "tableStrategy: {complex: {shardingColumns: 'order_id,user_id', shardingAlgorithmName: tb}} # ERR")
		}, `algorithm tb (INLINE) cannot serve a complex strategy; it needs standard`},
		{"unknown algorithm type", func(t *testing.T) string {
			return edit(t, `tb: {type: INLINE,`, "tb: {type: INLNE, # ERR\n      ")
		}, `sharding algorithm tb (INLNE): unknown type`},
		{"bad algorithm prop", func(t *testing.T) string {
			return edit(t, `tb: {type: INLINE, props: {algorithm-expression: "t_order_${order_id % 4}"}}`,
				"tb:\n      type: MOD\n      props:\n        sharding-count: -4 # ERR")
		}, `sharding algorithm tb (MOD): sharding-count: required, a positive integer`},
		{"bad snowflake prop", func(t *testing.T) string {
			return edit(t, "snowflake: {type: SNOWFLAKE, props: {worker-id: 1}}", "snowflake:\n      type: SNOWFLAKE\n      props:\n        worker-id: 99 # ERR")
		}, `key generator snowflake (SNOWFLAKE): worker-id: "99": outside [0, 31]`},
		{"unknown snowflake prop", func(t *testing.T) string {
			return edit(t, "snowflake: {type: SNOWFLAKE, props: {worker-id: 1}}", "snowflake:\n      type: SNOWFLAKE\n      props:\n        worker-idd: 1 # ERR")
		}, `worker-idd: unknown prop`},
		{"unsupported key generator", func(t *testing.T) string {
			return edit(t, "snowflake: {type: SNOWFLAKE, props: {worker-id: 1}}", "snowflake: {type: LEAF} # ERR")
		}, `key generator snowflake (LEAF): unknown type; supported: SNOWFLAKE, SEGMENT, TICKET, UUID, UUIDV7`},
		{"bad uuid column type", func(t *testing.T) string {
			return edit(t, "snowflake: {type: SNOWFLAKE, props: {worker-id: 1}}", "snowflake:\n      type: UUIDv7\n      props:\n        column-type: INT # ERR")
		}, `key generator snowflake (UUIDV7): column-type: "INT": want CHAR(36), CHAR(32) or BINARY(16)`},
		{"segment without url", func(t *testing.T) string {
			return edit(t, "snowflake: {type: SNOWFLAKE, props: {worker-id: 1}}", "snowflake:\n      type: SEGMENT # ERR\n      props:\n        step: 10")
		}, `key generator snowflake (SEGMENT): url: required`},
		{"segment step above max-step", func(t *testing.T) string {
			return edit(t, "snowflake: {type: SNOWFLAKE, props: {worker-id: 1}}", "snowflake:\n      type: SEGMENT\n      props:\n        url: jdbc:mysql://127.0.0.1:3306/ids\n        step: 100\n        max-step: 10 # ERR")
		}, `key generator snowflake (SEGMENT): max-step: "10": outside [step, 1099511627776]`},
		{"ticket bad stub", func(t *testing.T) string {
			return edit(t, "snowflake: {type: SNOWFLAKE, props: {worker-id: 1}}", "snowflake:\n      type: TICKET\n      props:\n        urls: 'jdbc:mysql://127.0.0.1:1/t, jdbc:mysql://127.0.0.1:2/t'\n        stub: ab # ERR")
		}, `key generator snowflake (TICKET): stub: "ab": want one character`},
		{"unsupported rule", func(t *testing.T) string {
			return edit(t, "- !BROADCAST\n  tables: [t_dict]\n", "- !ENCRYPT # ERR\n  tables: {}\n")
		}, `rule !ENCRYPT is not supported by shardflake`},
		{"untagged rule", func(t *testing.T) string {
			return edit(t, "- !BROADCAST\n  tables: [t_dict]\n", "- tables: [t_dict] # ERR\n")
		}, `a rules item needs a tag`},
		{"server.yaml keys", func(t *testing.T) string {
			return edit(t, "databaseName: db\n", "databaseName: db\nprops: # ERR\n  sql-show: true\n")
		}, `props belongs to ShardingSphere's server.yaml`},
		{"yaml syntax", func(t *testing.T) string {
			return edit(t, "server:\n", "server: x: y # ERR\n")
		}, `mapping values are not allowed in this context`},
		{"url not mysql", func(t *testing.T) string {
			return edit(t, `url: "jdbc:mysql://127.0.0.1:3306/ds_1"`, `url: "jdbc:postgresql://127.0.0.1:5432/ds_1"} # ERR`+"\n  x: {url: x")
		}, `data source ds_1: url "jdbc:postgresql://127.0.0.1:5432/ds_1" is not a MySQL URL`},
		{"url without database", func(t *testing.T) string {
			return edit(t, `url: "jdbc:mysql://127.0.0.1:3306/ds_1"`, `url: "mysql://127.0.0.1:3306"} # ERR`+"\n  x: {url: x")
		}, `must name one database, e.g. mysql://127.0.0.1:3306/ds_0`},
		{"url missing", func(t *testing.T) string {
			return edit(t, `ds_1: {url: "jdbc:mysql://127.0.0.1:3306/ds_1", username: root}`, `ds_1: {username: root} # ERR`)
		}, `data source ds_1: url is required`},
		{"server without users", func(t *testing.T) string {
			return edit(t, "server:\n  users: [{user: app, password: pw}]\n", "server:\n  listen: 127.0.0.1:3310 # ERR\n")
		}, `server.users is required`},
		{"server duration", func(t *testing.T) string {
			return edit(t, "server:\n", "server:\n  handshakeTimeout: 10 # ERR\n")
		}, `server.handshakeTimeout must be a duration such as 10s or 500ms, got "10"`},
		{"server auth plugin", func(t *testing.T) string {
			return edit(t, "server:\n", "server:\n  authPlugin: sha256_password # ERR\n")
		}, `server.authPlugin "sha256_password": want mysql_native_password or caching_sha2_password`},
		{"server transactions", func(t *testing.T) string {
			return edit(t, "server:\n", "server:\n  multiSourceTransactions: xa # ERR\n")
		}, `server.multiSourceTransactions "xa": want allow or reject`},
		{"server transaction mode", func(t *testing.T) string {
			return edit(t, "server:\n", "server:\n  transactionMode: twopc # ERR\n")
		}, `server.transactionMode "twopc": want local or xa`},
		{"server listen", func(t *testing.T) string {
			return edit(t, "server:\n", "server:\n  listen: 3307 # ERR\n")
		}, `server.listen must be host:port, got "3307"`},
		{"server default data source", func(t *testing.T) string {
			return edit(t, "server:\n", "server:\n  defaultDataSource: ds_9 # ERR\n")
		}, `server.defaultDataSource "ds_9" is not in dataSources`},
		{"server tls half", func(t *testing.T) string {
			return edit(t, "server:\n", "server:\n  tls: {cert: a.pem} # ERR\n")
		}, `server.tls needs both cert and key`},
		{"server merge memory", func(t *testing.T) string {
			return edit(t, "server:\n", "server:\n  mergeMemoryBytes: lots # ERR\n")
		}, `server.mergeMemoryBytes must be a size such as 67108864 or 64MiB`},
		{"server version", func(t *testing.T) string {
			return edit(t, "server:\n", "server:\n  version: shardflake-1 # ERR\n")
		}, `server.version "shardflake-1" must start with a version number major.minor.patch`},
		{"server lock wait fraction", func(t *testing.T) string {
			return edit(t, "server:\n", "server:\n  lockWaitTimeout: 1500ms # ERR\n")
		}, `server.lockWaitTimeout must be whole seconds`},
		{"server union routes", func(t *testing.T) string {
			return edit(t, "server:\n", "server:\n  unionRoutes: sometimes # ERR\n")
		}, `server.unionRoutes must be true or false, got "sometimes"`},
		{"server cpu scheduling", func(t *testing.T) string {
			return edit(t, "server:\n", "server:\n  cpuScheduling: realtime # ERR\n")
		}, `server.cpuScheduling must be batch or normal, got "realtime"`},
		{"server multiplex max wait zero", func(t *testing.T) string {
			return edit(t, "server:\n", "server:\n  multiplexMaxWait: 0s # ERR\n")
		}, `server.multiplexMaxWait must be positive`},
		{"server connections per query", func(t *testing.T) string {
			return edit(t, "server:\n", "server:\n  maxConnectionsPerQuery: 9 # ERR\n")
		}, `server.maxConnectionsPerQuery 9: want 1 to 8`},
		{"server deadlock detection", func(t *testing.T) string {
			return edit(t, "server:\n", "server:\n  deadlockDetection: 100ms # ERR\n")
		}, `server.deadlockDetection must be off or a duration of at least 200ms, got 100ms`},
		{"server deadlock detection word", func(t *testing.T) string {
			return edit(t, "server:\n", "server:\n  deadlockDetection: never # ERR\n")
		}, `server.deadlockDetection must be a duration such as 10s or 500ms, got "never"`},
		{"server lock wait zero", func(t *testing.T) string {
			return edit(t, "server:\n", "server:\n  lockWaitTimeout: 0s # ERR\n")
		}, `server.lockWaitTimeout must be at least 1s`},
		{"server duplicate user", func(t *testing.T) string {
			return edit(t, "  users: [{user: app, password: pw}]", "  users:\n  - {user: app, password: pw}\n  - {user: app, password: x} # ERR")
		}, `server.users: user "app" appears twice`},
		{"missing databaseName", func(t *testing.T) string {
			return edit(t, "databaseName: db\nserver:", "server: # ERR")
		}, `databaseName is required`},
		{"binding group of one table", func(t *testing.T) string {
			return edit(t, "    - t_order,t_item", "    - t_order # ERR")
		}, `bindingTables "t_order": a binding group needs at least two tables`},
		{"binding tables as a flow list", func(t *testing.T) string {
			return edit(t, "  bindingTables:\n    - t_order,t_item", "  bindingTables: [t_order,t_item] # ERR")
		}, `bindingTables [t_order, t_item] is a list of 2 groups of one table each, and a binding group needs at least two tables: did you mean one group, written as the list entry "- t_order,t_item" (or ["t_order,t_item"])?`},
		{"unquoted inline expression in a flow map", func(t *testing.T) string {
			return edit(t, `db: {type: INLINE, props: {algorithm-expression: "ds_${user_id % 2}"}}`, `db: {type: INLINE, props: {algorithm-expression: ds_${user_id % 2}}} # ERR`)
		}, `inline expression ${user_id % 2} unquoted inside { } or [ ], where YAML reads its braces and commas (YAML says: did not find expected ',' or '}', at line 21): quote the value ("...")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := tt.doc(t)
			line := markedLine(t, doc)
			_, err := Parse([]byte(doc), "rules.yaml")
			if err == nil {
				t.Fatalf("Parse: no error, want %q at line %d", tt.want, line)
			}
			if !errors.Is(err, ErrConfig) {
				t.Errorf("errors.Is(err, ErrConfig) = false for %v", err)
			}
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("Parse error %T is not Errors", err)
			}
			for _, e := range errs {
				if e.Line == line && strings.Contains(e.Message, tt.want) {
					if e.File != "rules.yaml" || !strings.HasPrefix(e.Error(), "rules.yaml:") {
						t.Errorf("error %q does not name the file", e.Error())
					}
					return
				}
			}
			t.Errorf("want %q at line %d, got:\n%v", tt.want, line, err)
		})
	}
}

// TestErrorsCollected checks that one run reports every problem of a
// stage: decoding problems together, then (once the file decodes) every
// building problem together.
func TestErrorsCollected(t *testing.T) {
	doc := edit(t,
		`username: root}`+"\n", `username: root, maxPoolSise: 5}`+"\n",
		"server:\n", "server:\n  authPlugin: x\n",
		"      keyGenerateStrategy:", "      keyGenerator: {}\n      keyGenerateStrategy:")
	_, err := Parse([]byte(doc), "rules.yaml")
	var errs Errors
	if !errors.As(err, &errs) || len(errs) != 3 {
		t.Fatalf("want 3 errors, got %v", err)
	}
	_, err = Parse([]byte(edit(t, "shardingAlgorithmName: tb}}", "shardingAlgorithmName: nope}}",
		"shardingAlgorithmName: item}}", "shardingAlgorithmName: nope2}}")), "rules.yaml")
	if !errors.As(err, &errs) || len(errs) != 2 {
		t.Fatalf("want 2 errors, got %v", err)
	}
	if !slices.IsSortedFunc(errs, func(a, b *Error) int { return a.Line - b.Line }) {
		t.Errorf("errors not in file order: %v", err)
	}
	var ce *Error
	if !errors.As(err, &ce) || ce != errs[0] {
		t.Errorf("errors.As(*Error) does not find the first error")
	}
}

func TestWarnings(t *testing.T) {
	tests := []struct {
		name string
		doc  func(t *testing.T) string
		want string
	}{
		{"unreachable data nodes", func(t *testing.T) string {
			return `databaseName: db
dataSources:
  ds_0: {url: "mysql://h/ds_0"}
  ds_1: {url: "mysql://h/ds_1"}
rules:
- !SHARDING
  tables:
    t_order:
      actualDataNodes: ds_${0..1}.t_order_${0..3} # ERR
      databaseStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: db}}
      tableStrategy: {standard: {shardingColumn: order_id, shardingAlgorithmName: tb}}
  shardingAlgorithms:
    db: {type: INLINE, props: {algorithm-expression: "ds_${order_id % 2}"}}
    tb: {type: INLINE, props: {algorithm-expression: "t_order_${order_id % 4}"}}
`
		}, "table t_order: 4 of 8 data nodes are reached by no sampled value of order_id: ds_0.t_order_1, ds_0.t_order_3, ds_1.t_order_0, ds_1.t_order_2"},
		{"auditors ignored", func(t *testing.T) string {
			return edit(t, "  keyGenerators:", "  auditors: # ERR\n    a: {type: DML_SHARDING_CONDITIONS}\n  keyGenerators:")
		}, "auditors and audit strategies are accepted and ignored"},
		{"readOnly ignored", func(t *testing.T) string {
			return edit(t, `username: root}`+"\n", `username: root, readOnly: true} # ERR`+"\n")
		}, "readOnly is ignored"},
		{"text expression not analysed", func(t *testing.T) string {
			return edit(t, `"t_item_${order_id % 4}"`, `"t_item_${order_id}"`, "actualDataNodes: ds_${0..1}.t_item_${0..3}", "actualDataNodes: ds_${0..1}.t_item_${0..3} # ERR",
				"    - t_order,t_item", "    - t_dict_x,t_dict_y", "- !SHARDING\n  tables:\n", "- !SHARDING\n  tables:\n    t_dict_x: {actualDataNodes: ds_0.t_dict_x}\n    t_dict_y: {actualDataNodes: ds_0.t_dict_y}\n")
		}, "table t_item: data nodes not analysed: expression t_item_${order_id} uses its column as text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := tt.doc(t)
			line := markedLine(t, doc)
			r, err := Parse([]byte(doc), "rules.yaml")
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			for _, w := range r.Warnings {
				if w.Line == line && strings.Contains(w.Message, tt.want) {
					return
				}
			}
			t.Errorf("want warning %q at line %d, got %v", tt.want, line, r.Warnings)
		})
	}
}

func TestDataSourceURL(t *testing.T) {
	tests := []struct {
		give    string
		want    DataSource
		wantErr string
	}{
		{give: "jdbc:mysql://127.0.0.1:3306/ds_0", want: DataSource{Host: "127.0.0.1", Port: 3306, Database: "ds_0"}},
		{give: "jdbc:mysql://db.example.com/ds_0?useSSL=false&characterEncoding=utf8",
			want: DataSource{Host: "db.example.com", Port: 3306, Database: "ds_0", Params: map[string]string{"useSSL": "false", "characterEncoding": "utf8"}}},
		{give: "jdbc:mariadb://10.0.0.1:3307/x", want: DataSource{Host: "10.0.0.1", Port: 3307, Database: "x"}},
		{give: "mysql://app:s%40cret@[::1]:3309/orders", want: DataSource{Host: "::1", Port: 3309, Database: "orders", User: "app", Password: "s@cret"}},
		{give: "mysql://app@h/d", want: DataSource{Host: "h", Port: 3306, Database: "d", User: "app"}},
		{give: "jdbc:mysql://u:p@h:1/d", want: DataSource{Host: "h", Port: 1, Database: "d", User: "u", Password: "p"}},
		{give: "jdbc:postgresql://h/d", wantErr: "is not a MySQL URL"},
		{give: "postgres://h/d", wantErr: "want jdbc:mysql://host:port/db"},
		{give: "127.0.0.1:3306/ds_0", wantErr: "want jdbc:mysql://host:port/db"},
		{give: "mysql://h:99999/d", wantErr: `bad port "99999"`},
		{give: "mysql://h:x/d", wantErr: "invalid port"},
		{give: "mysql:///d", wantErr: "has no host"},
		{give: "jdbc:mysql://h1,h2/d", wantErr: "names several hosts"},
		{give: "mysql://h/", wantErr: "must name one database"},
		{give: "mysql://h/a/b", wantErr: "must name one database"},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			var got DataSource
			err := parseDataSourceURL(&got, tt.give)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseDataSourceURL(%q) error = %v, want %q", tt.give, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseDataSourceURL(%q): %v", tt.give, err)
			}
			if got.Host != tt.want.Host || got.Port != tt.want.Port || got.Database != tt.want.Database ||
				got.User != tt.want.User || got.Password != tt.want.Password || len(got.Params) != len(tt.want.Params) {
				t.Errorf("parseDataSourceURL(%q) = %+v, want %+v", tt.give, got, tt.want)
			}
			for k, v := range tt.want.Params {
				if got.Params[k] != v {
					t.Errorf("param %s = %q, want %q", k, got.Params[k], v)
				}
			}
		})
	}
}

func TestServerDefaults(t *testing.T) {
	r, err := Parse([]byte(baseRules), "base.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := Server{
		Listen: "127.0.0.1:3307", MetricsListen: "127.0.0.1:9307", Users: []User{appUser("app", "pw", "db")},
		DefaultDataSource: "ds_0", AuthPlugin: AuthNativePassword, MaxConnections: 1024, MaxConnectionsPerQuery: 8,
		HandshakeTimeout: 10 * time.Second, StatementTimeout: 0, MultiSourceTransactions: MultiSourceAllow,
		SlowStatementThreshold: time.Second, MaxScatterRows: 0, MergeMemoryBytes: 64 << 20, Version: "",
		UnionRoutes: true, MultiplexConnections: 1, MultiplexMaxWait: 10 * time.Millisecond, DeadlockDetection: 250 * time.Millisecond, MoveUpdatedRows: true, TransactionMode: TransactionLocal,
		Limits: Limits{
			MaxAllowedPacket: 64 << 20, PacketMemoryBytes: 256 << 20, WaitTimeout: 8 * time.Hour,
			NetReadTimeout: 30 * time.Second, MaxHandshakes: 128, MaxPreparedStatements: 16382,
		},
	}
	if got := r.Server; !serverEqual(got, want) {
		t.Errorf("defaults:\n got %+v\nwant %+v", got, want)
	}
	if r.DefaultDataSource != "ds_0" {
		t.Errorf("DefaultDataSource = %q, want the first data source", r.DefaultDataSource)
	}
	if err := r.CheckServe(); err != nil {
		t.Errorf("CheckServe: %v", err)
	}
}

func TestServerSettings(t *testing.T) {
	doc := edit(t, "server:\n  users: [{user: app, password: pw}]\n", `server:
  listen: 0.0.0.0:13307
  metricsListen: "[::1]:19307"
  users:
    - {user: app, password: pw}
    - {user: ops, password: ""}
  defaultDataSource: ds_1
  tls: {cert: /etc/sf/cert.pem, key: /etc/sf/key.pem}
  authPlugin: caching_sha2_password
  maxConnections: 50
  maxConnectionsPerQuery: 2
  handshakeTimeout: 2s
  statementTimeout: 1m30s
  multiSourceTransactions: reject
  slowStatementThreshold: 250ms
  maxScatterRows: 100000
  mergeMemoryBytes: 16MiB
  version: 8.0.36-shardflake
  lockWaitTimeout: 5s
  deadlockDetection: 400ms
  unionRoutes: false
  multiplex: on
  multiplexConnections: 4
  multiplexMaxWait: 50ms
  cpuScheduling: normal
  transactionMode: xa
  maxAllowedPacket: 1GiB
  packetMemoryBytes: 256MiB
  waitTimeout: 10m
  netReadTimeout: 5s
  maxHandshakes: 16
  maxPreparedStatements: 100
`)
	r, err := Parse([]byte(doc), "rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := Server{
		Listen: "0.0.0.0:13307", MetricsListen: "[::1]:19307", Users: []User{appUser("app", "pw", "db"), appUser("ops", "", "db")},
		DefaultDataSource: "ds_1", TLSCert: "/etc/sf/cert.pem", TLSKey: "/etc/sf/key.pem",
		AuthPlugin: AuthCachingSHA2, MaxConnections: 50, MaxConnectionsPerQuery: 2, HandshakeTimeout: 2 * time.Second,
		StatementTimeout: 90 * time.Second, MultiSourceTransactions: MultiSourceReject,
		SlowStatementThreshold: 250 * time.Millisecond, MaxScatterRows: 100000, MergeMemoryBytes: 16 << 20,
		Version: "8.0.36-shardflake", LockWaitTimeout: 5 * time.Second, DeadlockDetection: 400 * time.Millisecond, MoveUpdatedRows: true,
		Multiplex: true, MultiplexConnections: 4, MultiplexMaxWait: 50 * time.Millisecond, CPUScheduling: SchedulingNormal, TransactionMode: TransactionXA,
		Limits: Limits{
			MaxAllowedPacket: 1 << 30, PacketMemoryBytes: 256 << 20, WaitTimeout: 10 * time.Minute,
			NetReadTimeout: 5 * time.Second, MaxHandshakes: 16, MaxPreparedStatements: 100,
		},
	}
	if !serverEqual(r.Server, want) {
		t.Errorf("server:\n got %+v\nwant %+v", r.Server, want)
	}
	if r.DefaultDataSource != "ds_1" {
		t.Errorf("DefaultDataSource = %q, want ds_1", r.DefaultDataSource)
	}
	if AuthCachingSHA2.String() != "caching_sha2_password" || MultiSourceReject.String() != "reject" {
		t.Errorf("enum strings: %s %s", AuthCachingSHA2, MultiSourceReject)
	}
}

// appUser is a server.users entry without privilege keys: an
// application account on schema.
func appUser(name, password, schema string) User {
	return User{Name: name, Password: password, Privileges: Privileges{Schemas: []string{schema}}}
}

func serverEqual(a, b Server) bool {
	return reflect.DeepEqual(a, b)
}

func TestCheckServeWithoutServerSection(t *testing.T) {
	r, err := Load("testdata/rules/ss_proxy_inline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.CheckServe(); err == nil || !strings.Contains(err.Error(), "server.users is required to serve") {
		t.Errorf("CheckServe = %v, want server.users is required", err)
	}
	if r.Server.Listen != DefaultListen || r.Server.AuthPlugin != AuthNativePassword || r.Server.Version != "" {
		t.Errorf("defaults not applied without a server section: %+v", r.Server)
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load("testdata/rules/does-not-exist.yaml")
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load of a missing file: %v, want os.ErrNotExist", err)
	}
}
