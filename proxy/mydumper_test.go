package proxy

import (
	"bytes"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// dumpToolRules are the binding tables (t_order and t_order_item, by
// user_id over the data sources and order_id over the tables) and t_dict
// broadcast; t_plain has no rule and lives on the default data source.
var dumpToolRules = bindingTestRules + "  - !BROADCAST\n    tables: [t_dict]\n"

// dumpToolRangeRules let t_order's INLINE table algorithm route a range
// of order_id to every data node, which mydumper's --rows chunks of
// t_order (by its primary key, the sharding column) need.
var dumpToolRangeRules = strings.ReplaceAll(dumpToolRules,
	`"t_order_${order_id % 2}" }`, `"t_order_${order_id % 2}", allow-range-query-with-inline-sharding: true }`)

var dumpToolSchema = []string{
	"CREATE TABLE t_order (order_id BIGINT NOT NULL PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(16), note TEXT, amount DECIMAL(10,2), created DATETIME)",
	"CREATE TABLE t_order_item (item_id BIGINT NOT NULL PRIMARY KEY, order_id BIGINT NOT NULL, user_id INT NOT NULL, qty INT, KEY (order_id))",
	"CREATE TABLE t_dict (code VARCHAR(16) PRIMARY KEY, label VARCHAR(64))",
	"CREATE TABLE t_plain (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(32))",
}

// dumpToolTables are the logical tables and the query that reads each
// one's rows in a stable order.
var dumpToolTables = []struct{ name, rows string }{
	{"t_order", "SELECT order_id, user_id, status, note, amount, created FROM t_order ORDER BY order_id"},
	{"t_order_item", "SELECT item_id, order_id, user_id, qty FROM t_order_item ORDER BY item_id"},
	{"t_dict", "SELECT code, label FROM t_dict ORDER BY code"},
	{"t_plain", "SELECT id, v FROM t_plain ORDER BY id"},
}

// TestMydumperApplication dumps the logical schema with mydumper
// (Debian's 0.10) through the proxy and from one MariaDB holding the same
// logical rows (an account with privileges on that schema only, as the
// proxy's users have), in the modes operators use: the default, which
// takes FLUSH TABLES WITH READ LOCK, --lock-all-tables, --no-locks and
// --trx-consistency-only (with --rows chunks), and --chunk-filesize, with
// two threads. Each mode must end alike and print the same warnings both
// ways, write the same files (the same chunks, save their count) whose
// data rows, sorted, are the same: every logical row once under its
// logical table's name, never a data node's. myloader then loads the
// proxy's dump into a plain MariaDB, whose tables must hold the rows the
// data nodes hold, and back through a second proxy into empty data
// sources, whose data nodes must hold what the first one's do.
//
// FLUSH TABLES WITH READ LOCK gets MariaDB's 1227 (RELOAD) through the
// proxy as on MariaDB for such an account: mydumper says it could not
// take the global lock, dumps all the same and exits 1, both ways.
// --trx-consistency-only still takes that lock first. --lock-all-tables
// (LOCK TABLE of the logical tables, on every data node) and --no-locks
// exit 0.
func TestMydumperApplication(t *testing.T) {
	mydumper := mariadbtest.RequireBinary(t, "mydumper")
	myloader := mariadbtest.RequireBinary(t, "myloader")
	src := startEnv(t, envOptions{databases: "mydsrc", rules: dumpToolRules})
	db := src.open(t)
	for _, q := range append([]string{"DROP TABLE IF EXISTS t_order_item", "DROP TABLE IF EXISTS t_order", "DROP TABLE IF EXISTS t_dict", "DROP TABLE IF EXISTS t_plain"}, dumpToolSchema...) {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// Keys from the proxy's generator; notes long enough that t_order's
	// data fills several files of --chunk-filesize 1, with quotes,
	// backslashes, a newline, UTF-8 and NULLs.
	filler := strings.Repeat("x", 1600)
	for batch := range 6 {
		var values []string
		for i := batch * 500; i < (batch+1)*500; i++ {
			note := fmt.Sprintf("'n%d it''s \\\\ a\\nb é %s'", i, filler)
			if i%9 == 0 {
				note = "NULL"
			}
			values = append(values, fmt.Sprintf("(%d, 's%d', %s, %d.%02d, '2024-01-%02d 10:%02d:00')", i%37, i%5, note, i, i%100, i%28+1, i%60))
		}
		q := "INSERT INTO t_order (user_id, status, note, amount, created) VALUES " + strings.Join(values, ", ")
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("INSERT INTO t_order: %v", err)
		}
	}
	var items []string
	for i, o := range queryStrings(t, db, "SELECT CONCAT(order_id, ', ', user_id) FROM t_order WHERE user_id IN (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20) ORDER BY order_id") {
		items = append(items, fmt.Sprintf("(%s, %d)", o, i%4+1))
	}
	for _, q := range []string{
		"INSERT INTO t_order_item (order_id, user_id, qty) VALUES " + strings.Join(items, ", "),
		"INSERT INTO t_dict (code, label) VALUES ('a', 'x'), ('b', NULL), ('c', 'it''s')",
		"INSERT INTO t_plain (v) VALUES ('one'), ('two'), (NULL)",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	want := dataNodeRows(t, src)
	for _, table := range dumpToolTables {
		if got := tableRows(t, db, table.rows); !slices.Equal(got, want[table.name]) {
			t.Fatalf("%s through the proxy: %d rows, the data nodes hold %d", table.name, len(got), len(want[table.name]))
		}
	}

	// The reference: one MariaDB holding the logical rows, dumped by an
	// account with every privilege on sharding_db and none beyond it.
	ref := mariadbtest.Start(t, mariadbtest.Options{Databases: []string{"sharding_db"}})
	ref.Exec(t, "sharding_db", dumpToolSchema...)
	refDB := ref.Open(t, "sharding_db")
	copyRows(t, db, refDB)
	ref.Exec(t, "", "CREATE USER app@'%' IDENTIFIED BY 'app-secret'", "GRANT ALL ON sharding_db.* TO app@'%'")

	dump := func(addr string, mode []string) (string, string) {
		t.Helper()
		dir := t.TempDir()
		host, port, _ := net.SplitHostPort(addr)
		args := append([]string{"-h", host, "-P", port, "-u", "app", "-p", "app-secret", "-B", "sharding_db", "-o", dir}, mode...)
		return dir, runDumpTool(t, mydumper, args...)
	}

	// --rows chunks t_order by ranges of its primary key, order_id, the
	// table sharding column: under an INLINE algorithm that does not
	// allow ranges the proxy refuses them with 1235, as ShardingSphere
	// does, and mydumper says so and exits 1 (the first chunk, "order_id
	// IS NULL OR (...)", reaches every data node and is dumped). A proxy
	// with allow-range-query-with-inline-sharding serves them (below).
	_, out := dump(src.addr, []string{"--no-locks", "--rows", "200"})
	refused := "CRITICAL: Error dumping table (sharding_db.t_order) data: sharding algorithm order_inline (INLINE) on order_id cannot route a range query: set allow-range-query-with-inline-sharding: true to scan every data node\n"
	if !strings.Contains(out, refused) || !strings.HasSuffix(out, "exit: exit status 1\n") {
		t.Errorf("mydumper --rows through the proxy without range queries:\n%s", out)
	}
	rules, err := config.Parse([]byte(rulesYAMLOn(src.backends, "", dumpToolRangeRules, "mydsrc")), "range-rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ranged := startEnv(t, envOptions{rulesFile: rules})

	for i, mode := range [][]string{
		nil,
		{"--lock-all-tables"},
		{"--no-locks", "--rows", "200", "--threads", "2"},
		// Through the proxy the chunks are about as many times larger as
		// the table has data nodes: mydumper reads the row count from
		// EXPLAIN's first row, the first data node's (chunkNames).
		{"--trx-consistency-only", "--rows", "100", "--threads", "2"},
		// mydumper 0.10 starts a new file after chunk-filesize / (the
		// statement size in whole MiB) statements: with its default
		// statement size, under 1 MiB, it never does.
		{"--lock-all-tables", "--chunk-filesize", "1", "--statement-size", "2000000", "--threads", "2"},
	} {
		t.Run(strings.Join(append([]string{"mode"}, mode...), " "), func(t *testing.T) {
			proxyAddr := src.addr
			if slices.Contains(mode, "--rows") {
				proxyAddr = ranged.addr
			}
			dir, got := dump(proxyAddr, mode)
			refDir, wantOut := dump(ref.Addr(), mode)
			if got != wantOut {
				t.Errorf("mydumper %v through the proxy:\n%s\non MariaDB:\n%s", mode, got, wantOut)
			}
			if ftwrl := !slices.Contains(mode, "--no-locks") && !slices.Contains(mode, "--lock-all-tables"); ftwrl != strings.Contains(got, "CRITICAL: Couldn't acquire global lock, snapshots will not be consistent: Access denied; you need (at least one of) the RELOAD privilege(s) for this operation\n") {
				t.Errorf("mydumper %v through the proxy: FLUSH TABLES WITH READ LOCK refused: %v, want %v:\n%s", mode, !ftwrl, ftwrl, got)
			}
			files, refFiles := dumpFiles(t, dir), dumpFiles(t, refDir)
			if !slices.Equal(chunkNames(files), chunkNames(refFiles)) {
				t.Errorf("files through the proxy %q, on MariaDB %q", files, refFiles)
			}
			if chunked := slices.Contains(mode, "--rows") || slices.Contains(mode, "--chunk-filesize"); chunked && dataFiles(files, "t_order") < 2 {
				t.Errorf("%v: t_order in one data file through the proxy: %q", mode, files)
			}
			for _, f := range files {
				text := readFile(t, filepath.Join(dir, f))
				if strings.Contains(f, "-schema.sql") && f != "sharding_db-schema-create.sql" {
					if w := readFile(t, filepath.Join(refDir, f)); text != w {
						t.Errorf("%s through the proxy:\n%s\non MariaDB:\n%s", f, text, w)
					}
				}
				if m := physicalName.FindString(text); m != "" {
					t.Errorf("%s names %s, a data node", f, m)
				}
			}
			for _, table := range dumpToolTables {
				got, w := dumpedRows(t, dir, table.name), dumpedRows(t, refDir, table.name)
				if len(got) != len(want[table.name]) || !slices.Equal(got, w) {
					t.Errorf("%s: %d rows dumped through the proxy, %d from MariaDB, %d in the data nodes; first difference: %s", table.name, len(got), len(w), len(want[table.name]), firstDifference(got, w))
				}
			}

			// myloader into a plain MariaDB, in a database of its own.
			target := fmt.Sprintf("loaded_%d", i)
			if out := runDumpTool(t, myloader, "-h", ref.Host(), "-P", strconv.Itoa(ref.Port()), "-u", "root", "-d", dir, "-B", target, "-t", "2"); out != "" {
				t.Errorf("myloader into MariaDB: %s", out)
			}
			loaded := ref.Open(t, target)
			for _, table := range dumpToolTables {
				if got := tableRows(t, loaded, table.rows); !slices.Equal(got, want[table.name]) {
					t.Errorf("%s loaded into MariaDB: %d rows, the data nodes hold %d; first difference: %s", table.name, len(got), len(want[table.name]), firstDifference(got, want[table.name]))
				}
			}

			// myloader back through a proxy over empty data sources: the
			// rows are routed by their sharding values to the data nodes
			// they came from. Once unchunked and once for each kind of
			// chunks (the other modes' files hold the same rows, above).
			if i != 0 && !slices.Contains(mode, "--rows") && !slices.Contains(mode, "--chunk-filesize") {
				return
			}
			dst := startEnv(t, envOptions{databases: "myddst", rules: dumpToolRules})
			host, port, _ := net.SplitHostPort(dst.addr)
			if out := runDumpTool(t, myloader, "-h", host, "-P", port, "-u", "app", "-p", "app-secret", "-d", dir, "-t", "2"); out != "" {
				t.Errorf("myloader through the proxy: %s", out)
			}
			if got := dataNodeRows(t, dst); !equalNodes(got, want) {
				t.Errorf("loaded through the proxy, the data nodes hold other rows than the dumped proxy's")
			}
			for _, table := range dumpToolTables {
				got, w := physicalRows(t, dst, table.name), physicalRows(t, src, table.name)
				if !equalNodes(got, w) {
					t.Errorf("%s: the data nodes hold other rows after the load than before the dump", table.name)
				}
			}
		})
	}
}

// runDumpTool runs mydumper or myloader and returns what it printed,
// each log line without its process id and time, and its exit status
// when not 0.
func runDumpTool(t *testing.T, bin string, args ...string) string {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	var b strings.Builder
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			b.WriteString(toolLogLine.ReplaceAllString(l, "$1$2: ") + "\n")
		}
	}
	if err != nil {
		fmt.Fprintf(&b, "exit: %v\n", err)
	}
	return b.String()
}

// toolLogLine is GLib's log prefix: "** (mydumper:4465): CRITICAL **:
// 06:28:34.465: " or "** Message: 06:28:34.465: ".
var toolLogLine = regexp.MustCompile(`^\*\* (?:\(\w+:\d+\): (\w+) \*\*|(Message)): [\d:.]+: `)

// physicalName finds a data node's table name or a data source's
// database in a dump file.
var physicalName = regexp.MustCompile("t_order_[01]\\b|t_order_item_[01]\\b|mydsrc_\\d")

// dumpFiles lists a dump directory, without mydumper's metadata file
// (its start and finish times).
func dumpFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.Name() != "metadata" {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out)
	return out
}

var chunkSuffix = regexp.MustCompile(`\.\d{5}\.sql$`)

// chunkNames is files with the chunk numbers left out, each name once:
// how many chunks mydumper makes of a table depends on the row count
// EXPLAIN estimates, which through the proxy is the first data node's.
func chunkNames(files []string) []string {
	var out []string
	for _, f := range files {
		out = append(out, chunkSuffix.ReplaceAllString(f, ".NNNNN.sql"))
	}
	return slices.Compact(out)
}

// dataFiles counts the data files of table among files.
func dataFiles(files []string, table string) int {
	n := 0
	for _, f := range files {
		if chunkSuffix.ReplaceAllString(f, ".sql") == "sharding_db."+table+".sql" {
			n++
		}
	}
	return n
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// dumpedRows returns the rows of table's data files, sorted: mydumper
// writes one row a line, "(v1,v2,...)," or, the last of a statement,
// "(...);". It checks that each INSERT names the logical table.
func dumpedRows(t *testing.T, dir, table string) []string {
	t.Helper()
	var rows []string
	for _, f := range dumpFiles(t, dir) {
		if chunkSuffix.ReplaceAllString(f, ".sql") != "sharding_db."+table+".sql" {
			continue
		}
		for _, l := range strings.Split(readFile(t, filepath.Join(dir, f)), "\n") {
			switch {
			case strings.HasPrefix(l, "INSERT INTO "):
				if l != "INSERT INTO `"+table+"` VALUES" {
					t.Errorf("%s: %s", f, l)
				}
			case strings.HasPrefix(l, "("):
				rows = append(rows, strings.TrimRight(l, ",;"))
			}
		}
	}
	slices.Sort(rows)
	return rows
}

// dataNodeRows reads each logical table's rows from its data nodes
// directly, sorted: a sharded table's physical tables on every data
// source together, a broadcast table's copy on ds_0 (each other copy
// must hold the same), a table without rules on the default data source.
func dataNodeRows(t *testing.T, e *testEnv) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, table := range dumpToolTables {
		nodes := physicalRows(t, e, table.name)
		switch table.name {
		case "t_order", "t_order_item":
			for _, rows := range nodes {
				out[table.name] = append(out[table.name], rows...)
			}
		case "t_dict":
			for node, rows := range nodes {
				if !slices.Equal(rows, nodes["ds_0.t_dict"]) {
					t.Errorf("%s holds %q, ds_0.t_dict %q", node, rows, nodes["ds_0.t_dict"])
				}
			}
			out[table.name] = nodes["ds_0.t_dict"]
		default:
			out[table.name] = nodes["ds_0."+table.name]
		}
		slices.Sort(out[table.name])
	}
	return out
}

// physicalRows reads the rows of each data node of a logical table,
// sorted, keyed "ds_N.physical": t_order's four, t_dict's two copies,
// t_plain on ds_0.
func physicalRows(t *testing.T, e *testEnv, table string) map[string][]string {
	t.Helper()
	var query string
	for _, tt := range dumpToolTables {
		if tt.name == table {
			query = tt.rows
		}
	}
	out := map[string][]string{}
	for i := range e.backends {
		physicals := []string{table + "_0", table + "_1"}
		switch table {
		case "t_dict":
			physicals = []string{table}
		case "t_plain":
			if i > 0 {
				continue
			}
			physicals = []string{table}
		}
		for _, p := range physicals {
			q := strings.Replace(query, "FROM "+table+" ", "FROM "+p+" ", 1)
			out[fmt.Sprintf("ds_%d.%s", i, p)] = tableRows(t, e.backend(t, i), q)
		}
	}
	return out
}

func equalNodes(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !slices.Equal(v, w) {
			return false
		}
	}
	return true
}

// copyRows writes every logical table's rows read through the proxy into
// to, keys and all.
func copyRows(t *testing.T, from, to *sql.DB) {
	t.Helper()
	for _, table := range dumpToolTables {
		rows, err := from.Query(table.rows)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		var values []string
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			for i, v := range vals {
				if i > 0 {
					b.WriteString(", ")
				}
				if !v.Valid {
					b.WriteString("NULL")
				} else {
					b.WriteString("'" + strings.NewReplacer(`\`, `\\`, "'", "''", "\n", `\n`).Replace(v.String) + "'")
				}
			}
			values = append(values, "("+b.String()+")")
		}
		rows.Close()
		if len(values) == 0 {
			continue
		}
		q := fmt.Sprintf("INSERT INTO %s (%s) VALUES %s", table.name, strings.Join(cols, ", "), strings.Join(values, ", "))
		if _, err := to.Exec(q); err != nil {
			t.Fatalf("INSERT INTO %s on MariaDB: %v", table.name, err)
		}
	}
}

// TestMydumperServerStatements: what mydumper asks of the server before
// it dumps, answered through the proxy as MariaDB answers an account with
// privileges on the logical schema only: the global lock and the binary
// log and replica positions are refused with MariaDB's 1227 naming the
// privilege, also SHOW ALL SLAVES STATUS (sent when the server has
// @@default_master_connection), which the parser does not read (was
// 1064); the connection stays usable.
func TestMydumperServerStatements(t *testing.T) {
	e := startEnv(t, envOptions{databases: "mydsrv", rules: dumpToolRules})
	ref := mariadbtest.Start(t, mariadbtest.Options{Databases: []string{"sharding_db"}, Args: []string{"--log-bin=mariadb-bin", "--server-id=7"}})
	ref.Exec(t, "", "CREATE USER app@'%' IDENTIFIED BY 'app-secret'", "GRANT ALL ON sharding_db.* TO app@'%'")
	refApp, err := sql.Open("mysql", "app:app-secret@tcp("+ref.Addr()+")/sharding_db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { refApp.Close() })
	answer := func(db *sql.DB, q string) string {
		t.Helper()
		c := oneConn(t, db)
		rows, err := c.QueryContext(t.Context(), q)
		if err != nil {
			return "error: " + err.Error()
		}
		out, err := rowStrings(rows, ",")
		if err != nil {
			return "error: " + err.Error()
		}
		// The connection goes on.
		if got := queryStrings(t, c, "SELECT 1"); !slices.Equal(got, []string{"1"}) {
			return fmt.Sprintf("SELECT 1 after it: %q", got)
		}
		return fmt.Sprintf("%q", out)
	}
	for _, q := range []string{
		"FLUSH TABLES WITH READ LOCK",
		"UNLOCK TABLES /* FTWRL */",
		"SELECT @@tokudb_version",
		"SHOW MASTER STATUS",
		"SHOW BINARY LOGS",
		"show master logs",
		"SELECT @@default_master_connection",
		"SHOW SLAVE STATUS",
		"SHOW ALL SLAVES STATUS",
		"show all replicas status",
		"SHOW SLAVE 'm1' STATUS",
		"SET SESSION wait_timeout = 2147483",
		"SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ",
		"/*!40101 SET NAMES binary*/",
	} {
		if got, want := answer(e.open(t), q), answer(refApp, q); got != want {
			t.Errorf("%s:\nthrough the proxy %s\non MariaDB        %s", q, got, want)
		}
	}
}
