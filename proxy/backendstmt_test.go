package proxy

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/internal/mariadbtest"
	"github.com/shardflake/shardflake/proxy/internal/wire"
	"github.com/shardflake/shardflake/router"
)

// globalStatus reads one counter of SHOW GLOBAL STATUS.
func globalStatus(t *testing.T, db *sql.DB, name string) int {
	t.Helper()
	var n string
	var v int
	if err := db.QueryRow("SHOW GLOBAL STATUS LIKE '"+name+"'").Scan(&n, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// onePool is a pool of at most one connection to ds_0 on the first
// shared server, so every statement of a test runs on the same backend
// connection.
func onePool(t *testing.T) (*pool, *mariadbtest.Server) {
	t.Helper()
	s := sharedServers(t)[0]
	p := newPool(config.DataSource{Name: "ds_0", Host: s.Host(), Port: s.Port(), Database: "ds_0", User: s.User(), MaxPoolSize: 1}, false, slog.New(slog.DiscardHandler))
	t.Cleanup(p.close)
	return p, s
}

func selectInt(t *testing.T, src connSource, sql string, args ...any) string {
	t.Helper()
	plan := &router.Plan{Kind: router.KindSelect, Type: router.RouteSingle, Routes: []router.Route{route("ds_0", sql, args...)}}
	res, err := runPlanMode(context.Background(), plan, src, ConcatMerger{}, 1<<20, nopObserver{}, backendPrepared, nil)
	if err != nil {
		t.Fatalf("%s %v: %v", sql, args, err)
	}
	got := collect(t, res.rows)
	if len(got) != 1 {
		t.Fatalf("%s %v: got %v, want one row", sql, args, got)
	}
	return got[0]
}

// TestBackendStmtCache follows the statements prepared on one backend
// connection, counted by the server itself (Prepared_stmt_count): they are
// reused, the least recently used is closed past maxBackendStmts, a
// statement the server lost is prepared again, DDL through the proxy and a
// connection reset drop them, and SQL the server cannot prepare runs as
// text.
func TestBackendStmtCache(t *testing.T) {
	p, s := onePool(t)
	direct := s.Open(t, "ds_0")
	ctx := context.Background()
	src := testSource{pools: map[string]*pool{"ds_0": p}}
	base := globalStatus(t, direct, "Prepared_stmt_count")
	open := func() int { return globalStatus(t, direct, "Prepared_stmt_count") - base }

	bcs, err := p.get(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	bc := bcs[0]
	for i := range maxBackendStmts {
		if _, err := bc.stmt(ctx, fmt.Sprintf("SELECT ? + %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if got := open(); got != maxBackendStmts {
		t.Fatalf("after %d statements: %d open on the server", maxBackendStmts, got)
	}
	// A hit prepares nothing.
	first, err := bc.stmt(ctx, "SELECT ? + 0")
	if err != nil {
		t.Fatal(err)
	}
	if got := open(); got != maxBackendStmts {
		t.Fatalf("after a cache hit: %d open, want %d", got, maxBackendStmts)
	}
	// One more evicts the least recently used: + 1, not + 0 (just used).
	if _, err := bc.stmt(ctx, "SELECT ? + 1000"); err != nil {
		t.Fatal(err)
	}
	if _, ok := bc.stmts["SELECT ? + 0"]; !ok {
		t.Error("the statement used last was evicted")
	}
	if _, ok := bc.stmts["SELECT ? + 1"]; ok {
		t.Error("the least recently used statement was kept")
	}
	// The close goes out with the next command.
	if err := bc.ping(time.Second); err != nil {
		t.Fatal(err)
	}
	if got := open(); got != maxBackendStmts || len(bc.stmts) != maxBackendStmts {
		t.Fatalf("after an eviction: %d open on the server, %d cached; want %d", got, len(bc.stmts), maxBackendStmts)
	}

	// The server forgets + 0 behind the cache's back: the execute fails
	// with 1243 and the route prepares it again.
	bc.queueClose(first.id)
	p.put(bc)
	if got := selectInt(t, src, "SELECT ? + 0", int64(41)); got != "41" {
		t.Errorf("after the server lost the statement: got %s, want 41", got)
	}
	if got := open(); got != maxBackendStmts {
		t.Errorf("after preparing again: %d open, want %d", got, maxBackendStmts)
	}

	// SQL the server will not prepare (1295) runs as text, every time,
	// without asking the server again. (MariaDB counts a PREPARE statement
	// in Com_stmt_prepare too, and in Com_prepare_sql.)
	protocolPrepares := func() int {
		return globalStatus(t, direct, "Com_stmt_prepare") - globalStatus(t, direct, "Com_prepare_sql")
	}
	prepares := protocolPrepares()
	for _, q := range []string{"PREPARE never FROM 'SELECT 1'", "PREPARE never FROM 'SELECT 1'", "DEALLOCATE PREPARE never"} {
		plan := &router.Plan{Kind: router.KindInsert, Routes: []router.Route{route("ds_0", q)}}
		if _, err := runPlanMode(ctx, plan, src, ConcatMerger{}, 1<<20, nopObserver{}, backendPrepared, nil); err != nil {
			t.Fatalf("%s, which the server cannot prepare: %v", q, err)
		}
	}
	if got := protocolPrepares() - prepares; got != 2 {
		t.Errorf("2 unpreparable statements were offered %d times to the server, want once each", got)
	}

	// DDL through the proxy: every statement is closed before the next
	// one is prepared.
	p.schemaGen.Add(1)
	if got := selectInt(t, src, "SELECT ? * 2", int64(21)); got != "42" {
		t.Errorf("after DDL: got %s, want 42", got)
	}
	if got := open(); got != 1 {
		t.Errorf("after DDL: %d statements open, want 1", got)
	}

	// A reset (the connection changes hands between sessions with other
	// settings) deallocates them on the server; the cache follows.
	bcs, err = p.get(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	bc = bcs[0]
	if err := bc.apply("sql_mode = ''"); err != nil {
		t.Fatal(err)
	}
	if err := bc.apply("sql_safe_updates = 0"); err != nil {
		t.Fatal(err)
	}
	if got := open(); got != 0 || len(bc.stmts) != 0 {
		t.Errorf("after a reset: %d open on the server, %d cached; want 0", got, len(bc.stmts))
	}
	p.put(bc)
	if got := selectInt(t, src, "SELECT ? * 2", int64(5)); got != "10" {
		t.Errorf("after a reset: got %s, want 10", got)
	}
}

// TestBackendStmtNewConnection: a connection that replaces a lost one
// prepares its statements afresh.
func TestBackendStmtNewConnection(t *testing.T) {
	p, s := onePool(t)
	direct := s.Open(t, "ds_0")
	ctx := context.Background()
	src := testSource{pools: map[string]*pool{"ds_0": p}}
	if got := selectInt(t, src, "SELECT ? + 1", int64(1)); got != "2" {
		t.Fatalf("got %s, want 2", got)
	}
	bcs, err := p.get(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	old := bcs[0]
	if _, err := direct.Exec("KILL " + strconv.Itoa(int(old.id))); err != nil {
		t.Fatal(err)
	}
	// The statement finds the connection gone; the pool dials anew.
	old.broken = true
	p.put(old)
	prepares := globalStatus(t, direct, "Com_stmt_prepare")
	if got := selectInt(t, src, "SELECT ? + 1", int64(2)); got != "3" {
		t.Fatalf("on a new connection: got %s, want 3", got)
	}
	if got := globalStatus(t, direct, "Com_stmt_prepare") - prepares; got != 1 {
		t.Errorf("the new connection prepared %d statements, want 1", got)
	}
}

// typesTable has a column of every type family MariaDB sends in results.
const typesTable = `CREATE TABLE t_types (
	id INT PRIMARY KEY,
	ti TINYINT, tu TINYINT UNSIGNED, si SMALLINT, mi MEDIUMINT, i INT, iu INT UNSIGNED,
	bi BIGINT, bu BIGINT UNSIGNED, f FLOAT, d DOUBLE, de DECIMAL(12,3),
	dt DATE, dtm DATETIME, dtm6 DATETIME(6), ts TIMESTAMP(3) NULL DEFAULT NULL, tm TIME, tm2 TIME(2), y YEAR,
	c CHAR(5), vc VARCHAR(20), bn BINARY(4), vb VARBINARY(8), bl BLOB, tx TEXT,
	e ENUM('a','b'), st SET('x','y'), bt BIT(10), js JSON)`

var typesRows = []string{
	`INSERT INTO t_types VALUES (1, -128, 255, -32768, -8388608, -2147483648, 4294967295,
		-9223372036854775808, 18446744073709551615, 1.5, -2.25, -123456789.125,
		'2024-02-29', '2024-02-29 13:14:15', '2024-02-29 13:14:15.000001', '2024-02-29 13:14:15.5', '-838:59:59', '01:02:03.25', 2024,
		'ab', 'héllo wörld', 'a\0b', x'00ff10', x'000102', REPEAT('t', 300),
		'b', 'x,y', b'1010101010', '{"k": [1, "v"]}')`,
	`INSERT INTO t_types (id) VALUES (2)`,
	`INSERT INTO t_types VALUES (3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1e20, 0,
		'0000-00-00', '0000-00-00 00:00:00', '1000-01-01 00:00:00', '2001-01-01 00:00:00', '00:00:00', '00:00:00', 0,
		'', '', '', '', '', '', 'a', '', b'0', '[]')`,
}

// TestPreparedResultsAllTypes compares what a driver reads through the
// proxy with what it reads from MariaDB directly, for every column type and
// NULLs, in the binary protocol (server-side prepared statements, whose
// rows the proxy forwards as the backend sent them) and in the text
// protocol.
func TestPreparedResultsAllTypes(t *testing.T) {
	e := startEnv(t, envOptions{})
	proxied := e.open(t)
	for _, q := range append([]string{"DROP TABLE IF EXISTS t_types", typesTable}, typesRows...) {
		if _, err := proxied.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() { proxied.Exec("DROP TABLE IF EXISTS t_types") })
	direct := e.backend(t, 0)
	textProxied := e.open(t, "interpolateParams=true")
	textDirect, err := sql.Open("mysql", "root@tcp("+e.backends[0].Addr()+")/ds_0?interpolateParams=true")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { textDirect.Close() })

	queries := []struct {
		sql  string
		args []any
	}{
		{"SELECT * FROM t_types WHERE id = ?", []any{1}},
		{"SELECT * FROM t_types WHERE id = ?", []any{2}},
		{"SELECT * FROM t_types WHERE id = ?", []any{3}},
		{"SELECT * FROM t_types ORDER BY id", nil},
		{"SELECT id, i + ?, CONCAT(vc, ?), d * ?, NULL, ? FROM t_types ORDER BY id", []any{1, "!", 2.5, nil}},
	}
	for _, q := range queries {
		for _, tt := range []struct {
			name            string
			proxied, direct *sql.DB
		}{
			{"binary", proxied, direct},
			{"text", textProxied, textDirect},
		} {
			want, wantTypes := readAll(t, tt.direct, q.sql, q.args...)
			got, gotTypes := readAll(t, tt.proxied, q.sql, q.args...)
			name := tt.name
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s %v (%s): through the proxy\n%v\ndirectly\n%v", q.sql, q.args, name, got, want)
			}
			if !reflect.DeepEqual(gotTypes, wantTypes) {
				t.Errorf("%s %v (%s): column types through the proxy\n%v\ndirectly\n%v", q.sql, q.args, name, gotTypes, wantTypes)
			}
		}
	}
}

// readAll runs a query and returns its rows as strings ("NULL" for NULL)
// and its column types as the driver reports them.
func readAll(t *testing.T, db *sql.DB, q string, args ...any) ([][]string, []string) {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, ct := range cts {
		n, _ := ct.Nullable()
		l, _ := ct.Length()
		p, s, _ := ct.DecimalSize()
		types = append(types, fmt.Sprintf("%s %s null=%v len=%d dec=%d,%d scan=%v", ct.Name(), ct.DatabaseTypeName(), n, l, p, s, ct.ScanType()))
	}
	var out [][]string
	for rows.Next() {
		vals := make([]sql.RawBytes, len(cts))
		ptrs := make([]any, len(cts))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			if v == nil {
				row[i] = "NULL"
			} else {
				row[i] = fmt.Sprintf("%q", v)
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out, types
}

// TestSplitBinaryRowMatchesServer reads the same rows from MariaDB as text
// (COM_QUERY) and as binary (COM_STMT_EXECUTE) and wants the binary rows,
// decoded by wire.SplitBinaryRow, to equal the text ones: the decoding a
// binary result gets when it is not forwarded as it is.
func TestSplitBinaryRowMatchesServer(t *testing.T) {
	p, s := onePool(t)
	s.Exec(t, "ds_0", append([]string{"DROP TABLE IF EXISTS t_types", typesTable}, typesRows...)...)
	t.Cleanup(func() { s.Exec(t, "ds_0", "DROP TABLE IF EXISTS t_types") })
	ctx := context.Background()
	bcs, err := p.get(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	bc := bcs[0]
	defer p.put(bc)
	const q = "SELECT * FROM t_types ORDER BY id"

	read := func(binary bool) [][]string {
		t.Helper()
		if binary {
			st, err := bc.stmt(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if err := bc.sendExecute(st, nil, nil); err != nil {
				t.Fatal(err)
			}
		} else if err := bc.send(mysql.COM_QUERY, q); err != nil {
			t.Fatal(err)
		}
		h, err := bc.readHead()
		if err != nil {
			t.Fatal(err)
		}
		var out [][]string
		var buf []byte
		for {
			p, err := bc.readRow()
			if errors.Is(err, io.EOF) {
				return out
			}
			if err != nil {
				t.Fatal(err)
			}
			var row [][]byte
			if binary {
				row, buf, err = wire.SplitBinaryRow(p, h.columns, nil, buf)
			} else {
				row, err = wire.SplitTextRow(p, len(h.columns), nil)
			}
			if err != nil {
				t.Fatal(err)
			}
			strs := make([]string, len(row))
			for i, v := range row {
				if v == nil {
					strs[i] = "NULL"
				} else {
					strs[i] = fmt.Sprintf("%q", v)
				}
			}
			out = append(out, strs)
		}
	}
	text, binary := read(false), read(true)
	if len(text) != len(typesRows) {
		t.Fatalf("got %d rows, want %d", len(text), len(typesRows))
	}
	for i := range text {
		if !reflect.DeepEqual(binary[i], text[i]) {
			t.Errorf("row %d: binary decoded\n%v\ntext\n%v", i, binary[i], text[i])
		}
	}
}

// TestPreparedShardedStatements runs sysbench's statements as server-side
// prepared statements through the proxy on a sharded table and checks the
// rows, where they landed, and that the data sources ran them as prepared
// statements, each prepared once per backend connection.
func TestPreparedShardedStatements(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	db := e.open(t)
	db.SetMaxOpenConns(1)
	executes := func() (n int) {
		for i := range e.backends {
			n += globalStatus(t, e.backend(t, i), "Com_stmt_execute")
		}
		return n
	}
	prepares := func() (n int) {
		for i := range e.backends {
			n += globalStatus(t, e.backend(t, i), "Com_stmt_prepare")
		}
		return n
	}
	exec0, prep0 := executes(), prepares()
	const n = 40
	for i := range n {
		if _, err := db.Exec("INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, ?)", i, i%3, "s"+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		if _, err := db.Exec("UPDATE t_order SET status = ? WHERE order_id = ? AND user_id = ?", "u", i, i%3); err != nil {
			t.Fatal(err)
		}
		var status string
		if err := db.QueryRow("SELECT status FROM t_order WHERE order_id = ? AND user_id = ?", i, i%3).Scan(&status); err != nil {
			t.Fatal(err)
		}
		if status != "u" {
			t.Errorf("order %d: status %q, want u", i, status)
		}
	}
	if got := executes() - exec0; got != 3*n {
		t.Errorf("the data sources ran %d prepared statements, want %d", got, 3*n)
	}
	// 3 statements x 4 data nodes, each prepared once on each backend
	// connection that ran it.
	if got := prepares() - prep0; got > 3*4*2 {
		t.Errorf("the data sources prepared %d statements for %d executions: not reused", got, 3*n)
	}
	where := landed(t, e)
	if len(where) != n {
		t.Fatalf("%d rows landed, want %d", len(where), n)
	}
	for id, node := range where {
		want := fmt.Sprintf("ds_%d.t_order_%d", (id%3)%2, id%2)
		if node != want {
			t.Errorf("order %d landed on %s, want %s", id, node, want)
		}
	}
}

// TestPrepareDescribesColumns: COM_STMT_PREPARE of a routed SELECT
// announces the columns the executes return (libmysqlclient and
// libmariadb read an execute's rows only when it did), the client-visible
// ones of a merge; other statements announce none.
func TestPrepareDescribesColumns(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	c, err := client.Connect(e.addr, "app", "app-secret", "sharding_db")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tests := []struct {
		sql  string
		want int
	}{
		{"SELECT status FROM t_order WHERE user_id = ? AND order_id = ?", 1},
		{"SELECT * FROM t_order WHERE user_id = ?", 3},
		{"SELECT order_id, status FROM t_order WHERE user_id = ? ORDER BY status", 2},
		{"SELECT user_id, AVG(order_id) FROM t_order GROUP BY user_id ORDER BY user_id LIMIT ?", 2},
		{"SELECT label FROM t_dict WHERE code = ?", 1},
		{"SELECT id, v FROM t_plain WHERE id IN (?, ?)", 2},
		{"INSERT INTO t_plain (v) VALUES (?)", 0},
		{"UPDATE t_order SET status = ? WHERE user_id = ? AND order_id = ?", 0},
		{"SET @x = ?", 0},
	}
	for _, tt := range tests {
		st, err := c.Prepare(tt.sql)
		if err != nil {
			t.Fatalf("%s: %v", tt.sql, err)
		}
		if got := st.ColumnNum(); got != tt.want {
			t.Errorf("%s: prepare announced %d columns, want %d", tt.sql, got, tt.want)
		}
		st.Close()
	}
}
