package proxy

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// slapRules are dumpToolRules with t1, the table of mariadb-slap's
// --auto-generate-sql (intcol1 INT, charcol1 VARCHAR, no key), sharded
// over the data sources by intcol1.
var slapRules = strings.Replace(strings.Replace(dumpToolRules,
	"    tables:\n", `    tables:
      t1:
        actualDataNodes: ds_${0..1}.t1
        databaseStrategy:
          standard: { shardingColumn: intcol1, shardingAlgorithmName: t1_inline }
`, 1),
	"    shardingAlgorithms:\n", `    shardingAlgorithms:
      t1_inline: { type: INLINE, props: { algorithm-expression: "ds_${intcol1 % 2}" } }
`, 1)

// TestMariadbSlapApplication runs mariadb-slap (mysqlslap) through the
// proxy and on one MariaDB holding the same rows, logged in as an account
// with privileges on sharding_db only: user-supplied --query loads on the
// binding tables under --create-schema=sharding_db (concurrent clients
// and iterations, --commit, --detach), and --auto-generate-sql's own
// statements. Each run prints the same report (times aside) and leaves
// the same rows both ways.
//
// --auto-generate-sql and --create begin with DROP SCHEMA IF EXISTS and
// CREATE SCHEMA of their schema: of the logical schema the proxy refuses
// them (1044 and 1007, as MariaDB answers an account without those
// privileges), and mariadb-slap stops; of its default schema mysqlslap
// MariaDB refuses the same account alike. What works through the proxy:
// create the tables through it, then run the statements (for
// --auto-generate-sql, those --only-print shows) as --query with
// --create-schema=sharding_db.
func TestMariadbSlapApplication(t *testing.T) {
	slap := mariadbtest.RequireBinary(t, "mariadb-slap")
	e := startEnv(t, envOptions{databases: "slap", rules: slapRules})
	db := e.open(t)
	ref := mariadbtest.Start(t, mariadbtest.Options{Databases: []string{"sharding_db"}})
	refDB := ref.Open(t, "sharding_db")
	t1 := "CREATE TABLE t1 (intcol1 INT(32), charcol1 VARCHAR(128))"
	for _, q := range append(slices.Clone(dumpToolSchema), t1) {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		// MariaDB numbers the keys the proxy generates.
		q = strings.Replace(q, "order_id BIGINT NOT NULL PRIMARY KEY", "order_id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY", 1)
		q = strings.Replace(q, "item_id BIGINT NOT NULL PRIMARY KEY", "item_id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY", 1)
		if _, err := refDB.Exec(q); err != nil {
			t.Fatalf("%s on MariaDB: %v", q, err)
		}
	}
	var values []string
	for i := range 60 {
		values = append(values, fmt.Sprintf("(%d, 's%d')", i%9, i%4))
	}
	if _, err := db.Exec("INSERT INTO t_order (user_id, status) VALUES " + strings.Join(values, ", ")); err != nil {
		t.Fatal(err)
	}
	copyRows(t, db, refDB)
	ref.Exec(t, "", "CREATE USER app@'%' IDENTIFIED BY 'app-secret'", "GRANT ALL ON sharding_db.* TO app@'%'")
	// An order both sides hold, for the items the load adds.
	var order, user string
	if err := db.QueryRow("SELECT order_id, user_id FROM t_order WHERE user_id = 5 ORDER BY order_id LIMIT 1").Scan(&order, &user); err != nil {
		t.Fatal(err)
	}

	run := func(addr string, args ...string) string {
		t.Helper()
		host, port, _ := net.SplitHostPort(addr)
		out, err := exec.Command(slap, append([]string{"--no-defaults", "--protocol=tcp", "-h", host, "-P", port, "-uapp", "-papp-secret"}, args...)...).CombinedOutput()
		s := slapSeconds.ReplaceAllString(string(out), "N seconds")
		if err != nil {
			s += "exit: " + err.Error() + "\n"
		}
		return s
	}
	// The statements --auto-generate-sql runs after making its schema and
	// t1 and before dropping the schema: 100 rows, then the mixed load.
	generated, err := exec.Command(slap, "--only-print", "--auto-generate-sql", "--number-of-queries=20").Output()
	if err != nil {
		t.Fatal(err)
	}
	var load []string
	inserts := 0
	for _, l := range strings.Split(string(generated), "\n") {
		if strings.HasPrefix(l, "INSERT INTO t1 ") {
			inserts++
		}
		if strings.HasPrefix(l, "INSERT INTO t1 ") || strings.HasPrefix(l, "SELECT ") {
			load = append(load, l)
		}
	}
	if inserts < 100 || len(load) <= inserts {
		t.Fatalf("mariadb-slap --only-print --auto-generate-sql: %d statements, %d of them INSERTs:\n%s", len(load), inserts, generated)
	}
	loadFile := filepath.Join(t.TempDir(), "load.sql")
	if err := os.WriteFile(loadFile, []byte(strings.Join(load, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	for _, args := range [][]string{
		{"--create-schema=sharding_db", "--delimiter=;", "--concurrency=2", "--iterations=2", "--number-of-queries=60",
			"--query=SELECT status FROM t_order WHERE user_id = 3 ORDER BY order_id;" +
				"INSERT INTO t_order (user_id, status) VALUES (7, 'slap');" +
				"SELECT COUNT(*), SUM(user_id) FROM t_order;" +
				"SELECT o.status, COUNT(i.item_id) FROM t_order o LEFT JOIN t_order_item i ON o.order_id = i.order_id AND o.user_id = i.user_id WHERE o.user_id = 5 GROUP BY o.status ORDER BY o.status;" +
				"SELECT status, COUNT(*) FROM t_order WHERE user_id IN (1, 2, 7) GROUP BY status ORDER BY status LIMIT 2"},
		{"--create-schema=sharding_db", "--delimiter=;", "--commit=5", "--number-of-queries=30",
			"--query=INSERT INTO t_order_item (order_id, user_id, qty) VALUES (" + order + ", " + user + ", 2);SELECT SUM(qty) FROM t_order_item WHERE user_id = " + user},
		{"--create-schema=sharding_db", "--detach=4", "--concurrency=3", "--number-of-queries=24",
			"--query=SELECT code, label FROM t_dict ORDER BY code"},
		// What --auto-generate-sql runs, on t1 made through the proxy.
		{"--create-schema=sharding_db", "--delimiter=;", "--number-of-queries=" + fmt.Sprint(len(load)), "--query=" + loadFile},
		// Its own schema, mysqlslap: refused alike, 1044.
		{"--auto-generate-sql", "--number-of-queries=20"},
	} {
		got, want := run(e.addr, args...), run(ref.Addr(), args...)
		if got != want {
			t.Errorf("mariadb-slap %q\nthrough the proxy:\n%s\non MariaDB:\n%s", args, got, want)
		}
	}
	for _, q := range []string{
		"SELECT user_id, status, COUNT(*) FROM t_order GROUP BY user_id, status ORDER BY user_id, status",
		"SELECT order_id, user_id, qty, COUNT(*) FROM t_order_item GROUP BY order_id, user_id, qty ORDER BY order_id",
		"SELECT intcol1, charcol1 FROM t1 ORDER BY intcol1, charcol1",
	} {
		got, want := queryStrings(t, db, q), queryStrings(t, refDB, q)
		if !slices.Equal(got, want) || len(want) == 0 {
			t.Errorf("%s:\nthrough the proxy %q\non MariaDB        %q", q, got, want)
		}
	}
	// t1's rows landed on both data sources by intcol1.
	for i := range e.backends {
		var n int
		if err := e.backend(t, i).QueryRow(fmt.Sprintf("SELECT COUNT(*) FROM t1 WHERE intcol1 %% 2 <> %d", i)).Scan(&n); err != nil || n != 0 {
			t.Errorf("ds_%d.t1: %d rows of the other data source (%v)", i, n, err)
		}
	}

	// --auto-generate-sql and --create on the logical schema: refused
	// with MariaDB's codes (not run on MariaDB, where the account may drop
	// its database), the connection still usable.
	for _, args := range [][]string{
		{"--auto-generate-sql", "--create-schema=sharding_db", "--number-of-queries=20"},
		{"--create-schema=sharding_db", "--create=CREATE TABLE t_slap (id INT)", "--query=SELECT 1"},
	} {
		want := slap + ": Cannot drop database 'sharding_db' ERROR : Access denied for user 'app'@'%' to database 'sharding_db'\nexit: exit status 1\n"
		if got := run(e.addr, args...); got != want {
			t.Errorf("mariadb-slap %q through the proxy:\n%s\nwant:\n%s", args, got, want)
		}
	}
	c := oneConn(t, db)
	for _, tt := range []struct {
		give string
		want uint16
	}{
		{"DROP SCHEMA IF EXISTS `sharding_db`", 1044},
		{"CREATE SCHEMA `sharding_db`", 1007},
	} {
		if _, err := c.ExecContext(t.Context(), tt.give); errCode(err) != tt.want {
			t.Errorf("%s: %v, want error %d", tt.give, err, tt.want)
		}
	}
	if got := queryStrings(t, c, "SELECT COUNT(*) FROM t1"); !slices.Equal(got, []string{fmt.Sprint(inserts)}) {
		t.Errorf("t1 after the refusals: %q rows, want the %d the load inserted", got, inserts)
	}
}

// slapSeconds is a time in mariadb-slap's report.
var slapSeconds = regexp.MustCompile(`\d+\.\d+ seconds`)
