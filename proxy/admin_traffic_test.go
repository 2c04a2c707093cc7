package proxy

import (
	"context"
	"database/sql"
	"strings"
	"testing"
)

func TestMatchTrafficAdmin(t *testing.T) {
	tests := []struct {
		give    string
		want    adminStmt
		notOurs bool
		wantErr string
	}{
		{give: "SHOW TRAFFIC RULES", want: adminStmt{kind: adminTrafficRules}},
		{give: "show traffic rules;", want: adminStmt{kind: adminTrafficRules}},
		{give: "ENABLE TRAFFIC RULE app_reads", want: adminStmt{kind: adminEnableTraffic, table: "app_reads"}},
		{give: "disable traffic rule `app-reads`", want: adminStmt{kind: adminDisableTraffic, table: "app-reads"}},
		{give: `ALTER TRAFFIC RULE r PROPERTIES("rate"="300", 'burst' = '3''0')`, want: adminStmt{kind: adminAlterTraffic, table: "r", body: `PROPERTIES("rate"="300", 'burst' = '3''0')`}},
		{give: "ALTER TABLE t_order ADD COLUMN c INT", notOurs: true},
		{give: "SHOW TABLES", notOurs: true},
		{give: "SHOW TRAFFIC", wantErr: "traffic rule statements are"},
		{give: "ENABLE TRAFFIC RULE", wantErr: "traffic rule statements are"},
		{give: "ALTER TRAFFIC RULE r", wantErr: "needs PROPERTIES"},
		{give: `ALTER TRAFFIC RULE r PROPERTIES("rate")`, wantErr: `"key"="value"`},
		{give: `ALTER TRAFFIC RULE r PROPERTIES("rate"="1" "burst"="2")`, wantErr: "separated by commas"},
		{give: "SHOW TRAFFIC RULES extra", wantErr: "near 'extra'"},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			got, ok, err := matchAdmin(tt.give)
			if tt.notOurs {
				if ok {
					t.Fatalf("matched %+v", got)
				}
				return
			}
			if !ok {
				t.Fatal("not matched")
			}
			if tt.wantErr != "" {
				if err == nil || mysqlError(err).Code != 1064 || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want a 1064 containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// queryMaps runs q and returns its rows as column -> value (NULL as "NULL").
func queryMaps(t *testing.T, db *sql.DB, q string) []map[string]string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []map[string]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for i, c := range cols {
			m[c] = "NULL"
			if vals[i].Valid {
				m[c] = vals[i].String
			}
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestTrafficAdminStatements(t *testing.T) {
	e, other := trafficEnvUsers(t, `- {user: app, password: app-secret}
- {user: other, password: other-secret, trafficAdmin: true}`, `- {name: app_quota, match: {users: [app], tables: [t_order], kinds: [select]}, limit: {type: FIXED_WINDOW, permits: 2, window: 1h}}
- {name: ds_1_reads, match: {dataSources: [ds_1], kinds: [select]}, limit: {type: TOKEN_BUCKET, rate: 100, burst: 100}, onLimit: wait, maxWait: 20ms}`)
	db := e.open(t)
	ctx := context.Background()
	point := func() error {
		var s string
		return db.QueryRowContext(ctx, "SELECT status FROM t_order WHERE user_id = 1 AND order_id = 2").Scan(&s)
	}
	for range 2 {
		if err := point(); err != nil {
			t.Fatal(err)
		}
	}
	wantLimitError(t, point(), 1226, "app_quota")

	rules := queryMaps(t, other, "SHOW TRAFFIC RULES")
	if len(rules) != 2 {
		t.Fatalf("SHOW TRAFFIC RULES: %v", rules)
	}
	want := map[string]string{"name": "app_quota", "type": "FIXED_WINDOW", "match_rule": "users=app tables=t_order kinds=select",
		"limit_props": "permits=2 window=1h0m0s", "on_limit": "reject", "max_wait": "NULL", "scope": "local", "enabled": "true",
		"available_permits": "0", "in_flight": "0", "queued": "0", "admitted": "2", "delayed": "0", "rejected": "1", "unused_permits": "NULL"}
	for k, v := range want {
		if rules[0][k] != v {
			t.Errorf("SHOW TRAFFIC RULES app_quota %s = %q, want %q", k, rules[0][k], v)
		}
	}
	if r := rules[1]; r["name"] != "ds_1_reads" || r["on_limit"] != "wait" || r["max_wait"] != "20ms" || r["admitted"] != "2" {
		t.Errorf("SHOW TRAFFIC RULES ds_1_reads: %v", r)
	}

	// PREVIEW names the rules a statement would take permits from.
	preview := queryMaps(t, db, "PREVIEW SELECT * FROM t_order WHERE user_id = 1")
	if len(preview) != 2 || preview[0]["traffic_rules"] != "app_quota (2 permits), ds_1_reads (2 permits)" {
		t.Errorf("PREVIEW: %v", preview)
	}
	preview = queryMaps(t, other, "PREVIEW SELECT * FROM t_order WHERE user_id = 0")
	if len(preview) != 2 || preview[0]["traffic_rules"] != "" {
		t.Errorf("PREVIEW as other on ds_0: %v", preview)
	}

	// Only a trafficAdmin user changes rules.
	_, err := db.Exec("DISABLE TRAFFIC RULE app_quota")
	if code := errCode(err); code != 1227 || !strings.Contains(err.Error(), "TRAFFIC ADMIN") {
		t.Errorf("DISABLE by app: %v, want 1227", err)
	}
	// ALTER raises the quota at run time; DISABLE turns the rule off.
	if _, err := other.Exec(`ALTER TRAFFIC RULE app_quota PROPERTIES("permits"="3")`); err != nil {
		t.Fatal(err)
	}
	if err := point(); err != nil {
		t.Fatalf("after ALTER: %v", err)
	}
	if _, err := other.Exec("DISABLE TRAFFIC RULE app_quota"); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := point(); err != nil {
			t.Fatalf("after DISABLE: %v", err)
		}
	}
	if r := queryMaps(t, other, "SHOW TRAFFIC RULES")[0]; r["enabled"] != "false" || r["limit_props"] != "permits=3 window=1h0m0s" {
		t.Errorf("after ALTER and DISABLE: %v", r)
	}
	if _, err := other.Exec("ENABLE TRAFFIC RULE app_quota"); err != nil {
		t.Fatal(err)
	}
	// Disabled, it counted nothing: 2 of the 3 are left.
	for range 2 {
		if err := point(); err != nil {
			t.Fatalf("after ENABLE: %v", err)
		}
	}
	wantLimitError(t, point(), 1226, "app_quota")

	// Bad admin statements get their error and leave the connection usable.
	_, err = other.Exec(`ALTER TRAFFIC RULE app_quota PROPERTIES("permits"="-1")`)
	if code := errCode(err); code != 1231 || !strings.Contains(err.Error(), "permits must be positive") {
		t.Errorf("bad permits: %v", err)
	}
	_, err = other.Exec("DISABLE TRAFFIC RULE nope")
	if code := errCode(err); code != 1105 || !strings.Contains(err.Error(), "Traffic rule 'nope' does not exist") {
		t.Errorf("unknown rule: %v", err)
	}
	if r := queryMaps(t, other, "SHOW TRAFFIC RULES")[0]; r["limit_props"] != "permits=3 window=1h0m0s" {
		t.Errorf("a refused ALTER changed the rule: %v", r)
	}
}
