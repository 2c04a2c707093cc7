package proxy

import (
	"fmt"
	"slices"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// statusRefDB makes database name on backend b with t_order as one
// plain table, the reference the proxy's t_order is compared with.
func statusRefDB(t *testing.T, e *testEnv, name string) {
	t.Helper()
	e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS "+name, "CREATE DATABASE "+name,
		"CREATE TABLE "+name+".t_order (order_id BIGINT NOT NULL, user_id INT NOT NULL, status VARCHAR(32), PRIMARY KEY (order_id))")
	t.Cleanup(func() { e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS "+name) })
}

// TestHandshakeStatusFlags reads the status flags of the greeting and of
// the OK that ends the login, as PyMySQL and mysqlclient do to decide
// whether they must send SET AUTOCOMMIT: MariaDB says AUTOCOMMIT in both.
func TestHandshakeStatusFlags(t *testing.T) {
	e := startEnv(t, envOptions{})
	direct := dialStatus(t, e.backends[0].Addr(), "root", "", "", 0)
	proxy := dialStatus(t, e.addr, "app", "app-secret", "sharding_db", 0)
	if direct.greeting&mysql.SERVER_STATUS_AUTOCOMMIT == 0 {
		t.Fatalf("MariaDB's greeting status 0x%04x has no AUTOCOMMIT: the reference is not what this test assumes", direct.greeting)
	}
	if got, want := statusNames(proxy.greeting), statusNames(direct.greeting); got != want {
		t.Errorf("greeting status: proxy %s, MariaDB %s", got, want)
	}
	if got, want := statusNames(proxy.login), statusNames(direct.login); got != want {
		t.Errorf("login OK status: proxy %s, MariaDB %s", got, want)
	}
	// The flags of a greeting a second time (connections share nothing).
	again := dialStatus(t, e.addr, "app", "app-secret", "", 0)
	if again.greeting != proxy.greeting {
		t.Errorf("second greeting status 0x%04x, first 0x%04x", again.greeting, proxy.greeting)
	}
}

// TestStatusFlagsMatchMariaDB runs one script of statements through the
// proxy and on one plain MariaDB and compares the status flags of every
// OK and EOF packet: local answers (SET, BEGIN, USE), forwarded and
// merged results, writes over one and several data sources,
// multi-statements, prepared statements, errors (which carry no status)
// and the statement after them.
func TestStatusFlagsMatchMariaDB(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	statusRefDB(t, e, "status_ref")
	direct := dialStatus(t, e.backends[0].Addr(), "root", "", "status_ref", 0)
	proxy := dialStatus(t, e.addr, "app", "app-secret", "sharding_db", 0)
	script := []string{
		"SELECT 1",
		"SELECT @@autocommit",
		"INSERT INTO t_order (order_id, user_id, status) VALUES (1, 0, 'a'), (2, 1, 'b')",
		"SELECT order_id FROM t_order WHERE order_id = 1",
		"UPDATE t_order SET status = 'c' WHERE order_id = 2",
		"SELECT COUNT(*) FROM t_order WHERE status = 'c'",
		"SELECT order_id FROM t_order WHERE status = 'c'",
		"BEGIN",
		"SELECT 1",
		"INSERT INTO t_order (order_id, user_id) VALUES (3, 0)",
		"SELECT order_id FROM t_order WHERE order_id = 3",
		"COMMIT",
		"START TRANSACTION READ ONLY",
		"SELECT order_id FROM t_order WHERE order_id = 3",
		"ROLLBACK",
		"SET autocommit = 0",
		"SELECT @@autocommit",
		"INSERT INTO t_order (order_id, user_id) VALUES (4, 1)",
		"SELECT order_id FROM t_order WHERE order_id = 4",
		"ROLLBACK",
		"DELETE FROM t_order WHERE order_id = 3",
		"COMMIT",
		"SET autocommit = 1",
		"SELECT 1; SELECT 2",
		"SET @a = 1; SELECT @a",
		// A last piece of only comments is answered OK; spaces are none.
		"SELECT 1; -- done",
		"SET @a = 2; /* a */ /* b */",
		"SELECT order_id FROM t_order WHERE order_id = 1; # done\n",
		"SELECT order_id FROM t_order WHERE order_id = 1;  ",
		"SELECT 1 /* c */;",
		"SELECT * FROM no_such_table",
		"SELECT 1",
		"BEGIN",
		"SELECT * FROM no_such_table",
		"SELECT 1",
		"COMMIT",
		// START TRANSACTION goes out with the first read on each data
		// source (txnSource.acquire), here one that fails.
		"BEGIN",
		"SELECT no_such_column FROM t_order WHERE order_id = 1",
		"SELECT order_id FROM t_order WHERE order_id = 1",
		"COMMIT",
		"SET SESSION TRANSACTION READ ONLY",
		"BEGIN",
		"SELECT order_id FROM t_order WHERE order_id = 3",
		"COMMIT",
		"SET SESSION TRANSACTION READ WRITE",
		"SAVEPOINT x",
		"BEGIN",
		"SAVEPOINT x",
		"INSERT INTO t_order (order_id, user_id) VALUES (5, 1)",
		"ROLLBACK TO SAVEPOINT x",
		"RELEASE SAVEPOINT x",
		"ROLLBACK",
		"LOCK TABLES t_order READ",
		"SELECT COUNT(*) FROM t_order",
		"UNLOCK TABLES",
		"SET sql_mode = 'NO_BACKSLASH_ESCAPES'",
		"SELECT 'a\\b'",
		"SELECT order_id FROM t_order WHERE status = 'a\\b'",
		"SET sql_mode = DEFAULT",
		"SELECT 'a\\b'",
	}
	for _, q := range script {
		got, want := proxy.query(q), direct.query(q)
		compareStatus(t, q, got, want)
	}
	for _, q := range []string{
		"SELECT order_id, user_id FROM t_order WHERE order_id = 1",
		"UPDATE t_order SET status = 'd' WHERE order_id = 1",
		"SELECT order_id FROM t_order WHERE status = 'd' ORDER BY order_id", // every data node, merged
		"UPDATE t_order SET status = 'e' WHERE status = 'd'",                // every data node, one atomic write
	} {
		for _, inTxn := range []bool{false, true} {
			if inTxn {
				compareStatus(t, "BEGIN", proxy.query("BEGIN"), direct.query("BEGIN"))
			}
			pid, gotPrep := proxy.prepare(q)
			did, wantPrep := direct.prepare(q)
			compareStatus(t, "prepare "+q, gotPrep, wantPrep)
			compareStatus(t, fmt.Sprintf("execute %s (in a transaction: %v)", q, inTxn), proxy.execute(pid), direct.execute(did))
			if inTxn {
				compareStatus(t, "COMMIT", proxy.query("COMMIT"), direct.query("COMMIT"))
			}
		}
	}
}

func compareStatus(t *testing.T, what string, got, want statusResponse) {
	t.Helper()
	if want.err != nil && got.err == nil {
		t.Errorf("%s: proxy succeeded, MariaDB failed with %v", what, want.err)
	}
	if want.err == nil && got.err != nil {
		t.Errorf("%s: proxy failed with %v", what, got.err)
	}
	if !slices.Equal(got.statuses, want.statuses) {
		t.Errorf("%s: status flags\nproxy   %q\nMariaDB %q", what, got.statuses, want.statuses)
	}
}
