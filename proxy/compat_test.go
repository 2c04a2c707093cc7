package proxy

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestTransactionVariablesUnderBothNames: Connector/J asks a 5.7.20+ or
// 8.0 server for @@transaction_isolation and @@transaction_read_only and
// sets SESSION transaction_isolation; MariaDB 10.x knows them as
// tx_isolation and tx_read_only. Both names work through the proxy, for
// reading (with the column names the client wrote) and for setting.
func TestTransactionVariablesUnderBothNames(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	c := e.conn(t)
	mustExec(t, c, "INSERT INTO t_order (order_id, user_id) VALUES (1, 1)")
	read := func(q string) ([]string, []string) {
		t.Helper()
		rows, err := c.QueryContext(context.Background(), q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		cols, _ := rows.Columns()
		rows.Close()
		return cols, queryStrings(t, c, q)
	}
	cols, got := read("SELECT @@session.transaction_isolation")
	if !slices.Equal(cols, []string{"@@session.transaction_isolation"}) || !slices.Equal(got, []string{"REPEATABLE-READ"}) {
		t.Errorf("SELECT @@session.transaction_isolation: columns %q rows %q", cols, got)
	}
	// Connector/J's connect-time query names several variables.
	cols, got = read("SELECT @@session.auto_increment_increment AS auto_increment_increment, @@transaction_isolation AS transaction_isolation, @@session.transaction_read_only, @@tx_isolation, @@tx_read_only")
	if !slices.Equal(cols, []string{"auto_increment_increment", "transaction_isolation", "@@session.transaction_read_only", "@@tx_isolation", "@@tx_read_only"}) ||
		!slices.Equal(got, []string{"1,REPEATABLE-READ,0,REPEATABLE-READ,0"}) {
		t.Errorf("several variables: columns %q rows %q", cols, got)
	}

	tests := []struct {
		set  string
		want string // @@transaction_isolation afterwards
	}{
		{"SET SESSION transaction_isolation = 'READ-COMMITTED'", "READ-COMMITTED"},
		{"SET @@session.transaction_isolation = 'SERIALIZABLE'", "SERIALIZABLE"},
		{"SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED", "READ-UNCOMMITTED"},
		{"SET SESSION tx_isolation = 'REPEATABLE-READ'", "REPEATABLE-READ"},
		{"SET transaction_isolation = 'READ-COMMITTED'", "READ-COMMITTED"},
	}
	for _, tt := range tests {
		t.Run(tt.set, func(t *testing.T) {
			mustExec(t, c, tt.set)
			if got := queryOne(t, c, "SELECT @@transaction_isolation"); got != tt.want {
				t.Errorf("@@transaction_isolation = %s, want %s", got, tt.want)
			}
			// The data nodes run the session's statements at that level.
			if got := queryOne(t, c, "SELECT @@tx_isolation FROM t_order WHERE user_id = 1 AND order_id = 1"); got != tt.want {
				t.Errorf("a data node's @@tx_isolation = %s, want %s", got, tt.want)
			}
		})
	}

	mustExec(t, c, "SET SESSION transaction_read_only = 1")
	if got := queryOne(t, c, "SELECT @@transaction_read_only"); got != "1" {
		t.Errorf("@@transaction_read_only = %s after setting it", got)
	}
	mustExec(t, c, "BEGIN")
	_, err := c.ExecContext(context.Background(), "INSERT INTO t_order (order_id, user_id) VALUES (2, 1)")
	if errCode(err) != 1792 {
		t.Errorf("a write in a read-only transaction: got %v, want 1792", err)
	}
	mustExec(t, c, "ROLLBACK")
	mustExec(t, c, "SET SESSION transaction_read_only = 0")
}

// TestLastInsertIDVariables: @@last_insert_id and @@identity give the
// proxy's last generated key, as LAST_INSERT_ID() does.
func TestLastInsertIDVariables(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	c := e.conn(t)
	res, err := c.ExecContext(context.Background(), "INSERT INTO t_order (user_id, status) VALUES (1, 'a')")
	if err != nil {
		t.Fatal(err)
	}
	id, _ := res.LastInsertId()
	want := strconv.FormatInt(id, 10)
	for _, q := range []string{"SELECT LAST_INSERT_ID()", "SELECT @@last_insert_id", "SELECT @@identity", "SELECT @@session.identity"} {
		if got := queryOne(t, c, q); got != want {
			t.Errorf("%s = %s, want the generated key %s", q, got, want)
		}
	}
	if got := queryStrings(t, c, "SELECT @@last_insert_id, @@identity"); !slices.Equal(got, []string{want + "," + want}) {
		t.Errorf("SELECT @@last_insert_id, @@identity = %q", got)
	}
}

// TestServerVersionSetting: server.version is what the proxy announces.
func TestServerVersionSetting(t *testing.T) {
	e := startEnv(t, envOptions{server: "version: 8.0.36-shardflake"})
	c := e.conn(t)
	if got := queryStrings(t, c, "SELECT VERSION(), @@version"); !slices.Equal(got, []string{"8.0.36-shardflake,8.0.36-shardflake"}) {
		t.Errorf("VERSION(), @@version = %q", got)
	}
	out, err := mariadbCLI(t, e, "status", "--table")
	if err != nil || !strings.Contains(out, "8.0.36-shardflake") {
		t.Errorf("the client's status does not show the version: %v\n%s", err, out)
	}
	// With an 8.0 version, tx_isolation (which MySQL 8 dropped) still
	// reads: the proxy asks MariaDB by the name it knows.
	if got := queryOne(t, c, "SELECT @@tx_isolation"); got != "REPEATABLE-READ" {
		t.Errorf("@@tx_isolation = %s", got)
	}
}
