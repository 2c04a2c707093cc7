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
