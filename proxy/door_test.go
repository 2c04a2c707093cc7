package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// doorUsers: caller is limited by the rule door_quota (and may CALL and
// LOAD DATA LOCAL); admin sets the scene unlimited.
const doorUsers = `users:
  - {user: caller, password: caller-secret, otherSchemas: true, files: true}
  - {user: admin, password: admin-secret, otherSchemas: true, files: true}
traffic:
  - {name: door_quota, match: {users: [caller]}, limit: {type: FIXED_WINDOW, permits: 6, window: 1h}}`

// TestDoorAdmitsAndObservesEveryPath sends one statement down each path
// that reaches a data source (a CALL, a LOAD DATA LOCAL INFILE, a prepared
// execute, a text query by its cached shape, a stored-routine statement the
// parser cannot read) through a real client, and wants each counted in
// the per-route statement metrics and the data source latency, and each
// taking a permit of the traffic rule, until the rule refuses the next one
// before it reaches a data source.
func TestDoorAdmitsAndObservesEveryPath(t *testing.T) {
	e := startOpsEnv(t, opsOptions{prefix: "door", server: doorUsers})
	e.createOrders(t)
	e.backends[0].Exec(t, e.dbs[0],
		"DROP TABLE IF EXISTS t_plain", "CREATE TABLE t_plain (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(32))",
		"INSERT INTO t_order_1 (order_id, user_id, status) VALUES (3, 0, 'x')",
		"DROP PROCEDURE IF EXISTS door_p", "CREATE PROCEDURE door_p() BEGIN SELECT 1 AS a; SELECT 2 AS b; END",
		"DROP FUNCTION IF EXISTS door_f")
	path := filepath.Join(t.TempDir(), "rows.txt")
	if err := os.WriteFile(path, []byte("a\nb\nc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("mysql", e.dsn("caller", "caller-secret", "allowAllFiles=true"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx := context.Background()

	before := e.scrape(t)
	var n int
	rows, err := db.QueryContext(ctx, "CALL door_p()")
	if err != nil {
		t.Fatalf("CALL: %v", err)
	}
	for rows.Next() {
		n++
	}
	for rows.NextResultSet() {
		for rows.Next() {
			n++
		}
	}
	if err := rows.Err(); err != nil || n != 2 {
		t.Fatalf("CALL: %d rows, %v; want 2", n, err)
	}
	rows.Close()
	res, err := db.ExecContext(ctx, fmt.Sprintf("LOAD DATA LOCAL INFILE '%s' INTO TABLE t_plain (v)", path))
	if err != nil {
		t.Fatalf("LOAD DATA LOCAL: %v", err)
	}
	if got, _ := res.RowsAffected(); got != 3 {
		t.Fatalf("LOAD DATA LOCAL: %d rows, want 3", got)
	}
	var status string
	// A prepared execute (COM_STMT_EXECUTE), then one query twice: the
	// second is answered by its cached shape.
	if err := db.QueryRowContext(ctx, "SELECT status FROM t_order WHERE user_id = ? AND order_id = ?", 0, 3).Scan(&status); err != nil || status != "x" {
		t.Fatalf("prepared execute: %q, %v", status, err)
	}
	for i := range 2 {
		if err := db.QueryRowContext(ctx, "SELECT status FROM t_order WHERE user_id = 0 AND order_id = 3").Scan(&status); err != nil || status != "x" {
			t.Fatalf("text query %d: %q, %v", i, status, err)
		}
	}
	// A stored function: the parser cannot read it (routines.go).
	if _, err := db.ExecContext(ctx, "CREATE FUNCTION door_f() RETURNS INT DETERMINISTIC RETURN 7"); err != nil {
		t.Fatalf("CREATE FUNCTION: %v", err)
	}
	// Six permits taken: each path is refused now, and reaches no data
	// source.
	calls := globalStatus(t, e.backend(t, 0), "Com_call_procedure")
	_, err = db.ExecContext(ctx, "CALL door_p()")
	wantLimitError(t, err, 1226, "door_quota")
	_, err = db.ExecContext(ctx, fmt.Sprintf("LOAD DATA LOCAL INFILE '%s' INTO TABLE t_plain (v)", path))
	wantLimitError(t, err, 1226, "door_quota")
	err = db.QueryRowContext(ctx, "SELECT status FROM t_order WHERE user_id = 0 AND order_id = 3").Scan(&status)
	wantLimitError(t, err, 1226, "door_quota")
	if got := globalStatus(t, e.backend(t, 0), "Com_call_procedure"); got != calls {
		t.Errorf("Com_call_procedure went from %d to %d: a refused CALL reached the data source", calls, got)
	}
	if err := db.PingContext(ctx); err != nil {
		t.Fatal(err)
	}
	after := e.scrape(t)
	want := map[string]float64{
		// CALL and CREATE FUNCTION are "other" on the default data source.
		series("shardflake_statements_total", "kind", "other", "route", "single", "result", "ok"):  1,
		series("shardflake_statements_total", "kind", "ddl", "route", "single", "result", "ok"):    1,
		series("shardflake_statements_total", "kind", "insert", "route", "single", "result", "ok"): 1,
		series("shardflake_statements_total", "kind", "select", "route", "single", "result", "ok"): 3,
		// Every statement reached ds_0 (user 0): six route runs, none
		// of the refused ones.
		series("shardflake_datasource_duration_seconds_count", "datasource", "ds_0"): 6,
		series("shardflake_datasource_duration_seconds_count", "datasource", "ds_1"): 0,
	}
	for s, w := range want {
		if got := after[s] - before[s]; got != w {
			t.Errorf("%s moved by %v, want %v", s, got, w)
		}
	}
	var load int
	admin, err := sql.Open("mysql", e.dsn("admin", "admin-secret"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if err := admin.QueryRowContext(ctx, "SELECT COUNT(*) FROM t_plain").Scan(&load); err != nil || load != 3 {
		t.Errorf("t_plain holds %d rows, %v; want the first load's 3", load, err)
	}
	admin.ExecContext(ctx, "DROP FUNCTION IF EXISTS door_f")
	admin.ExecContext(ctx, "DROP PROCEDURE IF EXISTS door_p")
}

// TestDoorHookSeesEveryStatementOnce: the door's one beforeStatement call
// sees each statement of every path once, admin statements, cached shapes
// and texts, prepared executes, SQL EXECUTE and each statement of a
// multi-statement query included.
func TestDoorHookSeesEveryStatementOnce(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	e := startEnv(t, envOptions{server: authzUsers, hook: func(sql string) {
		mu.Lock()
		seen = append(seen, sql)
		mu.Unlock()
	}})
	createTables(t, e)
	db, err := sql.Open("mysql", e.dsn("ops", "ops-secret", "multiStatements=true"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	point := "SELECT status FROM t_order WHERE user_id = 1 AND order_id = 3"
	steps := []struct {
		give string
		args []any
		want []string
	}{
		{give: point, want: []string{point}},
		{give: point, want: []string{point}}, // its cached shape
		{give: "SELECT status FROM t_order WHERE user_id = ?", args: []any{1}, want: []string{"SELECT status FROM t_order WHERE user_id = ?"}},
		{give: "SHOW SHARDING TABLE RULES", want: []string{"SHOW SHARDING TABLE RULES"}},
		{give: "SET @door = 1; SELECT @door", want: []string{"SET @door = 1;", "SELECT @door"}},
		{give: "PREPARE door_s FROM 'SELECT 41 + 1'", want: []string{"PREPARE door_s FROM 'SELECT 41 + 1'"}},
		{give: "EXECUTE door_s", want: []string{"SELECT 41 + 1"}}, // in its place
		{give: "SELECT DATABASE()", want: []string{"SELECT DATABASE()"}},
	}
	for _, tt := range steps {
		mu.Lock()
		seen = nil
		mu.Unlock()
		rows, err := db.QueryContext(ctx, tt.give, tt.args...)
		if err != nil {
			t.Fatalf("%s: %v", tt.give, err)
		}
		for rows.NextResultSet() {
			for rows.Next() {
			}
		}
		rows.Close()
		mu.Lock()
		got := slices.Clone(seen)
		mu.Unlock()
		for i := range got {
			got[i] = strings.TrimSpace(got[i])
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: the hook saw %q, want %q", tt.give, got, tt.want)
		}
	}
}
