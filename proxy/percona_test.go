package proxy

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// perconaSchema is the operator's schema: t_order sharded (with a
// redundant index for pt-duplicate-key-checker to find), t_order_archive
// and t_plain unsharded (the default data source's).
var perconaSchema = []string{
	"CREATE TABLE t_order (order_id BIGINT NOT NULL PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(16), amount DECIMAL(10,2), KEY k_user (user_id), KEY k_user_status (user_id, status))",
	"CREATE TABLE t_order_archive (order_id BIGINT NOT NULL PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(16), amount DECIMAL(10,2))",
	"CREATE TABLE t_plain (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(32), n INT)",
	"CREATE TABLE t_plain_copy (id INT PRIMARY KEY, v VARCHAR(32), n INT)",
}

// ptSide is where the toolkit points: the proxy or the reference
// MariaDB, the same logical schema sharding_db on both.
type ptSide struct {
	host, port string
	app        *sql.DB // as app, whose privileges are on sharding_db only
	// ops is the account with every privilege: ops (otherSchemas)
	// through the proxy, root on MariaDB.
	ops, opsPassword string
}

// dsn is a toolkit DSN for user on the side's sharding_db.
func (s ptSide) dsn(user, password, extra string) string {
	d := "h=" + s.host + ",P=" + s.port + ",u=" + user + ",D=sharding_db"
	if password != "" {
		d += ",p=" + password
	}
	if extra != "" {
		d += "," + extra
	}
	return d
}

// requirePerconaToolkit returns the bin directory of Debian's
// percona-toolkit, skipping (or failing under CI=true) when pt-archiver
// is missing.
func requirePerconaToolkit(t *testing.T) string {
	t.Helper()
	return filepath.Dir(requireCommand(t, "pt-archiver", "percona-toolkit (scripts/install-deps.sh installs percona-toolkit)", "--version"))
}

// TestPerconaToolkitApplication points Percona Toolkit (Debian's 3.2.1)
// at the proxy over a sharded table and unsharded ones, and at one
// MariaDB holding the same logical rows, as an operator does: pt-archiver
// (--dry-run, --purge, --dest with --for-update and --share-lock,
// --no-delete, and --bulk-insert, which implies --bulk-delete, on an
// unsharded table), pt-show-grants, pt-mysql-summary,
// pt-duplicate-key-checker, pt-find, pt-visual-explain, pt-index-usage,
// pt-table-usage, pt-kill (--print, and --kill of a session of the same
// user running SLEEP), pt-heartbeat and pt-online-schema-change
// (--dry-run and --execute on an unsharded table), between statements of
// the operator's own: by key, a page, aggregates, a transaction rolled
// back and one committed, a duplicate key. Both print the same, step by
// step, once what differs by nature is masked (times, ports, versions,
// sizes, row estimates, the server's own counters). Then what the proxy
// cannot do (perconaLimits), each refused clearly with nothing left
// half-done.
func TestPerconaToolkitApplication(t *testing.T) {
	bin := requirePerconaToolkit(t)
	users := "users: [{user: app, password: app-secret}, {user: ops, password: ops-secret, otherSchemas: true}]"
	e := startEnv(t, envOptions{databases: "pt", rules: dumpToolRangeRules, server: users})
	ref := mariadbtest.Start(t, mariadbtest.Options{Databases: []string{"sharding_db"}})
	ref.Exec(t, "", "CREATE USER app@'%' IDENTIFIED BY 'app-secret'", "GRANT ALL ON sharding_db.* TO app@'%'")
	refApp, err := sql.Open("mysql", "app:app-secret@tcp("+ref.Addr()+")/sharding_db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { refApp.Close() })
	proxyApp := e.open(t)
	for _, db := range []*sql.DB{proxyApp, refApp} {
		for _, q := range perconaSchema {
			if _, err := db.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	// Orders without keys through the proxy (its generator fills them),
	// copied with those keys to MariaDB; t_plain's AUTO_INCREMENT keys are
	// the default data source's and MariaDB's alike.
	var orders []string
	for i := 1; i <= 40; i++ {
		orders = append(orders, fmt.Sprintf("(%d, 's%d', %d.50)", i%7, i%3, i))
	}
	if _, err := proxyApp.Exec("INSERT INTO t_order (user_id, status, amount) VALUES " + strings.Join(orders, ", ")); err != nil {
		t.Fatal(err)
	}
	copied := queryStrings(t, proxyApp, "SELECT CONCAT('(', order_id, ', ', user_id, ', ''', status, ''', ', amount, ')') FROM t_order ORDER BY order_id")
	if _, err := refApp.Exec("INSERT INTO t_order (order_id, user_id, status, amount) VALUES " + strings.Join(copied, ", ")); err != nil {
		t.Fatal(err)
	}
	for _, db := range []*sql.DB{proxyApp, refApp} {
		if _, err := db.Exec("INSERT INTO t_plain (v, n) VALUES ('a', 1), ('b', 2), ('c', 3), ('d', 4), ('e', 5), ('f', 6), ('g', 7), ('h', 8), ('i', 9), ('j', 10)"); err != nil {
			t.Fatal(err)
		}
	}

	host, port, _ := strings.Cut(e.addr, ":")
	proxySide := ptSide{host: host, port: port, app: proxyApp, ops: "ops", opsPassword: "ops-secret"}
	refSide := ptSide{host: ref.Host(), port: strconv.Itoa(ref.Port()), app: refApp, ops: "root"}
	want := perconaApp(t, bin, refSide)
	referencePrinted(t, "the operator's session", want,
		"pt-archiver purge | SELECT 14",
		"pt-archiver plain bulk | INSERT 2",
		"pt-kill --kill | victim | killed",
		"pt-online-schema-change ops | Successfully altered `sharding_db`.`t_plain`.",
	)
	sameSteps(t, perconaApp(t, bin, proxySide), want)

	perconaLimits(t, bin, e, proxySide)
}

// perconaApp is the operator's session on one side: each tool's masked
// output, and the rows the operator checks between them, one line a
// step.
func perconaApp(t *testing.T, bin string, s ptSide) []string {
	t.Helper()
	var out []string
	say := func(step, text string) {
		for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
			out = append(out, step+" | "+l)
		}
	}
	tool := func(step, name string, args ...string) string {
		t.Helper()
		text := ptRun(t, filepath.Join(bin, name), args...)
		say(step, text)
		return text
	}
	rows := func(step, q string, args ...any) {
		t.Helper()
		r, err := s.app.Query(q, args...)
		if err == nil {
			var got []string
			if got, err = rowStrings(r, ","); err == nil {
				say(step, strings.Join(got, "\n"))
				return
			}
		}
		say(step, fmt.Sprintf("error %d %v", errCode(err), err))
	}
	appDSN := s.dsn("app", "app-secret", "")
	orders := "SELECT order_id, user_id, status, amount FROM t_order ORDER BY order_id"
	archived := "SELECT order_id, user_id, status, amount FROM t_order_archive ORDER BY order_id"

	// pt-archiver walks the table by its primary key (the sharding
	// column order_id), in chunks of --limit, deleting by key.
	archiver := func(step string, args ...string) {
		t.Helper()
		text := ptRun(t, filepath.Join(bin, "pt-archiver"), append(args, "--statistics")...)
		var kept []string
		for _, l := range strings.Split(text, "\n") {
			// The statistics' times and the table of actions (timed,
			// sorted by time) differ by nature; the counts must not.
			if strings.HasPrefix(l, "Started at") || strings.HasPrefix(l, "Action") || archiverTiming.MatchString(l) {
				continue
			}
			kept = append(kept, l)
		}
		say(step, strings.Join(kept, "\n"))
	}
	src := "--source=" + s.dsn("app", "app-secret", "t=t_order,A=utf8mb4")
	rows("before", "SELECT COUNT(*), SUM(amount), MIN(status), MAX(status) FROM t_order")
	tool("pt-archiver charset", "pt-archiver", "--source="+s.dsn("app", "app-secret", "t=t_order"), "--where=status = 's1'", "--purge", "--dry-run")
	tool("pt-archiver dry-run", "pt-archiver", src, "--where=status = 's1'", "--limit=5", "--commit-each", "--purge", "--dry-run")
	archiver("pt-archiver purge", src, "--where=status = 's1'", "--limit=5", "--commit-each", "--purge")
	rows("after purge", orders)
	archiver("pt-archiver dest", src, "--dest=t=t_order_archive", "--where=user_id IN (2, 3)", "--limit=3", "--commit-each", "--for-update")
	archiver("pt-archiver share-lock", src, "--dest=t=t_order_archive", "--where=user_id = 4", "--limit=4", "--commit-each", "--share-lock")
	rows("after dest", orders)
	rows("archive", archived)
	// --bulk-delete deletes each chunk by its range of keys with the
	// chunk's LIMIT, over t_order_0 and t_order_1 of user 1's data
	// source: the proxy spends the LIMIT node after node.
	archiver("pt-archiver bulk-delete", src, "--where=user_id = 1", "--limit=3", "--commit-each", "--purge", "--bulk-delete")
	rows("after bulk-delete", orders)
	plain := "--source=" + s.dsn("app", "app-secret", "t=t_plain,A=utf8mb4")
	archiver("pt-archiver no-delete", plain, "--dest=t=t_plain_copy", "--where=n > 3", "--limit=2", "--commit-each", "--no-delete")
	// --bulk-insert (LOAD DATA LOCAL INFILE into the destination, and
	// --bulk-delete, which it implies) on the unsharded table.
	archiver("pt-archiver plain bulk", plain, "--dest=t=t_plain_copy", "--where=n < 3", "--limit=5", "--commit-each", "--bulk-insert")
	archiver("pt-archiver plain purge", plain, "--where=n > 8", "--limit=1", "--txn-size=1", "--purge")
	rows("plain", "SELECT id, v, n FROM t_plain ORDER BY id")
	rows("plain copy", "SELECT id, v, n FROM t_plain_copy ORDER BY id")

	// The operator's own statements: by key, a page, aggregates, a
	// transaction rolled back and one committed, a duplicate key.
	first := queryStrings(t, s.app, "SELECT MIN(order_id) FROM t_order_archive")[0]
	rows("by key", "SELECT order_id, status FROM t_order_archive WHERE order_id = ?", first)
	rows("page", "SELECT order_id, amount FROM t_order_archive ORDER BY amount DESC, order_id LIMIT 3 OFFSET 2")
	rows("per user", "SELECT user_id, COUNT(*), SUM(amount) FROM t_order GROUP BY user_id ORDER BY user_id")
	for _, end := range []string{"ROLLBACK", "COMMIT"} {
		tx, err := s.app.Begin()
		if err != nil {
			t.Fatal(err)
		}
		res, err := tx.Exec("UPDATE t_order SET status = 'held' WHERE user_id = 6")
		if err != nil {
			t.Fatal(err)
		}
		n, _ := res.RowsAffected()
		if end == "ROLLBACK" {
			err = tx.Rollback()
		} else {
			err = tx.Commit()
		}
		if err != nil {
			t.Fatal(err)
		}
		say(end, fmt.Sprintf("updated %d", n))
		rows(end, "SELECT COUNT(*) FROM t_order WHERE status = 'held'")
	}
	_, err := s.app.Exec("INSERT INTO t_order_archive (order_id, user_id, status, amount) VALUES (?, 2, 'again', 1)", first)
	say("duplicate", fmt.Sprintf("%d %v", errCode(err), err))

	// The server's tools.
	// It dies on MariaDB's 1142 for mysql.user, with the errno Perl
	// has left (of connecting) as its exit status.
	say("pt-show-grants", exitStatus.ReplaceAllString(ptRun(t, filepath.Join(bin, "pt-show-grants"), appDSN), "exit status N"))
	say("pt-mysql-summary", perconaSummary(ptRun(t, filepath.Join(bin, "pt-mysql-summary"), "--host="+s.host, "--port="+s.port, "--user=app", "--password=app-secret", "--sleep=1")))
	tool("pt-duplicate-key-checker", "pt-duplicate-key-checker", appDSN, "--databases=sharding_db")
	finder := []string{"-h", s.host, "-P", s.port, "-u", "app", "-p", "app-secret"}
	tool("pt-find tablesize", "pt-find", append(finder, "--tablesize", "+0", "sharding_db")...)
	tool("pt-find empty", "pt-find", append(finder, "--empty", "--engine", "InnoDB", "sharding_db")...)
	tool("pt-find tblregex", "pt-find", append(finder, "--tblregex", "^t_order", "--printf", "%D.%N %E\n", "sharding_db")...)

	// What the tools explain.
	dir := t.TempDir()
	query := filepath.Join(dir, "query.sql")
	// A statement of one data node: the proxy's EXPLAIN of one over
	// several gives a row per data node, which pt-visual-explain draws
	// as a JOIN of them.
	one := queryStrings(t, s.app, "SELECT MIN(order_id) FROM t_order WHERE user_id = 5")[0]
	writeFile(t, query, "SELECT o.order_id, o.amount FROM t_order o WHERE o.user_id = 5 AND o.order_id = "+one+"\n")
	tool("pt-visual-explain", "pt-visual-explain", append(finder, "-D", "sharding_db", "--connect", query)...)
	slow := filepath.Join(dir, "slow.log")
	writeFile(t, slow, perconaSlowLog)
	tool("pt-index-usage", "pt-index-usage", append(finder, slow)...)
	tool("pt-table-usage", "pt-table-usage", "--query=INSERT INTO t_order_archive SELECT * FROM t_order WHERE user_id = 3", "--explain-extended", appDSN)

	// pt-kill finds a session of app that has run SLEEP for more than a
	// second: --print names it, --kill ends its connection.
	victim := make(chan error, 1)
	go func() {
		var v int
		victim <- s.app.QueryRow("SELECT SLEEP(30) AS pt_kill_victim").Scan(&v)
	}()
	waitFor(t, func() bool {
		return slices.ContainsFunc(queryStrings(t, s.app, "SHOW PROCESSLIST"), func(r string) bool {
			return strings.Contains(r, "pt_kill_victim")
		})
	})
	killer := []string{s.dsn("app", "app-secret", ""), "--busy-time=1", "--match-info=pt_kill_victim", "--run-time=4", "--interval=1"}
	say("pt-kill --print", perconaKillLines(ptRun(t, filepath.Join(bin, "pt-kill"), append(killer, "--print")...)))
	say("pt-kill --kill", perconaKillLines(ptRun(t, filepath.Join(bin, "pt-kill"), append(killer, "--print", "--kill")...)))
	select {
	case err := <-victim:
		if err != nil {
			say("pt-kill --kill", "victim | killed")
		} else {
			say("pt-kill --kill", "victim | ran to its end")
		}
	case <-time.After(20 * time.Second):
		say("pt-kill --kill", "victim | still running")
	}

	// pt-heartbeat: app may not read the binary log's position (1227 on
	// both); the account with every privilege keeps a heartbeat row.
	tool("pt-heartbeat app", "pt-heartbeat", "-h", s.host, "-P", s.port, "-u", "app", "-p", "app-secret", "-D", "sharding_db",
		"--create-table", "--table=heartbeat", "--update", "--run-time=1")
	beat := []string{"-h", s.host, "-P", s.port, "-u", s.ops, "-D", "sharding_db", "--table=heartbeat"}
	if s.opsPassword != "" {
		beat = append(beat, "-p", s.opsPassword)
	}
	tool("pt-heartbeat update", "pt-heartbeat", append(beat, "--create-table", "--update", "--run-time=2", "--interval=1")...)
	lag := ptRun(t, filepath.Join(bin, "pt-heartbeat"), append(beat, "--check", "--master-server-id=1")...)
	if d, err := strconv.ParseFloat(strings.TrimSpace(lag), 64); err != nil || d < 0 || d > 30 {
		say("pt-heartbeat check", lag)
	} else {
		say("pt-heartbeat check", "a lag of seconds")
	}
	rows("heartbeat", "SELECT server_id, file, position FROM heartbeat")

	// pt-online-schema-change on the unsharded t_plain.
	osc := func(step, user, password string, args ...string) {
		t.Helper()
		text := ptRun(t, filepath.Join(bin, "pt-online-schema-change"), append([]string{s.dsn(user, password, "t=t_plain")}, args...)...)
		say(step, text)
	}
	osc("pt-online-schema-change dry-run", "app", "app-secret", "--alter=ADD COLUMN note VARCHAR(20)", "--dry-run", "--recursion-method=none")
	osc("pt-online-schema-change replicas", "app", "app-secret", "--alter=ADD COLUMN note VARCHAR(20)", "--execute")
	osc("pt-online-schema-change ops", s.ops, s.opsPassword, "--alter=ADD COLUMN note VARCHAR(20) DEFAULT 'none'", "--execute")
	rows("altered", "SELECT id, v, n, note FROM t_plain ORDER BY id")
	rows("tables", "SHOW TABLES")
	return out
}

// perconaLimits checks what the toolkit cannot do through the proxy:
// pt-archiver's key ranges on a table whose INLINE algorithm refuses
// ranges (1235), pt-online-schema-change on a sharded
// table (CREATE TRIGGER, 1235) or as a user without otherSchemas (1227
// naming TRIGGER). Each is refused clearly and leaves nothing half-done.
func perconaLimits(t *testing.T, bin string, e *testEnv, s ptSide) {
	t.Helper()
	before := queryStrings(t, s.app, "SELECT order_id, user_id, status FROM t_order ORDER BY order_id")

	// Without allow-range-query-with-inline-sharding, t_order's INLINE
	// table algorithm refuses pt-archiver's next chunk (order_id >= ?)
	// with 1235; the first chunk (no range) went to the file.
	rules, err := config.Parse([]byte(rulesYAMLOn(e.backends, "users: [{user: app, password: app-secret}]", dumpToolRules, "pt")), "strict-rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	strict := startEnv(t, envOptions{rulesFile: rules})
	host, port, _ := strings.Cut(strict.addr, ":")
	file := filepath.Join(t.TempDir(), "archive.txt")
	out := ptRun(t, filepath.Join(bin, "pt-archiver"), "--source="+ptSide{host: host, port: port}.dsn("app", "app-secret", "t=t_order,A=utf8mb4"),
		"--file="+file, "--where=user_id = 5", "--limit=2", "--no-delete")
	refused := "sharding algorithm order_inline (INLINE) on order_id cannot route a range query: set allow-range-query-with-inline-sharding: true to scan every data node"
	if !strings.Contains(out, refused) || !strings.Contains(out, "exit status") {
		t.Errorf("pt-archiver through a proxy refusing ranges:\n%s", out)
	}
	if _, err := strict.open(t).Exec("SELECT order_id FROM t_order WHERE order_id >= 1 ORDER BY order_id LIMIT 2"); errCode(err) != 1235 {
		t.Errorf("a range of order_id through that proxy: %v, want 1235", err)
	}

	// pt-online-schema-change keeps its copy in step with triggers on the
	// table: on a sharded table CREATE TRIGGER is refused (1235); it drops
	// its new table and exits 12 with t_order as it was.
	osc := ptRun(t, filepath.Join(bin, "pt-online-schema-change"), s.dsn(s.ops, s.opsPassword, "t=t_order"), "--alter=ADD COLUMN note VARCHAR(20)", "--execute")
	for _, want := range []string{"shardflake does not support CREATE TRIGGER on sharded table t_order", "`sharding_db`.`t_order` was not altered.", "exit status 12"} {
		if !strings.Contains(osc, want) {
			t.Errorf("pt-online-schema-change on the sharded t_order: no %q in\n%s", want, osc)
		}
	}
	ops, err := sql.Open("mysql", e.dsn("ops", "ops-secret"))
	if err != nil {
		t.Fatal(err)
	}
	defer ops.Close()
	_, err = ops.Exec("CREATE TRIGGER t_order_del AFTER DELETE ON t_order FOR EACH ROW DELETE FROM t_plain WHERE id = OLD.user_id")
	if errCode(err) != 1235 {
		t.Errorf("CREATE TRIGGER on the sharded t_order: %v, want 1235", err)
	}
	// As app (no otherSchemas): triggers run with the backend account's
	// rights, so the proxy wants otherSchemas for them (1227 naming
	// TRIGGER); MariaDB lets an account with TRIGGER on the schema.
	osc = ptRun(t, filepath.Join(bin, "pt-online-schema-change"), s.dsn("app", "app-secret", "t=t_plain"), "--alter=ADD COLUMN other INT", "--execute", "--recursion-method=none")
	for _, want := range []string{"Access denied; you need (at least one of) the TRIGGER privilege(s) for this operation", "`sharding_db`.`t_plain` was not altered.", "exit status 12"} {
		if !strings.Contains(osc, want) {
			t.Errorf("pt-online-schema-change as app: no %q in\n%s", want, osc)
		}
	}
	if got := queryStrings(t, s.app, "SELECT order_id, user_id, status FROM t_order ORDER BY order_id"); !slices.Equal(got, before) {
		t.Errorf("t_order changed: %d rows, %d before", len(got), len(before))
	}
	if got := queryStrings(t, s.app, "SHOW COLUMNS FROM t_order"); len(got) != 4 {
		t.Errorf("t_order's columns: %q", got)
	}
	if got := queryStrings(t, s.app, "SHOW COLUMNS FROM t_plain"); len(got) != 4 {
		t.Errorf("t_plain's columns: %q", got)
	}
	// Nothing left on the data sources: no new or old copy, no trigger.
	for i := range e.backends {
		db := fmt.Sprintf("pt_%d", i)
		left := queryStrings(t, e.backend(t, i), "SELECT CONCAT('table ', TABLE_NAME) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME LIKE '\\_%' UNION ALL SELECT CONCAT('trigger ', TRIGGER_NAME) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = ?", db, db)
		if len(left) > 0 {
			t.Errorf("%s holds %q after the refused changes", db, left)
		}
	}
}

// ptRun runs a tool and returns its output, stdout then stderr (the
// order of the two interleaved is the pipes' buffering), each line of
// stderr marked, and its exit status when it failed.
func ptRun(t *testing.T, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("%s: %v", bin, err)
	}
	var b strings.Builder
	b.WriteString(stdout.String())
	for _, l := range strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n") {
		if l != "" {
			b.WriteString("stderr: " + l + "\n")
		}
	}
	if err != nil {
		fmt.Fprintf(&b, "exit: %v\n", err)
	}
	return ptMask.Replace(ptMasks(b.String()))
}

// ptMask and ptMasks hide what differs by nature between the proxy and
// MariaDB in the tools' output: times, ports, the server's version and
// the accounts standing for each other.
var ptMask = strings.NewReplacer("u=root", "u=OPS", "u=ops", "u=OPS")

var ptMaskPatterns = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?`), "TIME"},
	{regexp.MustCompile(`P=\d+`), "P=PORT"},
	{regexp.MustCompile(`Report On Port \d+`), "Report On Port PORT"},
	{regexp.MustCompile(`MySQL \S+ at`), "MySQL VERSION at"},
	{regexp.MustCompile(`DBI connect\('[^']*'`), "DBI connect(DSN"},
	{regexp.MustCompile(`(?m)^(# Size Duplicate Indexes\s+)\d+`), "${1}SIZE"},
	{regexp.MustCompile(`(?m)^(\s+rows\s+)\d+`), "${1}ROWS"},
}

func ptMasks(s string) string {
	for _, m := range ptMaskPatterns {
		s = m.re.ReplaceAllString(s, m.with)
	}
	return s
}

var exitStatus = regexp.MustCompile(`exit status \d+`)

// archiverTiming is a line of pt-archiver's table of timed actions.
var archiverTiming = regexp.MustCompile(`^\w+\s+\d+\s+-?\d+\.\d+\s+-?\d+\.\d+$`)

// perconaKillLines is pt-kill's output with each victim's connection id
// and seconds masked, once each (it prints a victim at every interval
// it matches, which timing decides).
func perconaKillLines(out string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		l = killLine.ReplaceAllString(l, "KILL ID (Query N sec)")
		if !slices.Contains(lines, l) {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

var killLine = regexp.MustCompile(`KILL \d+ \(Query \d+ sec\)`)

// perconaSummary is pt-mysql-summary's report without what describes the
// server's own state rather than what the client sees: the status
// counters' section and what it reads from them, times, the version,
// paths, connection counts, cache usage, and the processlist's State column (a busy session's stage
// inside MariaDB, which the proxy does not know: MariaDB shows "starting"
// for the session running SHOW PROCESSLIST, the proxy nothing).
func perconaSummary(out string) string {
	var kept []string
	skip, state, processes, counted := false, false, false, false
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "# ") {
			skip = strings.HasPrefix(l, "# Status Counters")
			processes = strings.HasPrefix(l, "# Processlist")
			// Read from the server's counters since its start (Com_lock_tables,
			// Com_xa_*, Com_stmt_prepare), which the other clients of a data
			// source move.
			counted = strings.HasPrefix(l, "# Noteworthy Technologies")
		}
		if processes {
			// The connections' seconds are the test's timing.
			l = processSeconds.ReplaceAllString(l, "${1}S S")
		}
		if strings.HasPrefix(strings.TrimSpace(l), "State ") {
			state = true
		} else if strings.TrimSpace(l) == "" {
			state = false
		}
		if skip || state {
			continue
		}
		label, _, found := strings.Cut(l, " | ")
		if found && (counted || summaryVarying[strings.TrimSpace(label)]) {
			l = label + " | ?"
		}
		kept = append(kept, l)
	}
	return strings.Join(kept, "\n")
}

var processSeconds = regexp.MustCompile(`^(.*\s\d+\s+\d+\s+)\d+\s+\d+$`)

// summaryVarying are pt-mysql-summary's labels whose values are a
// server's own.
var summaryVarying = map[string]bool{
	"System time": true, "Time": true, "Started": true, "Version": true, "Datadir": true, "Pidfile": true,
	"Processes": true, "log_error": true, "Usage": true, "Pct Used": true, "Unflushed": true, "HitToInsertRatio": true,
}

// perconaSlowLog is a slow query log of two statements for
// pt-index-usage.
const perconaSlowLog = `# Time: 261203  9:00:00
# User@Host: app[app] @ localhost []
# Query_time: 1.000000  Lock_time: 0.000000 Rows_sent: 1  Rows_examined: 10
use sharding_db;
SET timestamp=1764752400;
SELECT order_id, amount FROM t_order WHERE user_id = 3 ORDER BY order_id;
# Time: 261203  9:00:01
# User@Host: app[app] @ localhost []
# Query_time: 1.000000  Lock_time: 0.000000 Rows_sent: 1  Rows_examined: 10
SET timestamp=1764752401;
SELECT v FROM t_plain WHERE id = 2;
`

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
