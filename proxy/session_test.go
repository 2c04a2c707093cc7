package proxy

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"
)

// queryStrings returns every row of a query as comma-joined strings.
func queryStrings(t *testing.T, c interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, q string, args ...any) []string {
	t.Helper()
	rows, err := c.QueryContext(context.Background(), q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return scanStrings(t, rows, q, ",")
}

// scanStrings reads rows to the end and closes them: a row a string, its
// values joined by sep, NULL as "NULL".
func scanStrings(t *testing.T, rows *sql.Rows, q, sep string) []string {
	t.Helper()
	out, err := rowStrings(rows, sep)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

// rowStrings reads and closes rows, each row's values joined by sep
// (NULL as "NULL").
func rowStrings(rows *sql.Rows, sep string) ([]string, error) {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []string
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = v.String
			if !v.Valid {
				parts[i] = "NULL"
			}
		}
		out = append(out, strings.Join(parts, sep))
	}
	return out, rows.Err()
}

func TestConnectTimeProbes(t *testing.T) {
	// Fresh databases: the test lists every table a data source holds.
	e := startEnv(t, envOptions{databases: "lst"})
	createTables(t, e)
	c := e.conn(t)
	ctx := context.Background()
	var id int64
	c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id)
	tests := []struct {
		sql  string
		want []string
	}{
		{"SELECT @@version_comment LIMIT 1", []string{versionComment}},
		{"select DATABASE(), VERSION()", []string{"sharding_db," + e.srv.version()}},
		{"SELECT @@session.autocommit, @@autocommit", []string{"1,1"}},
		{"SELECT LAST_INSERT_ID()", []string{"0"}},
		// Mixed: the proxy's values written in, the rest from the backend.
		{"SELECT DATABASE() AS db, @@max_allowed_packet > 0, 1 + 1", []string{"sharding_db,1,2"}},
		// What JDBC's Connector/J asks on connect.
		{"/* mysql-connector-java-5.1.49 */SELECT  @@session.auto_increment_increment AS auto_increment_increment, @@character_set_client AS character_set_client, @@character_set_connection AS character_set_connection, @@character_set_results AS character_set_results, @@character_set_server AS character_set_server, @@collation_server AS collation_server, @@init_connect AS init_connect, @@interactive_timeout AS interactive_timeout, @@license AS license, @@lower_case_table_names AS lower_case_table_names, @@max_allowed_packet AS max_allowed_packet, @@net_buffer_length AS net_buffer_length, @@net_write_timeout AS net_write_timeout, @@query_cache_size AS query_cache_size, @@query_cache_type AS query_cache_type, @@sql_mode AS sql_mode, @@system_time_zone AS system_time_zone, @@time_zone AS time_zone, @@tx_isolation AS transaction_isolation, @@wait_timeout AS wait_timeout", nil},
		{"SELECT @@session.tx_isolation, @@tx_read_only", []string{"REPEATABLE-READ,0"}},
		{"SHOW DATABASES", []string{"information_schema", "sharding_db"}},
		{"SHOW DATABASES LIKE 'shard%'", []string{"sharding_db"}},
		{"SHOW TABLES", []string{"t_dict", "t_order", "t_plain"}},
		{"SHOW FULL TABLES LIKE 't\\_o%'", []string{"t_order,BASE TABLE"}},
		{"SHOW VARIABLES LIKE 'lower_case_table_names'", []string{"lower_case_table_names,0"}},
		{"SELECT 1 FROM DUAL WHERE 1 = 0", nil},
	}
	for _, tt := range tests {
		got := queryStrings(t, c, tt.sql)
		if tt.want == nil && strings.HasPrefix(tt.sql, "/*") {
			if len(got) != 1 {
				t.Errorf("%s: got %q", tt.sql, got)
			}
			continue
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %q, want %q", tt.sql, got, tt.want)
		}
	}
	// Column names are what MySQL gives them.
	rows, err := c.QueryContext(ctx, "SELECT @@version_comment, DATABASE(), CONNECTION_ID() AS cid")
	if err != nil {
		t.Fatal(err)
	}
	cols, _ := rows.Columns()
	rows.Close()
	if !slices.Equal(cols, []string{"@@version_comment", "DATABASE()", "cid"}) {
		t.Errorf("columns %q", cols)
	}
}

func TestTableMetadataUsesLogicalNames(t *testing.T) {
	// Fresh databases: the test lists every table a data source holds.
	e := startEnv(t, envOptions{databases: "lst"})
	createTables(t, e)
	c := e.conn(t)
	var table, ddl string
	if err := c.QueryRowContext(context.Background(), "SHOW CREATE TABLE t_order").Scan(&table, &ddl); err != nil {
		t.Fatal(err)
	}
	if table != "t_order" || !strings.HasPrefix(ddl, "CREATE TABLE `t_order` (") || strings.Contains(ddl, "t_order_0") {
		t.Errorf("SHOW CREATE TABLE: %q\n%s", table, ddl)
	}
	cols := queryStrings(t, c, "DESCRIBE t_order")
	if len(cols) != 3 || !strings.HasPrefix(cols[0], "order_id,bigint") {
		t.Errorf("DESCRIBE: %q", cols)
	}
	if got := queryStrings(t, c, "SHOW COLUMNS FROM sharding_db.t_order LIKE 'user%'"); len(got) != 1 || !strings.HasPrefix(got[0], "user_id,") {
		t.Errorf("SHOW COLUMNS LIKE: %q", got)
	}
	idx := queryStrings(t, c, "SHOW INDEX FROM t_order")
	if len(idx) != 1 || !strings.HasPrefix(idx[0], "t_order,0,PRIMARY,1,order_id") {
		t.Errorf("SHOW INDEX: %q", idx)
	}
	if _, err := c.ExecContext(context.Background(), "SHOW CREATE TABLE no_such"); errCode(err) != 1146 {
		t.Errorf("SHOW CREATE TABLE of a missing table: %v", err)
	}

	got := queryStrings(t, c, "SELECT TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'sharding_db' ORDER BY TABLE_NAME")
	if want := []string{"t_dict,BASE TABLE", "t_order,BASE TABLE", "t_plain,BASE TABLE"}; !slices.Equal(got, want) {
		t.Errorf("information_schema.TABLES: %q, want %q", got, want)
	}
	got = queryStrings(t, c, "SELECT c.COLUMN_NAME, c.DATA_TYPE FROM information_schema.COLUMNS c WHERE c.TABLE_SCHEMA = DATABASE() AND c.TABLE_NAME = 't_order' ORDER BY c.ORDINAL_POSITION")
	if want := []string{"order_id,bigint", "user_id,int", "status,varchar"}; !slices.Equal(got, want) {
		t.Errorf("information_schema.COLUMNS: %q, want %q", got, want)
	}
	got = queryStrings(t, c, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA ORDER BY 1")
	if want := []string{"information_schema", "sharding_db"}; !slices.Equal(got, want) {
		t.Errorf("information_schema.SCHEMATA: %q, want %q", got, want)
	}
}

func TestSessionSettingsFollowTheSession(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	ctx := context.Background()
	a := e.conn(t)
	b := e.conn(t)
	if _, err := a.ExecContext(ctx, "SET NAMES latin1"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ExecContext(ctx, "SET SESSION sql_mode = 'ANSI', @@session.time_zone = '+03:00', @greeting = CONCAT('hi', '!')"); err != nil {
		t.Fatal(err)
	}
	// Every statement of a, on whatever backend connection, sees them;
	// b, sharing the pools, never does.
	for range 3 {
		got := queryStrings(t, a, "SELECT @@character_set_client, @@sql_mode, @@time_zone, @greeting")
		if want := "latin1,REAL_AS_FLOAT,PIPES_AS_CONCAT,ANSI_QUOTES,IGNORE_SPACE,ANSI,+03:00,hi!"; len(got) != 1 || got[0] != want {
			t.Errorf("session a: %q, want %q", got, want)
		}
		got = queryStrings(t, b, "SELECT @@character_set_client, @@time_zone, @greeting")
		if want := "utf8mb4,SYSTEM,NULL"; len(got) != 1 || got[0] != want {
			t.Errorf("session b: %q, want %q", got, want)
		}
	}
	// They reach the data nodes too: a scatter write under ANSI mode.
	if _, err := a.ExecContext(ctx, `INSERT INTO t_order (order_id, user_id, status) VALUES (1, 1, 'a' || 'b')`); err != nil {
		t.Fatal(err)
	}
	var status string
	if err := b.QueryRowContext(ctx, "SELECT status FROM t_order WHERE user_id = 1 AND order_id = 1").Scan(&status); err != nil || status != "ab" {
		t.Errorf("ANSI || on the data node: %q, %v", status, err)
	}
	// A bad value is refused and changes nothing.
	if _, err := a.ExecContext(ctx, "SET time_zone = 'nowhere'"); errCode(err) != 1298 {
		t.Errorf("bad time_zone: %v, want 1298", err)
	}
	if _, err := a.ExecContext(ctx, "SET GLOBAL wait_timeout = 10"); errCode(err) != 1235 {
		t.Errorf("SET GLOBAL: %v, want 1235", err)
	}
	if got := queryStrings(t, a, "SELECT @@time_zone"); got[0] != "+03:00" {
		t.Errorf("after a failed SET: %q", got)
	}
}

func TestResetConnection(t *testing.T) {
	e := startEnv(t, envOptions{})
	c, err := client.Connect(e.addr, "app", "app-secret", "sharding_db")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, q := range []string{"SET time_zone = '+03:00'", "SET @x = 5", "SET autocommit = 0"} {
		if _, err := c.Execute(q); err != nil {
			t.Fatal(err)
		}
	}
	c.ResetSequence()
	if err := c.WritePacket([]byte{0, 0, 0, 0, mysql.COM_RESET_CONNECTION}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReadOKPacket(); err != nil {
		t.Fatalf("COM_RESET_CONNECTION: %v", err)
	}
	r, err := c.Execute("SELECT @@time_zone, @x, @@autocommit, DATABASE()")
	if err != nil {
		t.Fatal(err)
	}
	tz, _ := r.GetString(0, 0)
	x, _ := r.IsNull(0, 1)
	ac, _ := r.GetInt(0, 2)
	db, _ := r.GetString(0, 3)
	if tz != "SYSTEM" || !x || ac != 1 || db != "sharding_db" {
		t.Errorf("after COM_RESET_CONNECTION: time_zone %q, @x NULL %v, autocommit %d, db %q", tz, x, ac, db)
	}
}

func TestMultiStatements(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	ctx := context.Background()
	on := e.conn(t, "multiStatements=true")
	rows, err := on.QueryContext(ctx, "SELECT 1; INSERT INTO t_order (order_id, user_id) VALUES (5, 5); SELECT order_id FROM t_order WHERE user_id = 5 AND order_id = 5")
	if err != nil {
		t.Fatal(err)
	}
	var results [][]int64
	for {
		var set []int64
		for rows.Next() {
			var v int64
			rows.Scan(&v)
			set = append(set, v)
		}
		results = append(results, set)
		if !rows.NextResultSet() {
			break
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	// go-sql-driver skips the INSERT's OK between the two result sets.
	if len(results) != 2 || !slices.Equal(results[0], []int64{1}) || !slices.Equal(results[1], []int64{5}) {
		t.Errorf("results %v", results)
	}
	// MySQL stops at the first error: the statement after it never runs.
	_, err = on.ExecContext(ctx, "INSERT INTO t_order (order_id, user_id) VALUES (6, 6); SELEC oops; INSERT INTO t_order (order_id, user_id) VALUES (7, 7)")
	if errCode(err) != 1064 {
		t.Errorf("got %v, want 1064", err)
	}
	if n := len(queryInts(t, on, "SELECT order_id FROM t_order WHERE order_id IN (6, 7)")); n != 1 {
		t.Errorf("%d of orders 6 and 7 stored, want only 6", n)
	}

	off := e.conn(t)
	_, err = off.ExecContext(ctx, "INSERT INTO t_order (order_id, user_id) VALUES (8, 8); INSERT INTO t_order (order_id, user_id) VALUES (9, 9)")
	if errCode(err) != 1064 || !strings.Contains(err.Error(), "multi-statements") {
		t.Errorf("without multi-statements: got %v, want 1064 explaining why", err)
	}
	if n := len(queryInts(t, off, "SELECT order_id FROM t_order WHERE order_id IN (8, 9)")); n != 0 {
		t.Errorf("%d statements of a refused query ran", n)
	}
}
