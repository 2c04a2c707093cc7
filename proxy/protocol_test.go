package proxy

import (
	"context"
	"database/sql"
	"encoding/binary"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	gomysql "github.com/go-sql-driver/mysql"

	"github.com/shardflake/shardflake/proxy/internal/wire"
)

// readGreeting connects to addr and returns the server version and
// capabilities of its greeting.
func readGreeting(t *testing.T, addr string) (string, uint32) {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	p, err := wire.NewConn(nc).ReadPacket()
	if err != nil {
		t.Fatal(err)
	}
	if len(p) < 1 || p[0] != 10 {
		t.Fatalf("greeting %q is not protocol 10", p)
	}
	end := 1
	for end < len(p) && p[end] != 0 {
		end++
	}
	at := end + 1 + 4 + 8 + 1
	if at+7 > len(p) {
		t.Fatalf("greeting too short: %q", p)
	}
	caps := uint32(binary.LittleEndian.Uint16(p[at:])) | uint32(binary.LittleEndian.Uint16(p[at+5:]))<<16
	return string(p[1:end]), caps
}

// TestServerVersionIsTheDataSources: with no server.version, the proxy
// announces the default data source's version with a shardflake suffix,
// in the greeting with MariaDB's 5.5.5- prefix as MariaDB sends it, so a
// MariaDB-aware client (Django's RETURNING, Connector/J) sees MariaDB.
func TestServerVersionIsTheDataSources(t *testing.T) {
	e := startEnv(t, envOptions{})
	direct := e.backend(t, 0)
	var backendVersion string
	if err := direct.QueryRow("SELECT VERSION()").Scan(&backendVersion); err != nil {
		t.Fatal(err)
	}
	c := e.conn(t)
	got := queryOne(t, c, "SELECT VERSION()")
	if !isMariaDB(backendVersion) || !strings.HasPrefix(backendVersion, strings.TrimSuffix(got, "-shardflake")) || !strings.HasSuffix(got, "-MariaDB-shardflake") {
		t.Errorf("VERSION() = %q through the proxy, %q directly: want the data source's version-MariaDB-shardflake", got, backendVersion)
	}
	if v := queryOne(t, c, "SELECT @@version"); v != got {
		t.Errorf("@@version = %q, VERSION() = %q", v, got)
	}
	greeting, caps := readGreeting(t, e.addr)
	directGreeting, directCaps := readGreeting(t, e.backends[0].Addr())
	if greeting != "5.5.5-"+got || !strings.HasPrefix(directGreeting, "5.5.5-") {
		t.Errorf("greeting version %q through the proxy (directly %q), want 5.5.5-%s", greeting, directGreeting, got)
	}
	// go-sql-driver from v1.10 asks only for what the greeting offers:
	// without CLIENT_FOUND_ROWS there, clientFoundRows=true is dropped.
	for _, f := range []uint32{mysql.CLIENT_MULTI_STATEMENTS, mysql.CLIENT_MULTI_RESULTS, mysql.CLIENT_PROTOCOL_41, mysql.CLIENT_FOUND_ROWS} {
		if directCaps&f == 0 || caps&f == 0 {
			t.Errorf("capability %#x: directly %v, through the proxy %v", f, directCaps&f != 0, caps&f != 0)
		}
	}
}

// TestCommentOnlyAndEmptyQuery: a query that is only a comment is
// answered OK, an empty one with 1065, as by MariaDB; the connection
// stays usable.
func TestCommentOnlyAndEmptyQuery(t *testing.T) {
	e := startEnv(t, envOptions{})
	direct := e.backend(t, 0)
	proxied := e.open(t)
	tests := []string{"--", "-- just a comment", "/* a comment */", "# hash comment\n", " ", ""}
	for _, q := range tests {
		want := execOutcome(direct, q)
		if got := execOutcome(proxied, q); got != want {
			t.Errorf("%q: through the proxy %s, directly %s", q, got, want)
		}
	}
	if execOutcome(proxied, "--") != "ok" {
		t.Errorf("a comment-only query is not OK")
	}
	if got := queryOne(t, proxied, "SELECT 1"); got != "1" {
		t.Errorf("after: SELECT 1 = %s", got)
	}
}

// execOutcome runs q as a text query and returns "ok" or the error code.
func execOutcome(db *sql.DB, q string) string {
	rows, err := db.QueryContext(context.Background(), q)
	if err != nil {
		if c := errCode(err); c != 0 {
			return "error " + strconv.Itoa(int(c))
		}
		return err.Error()
	}
	for rows.Next() {
	}
	if err := rows.Err(); err != nil {
		return err.Error()
	}
	rows.Close()
	return "ok"
}

// outcomes runs each statement on c and returns, per statement, its rows
// (values joined by ",", rows by ";") or its error code.
func outcomes(c *sql.Conn, script []string) []string {
	out := make([]string, len(script))
	for i, q := range script {
		rows, err := c.QueryContext(context.Background(), q)
		if err != nil {
			out[i] = q + " -> error " + strconv.Itoa(int(errCode(err)))
			continue
		}
		cols, _ := rows.Columns()
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for j := range vals {
			ptrs[j] = &vals[j]
		}
		var got []string
		for rows.Next() {
			rows.Scan(ptrs...)
			var parts []string
			for _, v := range vals {
				if v.Valid {
					parts = append(parts, v.String)
				} else {
					parts = append(parts, "NULL")
				}
			}
			got = append(got, strings.Join(parts, ","))
		}
		if err := rows.Err(); err != nil {
			got = append(got, "error "+strconv.Itoa(int(errCode(err))))
		}
		rows.Close()
		out[i] = q + " -> " + strings.Join(got, ";")
	}
	return out
}

// TestSQLPreparedStatements: PREPARE ... FROM, EXECUTE ... USING and
// DEALLOCATE PREPARE behave as on MariaDB, with their errors (1243, 1210,
// 1064), the connection usable after each; EXECUTE routes by the values
// of its variables (a sharded INSERT lands on its data node).
func TestSQLPreparedStatements(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS sqlprep_ref", "CREATE DATABASE sqlprep_ref",
		"CREATE TABLE sqlprep_ref.t_order (order_id BIGINT NOT NULL, user_id INT NOT NULL, status VARCHAR(32), PRIMARY KEY (order_id))")
	ref, err := e.backends[0].Open(t, "sqlprep_ref").Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	script := []string{
		"SET @u = 3, @o = 31, @s = 'it''s'",
		"PREPARE ins FROM 'INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, ?)'",
		"EXECUTE ins USING @o, @u, @s",
		"SET @o = 32, @u = 4",
		"EXECUTE ins USING @o, @u, @s",
		"EXECUTE ins USING @o, @u",
		"SET @q = 'SELECT order_id, status FROM t_order WHERE user_id = ? ORDER BY order_id'",
		"PREPARE sel FROM @q",
		"EXECUTE sel USING @u",
		"SET @u = 3",
		"EXECUTE sel USING @u",
		"EXECUTE sel USING @nosuch",
		"PREPARE sel FROM 'SELECT COUNT(*) FROM t_order'",
		"EXECUTE sel",
		"DEALLOCATE PREPARE sel",
		"EXECUTE sel",
		"DEALLOCATE PREPARE sel",
		"DROP PREPARE ins",
		"EXECUTE nosuch",
		"PREPARE bad FROM 'SELEC 1'",
		"SELECT COUNT(*) FROM t_order",
	}
	got := outcomes(e.conn(t), script)
	want := outcomes(ref, script)
	for i := range script {
		if got[i] != want[i] {
			t.Errorf("through the proxy: %s\n                 directly: %s", got[i], want[i])
		}
	}
	// The INSERTs were routed by their values: user 3 on ds_1, 4 on ds_0.
	where := landed(t, e)
	if where[31] != "ds_1.t_order_1" || where[32] != "ds_0.t_order_0" {
		t.Errorf("rows landed on %v", where)
	}
}

// TestStoredProcedureOnDefault: CREATE PROCEDURE, CALL and DROP
// PROCEDURE run on the default data source, where the routine lives, as
// on MariaDB directly.
func TestStoredProcedureOnDefault(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	// Routines run as the data source's account: only a user allowed
	// beyond the logical schema may create or call them.
	if _, err := e.open(t).Exec("CREATE PROCEDURE p_denied() SELECT 1"); errCode(err) != 1044 {
		t.Errorf("CREATE PROCEDURE by an application account: %v, want 1044", err)
	}
	yaml := strings.Replace(rulesYAML(e.backends, "", driverSuiteRules), "{ user: other, password: other-secret }", "{ user: other, password: other-secret, otherSchemas: true }", 1)
	srv, addr, err := startProxyOn(yaml)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	ops, err := sql.Open("mysql", (&testEnv{addr: addr}).dsn("other", "other-secret"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ops.Close() })
	c, err := ops.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS sqlproc_ref", "CREATE DATABASE sqlproc_ref",
		"CREATE TABLE sqlproc_ref.t_plain (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(32))")
	ref, err := e.backends[0].Open(t, "sqlproc_ref").Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	script := []string{
		"DROP PROCEDURE IF EXISTS add_plain",
		"CREATE PROCEDURE add_plain(IN x VARCHAR(32)) INSERT INTO t_plain (v) VALUES (x)",
		"CALL add_plain('one')",
		"CALL add_plain('two')",
		"SELECT v FROM t_plain ORDER BY id",
		"CREATE PROCEDURE add_plain(IN x VARCHAR(32)) INSERT INTO t_plain (v) VALUES (x)",
		"DROP PROCEDURE add_plain",
		"CALL add_plain('three')",
		"DROP PROCEDURE add_plain",
		"SELECT COUNT(*) FROM t_plain",
	}
	got := outcomes(c, script)
	want := outcomes(ref, script)
	for i := range script {
		if got[i] != want[i] {
			t.Errorf("through the proxy: %s\n                 directly: %s", got[i], want[i])
		}
	}
}

// TestInsertReturning: INSERT ... RETURNING gives the inserted rows in
// the statement's row order, as MariaDB does, across data nodes, as text
// and as a prepared statement, generated keys included, and a broadcast
// table's rows once.
func TestInsertReturning(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS returning_ref", "CREATE DATABASE returning_ref",
		"CREATE TABLE returning_ref.t_order (order_id BIGINT NOT NULL, user_id INT NOT NULL, status VARCHAR(32), PRIMARY KEY (order_id))",
		"CREATE TABLE returning_ref.t_plain (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(32))",
		"CREATE TABLE returning_ref.t_dict (code VARCHAR(16) PRIMARY KEY, label VARCHAR(64))")
	ref, err := e.backends[0].Open(t, "returning_ref").Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	c := e.conn(t)
	script := []string{
		// Rows for ds_1, ds_0, ds_1, ds_0: two routes, the client's order.
		"INSERT INTO t_order (order_id, user_id, status) VALUES (1, 1, 'a'), (2, 2, 'b'), (3, 3, 'c'), (4, 4, 'd') RETURNING order_id, user_id, status",
		"INSERT INTO t_order (order_id, user_id, status) VALUES (5, 5, 'e') RETURNING *",
		"INSERT INTO t_order (order_id, user_id, status) VALUES (6, 6, 'f'), (7, 7, 'g') RETURNING order_id * 10 AS x, UPPER(status)",
		// Qualified by the table, as Django writes it: the routes insert
		// into physical tables, whose names the qualifiers must take.
		"INSERT INTO t_order (order_id, user_id, status) VALUES (9, 1, 'h'), (10, 2, 'i') RETURNING `t_order`.`order_id`, t_order.status, t_order . user_id",
		"INSERT INTO t_order (order_id, user_id, status) VALUES (11, 3, 'j') RETURNING `t_order`.*, 't_order.status'",
		"REPLACE INTO t_order (order_id, user_id, status) VALUES (7, 7, 'G') RETURNING status",
		"INSERT INTO t_plain (v) VALUES ('p'), ('q') RETURNING id, v",
		// A broadcast table: the rows once, not once a data source.
		"INSERT INTO t_dict (code, label) VALUES ('c', 'C'), ('d', 'D') RETURNING code, label",
		"INSERT INTO t_order (order_id, user_id, status) VALUES (1, 1, 'dup') RETURNING order_id",
		"INSERT INTO t_order (order_id, user_id) VALUES (8, 8) RETURNING nosuch",
		"UPDATE t_order SET status = 'x' WHERE order_id = 1 RETURNING order_id",
		"SELECT order_id, user_id, status FROM t_order ORDER BY order_id",
	}
	got, want := outcomes(c, script), outcomes(ref, script)
	for i := range script {
		if got[i] != want[i] {
			t.Errorf("through the proxy: %s\n                 directly: %s", got[i], want[i])
		}
	}
	// Prepared, across data nodes.
	q := "INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, ?), (?, ?, ?), (?, ?, ?) RETURNING order_id, status"
	args := []any{21, 2, "x", 22, 1, "y", 23, 4, "z"}
	for name, conn := range map[string]*sql.Conn{"proxy": c, "direct": ref} {
		rows, err := conn.QueryContext(context.Background(), q, args...)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := scanStrings(t, rows, q, ","); !slices.Equal(got, []string{"21,x", "22,y", "23,z"}) {
			t.Errorf("%s: prepared RETURNING %q", name, got)
		}
	}
	// Generated keys come back in row order, each the key of its row.
	rows, err := c.QueryContext(context.Background(), "INSERT INTO t_order (user_id, status) VALUES (1, 'k1'), (2, 'k2'), (3, 'k3'), (4, 'k4') RETURNING order_id, status")
	if err != nil {
		t.Fatal(err)
	}
	gen := scanStrings(t, rows, "RETURNING generated", ",")
	if len(gen) != 4 {
		t.Fatalf("generated keys: %q", gen)
	}
	for i, g := range gen {
		id, status, _ := strings.Cut(g, ",")
		if status != "k"+strconv.Itoa(i+1) {
			t.Errorf("row %d came back as %q", i+1, g)
		}
		if got := queryOne(t, c, "SELECT status FROM t_order WHERE order_id = "+id); got != status {
			t.Errorf("key %s holds %q, RETURNING said %q", id, got, status)
		}
	}
}

// TestShowWarnings: SHOW WARNINGS, SHOW ERRORS, their COUNT(*) forms and
// @@warning_count/@@error_count describe the last statement as on
// MariaDB: a backend's warnings (INSERT IGNORE truncating, 1/0), the last
// error, and nothing after a statement without any.
func TestShowWarnings(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS warnings_ref", "CREATE DATABASE warnings_ref",
		"CREATE TABLE warnings_ref.t_order (order_id BIGINT NOT NULL, user_id INT NOT NULL, status VARCHAR(32), PRIMARY KEY (order_id))",
		"CREATE TABLE warnings_ref.t_plain (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(32))")
	ref, err := e.backends[0].Open(t, "warnings_ref").Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	script := []string{
		"INSERT IGNORE INTO t_plain (v) VALUES ('a value that is far too long for its column')",
		"SHOW WARNINGS",
		"SELECT @@warning_count, @@error_count",
		"SHOW COUNT(*) WARNINGS",
		"SELECT 1",
		"SHOW WARNINGS",
		"SELECT 1/0",
		"SHOW WARNINGS",
		"SELECT * FROM nosuch",
		"SHOW WARNINGS",
		"SHOW ERRORS",
		"SHOW COUNT(*) ERRORS",
		"SELECT @@warning_count, @@error_count",
		"INSERT INTO t_order (order_id, user_id, status) VALUES (1, 1, 'a'), (2, 2, 'b')",
		"SHOW WARNINGS",
		"UPDATE IGNORE t_order SET status = REPEAT('x', 40) WHERE order_id = 1",
		"SHOW WARNINGS",
		// A backend's warning names the logical schema, as its errors do.
		"DROP TABLE IF EXISTS nosuch",
		"SHOW WARNINGS",
		"DROP TABLE IF EXISTS t_plain, nosuch_either",
		"SHOW WARNINGS",
	}
	got, want := outcomes(e.conn(t), script), outcomes(ref, script)
	for i := range script {
		want[i] = strings.ReplaceAll(want[i], "warnings_ref", "sharding_db")
		if got[i] != want[i] {
			t.Errorf("through the proxy: %s\n                 directly: %s", got[i], want[i])
		}
	}
	// A statement over several data nodes: every node's warnings.
	c := e.conn(t)
	mustExec(t, c, "UPDATE IGNORE t_order SET status = REPEAT('y', 40)")
	if got := queryOne(t, c, "SELECT @@warning_count"); got != "2" {
		t.Errorf("@@warning_count after an UPDATE of two data nodes = %s, want 2", got)
	}
}

// TestLoadDataLocal: LOAD DATA LOCAL INFILE into a table without rules
// runs on the default data source with the client's file relayed; into a
// sharded table it is refused with 1235 and the connection stays usable.
func TestLoadDataLocal(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	gomysql.RegisterReaderHandler("proto_rows", func() io.Reader {
		return strings.NewReader("one\ntwo\nthree\n")
	})
	defer gomysql.DeregisterReaderHandler("proto_rows")
	c := e.conn(t)
	res, err := c.ExecContext(context.Background(), "LOAD DATA LOCAL INFILE 'Reader::proto_rows' INTO TABLE t_plain (v)")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 3 {
		t.Errorf("LOAD DATA loaded %d rows, want 3", n)
	}
	if got := queryStrings(t, c, "SELECT v FROM t_plain ORDER BY id"); !slices.Equal(got, []string{"one", "two", "three"}) {
		t.Errorf("t_plain holds %q", got)
	}
	_, err = c.ExecContext(context.Background(), "LOAD DATA LOCAL INFILE 'Reader::proto_rows' INTO TABLE t_order (status)")
	if errCode(err) != 1235 {
		t.Errorf("LOAD DATA into a sharded table: %v, want 1235", err)
	}
	if got := queryOne(t, c, "SELECT COUNT(*) FROM t_plain"); got != "3" {
		t.Errorf("afterwards COUNT(*) = %s", got)
	}
}

// TestSQLPreparedColumnNames: MariaDB names a select field of a PREPARE'd
// SELECT by the prepared text, ?s and all (? + 1), where EXECUTE through
// the proxy runs the text with the values written in; the proxy names
// those columns as MariaDB does, before and after a wildcard, in a UNION's
// first SELECT too. Aliased fields and fields without a ? keep their
// names.
func TestSQLPreparedColumnNames(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	ctx := context.Background()
	e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS sqlnames_ref", "CREATE DATABASE sqlnames_ref",
		"CREATE TABLE sqlnames_ref.t_order (order_id BIGINT NOT NULL, user_id INT NOT NULL, status VARCHAR(32), PRIMARY KEY (order_id))")
	ref, err := e.backends[0].Open(t, "sqlnames_ref").Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	c := e.conn(t)
	script := []string{
		"INSERT INTO t_order (order_id, user_id, status) VALUES (1, 3, 'a'), (2, 4, 'b'), (3, 3, 'c')",
		"SET @u = 3, @s = 'x', @n = 5, @one = 1",
		"PREPARE p1 FROM 'SELECT order_id, ? + 1, CONCAT(?,  status) AS c, ?*2, status FROM t_order WHERE user_id = ? ORDER BY order_id'",
		"PREPARE p2 FROM 'SELECT ?, (SELECT COUNT(*) FROM t_order WHERE user_id = ?), UPPER( ? ) FROM t_order WHERE order_id = 1'",
		"PREPARE p3 FROM 'SELECT ? - 1, t_order.*, ? FROM t_order WHERE order_id = ?'",
		"PREPARE p4 FROM 'SELECT *, ? + 1 FROM t_order WHERE order_id = ?'",
		"PREPARE p5 FROM 'SELECT CONCAT(status, ?) FROM t_order WHERE user_id = ? UNION ALL SELECT ? FROM t_order WHERE order_id = ?'",
	}
	for _, q := range script {
		for _, conn := range []*sql.Conn{c, ref} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	answer := func(conn *sql.Conn, q string) string {
		rows, err := conn.QueryContext(ctx, q)
		if err != nil {
			return "error: " + err.Error()
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		out, err := rowStrings(rows, ",")
		if err != nil {
			return "error: " + err.Error()
		}
		return strings.Join(cols, " | ") + ": " + strings.Join(out, "; ")
	}
	for _, q := range []string{"EXECUTE p1 USING @n, @s, @n, @u", "EXECUTE p2 USING @s, @u, @s", "EXECUTE p3 USING @n, @s, @u", "EXECUTE p4 USING @n, @one", "EXECUTE p5 USING @s, @u, @s, @one"} {
		got, want := answer(c, q), answer(ref, q)
		if got != want || strings.HasPrefix(want, "error") {
			t.Errorf("%s\nthrough the proxy: %s\ndirectly:          %s", q, got, want)
		}
	}
}
