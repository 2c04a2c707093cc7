package proxy

import (
	"strings"
	"testing"
)

// TestSyntaxErrorNamesTheServer sends statements with syntax errors
// through the proxy and to MariaDB: the proxy's own 1064 (its parser
// finds the error before any data source sees the statement) points to
// the manual MariaDB's does, as applications and people read it; it once
// named MySQL's. The text after "near" is the parser's and may differ.
func TestSyntaxErrorNamesTheServer(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	proxy := e.conn(t)
	direct := e.backends[0].Open(t, "ds_0")
	for _, q := range []string{"SELEC 1 FROM t_order", "SELECT * FROM t_order WHERE", "INSERT INTO t_order VALUES (1,"} {
		_, perr := proxy.ExecContext(t.Context(), q)
		_, derr := direct.Exec(q)
		if errCode(perr) != 1064 || errCode(derr) != 1064 {
			t.Fatalf("%s: proxy %v, MariaDB %v; want 1064 from both", q, perr, derr)
		}
		got, _, _ := strings.Cut(perr.Error(), " near ")
		want, _, _ := strings.Cut(derr.Error(), " near ")
		if got != want {
			t.Errorf("%s:\nproxy:   %s\nMariaDB: %s", q, perr, derr)
		}
	}
}

// TestPrepareSeveralStatementsAsMariaDB: a prepared text that holds more
// than one statement (MariaDB Connector/ODBC prepares what an application
// executes, "SELECT 1; SELECT 2" among it, unless told the server takes
// multi-statements) gets MariaDB's 1064, near the second statement's text
// at its line, where the proxy's said "a prepared statement must hold
// exactly one statement, not 2".
func TestPrepareSeveralStatementsAsMariaDB(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	proxy := e.open(t)
	direct := e.backends[0].Open(t, "ds_0")
	for _, q := range []string{
		"SELECT 1; SELECT 2",
		"SELECT order_id FROM t_order WHERE user_id = ?;\n  /* next */ SELECT COUNT(*) FROM t_order; SELECT 3",
		"INSERT INTO t_order (order_id, user_id) VALUES (?, ?);\nDELETE FROM t_order WHERE order_id = 'a long text that goes on past the eighty bytes MariaDB quotes of it'",
	} {
		_, perr := proxy.Prepare(q)
		_, derr := direct.Prepare(q)
		if errCode(derr) != 1064 {
			t.Fatalf("%s: MariaDB %v; the test assumes 1064", q, derr)
		}
		if perr == nil || perr.Error() != derr.Error() {
			t.Errorf("%q:\nproxy:   %v\nMariaDB: %v", q, perr, derr)
		}
	}
}
