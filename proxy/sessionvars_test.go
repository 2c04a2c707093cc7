package proxy

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

// TestTransactionReadOnly: SET SESSION TRANSACTION READ ONLY makes every
// write fail as on MariaDB (1792), on one data source and on both, in
// and out of a transaction, until READ WRITE; SET TRANSACTION READ ONLY
// is for the next transaction only. Compared step by step with one
// MariaDB.
func TestTransactionReadOnly(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	statusRefDB(t, e, "ro_ref")
	proxy, ref := e.conn(t), refConn(t, e, "ro_ref")
	const rows = "SELECT order_id, user_id FROM t_order ORDER BY order_id"
	for _, st := range []string{
		"INSERT INTO t_order (order_id, user_id) VALUES (1, 0)",
		"SET SESSION TRANSACTION READ ONLY",
		"SELECT @@tx_read_only",
		"INSERT INTO t_order (order_id, user_id) VALUES (2, 0)",
		"INSERT INTO t_order (order_id, user_id) VALUES (3, 0), (4, 1)",
		"UPDATE t_order SET status = 'x'",
		"SELECT COUNT(*) FROM t_order",
		"BEGIN",
		"INSERT INTO t_order (order_id, user_id) VALUES (5, 1)",
		"SELECT COUNT(*) FROM t_order",
		"COMMIT",
		"SET SESSION TRANSACTION READ WRITE",
		"INSERT INTO t_order (order_id, user_id) VALUES (6, 0), (7, 1)",
		// SET TRANSACTION: the next transaction only ("!": the rows are
		// not read after the step, as reading them is a statement).
		"!SET TRANSACTION READ ONLY",
		"!BEGIN",                    // drops it, on MariaDB
		"SET TRANSACTION READ ONLY", // 1568 inside a transaction
		"DELETE FROM t_order WHERE order_id = 6",
		"COMMIT",
		"BEGIN",
		"DELETE FROM t_order WHERE order_id = 7",
		"COMMIT",
		// In autocommit mode the next statements, until one succeeds.
		"!SET TRANSACTION READ ONLY",
		"!INSERT INTO t_order (order_id, user_id) VALUES (10, 0)",
		"!INSERT INTO t_order (order_id, user_id) VALUES (10, 0), (11, 1)",
		"SELECT COUNT(*) FROM t_order",
		"INSERT INTO t_order (order_id, user_id) VALUES (12, 0), (13, 1)",
		// With autocommit=0, the transaction it opens.
		"SET autocommit = 0",
		"COMMIT",
		"!SET TRANSACTION READ ONLY",
		"!INSERT INTO t_order (order_id, user_id) VALUES (14, 0)",
		"!SELECT COUNT(*) FROM t_order",
		"!INSERT INTO t_order (order_id, user_id) VALUES (15, 0), (16, 1)",
		"COMMIT",
		"INSERT INTO t_order (order_id, user_id) VALUES (17, 0), (18, 1)",
		"COMMIT",
		"SET autocommit = 1",
		"SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED, READ ONLY",
		"INSERT INTO t_order (order_id, user_id) VALUES (8, 1)",
		"SET SESSION TRANSACTION READ WRITE",
		"INSERT INTO t_order (order_id, user_id) VALUES (9, 1)",
	} {
		if text, ok := strings.CutPrefix(st, "!"); ok {
			diffStep(t, proxy, ref, text, "")
			continue
		}
		diffStep(t, proxy, ref, st, rows)
	}
}

// TestSetFromVariables is mysqldump's preamble and postscript: session
// variables saved into user variables, changed, and set back from them,
// again for each table; then statements on fresh backend connections of
// both data sources, which get the session's settings replayed. A
// setting that named a user variable was replayed before that variable
// had its value (1231 Variable 'character_set_client' can't be set to the
// value of 'NULL').
func TestSetFromVariables(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	statusRefDB(t, e, "vars_ref")
	proxy, ref := e.conn(t), refConn(t, e, "vars_ref")
	const vars = "SELECT @@character_set_client, @@character_set_results, @@collation_connection, @@time_zone, @@unique_checks, @@foreign_key_checks, @@sql_mode, @@sql_notes, @saved_cs_client"
	steps := []string{
		"/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */",
		"/*!40101 SET @OLD_CHARACTER_SET_RESULTS=@@CHARACTER_SET_RESULTS */",
		"/*!40101 SET @OLD_COLLATION_CONNECTION=@@COLLATION_CONNECTION */",
		"/*!40101 SET NAMES utf8mb4 */",
		"/*!40103 SET @OLD_TIME_ZONE=@@TIME_ZONE */",
		"/*!40103 SET TIME_ZONE='+00:00' */",
		"/*!40014 SET @OLD_UNIQUE_CHECKS=@@UNIQUE_CHECKS, UNIQUE_CHECKS=0 */",
		"/*!40014 SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS=0 */",
		"/*!40101 SET @OLD_SQL_MODE=@@SQL_MODE, SQL_MODE='NO_AUTO_VALUE_ON_ZERO' */",
		"/*!40111 SET @OLD_SQL_NOTES=@@SQL_NOTES, SQL_NOTES=0 */",
	}
	for range 2 { // two tables' worth
		steps = append(steps,
			"/*!40101 SET @saved_cs_client     = @@character_set_client */",
			"/*!40101 SET character_set_client = utf8 */",
			"SELECT COUNT(*) FROM t_order",
			"/*!40101 SET character_set_client = @saved_cs_client */",
			"SELECT COUNT(*) FROM t_order",
			"INSERT INTO t_order (order_id, user_id) VALUES (1, 0), (2, 1)",
			"DELETE FROM t_order",
		)
	}
	steps = append(steps,
		"/*!40103 SET TIME_ZONE=@OLD_TIME_ZONE */",
		"/*!40101 SET SQL_MODE=@OLD_SQL_MODE */",
		"/*!40014 SET FOREIGN_KEY_CHECKS=@OLD_FOREIGN_KEY_CHECKS */",
		"/*!40014 SET UNIQUE_CHECKS=@OLD_UNIQUE_CHECKS */",
		"/*!40101 SET CHARACTER_SET_CLIENT=@OLD_CHARACTER_SET_CLIENT */",
		"/*!40101 SET CHARACTER_SET_RESULTS=@OLD_CHARACTER_SET_RESULTS */",
		"/*!40101 SET COLLATION_CONNECTION=@OLD_COLLATION_CONNECTION */",
		"/*!40111 SET SQL_NOTES=@OLD_SQL_NOTES */",
		"SELECT COUNT(*) FROM t_order",
		"SET character_set_client = @no_such_variable", // 1231 on both
		"SELECT COUNT(*) FROM t_order",
	)
	for _, st := range steps {
		diffStep(t, proxy, ref, st, vars)
	}
}

// TestHandshakeCollation: the collation a client names in its handshake
// (go-sql-driver's collation=, without SET NAMES) is the session's, on
// every backend connection, as on MariaDB; one MariaDB does not know
// (MySQL 8's utf8mb4_0900_ai_ci) leaves the server's default, as there.
func TestHandshakeCollation(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	const q = "SELECT @@character_set_client, @@collation_connection, 'ß' = 'ss', 'a' = 'A', 'a' = 'a '"
	for _, coll := range []string{"utf8mb4_general_ci", "utf8mb4_unicode_ci", "utf8mb4_bin", "utf8mb4_0900_ai_ci", "latin1_german1_ci", "latin1_swedish_ci", "utf8_general_ci"} {
		proxy := e.open(t, "collation="+coll)
		direct, err := sql.Open("mysql", e.backends[0].DSN("ds_0")+"&collation="+coll)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { direct.Close() })
		got, want := queryStrings(t, proxy, q), queryStrings(t, direct, q)
		if !slices.Equal(got, want) {
			t.Errorf("collation=%s: proxy %q, MariaDB %q", coll, got, want)
		}
		// A sharded query: each data source's connection has it too.
		if _, err := proxy.Exec("SELECT COUNT(*) FROM t_order WHERE status = 'ß'"); err != nil {
			t.Errorf("collation=%s: %v", coll, err)
		}
	}
}

// TestNoBackslashEscapes: under sql_mode NO_BACKSLASH_ESCAPES a backslash
// in a literal is an ordinary character, in statements the router
// rewrites (sharded INSERT, UPDATE, SELECT), in statements that go to a
// data source as written, in user variables replayed on other backend
// connections, and in prepared statements' arguments; the rows are the
// same as on one MariaDB, in either mode, and the status flags say so.
func TestNoBackslashEscapes(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	statusRefDB(t, e, "nbe_ref")
	proxy, ref := e.conn(t), refConn(t, e, "nbe_ref")
	const rows = "SELECT order_id, user_id, status, HEX(status) FROM t_order ORDER BY order_id"
	for _, st := range []string{
		`INSERT INTO t_order (order_id, user_id, status) VALUES (1, 0, 'a\\b')`, // before: an escape
		"SET SESSION sql_mode = 'NO_BACKSLASH_ESCAPES'",
		`INSERT INTO t_order (order_id, user_id, status) VALUES (2, 0, 'c:\dir\'), (3, 1, 'it''s \n')`,
		`UPDATE t_order SET status = CONCAT(status, '\x') WHERE order_id IN (2, 3)`,
		`UPDATE t_order SET status = 'q\' WHERE status = 'a\b'`,
		`SELECT 'a\b', "d\e", LENGTH('\\')`,
		`SELECT order_id FROM t_order WHERE status LIKE 'c:\%'`,
		`SET @v = 'v\w'`,
		`SELECT @v, LENGTH(@v)`,
		`SELECT COUNT(*) FROM t_order WHERE status <> @v`,
		`INSERT INTO t_order (order_id, user_id, status) VALUES (4, 1, @v)`,
		"SELECT @@sql_mode",
		"SET SESSION sql_mode = DEFAULT",
		`INSERT INTO t_order (order_id, user_id, status) VALUES (5, 1, 'e\\f\'g')`,
		`SELECT 'a\\b', @v`,
	} {
		diffStep(t, proxy, ref, st, rows)
		got, want := queryStrings(t, proxy, "SELECT @@sql_mode"), queryStrings(t, ref, "SELECT @@sql_mode")
		if !slices.Equal(got, want) {
			t.Errorf("after %s: sql_mode: proxy %q, MariaDB %q", st, got, want)
		}
	}
	// Prepared statements under the mode: arguments and literals.
	for _, c := range []*sql.Conn{proxy, ref} {
		if _, err := c.ExecContext(context.Background(), "SET SESSION sql_mode = 'NO_BACKSLASH_ESCAPES'"); err != nil {
			t.Fatal(err)
		}
	}
	diffQuery(t, "prepared", proxy, ref, `SELECT 'p\q', LENGTH('\')`)
	for _, c := range []*sql.Conn{proxy, ref} {
		if _, err := c.ExecContext(context.Background(), `INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, ?)`, 6, 0, `r\s'`); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ExecContext(context.Background(), `UPDATE t_order SET status = CONCAT(?, '\') WHERE order_id = ?`, `t\`, 6); err != nil {
			t.Fatal(err)
		}
	}
	diffQuery(t, "prepared", proxy, ref, rows)
}

// TestResetConnectionDropsLocksAndReadOnly: COM_RESET_CONNECTION ends a
// pending SET TRANSACTION READ ONLY, the session's READ ONLY and its
// LOCK TABLES locks, as on MariaDB: writes work again, from the session
// and from another one.
func TestResetConnectionDropsLocksAndReadOnly(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	c, err := client.Connect(e.addr, "app", "app-secret", "sharding_db")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, q := range []string{"SET SESSION TRANSACTION READ ONLY", "LOCK TABLES t_order READ", "SET TRANSACTION READ ONLY"} {
		if _, err := c.Execute(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	c.ResetSequence()
	if err := c.WritePacket([]byte{0, 0, 0, 0, gomysql.COM_RESET_CONNECTION}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReadOKPacket(); err != nil {
		t.Fatalf("COM_RESET_CONNECTION: %v", err)
	}
	if _, err := c.Execute("INSERT INTO t_order (order_id, user_id) VALUES (1, 0), (2, 1)"); err != nil {
		t.Errorf("the session's write after the reset: %v", err)
	}
	other := e.conn(t)
	if _, err := other.ExecContext(context.Background(), "SET SESSION lock_wait_timeout = 1"); err != nil {
		t.Fatal(err)
	}
	if _, err := other.ExecContext(context.Background(), "INSERT INTO t_order (order_id, user_id) VALUES (3, 0), (4, 1)"); err != nil {
		t.Errorf("another session's write after the reset: %v", err)
	}
}

// TestSQLModeSwitchInMultiStatements: in a multi-statement query, the
// statements after a SET sql_mode are read in the new mode, as MariaDB
// reads them: a backslash in a literal after a switch to (or from)
// NO_BACKSLASH_ESCAPES, and "..." after a switch to ANSI_QUOTES. The rows
// are the same as on one MariaDB, byte for byte.
func TestSQLModeSwitchInMultiStatements(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	statusRefDB(t, e, "modeswitch_ref")
	db, err := sql.Open("mysql", e.backends[0].DSN("modeswitch_ref")+"&multiStatements=true")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ref, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ref.Close() })
	proxy := e.conn(t, "multiStatements=true")
	const rows = "SELECT order_id, user_id, HEX(status) FROM t_order ORDER BY order_id"
	for _, st := range []string{
		`SET sql_mode = 'NO_BACKSLASH_ESCAPES'; INSERT INTO t_order (order_id, user_id, status) VALUES (1, 0, 'a\b'), (2, 1, 'c\')`,
		`SET sql_mode = DEFAULT; INSERT INTO t_order (order_id, user_id, status) VALUES (3, 1, 'd\\e\'f')`,
		`SET sql_mode = 'NO_BACKSLASH_ESCAPES'; SET @v = 'g\h'; SET sql_mode = DEFAULT; INSERT INTO t_order (order_id, user_id, status) VALUES (4, 0, CONCAT(@v, 'i\\j'))`,
		// The literal 'k\'; ...' is one literal under the new mode.
		`SET sql_mode = 'NO_BACKSLASH_ESCAPES'; INSERT INTO t_order (order_id, user_id, status) VALUES (5, 1, 'k\'); SET sql_mode = DEFAULT`,
		`SET sql_mode = 'ANSI_QUOTES'; INSERT INTO t_order ("order_id", "user_id", "status") VALUES (6, 0, 'm'); SET sql_mode = DEFAULT`,
		`SET sql_mode = 'ANSI_QUOTES,NO_BACKSLASH_ESCAPES'; UPDATE t_order SET "status" = 'n\o' WHERE "order_id" IN (1, 6); SET sql_mode = DEFAULT; SELECT 1`,
		`SELECT @@sql_mode; SET sql_mode = 'NO_BACKSLASH_ESCAPES'; -- the end`,
		`SET sql_mode = DEFAULT`,
	} {
		diffStep(t, proxy, ref, st, rows)
		got, want := queryStrings(t, proxy, "SELECT @@sql_mode"), queryStrings(t, ref, "SELECT @@sql_mode")
		if !slices.Equal(got, want) {
			t.Errorf("after %s: sql_mode: proxy %q, MariaDB %q", st, got, want)
		}
	}
	// Several results, each one's count of result sets as on MariaDB.
	diffResultSets(t, proxy, ref, `SET sql_mode = 'NO_BACKSLASH_ESCAPES'; SELECT 'x\'; SELECT LENGTH('\\'); SET sql_mode = DEFAULT; SELECT 'y\\'`)
}

// diffResultSets runs a multi-statement query through the proxy and on
// the reference and compares every result set's rows.
func diffResultSets(t *testing.T, proxy, ref *sql.Conn, q string) {
	t.Helper()
	read := func(c *sql.Conn) []string {
		rows, err := c.QueryContext(context.Background(), q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer rows.Close()
		var out []string
		for {
			for rows.Next() {
				var v sql.NullString
				if err := rows.Scan(&v); err != nil {
					t.Fatal(err)
				}
				out = append(out, v.String)
			}
			if !rows.NextResultSet() {
				break
			}
			out = append(out, "|")
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return out
	}
	if got, want := read(proxy), read(ref); !slices.Equal(got, want) {
		t.Errorf("%s:\nproxy   %q\nMariaDB %q", q, got, want)
	}
}

// TestANSIQuotesWithNoBackslashEscapes: under ANSI_QUOTES "..." is a
// name, whose backslashes are its own in either mode; with
// NO_BACKSLASH_ESCAPES too, only the '...' literals change form. Column
// names and rows as on one MariaDB, in routed statements and in ones the
// default data source runs as written.
func TestANSIQuotesWithNoBackslashEscapes(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	statusRefDB(t, e, "ansinbe_ref")
	proxy, ref := e.conn(t), refConn(t, e, "ansinbe_ref")
	e.backends[0].Exec(t, "ansinbe_ref", "CREATE TABLE t_plain (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(32))")
	diffStep(t, proxy, ref, `INSERT INTO t_order (order_id, user_id, status) VALUES (1, 0, 'p\\q'), (2, 1, 'r')`, "")
	diffStep(t, proxy, ref, `INSERT INTO t_plain (v) VALUES ('p\\q')`, "")
	for _, mode := range []string{"ANSI_QUOTES,NO_BACKSLASH_ESCAPES", "ANSI_QUOTES"} {
		diffStep(t, proxy, ref, "SET SESSION sql_mode = '"+mode+"'", "")
		lit := `'p\q'`
		if mode == "ANSI_QUOTES" {
			lit = `'p\\q'`
		}
		for _, q := range []string{
			`SELECT "order_id" AS "o\k", "status" AS "s\" FROM t_order WHERE "status" = ` + lit,
			`SELECT "t"."order_id" AS "a\b" FROM t_order AS "t" WHERE "t"."order_id" IN (1, 2) ORDER BY 1`,
			`SELECT 1 AS "x\y", ` + lit + ` AS "z"`,
			`SELECT "v" AS "n\m", LENGTH("v") FROM t_plain WHERE "v" = ` + lit,
		} {
			got, gerr := columnsAndRows(proxy, q)
			want, werr := columnsAndRows(ref, q)
			if errCode(gerr) != errCode(werr) || (gerr == nil) != (werr == nil) || !slices.Equal(got, want) {
				t.Errorf("%s: %s:\nproxy   %q %v\nMariaDB %q %v", mode, q, got, gerr, want, werr)
			}
		}
	}
}

// columnsAndRows returns q's column names, then its rows.
func columnsAndRows(c *sql.Conn, q string) ([]string, error) {
	rows, err := c.QueryContext(context.Background(), q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	vals := make([]sql.NullString, len(out))
	ptrs := make([]any, len(out))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		var row []string
		for _, v := range vals {
			row = append(row, v.String)
		}
		out = append(out, strings.Join(row, ","))
	}
	return out, rows.Err()
}
