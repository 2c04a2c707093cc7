package router

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shardflake/shardflake/algorithm"
	"github.com/shardflake/shardflake/config"
)

func TestComments(t *testing.T) {
	tests := []struct {
		give string
		want []string
	}{
		{"SELECT 1", nil},
		{"/* a */ SELECT /*b*/ 1", []string{" a ", "b"}},
		{"SELECT '/* not */', \"/* not */\", `/* not */` /* yes */", []string{" yes "}},
		{`SELECT 'it\'s /* not */' /* yes */`, []string{" yes "}},
		{"SELECT 'a''/* not */' /* yes */", []string{" yes "}},
		{"SELECT 1 -- /* not */\n/* yes */", []string{" yes "}},
		{"SELECT 1 # /* not */\n/* yes */", []string{" yes "}},
		{"SELECT 1--1 /* yes */", []string{" yes "}},
		{"SELECT /*!50000 1 */ /*+ MAX_EXECUTION_TIME(1) */ 1", nil},
		{"SELECT 1 /* unterminated", nil},
		{"SELECT /*M!100000 1 */ /* yes */", []string{" yes "}},
		{"SELECT 1 --\f/* not: -- and a form feed start a comment */", nil},
		{"SELECT 'unterminated /* x */", nil},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			if got := comments(tt.give); fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseHints(t *testing.T) {
	tests := []struct {
		give    string
		want    string
		wantErr bool
	}{
		{"SELECT 1", "<nil>", false},
		{"/* plain comment */ SELECT 1", "<nil>", false},
		{"/* SHARDINGSPHERE_HINT: t_order.SHARDING_DATABASE_VALUE=1, T_ORDER.sharding_table_value = 'x' */", "ds= db=map[t_order:[1]] table=map[t_order:[x]] slice=<nil>", false},
		{"/* sharding_sphere_hint: nothing */", "<nil>", false},
		{"/*SHARDINGSPHERE_HINT: SHARDING_DATABASE_VALUE=18446744073709551615*/", "ds= db=map[:[18446744073709551615]] table=map[] slice=<nil>", false},
		{"/* SHARDINGSPHERE_HINT: DATA_SOURCE_NAME=ds_1, WRITE_ROUTE_ONLY=true */", "ds=ds_1 db=map[] table=map[] slice=<nil>", false},
		{"/* SHARDINGSPHERE_HINT: SHARDING_TABLE_VALUE */", "", true},
		{"/* SHARDINGSPHERE_HINT: SHARDING_TABLE_VALUE= */", "", true},
		{"/* shardflake: slice=3/8 */", "ds= db=map[] table=map[] slice=&{3 8}", false},
		{"/* shardflake: slice=8/8 */", "", true},
		{"/* shardflake: slice=-1/8 */", "", true},
		{"/* shardflake: slice=1/0 */", "", true},
		{"/* shardflake: shard=1 */", "", true},
		{"/* SHARDINGSPHERE_HINT: DATASOURCE_NAME=ds_1 */", "", true},
		{"/* SHARDINGSPHERE_HINT: t_order.DATA_SOURCE_NAME=ds_1 */", "", true},
		{"/* SHARDINGSPHERE_HINT: .SHARDING_TABLE_VALUE=1 */", "", true},
		{"/* SHARDINGSPHERE_HINT: SHARDING_VALUE=1 */", "", true},
		{"/* SHARDINGSPHERE_HINT: writeRouteOnly=true, SKIP_SQL_REWRITE=true, SHADOW=false, useTraffic=false, DISABLE_AUDIT_NAMES=x */", "ds= db=map[] table=map[] slice=<nil>", false},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			h, err := parseHints(tt.give)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("got %+v, want an error", h)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := "<nil>"
			if h != nil {
				got = fmt.Sprintf("ds=%s db=%v table=%v slice=%v", h.dataSource, fmtMap(h.dbValues), fmtMap(h.tableValues), h.slice)
			}
			if got != tt.want {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func fmtMap(m map[string][]algorithm.Value) string {
	if m == nil {
		return "map[]"
	}
	return fmt.Sprint(m)
}

func TestCheckUTF8(t *testing.T) {
	tests := []struct {
		give    string
		wantErr bool
	}{
		{"SELECT 'é'", false},
		{"SELECT '\xff'", false},
		{"SELECT \"\xff\"", false},
		{"SELECT `\xff`", true},
		{"SELECT \xff(1)", true},
	}
	for _, tt := range tests {
		if err := checkUTF8(tt.give); (err != nil) != tt.wantErr {
			t.Errorf("checkUTF8(%q) = %v, want error %v", tt.give, err, tt.wantErr)
		}
	}
}

// TestSliceCoversEveryNodeOnce runs a statement as n sliced executors and
// checks that together they reach every data node the statement reaches,
// each exactly once, and that an executor left with none runs a false
// condition.
func TestSliceCoversEveryNodeOnce(t *testing.T) {
	r, _ := newGoldenRouter(t, loadGoldenRules(t))
	stmts := []struct {
		give string
		want int // data nodes of the statement
	}{
		{"SELECT * FROM t_order", 32},
		{"SELECT * FROM t_order WHERE user_id = 2", 8},
		{"DELETE FROM t_order_item WHERE order_id IN (1, 2, 3)", 12},
		{"SELECT o.order_id FROM t_order o JOIN t_order_item i ON o.order_id = i.order_id AND o.user_id = i.user_id", 32},
	}
	for _, st := range stmts {
		for _, n := range []int{1, 2, 3, 7, 8, 32, 40} {
			t.Run(fmt.Sprintf("%s/%d", st.give, n), func(t *testing.T) {
				seen := map[config.DataNode]int{}
				for i := 0; i < n; i++ {
					sql := fmt.Sprintf("/* shardflake: slice=%d/%d */ %s", i, n, st.give)
					plan := bind(t, prepare(t, r, sql))
					if len(plan.Routes) == 1 && (strings.HasSuffix(plan.Routes[0].SQL, ") AND 0") || strings.HasSuffix(plan.Routes[0].SQL, "WHERE 0")) {
						continue // empty slice: a false condition
					}
					for _, rt := range plan.Routes {
						seen[rt.Nodes[0]]++
					}
				}
				if len(seen) != st.want {
					t.Fatalf("slices reached %d data nodes, want %d", len(seen), st.want)
				}
				for node, c := range seen {
					if c != 1 {
						t.Fatalf("data node %s reached by %d slices", node, c)
					}
				}
			})
		}
	}
}

// TestCheckUTF8Names: a quote inside a name or a comment starts no
// string, so a bad byte after it is still outside a string literal.
func TestCheckUTF8Names(t *testing.T) {
	tests := []struct {
		give    string
		wantErr bool
	}{
		{"SELECT `a'b` \xff, 'c'", true},
		{"SELECT /* it's */ \xff, 'c'", true},
		{"SELECT /*! \xff */ 1", true},
		{"SELECT 1 -- \xff", true},
		{"SELECT 'a' \xff", true},
		{"SELECT 'a\xff' -- 'b'", false},
	}
	for _, tt := range tests {
		if err := checkUTF8(tt.give); (err != nil) != tt.wantErr {
			t.Errorf("checkUTF8(%q) = %v, want error %v", tt.give, err, tt.wantErr)
		}
	}
}
