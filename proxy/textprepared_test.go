package proxy

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// backendCount sums a SHOW GLOBAL STATUS counter over the backends.
func backendCount(t *testing.T, e *testEnv, name string) int {
	t.Helper()
	n := 0
	for i := range 2 {
		n += globalStatus(t, e.backend(t, i), name)
	}
	return n
}

// TestUnionPrepared: a joined statement (one UNION per data source) runs
// as a backend prepared statement where its answer is the same as the
// text statement's, and as text where it might not be, and either way
// answers as MariaDB does on one table: rows, column names, types and
// nullability. A client's COM_STMT_EXECUTE passes its own arguments; a
// text query's routes are prepared when all their arguments are integers
// (a string literal stays text); columns whose binary values do not read
// back as MariaDB's text (floating point, temporal, YEAR, BIT)
// keep the statement text. Counted by the backends themselves
// (Com_stmt_execute).
func TestUnionPrepared(t *testing.T) {
	e := startEnv(t, envOptions{rules: upRules})
	refPrepared := upSetup(t, e)
	refText := openDSN(t, e.backends[0].DSN("up_ref"), "interpolateParams=true")
	tests := []struct {
		name    string
		sql     string
		args    []any
		ordered bool
		// executes: backend COM_STMT_EXECUTEs of the joined run, from a
		// prepared client and a text client.
		prepared, text int
	}{
		{name: "exact columns", sql: "SELECT id, k, c, de, u, t, e, vb FROM up WHERE id BETWEEN ? AND ?", args: []any{5, 44}, prepared: 2, text: 2},
		{name: "aggregates", sql: "SELECT SUM(k), COUNT(*), COUNT(c), MIN(c), MAX(de), SUM(u), AVG(t) FROM up WHERE id BETWEEN ? AND ?", args: []any{3, 57}, prepared: 2, text: 2},
		{name: "order", sql: "SELECT c, id, de FROM up WHERE id BETWEEN ? AND ? ORDER BY c, id", args: []any{1, 60}, ordered: true, prepared: 2, text: 2},
		{name: "order limit", sql: "SELECT id, k FROM up WHERE id > ? ORDER BY k DESC, id LIMIT ?", args: []any{4, 9}, ordered: true, prepared: 2, text: 2},
		{name: "distinct", sql: "SELECT DISTINCT c FROM up WHERE id BETWEEN ? AND ? ORDER BY c", args: []any{2, 59}, ordered: true, prepared: 2, text: 2},
		{name: "negative", sql: "SELECT id, t FROM up WHERE t BETWEEN ? AND ?", args: []any{-20, 5}, prepared: 2, text: 2},
		{name: "string argument", sql: "SELECT id, c FROM up WHERE c >= ?", args: []any{"c05"}, prepared: 2, text: 0},
		{name: "no argument", sql: "SELECT id, k FROM up", prepared: 2, text: 0},
		{name: "double", sql: "SELECT id, f FROM up WHERE id BETWEEN ? AND ?", args: []any{1, 60}},
		{name: "float", sql: "SELECT id, fl FROM up WHERE id BETWEEN ? AND ?", args: []any{1, 60}},
		{name: "datetime", sql: "SELECT id, dt FROM up WHERE id BETWEEN ? AND ?", args: []any{1, 60}},
		{name: "year", sql: "SELECT id, y FROM up WHERE id BETWEEN ? AND ?", args: []any{1, 60}},
		{name: "bit", sql: "SELECT id, bt FROM up WHERE id BETWEEN ? AND ?", args: []any{1, 60}},
	}
	for _, client := range []struct {
		name          string
		proxy, direct querier
		prepared      bool
	}{
		{"prepared", prepareEach(t, e.open(t)), prepareEach(t, refPrepared), true},
		{"text", e.open(t, "interpolateParams=true").Query, refText.Query, false},
	} {
		for _, tt := range tests {
			t.Run(client.name+" "+tt.name, func(t *testing.T) {
				wantCols, want := queryWith(t, client.direct, tt.sql, tt.args...)
				// The first run learns the shape's columns apart, the
				// second joins and prepares, the third is counted.
				queryWith(t, client.proxy, tt.sql, tt.args...)
				queryWith(t, client.proxy, tt.sql, tt.args...)
				selects, executes := comSelect(t, e), backendCount(t, e, "Com_stmt_execute")
				gotCols, got := queryWith(t, client.proxy, tt.sql, tt.args...)
				if n := comSelect(t, e) - selects; n != 2 {
					t.Errorf("backends ran %d SELECTs, want 2 (joined)", n)
				}
				wantExec := tt.text
				if client.prepared {
					wantExec = tt.prepared
				}
				if n := backendCount(t, e, "Com_stmt_execute") - executes; n != wantExec {
					t.Errorf("backends ran %d prepared statements, want %d", n, wantExec)
				}
				if !slices.Equal(gotCols, wantCols) {
					t.Errorf("columns:\n got %q\nwant %q", gotCols, wantCols)
				}
				if !tt.ordered {
					slices.Sort(got)
					slices.Sort(want)
				}
				if !slices.Equal(got, want) {
					t.Errorf("rows:\n got %q\nwant %q", got, want)
				}
			})
		}
	}
}

// querier runs a query: sql.DB.Query, or prepareEach's.
type querier func(q string, args ...any) (*sql.Rows, error)

// prepareEach queries db through a prepared statement per query text,
// prepared once (COM_STMT_EXECUTE even without arguments, where
// sql.DB.Query would send text).
func prepareEach(t *testing.T, db *sql.DB) querier {
	stmts := map[string]*sql.Stmt{}
	t.Cleanup(func() {
		for _, st := range stmts {
			st.Close()
		}
	})
	return func(q string, args ...any) (*sql.Rows, error) {
		st, ok := stmts[q]
		if !ok {
			var err error
			if st, err = db.Prepare(q); err != nil {
				return nil, err
			}
			stmts[q] = st
		}
		return st.Query(args...)
	}
}

// queryWith is queryRows through a querier.
func queryWith(t *testing.T, query querier, q string, args ...any) (cols []string, rows []string) {
	t.Helper()
	rs, err := query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	types, err := rs.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	for _, ct := range types {
		n, _ := ct.Nullable()
		cols = append(cols, fmt.Sprintf("%s %s null=%v", ct.Name(), ct.DatabaseTypeName(), n))
	}
	return cols, scanStrings(t, rs, q, "|")
}

// TestUnionPreparedInTransaction: inside a transaction a joined
// statement runs prepared on the transaction's connections, START
// TRANSACTION riding ahead of its COM_STMT_EXECUTE when it is the
// transaction's first read: the transaction's snapshot is taken there
// (a row committed by another session afterwards stays unseen), and
// its own writes are seen.
func TestUnionPreparedInTransaction(t *testing.T) {
	e := startEnv(t, envOptions{rules: upRules})
	upSetup(t, e)
	p := e.open(t)
	const q = "SELECT id, k FROM up WHERE id BETWEEN ? AND ? ORDER BY k DESC, id LIMIT 3"
	rows := func(query func(string, ...any) (*sql.Rows, error)) string {
		t.Helper()
		rs, err := query(q, 1, 60)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(scanStrings(t, rs, q, ":"), ",")
	}
	// Learn and join the shape outside the transaction.
	rows(p.Query)
	rows(p.Query)
	tx, err := p.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	begins, executes := backendCount(t, e, "Com_begin"), backendCount(t, e, "Com_stmt_execute")
	// k = (id*31)%17: the largest are 16 (ids 6, 23, 40, 57).
	if got, want := rows(tx.Query), "6:16,23:16,40:16"; got != want {
		t.Fatalf("first read: %q, want %q", got, want)
	}
	if n := backendCount(t, e, "Com_begin") - begins; n != 2 {
		t.Errorf("the first read opened %d parts, want 2", n)
	}
	if n := backendCount(t, e, "Com_stmt_execute") - executes; n != 2 {
		t.Errorf("the first read ran %d prepared statements, want 2", n)
	}
	// Another session commits a larger k: the snapshot does not see it.
	unionExec(t, p, "UPDATE up SET k = 99 WHERE id = 11")
	if _, err := tx.Exec("UPDATE up SET k = k + 100 WHERE id IN (3, 8)"); err != nil {
		t.Fatal(err)
	}
	if got, want := rows(tx.Query), "8:110,3:108,6:16"; got != want {
		t.Errorf("after the transaction's writes: %q, want %q", got, want)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if got, want := rows(p.Query), "11:99,6:16,23:16"; got != want {
		t.Errorf("after the rollback: %q, want %q", got, want)
	}
}

// TestUnionPreparedLost: a joined statement the backend no longer knows
// (closed behind the proxy's back) is prepared again and answers.
func TestUnionPreparedLost(t *testing.T) {
	e := startEnv(t, envOptions{rules: upRules})
	ref := upSetup(t, e)
	p := prepareEach(t, e.open(t))
	const q = "SELECT c, id FROM up WHERE id BETWEEN ? AND ? ORDER BY c, id"
	_, want := queryRows(t, ref, q, 7, 50)
	queryWith(t, p, q, 7, 50)
	queryWith(t, p, q, 7, 50)
	// Every idle connection that holds a joined statement closes it with
	// its next command, the cache still holding it; the others are held
	// out of the pools until the query ran, so that it runs on those.
	lost := 0
	var held []func()
	for _, name := range []string{"ds_0", "ds_1"} {
		pl := e.srv.current().pools[name]
		bcs, err := pl.get(t.Context(), pl.stats().Idle)
		if err != nil {
			t.Fatal(err)
		}
		var losing, others []*backendConn
		for _, bc := range bcs {
			n := lost
			for sql, st := range bc.stmts {
				if strings.Contains(sql, "UNION") {
					bc.queueClose(st.id)
					lost++
				}
			}
			if lost > n {
				losing = append(losing, bc)
			} else {
				others = append(others, bc)
			}
		}
		pl.put(losing...)
		held = append(held, func() { pl.put(others...) })
	}
	defer func() {
		for _, put := range held {
			put()
		}
	}()
	if lost < 2 {
		t.Fatalf("%d joined statements cached, want one per data source at least", lost)
	}
	prepares := backendCount(t, e, "Com_stmt_prepare")
	_, got := queryWith(t, p, q, 7, 50)
	if !slices.Equal(got, want) {
		t.Errorf("rows:\n got %q\nwant %q", got, want)
	}
	if n := backendCount(t, e, "Com_stmt_prepare") - prepares; n != 2 {
		t.Errorf("%d statements prepared again, want 2", n)
	}
}

// TestTextExact pins which column definitions a merge may read in the
// binary protocol.
func TestTextExact(t *testing.T) {
	col := func(tp byte, flag uint16) *mysql.Field { return &mysql.Field{Type: tp, Flag: flag} }
	tests := []struct {
		name string
		give []*mysql.Field
		want bool
	}{
		{"integers", []*mysql.Field{col(mysql.MYSQL_TYPE_TINY, 0), col(mysql.MYSQL_TYPE_SHORT, 0), col(mysql.MYSQL_TYPE_INT24, 0),
			col(mysql.MYSQL_TYPE_LONG, 0), col(mysql.MYSQL_TYPE_LONGLONG, mysql.UNSIGNED_FLAG)}, true},
		{"decimals and strings", []*mysql.Field{col(mysql.MYSQL_TYPE_NEWDECIMAL, 0), col(mysql.MYSQL_TYPE_VAR_STRING, 0),
			col(mysql.MYSQL_TYPE_STRING, mysql.ENUM_FLAG), col(mysql.MYSQL_TYPE_BLOB, mysql.BINARY_FLAG), col(mysql.MYSQL_TYPE_NULL, 0)}, true},
		{"none", nil, false},
		{"zerofill", []*mysql.Field{col(mysql.MYSQL_TYPE_LONG, mysql.ZEROFILL_FLAG|mysql.UNSIGNED_FLAG)}, false},
		{"double", []*mysql.Field{col(mysql.MYSQL_TYPE_LONG, 0), col(mysql.MYSQL_TYPE_DOUBLE, 0)}, false},
		{"float", []*mysql.Field{col(mysql.MYSQL_TYPE_FLOAT, 0)}, false},
		{"datetime", []*mysql.Field{col(mysql.MYSQL_TYPE_DATETIME, 0)}, false},
		{"date", []*mysql.Field{col(mysql.MYSQL_TYPE_DATE, 0)}, false},
		{"time", []*mysql.Field{col(mysql.MYSQL_TYPE_TIME, 0)}, false},
		{"year", []*mysql.Field{col(mysql.MYSQL_TYPE_YEAR, 0)}, false},
		{"bit", []*mysql.Field{col(mysql.MYSQL_TYPE_BIT, 0)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := textExact(tt.give); got != tt.want {
				t.Errorf("textExact = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestTextQueryManyRows: a text query's single route whose prepared
// statement returned more than manyRows rows runs as text on that
// connection from then on (its rows would be decoded and encoded again
// one by one, where text rows go to the client as the backend sent them),
// and answers the same rows every time.
func TestTextQueryManyRows(t *testing.T) {
	t.Run("pooled", func(t *testing.T) { textQueryManyRows(t, false) })
	t.Run("multiplexed", func(t *testing.T) { textQueryManyRows(t, true) })
}

func textQueryManyRows(t *testing.T, mux bool) {
	opts := envOptions{pooled: true}
	if mux {
		opts = envOptions{server: "multiplex: on\nmultiplexConnections: 1" + muxUnbounded}
	}
	e := startEnv(t, opts)
	p := e.open(t, "interpolateParams=true")
	unionExec(t, p, "DROP TABLE IF EXISTS t_many")
	unionExec(t, p, "CREATE TABLE t_many (id INT PRIMARY KEY, v VARCHAR(10))")
	t.Cleanup(func() { e.open(t).Exec("DROP TABLE IF EXISTS t_many") })
	var values []string
	for i := 1; i <= manyRows+10; i++ {
		values = append(values, fmt.Sprintf("(%d, 'v%d')", i, i%7))
	}
	unionExec(t, p, "INSERT INTO t_many VALUES "+strings.Join(values, ", "))
	direct := openDSN(t, e.backends[0].DSN("ds_0"), "interpolateParams=true")
	const few, many = "SELECT id, v FROM t_many WHERE id > ? AND id < ?", "SELECT id, v FROM t_many WHERE id > ?"
	executes := backendCount(t, e, "Com_stmt_execute")
	for run := range 4 {
		for _, q := range []struct {
			sql  string
			args []any
		}{{few, []any{3, 9}}, {many, []any{0}}} {
			_, want := queryRows(t, direct, q.sql, q.args...)
			if _, got := queryRows(t, p, q.sql, q.args...); !slices.Equal(got, want) {
				t.Errorf("run %d, %s: rows:\n got %q\nwant %q", run+1, q.sql, got, want)
			}
		}
	}
	// The few rows run prepared every time, the many only the first.
	if n := backendCount(t, e, "Com_stmt_execute") - executes; n != 4+1 {
		t.Errorf("backends ran %d prepared statements, want 5", n)
	}
	if mux {
		// One shared connection answered all 8 and holds both
		// statements, the many rows' marked.
		if n := muxAnswered(e, "ds_0"); n != 8 {
			t.Errorf("the shared connection answered %d statements, want 8", n)
		}
		_, c := muxQueue(e, "ds_0")
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, q := range []string{few, many} {
			var st *muxStmt
			for sql, s := range c.stmts {
				if strings.Contains(sql, "t_many") && strings.Contains(sql, "<") == (q == few) {
					st = s
				}
			}
			if st == nil || st.manyRows.Load() != (q == many) {
				t.Errorf("%s: statement %+v on the shared connection, want manyRows %v", q, st, q == many)
			}
		}
		return
	}
	marked := 0
	pl := e.srv.current().pools["ds_0"]
	bcs, err := pl.get(t.Context(), pl.stats().Idle)
	if err != nil {
		t.Fatal(err)
	}
	for _, bc := range bcs {
		for sql, st := range bc.stmts {
			if !strings.Contains(sql, "t_many") {
				continue
			}
			if many := !strings.Contains(sql, "<"); st.manyRows != many {
				t.Errorf("%s: manyRows %v, want %v", sql, st.manyRows, many)
			}
			if st.manyRows {
				marked++
			}
		}
	}
	pl.put(bcs...)
	if marked != 1 {
		t.Errorf("%d connections marked the many rows' statement, want 1", marked)
	}
}

// TestTextPreparedLikeMariaDB: a text query whose single route runs as a
// backend prepared statement answers a text client byte for byte as
// MariaDB answers the same text query on one table: the same column
// definitions (with and without MariaDB's extended metadata), the same
// row packets and the same warnings. The shapes cover every column kind
// textExact admits, expressions and literals in the select list, NULLs,
// aggregates, an empty result, LIMIT, a locking read, a derived table and
// an unsigned argument above the signed range; a shape with a column
// textExact refuses runs as text and must answer the same too. Whether a
// shape ran prepared is counted by the backends (Com_stmt_execute). The
// same holds on the shared connections of server.multiplex: on, where
// every shape but the locking read is answered.
func TestTextPreparedLikeMariaDB(t *testing.T) {
	t.Run("pooled", func(t *testing.T) {
		e := startEnv(t, envOptions{rules: upRules, pooled: true})
		upSetup(t, e)
		textPreparedLikeMariaDB(t, e, false)
	})
	t.Run("multiplexed", func(t *testing.T) {
		e := startEnv(t, envOptions{rules: upRules, server: "multiplex: on" + muxUnbounded})
		upSetup(t, e)
		textPreparedLikeMariaDB(t, e, true)
	})
}

func textPreparedLikeMariaDB(t *testing.T, e *testEnv, mux bool) {
	tests := []struct {
		sql      string
		prepared bool
	}{
		{"SELECT id, k, c, de, u, t, e, vb FROM up WHERE id = 7", true},
		{"SELECT id, c FROM up WHERE id = 14", true},
		{"SELECT COUNT(*), SUM(k), MAX(c), MIN(de), AVG(t), SUM(u), COUNT(c) FROM up WHERE id = 8", true},
		{"SELECT k + 1, CONCAT(c, 'x') AS cx, id * 2.5, IFNULL(c, 'none'), CASE WHEN k > 3 THEN 'big' ELSE 'small' END FROM up WHERE id = 9", true},
		{"SELECT (SELECT 5), 7 AS seven, 'lit', NULL, id FROM up WHERE id = 12", true},
		{"SELECT id, k FROM up WHERE id = 9 AND k > 3 LIMIT 1", true},
		{"SELECT c, COUNT(*) AS n FROM up WHERE id = 10 GROUP BY c ORDER BY 1", true},
		{"SELECT id, k FROM up WHERE id = 11 FOR UPDATE", true},
		{"SELECT u, u + 0, u DIV 3 FROM up WHERE id = 13 AND u > 18446744073709551000", true},
		{"SELECT t, -t, ABS(t) FROM up WHERE id = 3 AND t < -20", true},
		{"SELECT e, vb, HEX(vb), LENGTH(vb) FROM up WHERE id = 4", true},
		{"SELECT de, de * 2, ROUND(de, 1), de + 0.0005 FROM up WHERE id = 6", true},
		{"SELECT id FROM up WHERE id = 99", true},
		{"SELECT x, x * 3 FROM (SELECT k AS x FROM up WHERE id = 15) AS d", true},
		{"SELECT id, k FROM up WHERE id = 16 AND c = 5", true},
		{"SELECT * FROM up WHERE id = 17", false},
		{"SELECT id, f, fl FROM up WHERE id = 18", false},
		{"SELECT id, dt, y FROM up WHERE id = 19", false},
		{"SELECT id, z, dz, bt FROM up WHERE id = 20", false},
		{"SELECT id, c FROM up WHERE id = 21 AND c > 'c0'", false},
	}
	for _, extended := range []bool{false, true} {
		proxied := dialMeta(t, e.addr, "app", "app-secret", "sharding_db", extended)
		direct := dialMeta(t, e.backends[0].Addr(), "root", "", "up_ref", extended)
		for _, tt := range tests {
			t.Run(fmt.Sprintf("extended=%v %s", extended, tt.sql), func(t *testing.T) {
				wantDefs, wantRows, wantWarnings := direct.query(t, tt.sql)
				_, wantShown, _ := direct.query(t, "SHOW WARNINGS")
				executes := backendCount(t, e, "Com_stmt_execute")
				shared := muxAnswered(e, "ds_0") + muxAnswered(e, "ds_1")
				defs, rows, warnings := proxied.query(t, tt.sql)
				shared = muxAnswered(e, "ds_0") + muxAnswered(e, "ds_1") - shared
				_, shown, _ := proxied.query(t, "SHOW WARNINGS")
				ran := backendCount(t, e, "Com_stmt_execute") - executes
				// A shared connection's answer with warnings is dropped
				// and the statement runs again on a pooled connection.
				eligible := mux && !strings.Contains(tt.sql, "FOR UPDATE")
				want := map[bool]int{true: 1, false: 0}[tt.prepared]
				if eligible && wantWarnings > 0 {
					want *= 2
				}
				if ran != want {
					t.Errorf("the backends ran %d prepared statements, want %d", ran, want)
				}
				if answered := eligible && wantWarnings == 0; (shared == 1) != answered {
					t.Errorf("the shared connections answered %d statements, want them to answer it: %v", shared, answered)
				}
				sameDefinitions(t, defs, wantDefs, "up_ref")
				if !slices.EqualFunc(rows, wantRows, bytes.Equal) {
					t.Errorf("rows:\nthrough the proxy %q\nMariaDB          %q", rows, wantRows)
				}
				if warnings != wantWarnings || !slices.EqualFunc(shown, wantShown, bytes.Equal) {
					t.Errorf("warnings: %d %q through the proxy, %d %q from MariaDB", warnings, shown, wantWarnings, wantShown)
				}
			})
		}
	}
}

// TestPreparedManyPlaceholders: MariaDB prepares no statement of more
// than 65,535 placeholders (1390). A text query's route with more integer
// literals than that, single or joined, and a client's prepared statement
// whose joined route repeats its 20,000 parameters once per table, run as
// text on the backend and answer MariaDB's rows, where they answered
// error 1390.
func TestPreparedManyPlaceholders(t *testing.T) {
	e := startEnv(t, envOptions{rules: upRules, pooled: true})
	ref := upSetup(t, e)
	in := func(n int) (string, []any) {
		var b strings.Builder
		args := make([]any, n)
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprint(&b, i%17)
			args[i] = i % 17
		}
		return b.String(), args
	}
	text, _ := in(70000)
	p := e.open(t)
	for _, sql := range []string{
		"SELECT id, k FROM up WHERE id = 5 AND k IN (" + text + ")",
		"SELECT id, k FROM up WHERE id BETWEEN 1 AND 60 AND k IN (" + text + ") ORDER BY id",
	} {
		_, want := queryRows(t, ref, sql)
		for run := range 2 {
			if _, got := queryRows(t, p, sql); !slices.Equal(got, want) || len(want) == 0 {
				t.Errorf("%.60s... run %d: rows\n got %q\nwant %q", sql, run+1, got, want)
			}
		}
	}
	marks, args := in(20000)
	marks = strings.Repeat("?,", 19999) + "?"
	sql := "SELECT id, k FROM up WHERE id BETWEEN 1 AND 60 AND k IN (" + marks + ") ORDER BY id"
	_, want := queryWith(t, prepareEach(t, ref), sql, args...)
	for run := range 2 {
		if _, got := queryWith(t, prepareEach(t, p), sql, args...); !slices.Equal(got, want) || len(want) == 0 {
			t.Errorf("prepared, run %d: rows\n got %q\nwant %q", run+1, got, want)
		}
	}
}

// TestPrepareTooManyPlaceholders: a client's COM_STMT_PREPARE of more
// than 65,535 placeholders gets MariaDB's 1390, not a prepare OK whose
// 16-bit parameter count has wrapped (70,000 read as 4,464); 65,535 still
// prepare and execute as on MariaDB; the connection stays usable.
func TestPrepareTooManyPlaceholders(t *testing.T) {
	e := startEnv(t, envOptions{rules: upRules, pooled: true})
	ref := upSetup(t, e)
	p := e.open(t)
	ctx := context.Background()
	sqlOf := func(n int) string {
		return "SELECT id, k FROM up WHERE id BETWEEN 1 AND 60 AND k IN (" + strings.Repeat("?,", n-1) + "?) ORDER BY id"
	}
	for _, n := range []int{65536, 70000} {
		var errs [2]string
		for i, db := range []*sql.DB{ref, p} {
			c := oneConn(t, db)
			st, err := c.PrepareContext(ctx, sqlOf(n))
			if err == nil {
				st.Close()
				errs[i] = "prepared"
			} else {
				errs[i] = err.Error()
			}
			var one int
			if err := c.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
				t.Errorf("%d placeholders: the connection after the prepare: %v", n, err)
			}
		}
		if errs[1] != errs[0] || !strings.Contains(errs[0], "1390") {
			t.Errorf("%d placeholders: prepare\n got %s\nwant %s", n, errs[1], errs[0])
		}
	}
	args := make([]any, 65535)
	for i := range args {
		args[i] = i % 17
	}
	_, want := queryWith(t, prepareEach(t, ref), sqlOf(65535), args...)
	if _, got := queryWith(t, prepareEach(t, p), sqlOf(65535), args...); !slices.Equal(got, want) || len(want) == 0 {
		t.Errorf("65535 placeholders: rows\n got %q\nwant %q", got, want)
	}
}

// TestBackendStatementsFollowSessionSettings: a text query with an
// integer literal runs as a statement prepared on the pooled connection,
// and MariaDB keeps in a prepared statement what the session's settings
// meant when it was prepared (the character set its literals were read
// in, || under the sql_mode of that moment). A session with other
// settings that takes the same connection next, and a session that
// changes its settings inside a transaction, must get the answer its own
// settings give on MariaDB, not the one of the statement prepared before.
func TestBackendStatementsFollowSessionSettings(t *testing.T) {
	e := startEnv(t, envOptions{pooled: true})
	createTables(t, e)
	ctx := context.Background()
	for _, q := range []string{"INSERT INTO t_plain (id, v) VALUES (2, 'plain')", "INSERT INTO t_order (order_id, user_id, status) VALUES (1, 1, 'plain')"} {
		if _, err := e.open(t).Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	// t_plain is on ds_0, the default data source, whose connection runs
	// a SET to check it; the row of t_order on ds_1, whose connections
	// take the session's settings when a statement needs them. Each
	// query's answer on one MariaDB is its t_plain twin's.
	queries := []string{
		"SELECT v, 'd\u00e9j\u00e0' AS lit, CHARSET('x') FROM t_plain WHERE id = 2",
		"SELECT v || 'x' AS c FROM t_plain WHERE id = 2",
		"SELECT status AS v, 'd\u00e9j\u00e0' AS lit, CHARSET('x') FROM t_order WHERE user_id = 1 AND order_id = 1",
		"SELECT status || 'x' AS c FROM t_order WHERE user_id = 1 AND order_id = 1",
	}
	twin := func(q string) string {
		q = strings.Replace(q, "status", "v", 1)
		q = strings.Replace(q, "v AS v", "v", 1)
		return strings.Replace(q, "FROM t_order WHERE user_id = 1 AND order_id = 1", "FROM t_plain WHERE id = 2", 1)
	}
	direct := func(param, set string) map[string]string {
		c, err := openWith(t, e.backends[0].DSN("ds_0"), param).Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if set != "" {
			if _, err := c.ExecContext(ctx, set); err != nil {
				t.Fatal(err)
			}
		}
		want := map[string]string{}
		for _, q := range queries {
			want[q] = answerOf(ctx, c, twin(q))
		}
		return want
	}
	// Prepared on the pooled connections by a session of the baseline.
	warm := func() {
		c := e.conn(t)
		for range 3 {
			for _, q := range queries {
				answerOf(ctx, c, q)
			}
		}
	}
	for _, tc := range []struct{ param, set string }{
		{"charset=latin1", ""},
		{"", "SET sql_mode = 'PIPES_AS_CONCAT'"},
		{"collation=latin1_swedish_ci", "SET sql_mode = CONCAT(@@sql_mode, ',PIPES_AS_CONCAT')"},
	} {
		want := direct(tc.param, tc.set)
		if base := direct("", ""); base[queries[0]] == want[queries[0]] && base[queries[1]] == want[queries[1]] {
			t.Fatalf("%q %q answers as the baseline: the case cannot tell", tc.param, tc.set)
		}
		warm()
		c := e.conn(t, nonEmpty(tc.param)...)
		if tc.set != "" {
			if _, err := c.ExecContext(ctx, tc.set); err != nil {
				t.Fatal(err)
			}
		}
		for _, q := range queries {
			if got := answerOf(ctx, c, q); got != want[q] {
				t.Errorf("%q %q, %s:\n got %s\nwant %s", tc.param, tc.set, q, got, want[q])
			}
		}
		// In a transaction the settings change on the pinned connection,
		// after the statements were prepared there.
		warm()
		tx := e.conn(t)
		if _, err := tx.ExecContext(ctx, "BEGIN"); err != nil {
			t.Fatal(err)
		}
		for _, q := range queries {
			answerOf(ctx, tx, q)
		}
		if tc.param != "" {
			if _, err := tx.ExecContext(ctx, "SET NAMES latin1"); err != nil {
				t.Fatal(err)
			}
		}
		if tc.set != "" {
			if _, err := tx.ExecContext(ctx, tc.set); err != nil {
				t.Fatal(err)
			}
		}
		for _, q := range queries {
			if got := answerOf(ctx, tx, q); got != want[q] {
				t.Errorf("in a transaction, %q %q, %s:\n got %s\nwant %s", tc.param, tc.set, q, got, want[q])
			}
		}
		if _, err := tx.ExecContext(ctx, "COMMIT"); err != nil {
			t.Fatal(err)
		}
	}
}
