package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// TestMultiplexCharsets runs plain reads of sessions under several
// character sets (the handshake's collation, SET NAMES) on the shared
// connections at once: each answer is MariaDB's under the session's
// character set (a 4-byte character reads '?' under utf8mb3, é is one
// byte under latin1), and only sessions beyond maxMuxCharsets settings
// run on pooled connections.
func TestMultiplexCharsets(t *testing.T) {
	e, queries := charsetEnv(t)
	ctx := context.Background()
	// The baseline (utf8mb4), then more character sets than get shared
	// connections of their own.
	charsets := []string{"", "charset=utf8", "collation=latin1_swedish_ci", "charset=ascii", "charset=gbk"}
	if got := len(charsets) - 1; got <= maxMuxCharsets {
		t.Fatalf("%d character sets besides the baseline do not exceed maxMuxCharsets %d", got, maxMuxCharsets)
	}
	want := map[string]string{}
	key := func(cs, q string) string { return cs + " " + q }
	for _, cs := range charsets {
		direct := openWith(t, e.backends[0].DSN("ds_0"), cs)
		for _, q := range queries {
			want[key(cs, q)] = answerOf(ctx, direct, q)
		}
	}
	if want[key("", queries[0])] == want[key("charset=utf8", queries[0])] {
		t.Fatalf("utf8mb4 and utf8mb3 read the same %s: the test cannot tell", want[key("", queries[0])])
	}
	before := muxAnswered(e, "ds_0")
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	const rounds = 20
	for _, cs := range charsets {
		for range 2 {
			c := e.conn(t, nonEmpty(cs)...)
			wg.Go(func() {
				for range rounds {
					for _, q := range queries {
						if got, w := answerOf(ctx, c, q), want[key(cs, q)]; got != w {
							errs <- fmt.Sprintf("%q %s:\n got %s\nwant %s", cs, q, got, w)
							return
						}
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	// Every session under the first maxMuxCharsets+1 settings ran its
	// reads on shared connections; the last one's ran pooled.
	shared := int64(2 * rounds * len(queries) * (maxMuxCharsets + 1))
	if got := muxAnswered(e, "ds_0") - before; got != shared {
		t.Errorf("shared connections answered %d reads, want %d (%d sessions of %d character-set settings)", got, shared, 2*(maxMuxCharsets+1), maxMuxCharsets+1)
	}
}

// TestMultiplexMariaDBClient: the mariadb command-line client, which
// sends utf8mb3 in its handshake under a UTF-8 locale (the proxy records
// SET NAMES utf8 for it), takes the shared connections, and its output
// is the one it prints against MariaDB directly.
func TestMultiplexMariaDBClient(t *testing.T) {
	e, queries := charsetEnv(t)
	bin := mariadbtest.RequireBinary(t, "mariadb")
	cli := func(addr, db string, user ...string) string {
		host, port, _ := net.SplitHostPort(addr)
		args := append([]string{"--no-defaults", "-h" + host, "-P" + port, "--default-character-set=utf8", "--batch", "--force"}, user...)
		// The third read fails under utf8mb3 (1267, a mix of
		// collations): the client reports it, goes on (--force) and
		// exits 1.
		out, _ := exec.Command(bin, append(args, db, "-e", strings.Join(queries, "; "))...).CombinedOutput()
		return string(out)
	}
	n := muxAnswered(e, "ds_0")
	got := cli(e.addr, "sharding_db", "-uapp", "-papp-secret")
	if w := cli(e.backends[0].Addr(), "ds_0", "-uroot"); got != w {
		t.Errorf("mariadb client through the proxy:\n%s\nwant MariaDB's:\n%s", got, w)
	}
	if got := muxAnswered(e, "ds_0") - n; got != int64(len(queries)) {
		t.Errorf("shared connections answered %d of the client's %d reads", got, len(queries))
	}
}

// charsetEnv starts a proxy with one shared connection per data source
// over a t_plain holding non-ASCII text, and returns reads of it whose
// answers depend on the connection's character set.
func charsetEnv(t *testing.T) (*testEnv, []string) {
	t.Helper()
	e := startEnv(t, envOptions{server: "multiplex: on\nmultiplexConnections: 1" + muxUnbounded})
	createTables(t, e)
	if _, err := e.open(t).Exec("INSERT INTO t_plain (id, v) VALUES (1, 'caf\u00e9 \U0001F600'), (2, 'plain')"); err != nil {
		t.Fatal(err)
	}
	return e, []string{
		"SELECT v, LENGTH(v), CHAR_LENGTH(v) FROM t_plain WHERE id = 1",
		"SELECT v, 'd\u00e9j\u00e0' AS lit, CHARSET('x') FROM t_plain WHERE id = 2",
		"SELECT id FROM t_plain WHERE v = 'CAF\u00c9 \U0001F600'", // the connection's collation compares
	}
}

// openWith opens dsn with one more parameter (none when param is "").
func openWith(t *testing.T, dsn, param string) *sql.DB {
	t.Helper()
	if param != "" {
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		dsn += sep + param
	}
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// nonEmpty is s as a list, empty when s is.
func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}
