package proxy

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/shardflake/shardflake/config"
)

func mysqlErr(err error) *mysql.MySQLError {
	var me *mysql.MySQLError
	if asMySQL(err, &me) {
		return me
	}
	return nil
}

// TestBackendErrorsNameLogicalTables: a backend's error reads as from one
// MySQL server holding the logical schema: its number and SQLSTATE stay,
// data source databases and physical tables become the logical names.
func TestBackendErrorsNameLogicalTables(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	c := e.conn(t)
	mustExec(t, c, "ALTER TABLE t_order ADD COLUMN qty INT")
	tests := []struct {
		give      string
		wantCode  uint16
		wantState string
		want      string
	}{
		{"SELECT * FROM nosuch", 1146, "42S02", "Table 'sharding_db.nosuch' doesn't exist"},
		{"CREATE TABLE t_order (id INT)", 1050, "42S01", "Table 't_order' already exists"},
		{"INSERT INTO t_order (order_id, user_id, qty) VALUES (5, 1, 'abc')", 1366, "22007", "Incorrect integer value: 'abc' for column `sharding_db`.`t_order`.`qty` at row 1"},
		{"SELECT nosuchcol FROM t_order WHERE user_id = 1 AND order_id = 3", 1054, "42S22", "Unknown column 'nosuchcol' in 'SELECT'"},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			_, err := c.ExecContext(context.Background(), tt.give)
			me := mysqlErr(err)
			if me == nil {
				t.Fatalf("got %v, want error %d", err, tt.wantCode)
			}
			if me.Number != tt.wantCode || string(me.SQLState[:]) != tt.wantState || me.Message != tt.want {
				t.Errorf("got %d (%s) %q, want %d (%s) %q", me.Number, me.SQLState, me.Message, tt.wantCode, tt.wantState, tt.want)
			}
		})
	}
}

// TestDDLFailingOnSomeDataNodes: DDL that fails on some data nodes still
// runs on the others (it cannot be rolled back anyway), and the error
// names the data nodes that failed and those that changed.
func TestDDLFailingOnSomeDataNodes(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	c := e.conn(t)
	// One physical table already has the column.
	if _, err := e.backend(t, 1).Exec("ALTER TABLE t_order_0 ADD COLUMN x INT"); err != nil {
		t.Fatal(err)
	}
	_, err := c.ExecContext(context.Background(), "ALTER TABLE t_order ADD COLUMN x INT")
	me := mysqlErr(err)
	if me == nil || me.Number != 1060 || string(me.SQLState[:]) != "42S21" {
		t.Fatalf("got %v, want 1060 (42S21)", err)
	}
	for _, want := range []string{
		"Duplicate column name 'x'", "on data node ds_1.t_order_0",
		"succeeded on ds_0.t_order_0, ds_0.t_order_1, ds_1.t_order_1", "cannot be rolled back",
	} {
		if !strings.Contains(me.Message, want) {
			t.Errorf("message %q does not say %q", me.Message, want)
		}
	}
	// Every physical table has the column now.
	for i := range e.backends {
		for j := range 2 {
			var n int
			q := fmt.Sprintf("SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'ds_%d' AND TABLE_NAME = 't_order_%d' AND COLUMN_NAME = 'x'", i, j)
			if err := e.backend(t, i).QueryRow(q).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 1 {
				t.Errorf("ds_%d.t_order_%d has no column x", i, j)
			}
		}
	}
	// Failing the same way everywhere reads as from one server.
	_, err = c.ExecContext(context.Background(), "ALTER TABLE t_order ADD COLUMN x INT")
	if me := mysqlErr(err); me == nil || me.Number != 1060 || me.Message != "Duplicate column name 'x'" {
		t.Errorf("DDL failing on every data node alike: got %v, want 1060 Duplicate column name 'x'", err)
	}
}

// TestDataSourceRefusingLoginNamed: a data source whose server refuses the
// proxy's login (here its database does not exist) fails the statements
// that need it with 1105 naming the data source and the backend's reason,
// as one that does not answer; not with the backend's 1049 mapped to read
// "Unknown database 'sharding_db'", the schema the client is using.
func TestDataSourceRefusingLoginNamed(t *testing.T) {
	backends := sharedServers(t)
	yaml := strings.Replace(rulesYAML(backends, "", ""), backends[1].Addr()+"/ds_1", backends[1].Addr()+"/shardflake_no_such_db", 1)
	rules, err := config.Parse([]byte(yaml), "test-rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e := startEnv(t, envOptions{rulesFile: rules})
	c := e.conn(t)
	_, err = c.ExecContext(context.Background(), "SELECT * FROM t_order WHERE user_id = 1")
	me := mysqlErr(err)
	want := "data source ds_1 is unavailable: Unknown database 'shardflake_no_such_db'"
	if me == nil || me.Number != 1105 || !strings.Contains(me.Message, want) {
		t.Fatalf("got %v, want 1105 %q", err, want)
	}
	// The connection stays usable, and ds_0 (the default) serves.
	if _, err := c.ExecContext(context.Background(), "SELECT 1"); err != nil {
		t.Fatalf("a statement on ds_0: %v", err)
	}
}
