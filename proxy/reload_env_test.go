package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shardflake/shardflake/config"
)

// reloadUsers are the test users, app allowed to reload the rules.
const reloadUsers = `users:
- { user: app, password: app-secret, hints: true, rulesAdmin: true }
- { user: other, password: other-secret }`

// reloadEnv is a proxy whose rules are read from a file the test
// rewrites, over databases prefix_0 and prefix_1 of the shared servers
// (and prefix_x of the first, for an extra data source).
type reloadEnv struct {
	*testEnv
	path   string
	prefix string
	rules  string // the rules: section; default defaultTestRules
}

// reloadYAML is the test rules file with extra data source lines and
// extra t_order-like table rules; edit replaces old with new pairs in it.
func (e *reloadEnv) yaml(extraDS, extraTables string, edits ...string) string {
	rules := e.rules
	if rules == "" {
		rules = defaultTestRules
	}
	src := rulesYAMLOn(e.backends, reloadUsers, rules, e.prefix)
	if extraDS != "" {
		src = strings.Replace(src, "\nrules:\n", extraDS+"\nrules:\n", 1)
	}
	if extraTables != "" {
		src = strings.Replace(src, "    tables:\n      t_order:", "    tables:\n"+extraTables+"\n      t_order:", 1)
	}
	for i := 0; i+1 < len(edits); i += 2 {
		if !strings.Contains(src, edits[i]) {
			e.t.Fatalf("the rules have no %q to replace", edits[i])
		}
		src = strings.Replace(src, edits[i], edits[i+1], 1)
	}
	return src
}

// write makes src the rules file's content.
func (e *reloadEnv) write(t *testing.T, src string) {
	t.Helper()
	if err := os.WriteFile(e.path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
}

// createOrderTables creates t_order's physical tables t_order_0 and
// t_order_1, empty, in prefix_0 and prefix_1.
func (e *reloadEnv) createOrderTables(t *testing.T) {
	t.Helper()
	for i, b := range e.backends {
		b.Exec(t, fmt.Sprintf("%s_%d", e.prefix, i), "DROP TABLE IF EXISTS t_order_0", "DROP TABLE IF EXISTS t_order_1",
			"CREATE TABLE t_order_0 (order_id BIGINT PRIMARY KEY, user_id INT, status VARCHAR(20))",
			"CREATE TABLE t_order_1 (order_id BIGINT PRIMARY KEY, user_id INT, status VARCHAR(20))")
	}
}

// extraDS is the data source line of ds_x, on the first server.
func (e *reloadEnv) extraDS() string {
	return fmt.Sprintf("  ds_x: { url: \"jdbc:mysql://%s/%s_x\", username: root, password: \"\", maxPoolSize: 5 }", e.backends[0].Addr(), e.prefix)
}

// extraTable is a table rule with its one data node on ds_x.
const extraTable = `      t_extra:
        actualDataNodes: ds_x.t_extra`

// freePort returns a loopback port nothing listens on.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

func startReloadEnv(t *testing.T, prefix string, extra bool, opts envOptions) *reloadEnv {
	return startReloadEnvWith(t, prefix, "", extra, opts)
}

// startReloadEnvWith is startReloadEnv with a rules: section of its own.
func startReloadEnvWith(t *testing.T, prefix, rulesSection string, extra bool, opts envOptions) *reloadEnv {
	t.Helper()
	backends := sharedServers(t)
	for i, b := range backends {
		b.Exec(t, "", fmt.Sprintf("CREATE DATABASE IF NOT EXISTS `%s_%d`", prefix, i))
	}
	backends[0].Exec(t, "", fmt.Sprintf("CREATE DATABASE IF NOT EXISTS `%s_x`", prefix))
	e := &reloadEnv{testEnv: &testEnv{backends: backends, t: t}, path: filepath.Join(t.TempDir(), "rules.yaml"), prefix: prefix, rules: rulesSection}
	src := e.yaml("", "")
	if extra {
		src = e.yaml(e.extraDS(), extraTable)
	}
	e.write(t, src)
	rules, err := config.Load(e.path)
	if err != nil {
		t.Fatal(err)
	}
	opts.backends = backends
	opts.server = reloadUsers
	opts.rulesFile = rules
	e.testEnv = startEnv(t, opts)
	return e
}

// TestReloadKeepsOpenTransaction: a transaction open across a reload
// that removes the data source it writes to still commits there, and the
// data source's pool closes once it has ended; the sessions that start
// afterwards use the new rules.
func TestReloadKeepsOpenTransaction(t *testing.T) {
	e := startReloadEnv(t, "rlt", true, envOptions{})
	e.backends[0].Exec(t, "rlt_x", "DROP TABLE IF EXISTS t_extra", "CREATE TABLE t_extra (id BIGINT PRIMARY KEY, v VARCHAR(20))")
	ctx := context.Background()
	tx := e.conn(t)
	execAll(t, tx, "BEGIN", "INSERT INTO t_extra (id, v) VALUES (1, 'across')")
	old := e.srv.current()
	extraPool := old.pools["ds_x"]

	admin := e.conn(t)
	e.write(t, e.yaml("", ""))
	if _, err := admin.ExecContext(ctx, "RELOAD RULES"); err != nil {
		t.Fatalf("RELOAD RULES: %v", err)
	}
	if e.srv.current() == old || e.srv.current().pools["ds_x"] != nil {
		t.Fatal("the reload did not switch to rules without ds_x")
	}
	// A new session routes by the new rules: t_extra has no rule, so it
	// is looked for on the default data source, where it does not exist.
	if _, err := admin.ExecContext(ctx, "SELECT * FROM t_extra"); errCode(err) != 1146 {
		t.Fatalf("t_extra after the reload: %v, want 1146", err)
	}
	if extraPool.closedNow() {
		t.Fatal("ds_x's pool closed while a transaction uses it")
	}
	// The open transaction still sees its rules and commits.
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM t_extra").Scan(&n); err != nil || n != 1 {
		t.Fatalf("inside the transaction after the reload: %d rows, %v", n, err)
	}
	execAll(t, tx, "COMMIT")
	deadline := time.Now().Add(5 * time.Second)
	for {
		extraPool.mu.Lock()
		closed := extraPool.closed
		extraPool.mu.Unlock()
		if closed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("ds_x's pool is still open after the last transaction on it ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
	db := e.backends[0].Open(t, "rlt_x")
	if err := db.QueryRow("SELECT COUNT(*) FROM t_extra WHERE v = 'across'").Scan(&n); err != nil || n != 1 {
		t.Fatalf("the committed row on ds_x: %d, %v", n, err)
	}
	// The session that held the old snapshot takes the new one next.
	if _, err := tx.ExecContext(ctx, "SELECT * FROM t_extra"); errCode(err) != 1146 {
		t.Fatalf("t_extra on the transaction's session after COMMIT: %v, want 1146", err)
	}
}

// TestReloadRefusesInvalidFile: a file that does not decode, and one
// naming a data source that does not answer, leave the rules in force
// (the same digest) and say why.
func TestReloadRefusesInvalidFile(t *testing.T) {
	e := startReloadEnv(t, "rli", false, envOptions{})
	ctx := context.Background()
	c := e.conn(t)
	execAll(t, c, "RELOAD RULES")
	digest := e.srv.RulesDigest()
	if digest == "" || digest == "unknown" {
		t.Fatalf("digest after a reload: %q", digest)
	}
	e.write(t, e.yaml("", "", "databaseName: sharding_db", "databaseName: sharding_db\nbogus: 1"))
	_, err := c.ExecContext(ctx, "RELOAD RULES")
	if errCode(err) != 1105 || !strings.Contains(mysqlMessage(err), "the rules file is invalid") || !strings.Contains(mysqlMessage(err), "bogus") {
		t.Fatalf("an invalid file: %v", err)
	}
	if got := e.srv.RulesDigest(); got != digest {
		t.Fatalf("digest %s after a refused reload, want %s", got, digest)
	}
	down := freePort(t)
	e.write(t, e.yaml(fmt.Sprintf("  ds_x: { url: \"jdbc:mysql://127.0.0.1:%d/nowhere\", username: root, password: \"\", connectionTimeoutMilliseconds: 500 }", down), ""))
	_, err = c.ExecContext(ctx, "RELOAD RULES")
	if errCode(err) != 1105 || !strings.Contains(mysqlMessage(err), "data source ds_x") || !strings.Contains(mysqlMessage(err), "does not answer") {
		t.Fatalf("an unreachable data source: %v", err)
	}
	if got := e.srv.RulesDigest(); got != digest {
		t.Fatalf("digest %s after a refused reload, want %s", got, digest)
	}
	if _, ok := e.srv.current().pools["ds_x"]; ok {
		t.Fatal("the refused reload's data source is in the rules in force")
	}
	var n int
	if err := c.QueryRowContext(ctx, "SELECT 1").Scan(&n); err != nil {
		t.Fatalf("the connection after refused reloads: %v", err)
	}
	// Without rulesAdmin, the statements are refused.
	other, err := sql.Open("mysql", e.dsn("other", "other-secret"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.ExecContext(ctx, "RELOAD RULES"); errCode(err) != 1227 {
		t.Fatalf("RELOAD RULES without rulesAdmin: %v, want 1227", err)
	}
	if applied, refused := e.srv.Reloads(); applied != 1 || refused != 2 {
		t.Fatalf("reloads applied %d, refused %d; want 1, 2", applied, refused)
	}
}

// TestReloadGraceClosesHeldPool: a transaction that outlives the grace
// period of the reload that removed its data source gets an error saying
// so on its next statement, and its connection stays usable.
func TestReloadGraceClosesHeldPool(t *testing.T) {
	e := startReloadEnv(t, "rlg2", true, envOptions{})
	e.srv.SetReloadGrace(300 * time.Millisecond)
	e.backends[0].Exec(t, "rlg2_x", "DROP TABLE IF EXISTS t_extra", "CREATE TABLE t_extra (id BIGINT PRIMARY KEY, v VARCHAR(20))")
	ctx := context.Background()
	tx := e.conn(t)
	execAll(t, tx, "BEGIN", "INSERT INTO t_extra (id, v) VALUES (1, 'late')")
	old := e.srv.current()
	e.write(t, e.yaml("", ""))
	if _, err := e.srv.Reload(ctx, false); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !old.dead.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the replaced snapshot outlived its grace period")
		}
		time.Sleep(10 * time.Millisecond)
	}
	_, err := tx.ExecContext(ctx, "INSERT INTO t_extra (id, v) VALUES (2, 'later')")
	if err == nil || !strings.Contains(mysqlMessage(err), "grace period") {
		t.Fatalf("a statement on the closed data source after the grace period: %v", err)
	}
	// The transaction is gone with its pool; the session is usable and
	// on the new rules.
	tx.ExecContext(ctx, "ROLLBACK")
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT 1").Scan(&n); err != nil {
		t.Fatalf("the session after the grace period: %v", err)
	}
	if _, err := tx.ExecContext(ctx, "SELECT * FROM t_extra"); errCode(err) != 1146 {
		t.Fatalf("t_extra on the session after the grace period: %v, want 1146 (the new rules)", err)
	}
	db := e.backends[0].Open(t, "rlg2_x")
	if err := db.QueryRow("SELECT COUNT(*) FROM t_extra").Scan(&n); err != nil || n != 0 {
		t.Fatalf("rows on ds_x after the cut transaction: %d, %v; want 0 (rolled back)", n, err)
	}
}
