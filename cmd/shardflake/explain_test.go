package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/shardflake/shardflake/router"
)

const explainRules = "../../router/testdata/golden_rules.yaml"

func TestExplain(t *testing.T) {
	tests := []struct {
		name       string
		give       []string
		wantCode   int
		wantOut    []string
		wantStderr string
	}{
		{
			name:     "point select",
			give:     []string{"--config", explainRules, "SELECT * FROM t_order WHERE user_id = 1 AND order_id = 5"},
			wantOut:  []string{"statement: select, single route", "route 1: ds_1 (ds_1.t_order_5)", "SELECT * FROM `t_order_5` AS `t_order` WHERE `user_id`=1 AND `order_id`=5"},
			wantCode: 0,
		},
		{
			name:    "flags after the statement, arguments and a merge",
			give:    []string{"SELECT status, COUNT(*) FROM t_order WHERE user_id = ? GROUP BY status LIMIT ?", "--config", explainRules, "--args", "[2, 10]"},
			wantOut: []string{"8 routes", "args: [2]", "LIMIT 10", "group by col[0], streaming", "col[1] = COUNT", "limit: skip 0, return 10"},
		},
		{
			name:    "generated keys are labelled as examples",
			give:    []string{"--config", explainRules, "INSERT INTO t_order (user_id, note) VALUES (1, 'x')"},
			wantOut: []string{"generated keys: order_id = ", "example keys", "INSERT INTO `t_order_"},
		},
		{
			name:    "read/write groups: a replica may answer a plain read",
			give:    []string{"--config", "../../config/testdata/rules/ss_readwrite_splitting.yaml", "SELECT * FROM t_order WHERE user_id = 1 AND order_id = 2"},
			wantOut: []string{"access: read (read/write groups: a replica)", "route 1: readwrite_ds_1 (readwrite_ds_1.t_order_2)"},
		},
		{
			name:    "read/write groups: a locking read is the primary's",
			give:    []string{"--config", "../../config/testdata/rules/ss_readwrite_splitting.yaml", "SELECT * FROM t_order WHERE user_id = 1 AND order_id = 2 FOR UPDATE"},
			wantOut: []string{"access: locking_read (read/write groups: the primary)"},
		},
		{
			name:    "statement for the proxy",
			give:    []string{"--config", explainRules, "SET NAMES utf8mb4"},
			wantOut: []string{"statement: other"},
		},
		{
			name:       "rejected statement",
			give:       []string{"--config", explainRules, "SELECT ROW_NUMBER() OVER (ORDER BY order_id) FROM t_order"},
			wantCode:   1,
			wantStderr: "error 1235 (42000): window functions over several data nodes",
		},
		{
			name:       "syntax error",
			give:       []string{"--config", explainRules, "SELEC 1"},
			wantCode:   1,
			wantStderr: "error 1064 (42000)",
		},
		{
			name:       "argument count",
			give:       []string{"--config", explainRules, "--args", "[1]", "SELECT * FROM t_order WHERE user_id = ? AND order_id = ?"},
			wantCode:   2,
			wantStderr: "has 2 ? placeholders; --args gives 1",
		},
		{
			name:       "no statement",
			give:       []string{"--config", explainRules},
			wantCode:   2,
			wantStderr: "Usage: shardflake explain",
		},
		{
			name:       "help",
			give:       []string{"--help"},
			wantCode:   0,
			wantStderr: "Usage: shardflake explain",
		},
		{
			name:       "bad rules file",
			give:       []string{"--config", "testdata/does-not-exist.yaml", "SELECT 1"},
			wantCode:   1,
			wantStderr: "invalid rules",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(append([]string{"explain"}, tt.give...), &out, &errOut)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.wantCode, out.String(), errOut.String())
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(out.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, out.String())
				}
			}
			if !strings.Contains(errOut.String(), tt.wantStderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.wantStderr, errOut.String())
			}
		})
	}
}

func TestExplainJSON(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run([]string{"explain", "--json", "--config", explainRules, "SELECT AVG(amount) FROM t_order WHERE user_id = 3"}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var plan struct {
		Kind   string         `json:"kind"`
		Routes []router.Route `json:"routes"`
		Merge  *struct {
			Hidden int `json:"hidden"`
		} `json:"merge"`
	}
	if err := json.Unmarshal(out.Bytes(), &plan); err != nil {
		t.Fatalf("--json output is not JSON: %v\n%s", err, out.String())
	}
	if plan.Kind != "select" || len(plan.Routes) != 8 || plan.Merge == nil || plan.Merge.Hidden != 2 {
		t.Fatalf("got %+v", plan)
	}
}
