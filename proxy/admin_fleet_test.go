package proxy

import (
	"database/sql"
	"errors"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// TestShowComputeNodesStandalone: a proxy outside a fleet lists itself:
// its address, Standalone, its worker id (datacenter 1, worker 3: 35)
// as the prefix of its connection ids, its rules digest and sessions;
// DRAIN COMPUTE NODE shows as draining. An account without rulesAdmin
// is refused with 1227.
func TestShowComputeNodesStandalone(t *testing.T) {
	e := startOpsEnv(t, opsOptions{server: reloadUsers, prefix: "scn"})
	db := e.open(t)
	db.SetMaxOpenConns(1)
	var id uint64
	if err := db.QueryRow("SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	if id>>connIDBits != 35 {
		t.Fatalf("CONNECTION_ID() %d (prefix %d), want the worker id 35 in its high bits", id, id>>connIDBits)
	}
	row := func() map[string]sql.NullString {
		t.Helper()
		rows, err := db.Query("SHOW COMPUTE NODES")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		var out []map[string]sql.NullString
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			m := map[string]sql.NullString{}
			for i, c := range cols {
				m[c] = vals[i]
			}
			out = append(out, m)
		}
		if len(out) != 1 {
			t.Fatalf("SHOW COMPUTE NODES: %d rows, want 1", len(out))
		}
		return out[0]
	}
	n := row()
	want := map[string]string{"mysql_address": e.addr, "status": "ready", "mode_type": "Standalone", "worker_id": "35", "conn_id_prefix": "35", "rules_digest": e.srv.RulesDigest(), "sessions": "1"}
	for k, v := range want {
		if n[k].String != v {
			t.Errorf("%s = %q, want %q", k, n[k].String, v)
		}
	}
	if n["instance_id"].String == "" || n["note"].Valid {
		t.Errorf("instance_id %q, note %v", n["instance_id"].String, n["note"])
	}
	if _, err := db.Exec("DRAIN COMPUTE NODE"); err != nil {
		t.Fatal(err)
	}
	if s := row()["status"].String; s != "draining" {
		t.Errorf("status after DRAIN: %q", s)
	}
	if _, err := db.Exec("RESUME COMPUTE NODE"); err != nil {
		t.Fatal(err)
	}
	var me *mysql.MySQLError
	other, err := sql.Open("mysql", e.dsn("other", "other-secret"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Exec("SHOW COMPUTE NODES"); !errors.As(err, &me) || me.Number != 1227 {
		t.Fatalf("SHOW COMPUTE NODES without rulesAdmin: %v, want 1227", err)
	}
}
