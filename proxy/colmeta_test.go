package proxy

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"
)

// colMetaCase is one statement of TestProxyAnswersColumnMetadata. {db}
// in before and sql stands for the database: the logical one through
// the proxy, the reference one on MariaDB.
type colMetaCase struct {
	sql string
	// before runs first on the same connection (its result and errors
	// are not compared): what the statement reports on.
	before []string
	// todo, when set, says why the case is not compared yet.
	todo string
	// sameRow: the first row's values are compared too (the proxy
	// converts the rows of a result whose definitions it changes).
	sameRow bool
	// ownValues: the proxy's string values differ from MariaDB's by
	// design (@@version_comment, VERSION()): a string column's length,
	// which MariaDB derives from the value, is compared as that
	// derivation, each side's length its own value's characters times 4
	// (utf8mb4).
	ownValues bool
	// args, when set, are the values of the statement's ?s: it runs
	// prepared only.
	args []any
}

const (
	// The proxy writes its own values into a statement that holds
	// others as literals, which MariaDB types by their value: a select
	// field that is only such a value is described as MariaDB would, an
	// expression over one is not.
	todoRewrite = "an expression over the proxy's values written into a statement"
	// An expression over a derived table's column is typed by the
	// literal the proxy wrote.
	todoInfoExpr = "an expression over information_schema's rewritten columns"
)

// colMetaCases are statements the proxy answers itself, rewrites or
// merges.
var colMetaCases = []colMetaCase{
	{sql: "SHOW WARNINGS", before: []string{"SELECT 1/0, CAST('x' AS SIGNED)"}},
	{sql: "SHOW ERRORS", before: []string{"SELECT * FROM no_such_table"}},
	{sql: "SHOW COUNT(*) WARNINGS", before: []string{"SELECT 1/0"}},
	{sql: "SHOW COUNT(*) ERRORS"},
	{sql: "SELECT @@warning_count, @@error_count, @@session.warning_count"},
	{sql: "SELECT LAST_INSERT_ID()"},
	{sql: "SELECT LAST_INSERT_ID() AS id, ROW_COUNT() AS n"},
	{sql: "SELECT ROW_COUNT()"},
	{sql: "SELECT FOUND_ROWS()", before: []string{"SELECT SQL_CALC_FOUND_ROWS order_id FROM t_order LIMIT 2"}},
	{sql: "SELECT DATABASE(), SCHEMA()"},
	{sql: "SELECT CONNECTION_ID()"},
	{sql: "SELECT VERSION(), USER(), SESSION_USER(), SYSTEM_USER(), CURRENT_USER()", ownValues: true},
	{sql: "SELECT LAST_INSERT_ID(), NOW()"},
	{sql: "SELECT LAST_INSERT_ID() + 1, DATABASE() = '{db}', CONNECTION_ID() > 0", todo: todoRewrite},
	{sql: "SELECT @@version_comment, @@version, @@session.autocommit, @@autocommit, @@in_transaction", ownValues: true},
	{sql: "SELECT @@last_insert_id, @@identity"},
	{sql: "SHOW DATABASES"},
	// Parameters in the select list of a routed statement: typed as
	// MariaDB types the ?, not as the value the prepare plans with.
	{sql: "SELECT CAST(? AS SIGNED) AS c, order_id FROM t_order WHERE order_id = ?", args: []any{7, 1}},
	{sql: "SELECT CAST(? AS SIGNED) AS c, COALESCE(?, 0) AS d FROM t_order ORDER BY order_id LIMIT 1", args: []any{7, 3}},
	{sql: "SHOW DATABASES LIKE '{db}'"},
	{sql: "SHOW TABLES"},
	{sql: "SHOW FULL TABLES"},
	{sql: "SHOW TABLES LIKE 't\\_order%'"},
	{sql: "SHOW FULL TABLES WHERE Table_type = 'BASE TABLE'"},
	{sql: "SHOW CREATE DATABASE {db}"},
	{sql: "SHOW COLUMNS FROM t_order"},
	{sql: "SHOW FULL COLUMNS FROM t_order"},
	{sql: "SHOW INDEX FROM t_order"},
	{sql: "SHOW TABLE STATUS"},
	{sql: "SHOW TABLE STATUS LIKE 't_order'"},
	{sql: "SHOW CREATE TABLE t_order"},
	{sql: "SELECT TABLE_NAME, TABLE_TYPE, ENGINE, TABLE_ROWS, TABLE_COLLATION FROM information_schema.TABLES WHERE TABLE_SCHEMA = '{db}'"},
	{sql: "SELECT COLUMN_NAME, ORDINAL_POSITION, IS_NULLABLE, DATA_TYPE, CHARACTER_MAXIMUM_LENGTH, NUMERIC_PRECISION, COLUMN_TYPE, COLUMN_KEY FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = '{db}' AND TABLE_NAME = 't_order' ORDER BY ORDINAL_POSITION", sameRow: true},
	{sql: "SELECT c.COLUMN_NAME AS name, c.DATA_TYPE, c.COLUMN_DEFAULT FROM information_schema.COLUMNS c WHERE c.TABLE_SCHEMA = '{db}' AND c.TABLE_NAME = 't_order' ORDER BY c.ORDINAL_POSITION", sameRow: true},
	{sql: "SELECT MAX(ORDINAL_POSITION), IS_NULLABLE = 'YES' FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = '{db}'", todo: todoInfoExpr},
	{sql: "SELECT INDEX_NAME, NON_UNIQUE, SEQ_IN_INDEX, COLUMN_NAME, CARDINALITY FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = '{db}' AND TABLE_NAME = 't_order'"},
	{sql: "SHOW PROCESSLIST"},
	{sql: "SHOW FULL PROCESSLIST"},
	{sql: "SHOW PROCEDURE STATUS"},
	{sql: "SHOW CREATE DATABASE IF NOT EXISTS {db}"},
	{sql: "SELECT SCHEMA_NAME, DEFAULT_CHARACTER_SET_NAME FROM information_schema.SCHEMATA"},
	{sql: "SELECT FOUND_ROWS(), LAST_INSERT_ID(), @@warning_count, NOW()"},
	{sql: "SELECT COUNT(*) FROM t_order"},
	{sql: "SELECT SUM(qty), SUM(user_id), SUM(big) FROM t_order"},
	{sql: "SELECT SUM(amount), SUM(score) FROM t_order"},
	{sql: "SELECT AVG(qty), AVG(amount), AVG(score) FROM t_order"},
	{sql: "SELECT MIN(qty), MAX(amount), MIN(status), MAX(created), MIN(day) FROM t_order"},
	{sql: "SELECT GROUP_CONCAT(status), GROUP_CONCAT(DISTINCT user_id ORDER BY user_id) FROM t_order"},
	{sql: "SELECT COUNT(DISTINCT user_id), COUNT(DISTINCT status, qty) FROM t_order"},
	{sql: "SELECT user_id, COUNT(*), SUM(amount) FROM t_order GROUP BY user_id"},
	{sql: "SELECT order_id, status, amount, created FROM t_order ORDER BY order_id LIMIT 5"},
}

// colMetaConn is one connection, through the proxy or to the reference
// database, with the name of its database.
type colMetaConn struct {
	c  *client.Conn
	db string
}

// fields runs sql (its {db} replaced) after before, as a text query or
// prepared and executed, and returns its column definitions: for a
// prepared statement, the prepare's and the execute's.
func (m colMetaConn) fields(t *testing.T, tc colMetaCase, prepared bool) (prepare, result []*mysql.Field, err error) {
	prepare, result, _, err = m.fieldsAndValues(t, tc, prepared)
	return prepare, result, err
}

// fieldsAndValues is fields, and the first row's values as strings.
func (m colMetaConn) fieldsAndValues(t *testing.T, tc colMetaCase, prepared bool) (prepare, result []*mysql.Field, first []string, err error) {
	t.Helper()
	for _, q := range tc.before {
		m.c.Execute(strings.ReplaceAll(q, "{db}", m.db))
	}
	q := strings.ReplaceAll(tc.sql, "{db}", m.db)
	if !prepared {
		res, err := m.c.Execute(q)
		if err != nil {
			return nil, nil, nil, err
		}
		defer res.Close()
		return nil, copyFields(res.Fields), firstRow(res), nil
	}
	st, err := m.c.Prepare(q)
	if err != nil {
		return nil, nil, nil, err
	}
	defer st.Close()
	for _, raw := range st.RawColumnFields {
		f := &mysql.Field{}
		if err := f.Parse(raw); err != nil {
			t.Fatal(err)
		}
		prepare = append(prepare, f)
	}
	prepare = copyFields(prepare)
	res, err := st.Execute(tc.args...)
	if err != nil {
		return nil, nil, nil, err
	}
	defer res.Close()
	return prepare, copyFields(res.Fields), firstRow(res), nil
}

// firstRow is res's first row as strings (none without rows).
func firstRow(res *mysql.Result) []string {
	if res.Resultset == nil || res.RowNumber() == 0 {
		return nil
	}
	var row []string
	for j := range res.Fields {
		v, _ := res.GetString(0, j)
		row = append(row, v)
	}
	return row
}

// lengthsByValue sets, in got, the length of each string column that is
// its value's characters times 4 on both sides to want's.
func lengthsByValue(got, want []*mysql.Field, gotRow, wantRow []string) {
	for i := range min(len(got), len(want), len(gotRow), len(wantRow)) {
		g, w := got[i], want[i]
		if g.Type == mysql.MYSQL_TYPE_VAR_STRING && w.Type == g.Type &&
			g.ColumnLength == uint32(4*utf8.RuneCountInString(gotRow[i])) &&
			w.ColumnLength == uint32(4*utf8.RuneCountInString(wantRow[i])) {
			g.ColumnLength = w.ColumnLength
		}
	}
}

func copyFields(fields []*mysql.Field) []*mysql.Field {
	var r diffResult
	r.keepFields(fields)
	return r.fields
}

// describeColumnDef is what a driver can read of a column definition, the
// reference database's name replaced by the logical one.
func describeColumnDef(f *mysql.Field, db string) string {
	name := func(b []byte) string { return strings.ReplaceAll(string(b), db, diffLogicalDB) }
	return fmt.Sprintf("name %q org_name %q table %q org_table %q schema %q type %d flags %#x charset %d length %d decimals %d",
		name(f.Name), name(f.OrgName), name(f.Table), name(f.OrgTable), name(f.Schema), f.Type, f.Flag, f.Charset, f.ColumnLength, f.Decimal)
}

// compareColumnDefs returns how got's definitions differ from want's.
func compareColumnDefs(got, want []*mysql.Field, gotDB, wantDB string) []string {
	if len(got) != len(want) {
		return []string{fmt.Sprintf("%d columns, MariaDB %d", len(got), len(want))}
	}
	var diffs []string
	for i := range got {
		if g, w := describeColumnDef(got[i], gotDB), describeColumnDef(want[i], wantDB); g != w {
			diffs = append(diffs, fmt.Sprintf("column %d:\n  proxy   %s\n  MariaDB %s", i, g, w))
		}
	}
	return diffs
}

// TestProxyAnswersColumnMetadata: the column definitions of results the
// proxy answers itself (SHOW WARNINGS, LAST_INSERT_ID(), SHOW TABLES, ...),
// rewrites (information_schema) or merges (aggregates over data nodes)
// are MariaDB's for the same statement over the same tables unsharded:
// type, flags, charset, length, decimals and names, by which drivers
// type the values (Connector/J's Integer, Long or BigInteger, mysql2's
// Number or string). Text protocol, and prepared: the prepare's and the
// execute's definitions.
func TestProxyAnswersColumnMetadata(t *testing.T) {
	e := diffEnvironment(t)
	proxyConn, err := client.Connect(e.addr, "app", "app-secret", diffLogicalDB)
	if err != nil {
		t.Fatal(err)
	}
	defer proxyConn.Close()
	refConn, err := client.Connect(e.backends[0].Addr(), "root", "", diffRefDB)
	if err != nil {
		t.Fatal(err)
	}
	defer refConn.Close()
	proxy, ref := colMetaConn{proxyConn, diffLogicalDB}, colMetaConn{refConn, diffRefDB}
	for _, tc := range colMetaCases {
		for _, prepared := range []bool{false, true} {
			if !prepared && tc.args != nil {
				continue
			}
			name := tc.sql
			if prepared {
				name = "prepared " + name
			}
			t.Run(name, func(t *testing.T) {
				if tc.todo != "" {
					t.Skip(tc.todo)
				}
				wantPrepare, want, wantRow, wantErr := ref.fieldsAndValues(t, tc, prepared)
				var me *mysql.MyError
				if prepared && errors.As(wantErr, &me) && me.Code == mysql.ER_UNSUPPORTED_PS {
					t.Skip("MariaDB does not prepare it")
				}
				if wantErr != nil {
					t.Fatalf("MariaDB: %v", wantErr)
				}
				gotPrepare, got, gotRow, err := proxy.fieldsAndValues(t, tc, prepared)
				if err != nil {
					t.Fatalf("proxy: %v", err)
				}
				if tc.sameRow && !slices.Equal(gotRow, wantRow) {
					t.Errorf("first row %q, MariaDB %q", gotRow, wantRow)
				}
				if tc.ownValues {
					lengthsByValue(got, want, gotRow, wantRow)
					lengthsByValue(gotPrepare, wantPrepare, gotRow, wantRow)
				}
				for _, d := range compareColumnDefs(got, want, proxy.db, ref.db) {
					t.Errorf("result %s", d)
				}
				if prepared {
					for _, d := range compareColumnDefs(gotPrepare, wantPrepare, proxy.db, ref.db) {
						t.Errorf("prepare %s", d)
					}
				}
			})
		}
	}
}
