package proxy

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"
	gomysql "github.com/go-sql-driver/mysql"

	"github.com/shardflake/shardflake/internal/mariadbtest"
	"github.com/shardflake/shardflake/proxy/internal/sqlvalue"
)

// The differential tests run every query through the proxy, over tables
// sharded on the two shared MariaDB servers, and on plain reference tables
// with the same rows in a third database, and compare rows, column
// metadata and errors.
//
// Databases: mg_0 (server 0) and mg_1 (server 1) hold the physical tables
// of data sources ds_0 and ds_1; mg_ref (server 0) holds the reference
// tables under their logical names, so a query's text is the same for
// both.
const (
	diffRefDB     = "mg_ref"
	diffLogicalDB = "sharding_db"
)

// diffRules shards t_order over 2 data sources x 4 tables (user_id % 2,
// order_id % 4), t_order_item bound to it, and t_range by ranges of id
// over the data sources and grp over the tables; t_feat_broadcast, which
// TestNewFeaturesRandomDifferential creates, is a broadcast table.
func diffRules(backends []*mariadbtest.Server, server string) string {
	var ds strings.Builder
	for i, b := range backends[:2] {
		fmt.Fprintf(&ds, "  ds_%d: { url: \"jdbc:mysql://%s/mg_%d\", username: root, password: \"\", maxPoolSize: 32 }\n", i, b.Addr(), i)
	}
	return fmt.Sprintf(`databaseName: %s
server:
  listen: 127.0.0.1:0
  metricsListen: 127.0.0.1:1
  users:
    - { user: app, password: app-secret }
%s
dataSources:
%s
rules:
  - !SHARDING
    tables:
      t_order:
        actualDataNodes: ds_${0..1}.t_order_${0..3}
        databaseStrategy: { standard: { shardingColumn: user_id, shardingAlgorithmName: user_db } }
        tableStrategy: { standard: { shardingColumn: order_id, shardingAlgorithmName: order_table } }
      t_order_item:
        actualDataNodes: ds_${0..1}.t_order_item_${0..3}
        databaseStrategy: { standard: { shardingColumn: user_id, shardingAlgorithmName: user_db } }
        tableStrategy: { standard: { shardingColumn: order_id, shardingAlgorithmName: item_table } }
      t_range:
        actualDataNodes: ds_${0..1}.t_range_${0..1}
        databaseStrategy: { standard: { shardingColumn: id, shardingAlgorithmName: id_range } }
        tableStrategy: { standard: { shardingColumn: grp, shardingAlgorithmName: grp_table } }
    bindingTables:
      - t_order,t_order_item
    shardingAlgorithms:
      user_db:     { type: INLINE, props: { algorithm-expression: "ds_${user_id %% 2}" } }
      order_table: { type: INLINE, props: { algorithm-expression: "t_order_${order_id %% 4}" } }
      item_table:  { type: INLINE, props: { algorithm-expression: "t_order_item_${order_id %% 4}" } }
      id_range:    { type: BOUNDARY_RANGE, props: { sharding-ranges: "0" } }
      grp_table:   { type: INLINE, props: { algorithm-expression: "t_range_${grp %% 2}" } }
  - !BROADCAST
    tables: [t_feat_broadcast]
`, diffLogicalDB, indent(server), ds.String())
}

// diffPhysical names a data source's physical tables of a logical table
// under diffRules: four of each, two of t_range.
func diffPhysical(logical string) []string {
	n := 4
	if logical == "t_range" {
		n = 2
	}
	var out []string
	for j := range n {
		out = append(out, fmt.Sprintf("%s_%d", logical, j))
	}
	return out
}

// diffSchema is the logical tables' definition, the same for the physical
// and the reference tables. The string columns cover the collations the
// merge must compare with: the default (utf8mb4_general_ci), unicode_ci,
// _bin and latin1_swedish_ci.
var diffSchema = map[string]string{
	"t_order": `(
  order_id BIGINT NOT NULL PRIMARY KEY,
  user_id INT NOT NULL,
  status VARCHAR(20) NULL,
  note VARCHAR(40) COLLATE utf8mb4_unicode_ci NULL,
  code VARCHAR(20) COLLATE utf8mb4_bin NULL,
  city VARCHAR(20) CHARACTER SET latin1 NULL,
  amount DECIMAL(12,2) NULL,
  qty INT NULL,
  score DOUBLE NULL,
  created DATETIME NULL,
  day DATE NULL,
  flag TINYINT NULL,
  big BIGINT UNSIGNED NULL,
  prio ENUM('low', 'mid', 'high') NULL
)`,
	"t_order_item": `(
  item_id BIGINT NOT NULL PRIMARY KEY,
  order_id BIGINT NOT NULL,
  user_id INT NOT NULL,
  qty INT NULL,
  price DECIMAL(8,2) NULL
)`,
	"t_range": `(
  id INT NOT NULL PRIMARY KEY,
  grp INT NOT NULL,
  v VARCHAR(10) NULL,
  w DECIMAL(8,3) NULL
)`,
}

// diffData returns the rows of the logical tables as INSERT value lists.
// They hold NULLs, ties, negative numbers, decimals, dates, and strings
// that differ only in case, trailing spaces or accents; ds_1.t_order_3
// stays empty (no odd user_id has order_id % 4 = 3). Every order has 0 to
// 3 items with its user_id and order_id.
func diffData() map[string][]string {
	statuses := []string{"new", "NEW", "New ", "paid", "PAID", "shipped", "résumé", "resume", "Resume  ", "", "z", "a\t"}
	notes := []string{"straße", "strasse", "STRASSE", "Æble", "aeble", "zebra", "Zoë", "zoe", "ärger", "arger", "b"}
	codes := []string{"abc", "ABC", "abc ", "Abc", "b", "B", "a", "é", "e"}
	cities := []string{"Åre", "Are", "Örebro", "Oslo", "Zürich", "Zurich", "Ystad", "Umeå", "umeå ", "Ängelholm"}
	amounts := []string{"0.00", "1.50", "-1.50", "10.00", "99999999.99", "-0.01", "3.33", "3.33", "2.50", "100.10"}
	scores := []string{"0.1", "1e20", "-2.5", "0.3333333333333333", "100", "-0", "2.5", "1e-7"}
	days := []string{"2024-01-01", "2024-02-29", "2023-12-31", "1999-07-04", "2024-01-01"}
	var orders, items []string
	seq := 0
	pick := func(vals []string, i, nullEvery int) string {
		if nullEvery > 0 && i%nullEvery == nullEvery-1 {
			return "NULL"
		}
		return quoteString(vals[i%len(vals)])
	}
	for i := range 96 {
		user := i % 13
		order := int64(i*7 + 1)
		if user%2 != 0 && order%4 == 3 {
			order += 4 * 1000 // ds_1.t_order_3 stays empty: move it to t_order_0's... same residue
			order++
		}
		seq++
		amount := "NULL"
		if i%9 != 8 {
			amount = amounts[i%len(amounts)]
		}
		qty := "NULL"
		if i%7 != 6 {
			qty = strconv.Itoa(i%11 - 4)
		}
		score := "NULL"
		if i%10 != 9 {
			score = scores[i%len(scores)]
		}
		created := fmt.Sprintf("'2024-0%d-%02d %02d:%02d:00'", 1+i%6, 1+i%28, i%24, (i*13)%60)
		if i%17 == 16 {
			created = "NULL"
		}
		big := strconv.FormatUint(uint64(i)*1234567891234567, 10)
		if i%5 == 0 {
			big = "18446744073709551615"
		}
		// Items of the order: each user has orders on several data nodes,
		// so a join on user_id alone matches rows across data nodes.
		for k := range i % 4 {
			qty := strconv.Itoa((i + k) % 6)
			if (i+k)%9 == 8 {
				qty = "NULL"
			}
			items = append(items, fmt.Sprintf("(%d, %d, %d, %s, %d.%02d)", i*10+k, order, user, qty, (i*k)%50, (i*7+k)%100))
		}
		orders = append(orders, fmt.Sprintf("(%d, %d, %s, %s, %s, %s, %s, %s, %s, %s, %s, %d, %s, %s)",
			order, user, pick(statuses, i, 8), pick(notes, i*3, 6), pick(codes, i*5, 7), pick(cities, i*7, 9),
			amount, qty, score, created, pick(days, i, 11), i%3-1, big, pick([]string{"mid", "low", "high"}, i, 10)))
	}
	var ranges []string
	for i := range 40 {
		id := i - 20
		w := "NULL"
		if i%6 != 5 {
			w = fmt.Sprintf("%d.%03d", i%7-3, (i*37)%1000)
		}
		ranges = append(ranges, fmt.Sprintf("(%d, %d, %s, %s)", id, i%5, quoteString([]string{"x", "X", "y", "x ", "z"}[i%5]), w))
	}
	return map[string][]string{"t_order": orders, "t_order_item": items, "t_range": ranges}
}

// quoteString writes s as a SQL string literal.
func quoteString(s string) string {
	return "'" + strings.NewReplacer("\\", "\\\\", "'", "\\'").Replace(s) + "'"
}

// startDiffProxy serves the differential rules (with server, extra lines
// for the server: section) on a loopback port.
func startDiffProxy(backends []*mariadbtest.Server, server string) (*Server, string, error) {
	return startProxyOn(diffRules(backends, server))
}

// diffDSN is a go-sql-driver DSN for the proxy at addr.
func diffDSN(addr string) string {
	cfg := gomysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = "app", "app-secret", "tcp", addr, diffLogicalDB
	cfg.Timeout = 5 * time.Second
	return cfg.FormatDSN()
}

// diffProxy starts another proxy over the loaded tables, with extra
// server: settings, for one test.
func diffProxy(t *testing.T, server string) *sql.DB {
	t.Helper()
	e := diffEnvironment(t)
	srv, addr, err := startDiffProxy(e.backends, server)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	db, err := sql.Open("mysql", diffDSN(addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// diffEnv is a proxy over the sharded tables and connections to it and to
// the reference database.
type diffEnv struct {
	srv      *Server
	addr     string
	backends []*mariadbtest.Server
	proxy    *sql.DB // go-sql-driver, through the proxy
	ref      *sql.DB // go-sql-driver, the reference database
	proxyRaw *client.Conn
	refRaw   *client.Conn
	mu       sync.Mutex // guards the raw connections
}

var diffShared struct {
	once sync.Once
	env  *diffEnv
	err  error
}

// diffEnvironment starts (once per test binary) the proxy and loads the
// tables; the servers are the package's shared ones.
func diffEnvironment(t *testing.T) *diffEnv {
	t.Helper()
	backends := sharedServers(t)
	diffShared.once.Do(func() {
		diffShared.env, diffShared.err = newDiffEnv(backends, "")
	})
	if diffShared.err != nil {
		t.Fatal(diffShared.err)
	}
	return diffShared.env
}

func newDiffEnv(backends []*mariadbtest.Server, server string) (*diffEnv, error) {
	ctx := context.Background()
	// Physical and reference tables, loaded directly.
	data := diffData()
	setup := func(b *mariadbtest.Server, db string, tables func(logical string) []string) error {
		d, err := b.DB("")
		if err != nil {
			return err
		}
		defer d.Close()
		stmts := []string{"DROP DATABASE IF EXISTS " + db, "CREATE DATABASE " + db}
		for logical, def := range diffSchema {
			for _, name := range tables(logical) {
				stmts = append(stmts, fmt.Sprintf("CREATE TABLE %s.%s %s", db, name, def))
			}
		}
		for _, s := range stmts {
			if _, err := d.ExecContext(ctx, s); err != nil {
				return fmt.Errorf("%s: %s: %w", b.Addr(), s, err)
			}
		}
		return nil
	}
	for i := range 2 {
		err := setup(backends[i], fmt.Sprintf("mg_%d", i), diffPhysical)
		if err != nil {
			return nil, err
		}
	}
	if err := setup(backends[0], diffRefDB, func(logical string) []string { return []string{logical} }); err != nil {
		return nil, err
	}
	srv, addr, err := startDiffProxy(backends, server)
	if err != nil {
		return nil, err
	}
	e := &diffEnv{srv: srv, addr: addr, backends: backends}
	if e.proxy, err = sql.Open("mysql", diffDSN(addr)); err != nil {
		return nil, err
	}
	if e.ref, err = backends[0].DB(diffRefDB); err != nil {
		return nil, err
	}
	// Rows go in through the proxy (split by sharding values) and
	// directly into the reference tables.
	for table, rows := range data {
		for start := 0; start < len(rows); start += 16 {
			q := fmt.Sprintf("INSERT INTO %s VALUES %s", table, strings.Join(rows[start:min(start+16, len(rows))], ", "))
			if _, err := e.proxy.ExecContext(ctx, q); err != nil {
				return nil, fmt.Errorf("through the proxy: %s: %w", q, err)
			}
			if _, err := e.ref.ExecContext(ctx, q); err != nil {
				return nil, fmt.Errorf("reference: %s: %w", q, err)
			}
		}
	}
	if e.proxyRaw, err = client.Connect(e.addr, "app", "app-secret", diffLogicalDB); err != nil {
		return nil, err
	}
	if e.refRaw, err = client.Connect(backends[0].Addr(), "root", "", diffRefDB); err != nil {
		return nil, err
	}
	return e, nil
}

// diffCase is one query of the differential tests.
type diffCase struct {
	sql string
	// ordered: the ORDER BY is total, compare rows in order; otherwise
	// compare them as multisets.
	ordered bool
	// fold names columns (0-based) whose strings may legitimately be any
	// member of a set of values equal under the column's collation (a
	// GROUP BY key, DISTINCT, MIN/MAX of strings): they compare by that
	// collation's key.
	fold map[int]string
	// approx: DOUBLE values compare to 12 significant digits (sums of
	// doubles in another order differ in the last bits).
	approx bool
	// zeroSign: a DECIMAL zero compares equal whatever its sign. MariaDB
	// signs a zero remainder by how its dividend was computed, not by its
	// value: (-1.50*2) % 3 is 0.00, CAST(-3.00 AS DECIMAL(4,2)) % 3 and
	// (0-3.00) % 3 are -0.00; the merge gives -0.00 for both.
	zeroSign bool
	// wantErr: the proxy must refuse the query with this error number,
	// whatever the reference does.
	wantErr uint16
	// ignoreFlags are column-definition flags that may differ, for a plan
	// of the reference that no route can reproduce (see the case).
	ignoreFlags uint16
	// derived is the alias of a derived table whose columns the
	// statement reads: MariaDB names such a column's origin (org_name,
	// org_table) by its plan, the derived table's own names when it reads
	// the rows as they come, the base column's or table's through a
	// temporary table (GROUP BY, DISTINCT), and the routes' plans differ
	// from the reference's. Those two compare only when derived is "".
	derived string
	// planMeta: the routes run another plan than the reference (see
	// planFlags): besides ignoreFlags, a computed column's org_name (its
	// alias through a temporary table) and a computed string or DOUBLE
	// column's length and decimals may differ the way MariaDB's item and
	// temporary-table descriptions of one value differ (MAX(d) 23 or 22
	// long, MIN(s) with 39 or 0 decimals).
	planMeta bool
}

// diffResult is one query's answer as both clients see it.
type diffResult struct {
	errCode  uint16
	err      error
	rows     [][]*string // exact text, nil for NULL
	fields   []*mysql.Field
	colTypes []*sql.ColumnType
	types    []uint8
}

// keepFields copies the column definitions and their types into r: the
// result's buffers are reused once it is released.
func (r *diffResult) keepFields(fields []*mysql.Field) {
	for _, f := range fields {
		c := *f
		c.Data = nil
		c.Schema, c.Table, c.OrgTable = slices.Clone(f.Schema), slices.Clone(f.Table), slices.Clone(f.OrgTable)
		c.Name, c.OrgName = slices.Clone(f.Name), slices.Clone(f.OrgName)
		r.fields = append(r.fields, &c)
		r.types = append(r.types, f.Type)
	}
}

// run runs q on the raw connection c (exact text and column definitions)
// and on db (go-sql-driver's ColumnTypes).
func (e *diffEnv) run(ctx context.Context, c *client.Conn, db *sql.DB, q string) diffResult {
	var r diffResult
	e.mu.Lock()
	res, err := c.Execute(q)
	e.mu.Unlock()
	if err != nil {
		r.err = err
		var me *mysql.MyError
		if errors.As(err, &me) {
			r.errCode = me.Code
		}
		return r
	}
	// Copies: the result's buffers are reused once it is released.
	r.keepFields(res.Fields)
	for _, data := range res.RowDatas {
		row := make([]*string, 0, len(res.Fields))
		for range res.Fields {
			v, isNull, n, err := mysql.LengthEncodedString(data)
			if err != nil {
				r.err = err
				return r
			}
			data = data[n:]
			if isNull {
				row = append(row, nil)
				continue
			}
			s := string(v)
			row = append(row, &s)
		}
		r.rows = append(r.rows, row)
	}
	res.Close()
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		r.err = fmt.Errorf("go-sql-driver: %w", err)
		return r
	}
	defer rows.Close()
	if r.colTypes, err = rows.ColumnTypes(); err != nil {
		r.err = err
	}
	return r
}

// compareResults reports how got (the proxy's) differs from want (the
// reference's), or "" when it does not.
func compareResults(tc diffCase, got, want diffResult) string {
	if tc.wantErr != 0 {
		if got.errCode != tc.wantErr {
			return fmt.Sprintf("error %d (%v), want %d", got.errCode, got.err, tc.wantErr)
		}
		return ""
	}
	if got.err != nil || want.err != nil {
		if got.errCode != 0 && got.errCode == want.errCode {
			return ""
		}
		return fmt.Sprintf("error: proxy %v, reference %v", got.err, want.err)
	}
	if d := compareFields(got.fields, want.fields, tc.ignoreFlags, tc.planMeta, tc.derived); d != "" {
		return d
	}
	if d := compareColumnTypes(got.colTypes, want.colTypes, tc.ignoreFlags); d != "" {
		return d
	}
	g := canonicalRows(tc, got)
	w := canonicalRows(tc, want)
	if !tc.ordered {
		slices.Sort(g)
		slices.Sort(w)
	}
	if !slices.Equal(g, w) {
		return fmt.Sprintf("rows differ:\nproxy     %d %q\nreference %d %q", len(g), truncRows(g), len(w), truncRows(w))
	}
	return ""
}

func truncRows(rows []string) []string {
	if len(rows) > 40 {
		return append(rows[:40:40], "...")
	}
	return rows
}

// compareFields compares the raw column definitions: everything a client
// library can read. The schema is the logical database for the proxy and
// the reference database for the reference.
func compareFields(got, want []*mysql.Field, ignoreFlags uint16, planMeta bool, derived string) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d columns, reference %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		wschema := w.Schema
		if string(wschema) == diffRefDB {
			wschema = []byte(diffLogicalDB)
		}
		type def struct {
			Name, OrgName, Table, OrgTable, Schema string
			Charset                                uint16
			Length                                 uint32
			Type                                   uint8
			Flag                                   uint16
			Decimal                                uint8
		}
		gd := def{string(g.Name), string(g.OrgName), string(g.Table), string(g.OrgTable), string(g.Schema), g.Charset, g.ColumnLength, g.Type, g.Flag &^ ignoreFlags, g.Decimal}
		wd := def{string(w.Name), string(w.OrgName), string(w.Table), string(w.OrgTable), string(wschema), w.Charset, w.ColumnLength, w.Type, w.Flag &^ ignoreFlags, w.Decimal}
		if planMeta && len(g.OrgName) == 0 && (g.Type == mysql.MYSQL_TYPE_DOUBLE || g.Type == mysql.MYSQL_TYPE_VAR_STRING || g.Type == mysql.MYSQL_TYPE_BLOB) {
			gd.Length, gd.Decimal = wd.Length, wd.Decimal
		}
		if planMeta && gd.Table == "" && wd.Table == "" {
			// A computed column read back from a temporary table is
			// named there: org_name is its alias.
			gd.OrgName = wd.OrgName
		}
		if derived != "" && gd.Table == derived && wd.Table == derived {
			gd.OrgName, gd.OrgTable = wd.OrgName, wd.OrgTable
		}
		if gd != wd {
			return fmt.Sprintf("column %d definition:\nproxy     %+v\nreference %+v", i, gd, wd)
		}
	}
	return ""
}

// compareColumnTypes compares what go-sql-driver's ColumnTypes exposes,
// but nullability where ignoreFlags holds NOT_NULL_FLAG.
func compareColumnTypes(got, want []*sql.ColumnType, ignoreFlags uint16) string {
	if len(got) != len(want) {
		return fmt.Sprintf("go-sql-driver: %d columns, reference %d", len(got), len(want))
	}
	for i := range got {
		describe := func(c *sql.ColumnType) string {
			p, s, dok := c.DecimalSize()
			n, nok := c.Nullable()
			scan := fmt.Sprint(c.ScanType())
			if ignoreFlags&mysql.NOT_NULL_FLAG != 0 {
				// The scan type follows nullability (sql.NullInt64 or
				// int64).
				n, scan = false, ""
			}
			l, lok := c.Length()
			return fmt.Sprintf("%s %s decimal(%d,%d,%v) nullable(%v,%v) length(%d,%v) scan %s",
				c.Name(), c.DatabaseTypeName(), p, s, dok, n, nok, l, lok, scan)
		}
		if g, w := describe(got[i]), describe(want[i]); g != w {
			return fmt.Sprintf("go-sql-driver column %d:\nproxy     %s\nreference %s", i, g, w)
		}
	}
	return ""
}

// canonicalRows renders rows for comparison: folded columns by their
// collation key, DOUBLEs to 12 digits when approx.
func canonicalRows(tc diffCase, r diffResult) []string {
	out := make([]string, len(r.rows))
	for i, row := range r.rows {
		var b bytes.Buffer
		for j, v := range row {
			if j > 0 {
				b.WriteString(" | ")
			}
			if v == nil {
				b.WriteString("NULL")
				continue
			}
			s := *v
			if coll, ok := tc.fold[j]; ok {
				c := sqlvalue.CollationByName(coll)
				if c == nil {
					panic("unknown collation " + coll)
				}
				if c.Charset == "latin1" {
					c = c.ForText("utf8mb4")
				}
				s = fmt.Sprintf("key:%X", c.AppendKey(nil, []byte(s)))
			} else if tc.zeroSign && r.types[j] == mysql.MYSQL_TYPE_NEWDECIMAL && strings.Trim(s, "-0.") == "" {
				s = strings.TrimPrefix(s, "-")
			} else if tc.approx && (r.types[j] == mysql.MYSQL_TYPE_DOUBLE || r.types[j] == mysql.MYSQL_TYPE_FLOAT) {
				if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) {
					s = strconv.FormatFloat(f, 'g', 12, 64)
				}
			}
			b.WriteString(s)
		}
		out[i] = b.String()
	}
	return out
}

// diff runs tc on both sides and returns how they differ, "" for not.
func (e *diffEnv) diff(tc diffCase) string {
	ctx := context.Background()
	got := e.run(ctx, e.proxyRaw, e.proxy, tc.sql)
	want := e.run(ctx, e.refRaw, e.ref, tc.sql)
	return compareResults(tc, got, want)
}

// check runs tc on both sides and fails t with the difference.
func (e *diffEnv) check(t *testing.T, tc diffCase) {
	t.Helper()
	if d := e.diff(tc); d != "" {
		t.Errorf("%s\n%s", tc.sql, d)
	}
}

func TestMergeDifferential(t *testing.T) {
	e := diffEnvironment(t)
	if len(diffQueries) < 80 {
		t.Fatalf("%d hand-written queries, want at least 80", len(diffQueries))
	}
	for _, tc := range diffQueries {
		e.check(t, tc)
	}
}
