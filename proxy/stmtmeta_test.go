package proxy

import (
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"
)

// TestPrepareReportsTheResultColumns: COM_STMT_PREPARE announces the
// columns each execute returns (count and definitions, with logical
// names and the merge's helper columns left out), as MariaDB does;
// libmysqlclient-based clients depend on the count.
func TestPrepareReportsTheResultColumns(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	if _, err := e.open(t).Exec("INSERT INTO t_order (order_id, user_id, status) VALUES (1, 0, 'a'), (2, 1, 'b'), (3, 0, 'c'), (4, 1, 'd')"); err != nil {
		t.Fatal(err)
	}
	c, err := client.Connect(e.addr, "app", "app-secret", "sharding_db")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	tests := []struct {
		name string
		give string
		args []any
		want []string // column names
		// exact: the definitions must equal the execute's (type,
		// decimals, charset, flags, tables); otherwise names only (MariaDB
		// itself types a bare ? only at execute).
		exact bool
	}{
		{"single route", "SELECT status FROM t_order WHERE order_id = ? AND user_id = ?", []any{1, 0}, []string{"status"}, true},
		{"several routes, merged", "SELECT order_id, status FROM t_order WHERE user_id IN (?, ?) ORDER BY order_id LIMIT ?", []any{0, 1, 10}, []string{"order_id", "status"}, true},
		{"aggregates with hidden helper columns", "SELECT user_id, COUNT(*) AS n, AVG(order_id) FROM t_order GROUP BY user_id ORDER BY user_id", nil, []string{"user_id", "n", "AVG(order_id)"}, true},
		{"expressions over aggregates", "SELECT user_id, SUM(order_id) / COUNT(*) AS r, ROUND(AVG(order_id), 1) FROM t_order GROUP BY user_id ORDER BY user_id", nil, []string{"user_id", "r", "ROUND(AVG(order_id), 1)"}, true},
		{"star over every data node", "SELECT * FROM t_order WHERE status <> ?", []any{"x"}, []string{"order_id", "user_id", "status"}, true},
		{"broadcast table", "SELECT code, label FROM t_dict WHERE code = ?", []any{"a"}, []string{"code", "label"}, true},
		{"proxy's own values", "SELECT LAST_INSERT_ID(), DATABASE()", nil, []string{"LAST_INSERT_ID()", "DATABASE()"}, true},
		{"no table, on the default data source", "SELECT ? + 1 AS x, NOW() AS t", []any{1}, []string{"x", "t"}, false},
		{"insert", "INSERT INTO t_order (order_id, user_id) VALUES (?, ?)", []any{10, 0}, nil, true},
		{"update", "UPDATE t_order SET status = ? WHERE order_id = ?", []any{"z", 10}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := c.Prepare(tt.give)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			var prepared []*mysql.Field
			for _, raw := range st.RawColumnFields {
				f := &mysql.Field{}
				if err := f.Parse(raw); err != nil {
					t.Fatal(err)
				}
				prepared = append(prepared, f)
			}
			if st.ColumnNum() != len(tt.want) || len(prepared) != len(tt.want) {
				t.Fatalf("prepare reports %d columns (%d definitions), want %d", st.ColumnNum(), len(prepared), len(tt.want))
			}
			res, err := st.Execute(tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Close()
			var executed []*mysql.Field
			if res.Resultset != nil {
				executed = res.Fields
			}
			if len(executed) != len(tt.want) {
				t.Fatalf("execute returns %d columns, want %d", len(executed), len(tt.want))
			}
			for i, f := range prepared {
				g := executed[i]
				if string(f.Name) != tt.want[i] || string(g.Name) != tt.want[i] {
					t.Errorf("column %d: prepare names it %q, execute %q, want %q", i, f.Name, g.Name, tt.want[i])
				}
				if !tt.exact {
					continue
				}
				// MariaDB's own prepare flags COUNT(*) BINARY, its execute
				// does not: that bit is not compared.
				if f.Type != g.Type || f.Decimal != g.Decimal || f.Charset != g.Charset || f.Flag&^mysql.BINARY_FLAG != g.Flag&^mysql.BINARY_FLAG ||
					string(f.Table) != string(g.Table) || string(f.OrgTable) != string(g.OrgTable) || string(f.Schema) != string(g.Schema) {
					t.Errorf("column %s: prepare says type %d decimals %d charset %d flags %#x table %q/%q schema %q; execute says %d %d %d %#x %q/%q %q",
						f.Name, f.Type, f.Decimal, f.Charset, f.Flag, f.Table, f.OrgTable, f.Schema,
						g.Type, g.Decimal, g.Charset, g.Flag, g.Table, g.OrgTable, g.Schema)
				}
			}
		})
	}
}

// TestPrepareRefusesUnknownNames: COM_STMT_PREPARE of a SELECT naming a
// column, table or function that does not exist fails at prepare, with
// MariaDB's number, SQLSTATE and message (logical names), as on one
// MariaDB: mysqli::prepare and PDO's server-side prepare throw there, not
// at the first execute. The session goes on after it.
func TestPrepareRefusesUnknownNames(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	statusRefDB(t, e, "prep_ref")
	e.backends[0].Exec(t, "prep_ref", "CREATE TABLE t_dict (code VARCHAR(16) PRIMARY KEY, label VARCHAR(64))")
	proxy, err := client.Connect(e.addr, "app", "app-secret", "sharding_db")
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	ref, err := client.Connect(e.backends[0].Addr(), "root", "", "prep_ref")
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	for _, q := range []string{
		"SELECT nope FROM t_order",
		"SELECT nope FROM t_order WHERE user_id = ? AND order_id = ?",
		"SELECT * FROM t_nope WHERE id = ?",
		"SELECT t_order.order_id, t_dict.nope FROM t_order JOIN t_dict ON t_dict.code = t_order.status WHERE t_order.user_id = 1",
	} {
		t.Run(q, func(t *testing.T) {
			prepareErr := func(c *client.Conn) *mysql.MyError {
				st, err := c.Prepare(q)
				if err == nil {
					st.Close()
					return nil
				}
				me, ok := err.(*mysql.MyError)
				if !ok {
					t.Fatalf("prepare: %v, not a MySQL error", err)
				}
				return me
			}
			want := prepareErr(ref)
			if want == nil {
				t.Fatal("MariaDB prepared it: the reference is not what this test assumes")
			}
			got := prepareErr(proxy)
			if got == nil {
				t.Fatalf("the proxy prepared it; MariaDB answers %d (%s) %s", want.Code, want.State, want.Message)
			}
			wantMsg := strings.ReplaceAll(want.Message, "prep_ref.", "sharding_db.")
			if got.Code != want.Code || got.State != want.State || got.Message != wantMsg {
				t.Errorf("prepare: %d (%s) %s, want %d (%s) %s", got.Code, got.State, got.Message, want.Code, want.State, wantMsg)
			}
			if _, err := proxy.Execute("SELECT 1"); err != nil {
				t.Errorf("after the failed prepare: %v", err)
			}
		})
	}
}
