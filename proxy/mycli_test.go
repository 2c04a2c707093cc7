package proxy

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// mycliStatements are what the mycli test stores through the proxy and in
// the reference database alike: the binding tables with their keys given
// (mycli prints them) and a table without rules.
var mycliStatements = append(append([]string{}, bindingTestSchema...),
	"DROP TABLE IF EXISTS my_notes",
	"CREATE TABLE my_notes (id INT AUTO_INCREMENT PRIMARY KEY, body VARCHAR(40))",
	"INSERT INTO t_order (order_id, user_id, status) VALUES (10, 1, 'NEW'), (11, 2, 'NEW'), (12, 3, 'PAID'), (13, 4, NULL), (14, 1, 'PAID')",
	"INSERT INTO t_order_item (item_id, order_id, user_id, qty) VALUES (100, 10, 1, 2), (101, 10, 1, 3), (102, 11, 2, 1), (103, 12, 3, 5)",
	"INSERT INTO my_notes (body) VALUES ('héllo'), ('tab\there')",
)

// TestMycliApplication runs mycli (Debian's mycli 1.26, on PyMySQL) the
// ways it runs without a terminal, through the proxy over binding tables
// and directly on a MariaDB server with the same database and account
// (sharding_db, app with its privileges only, so that SHOW DATABASES and
// the refused mysql.* reads are alike): -e with several statements and
// its special commands (\dt, \l), -t, an error (its message and exit
// status), and statements piped on standard input. Its interactive prompt
// needs a terminal; what it asks the server when it starts, the completion
// refresher, runs headless in testdata/mycli_refresh.py with mycli's own
// code. Both sides print the same.
func TestMycliApplication(t *testing.T) {
	mycli, err := exec.LookPath("mycli")
	if err != nil {
		mariadbtest.Require(t, fmt.Errorf("mycli (scripts/install-deps.sh installs Debian's mycli): %v", err))
	}
	py := requirePython(t, "mycli", "mycli")
	var (
		mu   sync.Mutex
		seen []string
	)
	// Fresh databases: SHOW TABLES lists every table of the default data
	// source that no rule names, and other tests leave theirs in ds_0.
	e := startEnv(t, envOptions{rules: bindingTestRules, databases: "mycli", hook: func(sql string) {
		mu.Lock()
		seen = append(seen, sql)
		mu.Unlock()
	}})
	db := e.open(t)
	for _, q := range mycliStatements {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		for _, q := range []string{"DROP TABLE IF EXISTS t_order_item", "DROP TABLE IF EXISTS t_order", "DROP TABLE IF EXISTS my_notes"} {
			if _, err := db.Exec(q); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
	})
	ref := mariadbtest.Start(t, mariadbtest.Options{Databases: []string{"sharding_db"}})
	ref.Exec(t, "", "CREATE USER app@'%' IDENTIFIED BY 'app-secret'", "GRANT ALL ON sharding_db.* TO app@'%'")
	ref.Exec(t, "sharding_db", mycliStatements...)

	// HOME is the test's: mycli writes its ~/.myclirc, log and history
	// there.
	home := t.TempDir()
	run := func(addr, stdin string, args ...string) string {
		t.Helper()
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(mycli, append([]string{"-h", host, "-P", port, "-u", "app", "-p", "app-secret", "-D", "sharding_db", "--no-warn"}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+home, "TERM=dumb", "LC_ALL=C.UTF-8")
		cmd.Stdin = strings.NewReader(stdin)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err = cmd.Run()
		status := 0
		if exit := (*exec.ExitError)(nil); errors.As(err, &exit) {
			status = exit.ExitCode()
		} else if err != nil {
			t.Fatalf("mycli against %s: %v", addr, err)
		}
		return fmt.Sprintf("%s-- stderr: %s-- exit status %d", stdout.String(), stderr.String(), status)
	}
	for _, tt := range []struct {
		name  string
		stdin string
		args  []string
		want  string // a line the reference prints
		// vary are the lines, by their labels, whose values differ by
		// nature: the server's own figures and names.
		vary []string
	}{
		{"execute", "", []string{"-e", `SHOW DATABASES; SHOW TABLES; SELECT order_id, user_id, status FROM t_order ORDER BY order_id; ` +
			`SELECT user_id, COUNT(*), SUM(order_id) FROM t_order GROUP BY user_id ORDER BY user_id; ` +
			`SELECT o.order_id, SUM(i.qty) FROM t_order o JOIN t_order_item i ON i.order_id = o.order_id WHERE o.user_id = 1 GROUP BY o.order_id; ` +
			`SELECT * FROM my_notes ORDER BY id; \dt; \dt t_order; \l`}, "14\t1\tPAID", nil},
		{"table", "", []string{"-t", "-e", "SELECT order_id, status FROM t_order WHERE order_id IN (12, 13) ORDER BY order_id"}, "| 13       | <null> |", nil},
		{"csv", "", []string{"--csv", "-e", "SELECT * FROM t_order_item WHERE user_id = 1 ORDER BY item_id"}, `"100","10","1","2"`, nil},
		{"error", "", []string{"-e", "SELECT nope FROM t_order"}, "(1054, \"Unknown column 'nope' in 'SELECT'\")", nil},
		{"syntax error", "", []string{"-e", "SELEC 1"}, "1064", nil},
		{"status", "", []string{"-e", "status"}, "Current database:\tsharding_db",
			[]string{"Connection id:", "Server version:", "TCP port:", "Uptime:"}},
		{"piped", "INSERT INTO t_order (order_id, user_id, status) VALUES (20, 2, 'PIPE');\nUPDATE t_order SET status = 'DONE' WHERE order_id = 20;\n" +
			"SELECT order_id, status FROM t_order WHERE user_id = 2 ORDER BY order_id;\nDELETE FROM t_order WHERE order_id = 20;\nSELECT COUNT(*) FROM t_order;\n", nil, "20\tDONE", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := run(ref.Addr(), tt.stdin, tt.args...)
			if !strings.Contains(want, tt.want) {
				t.Fatalf("directly on MariaDB mycli printed\n%s\nwithout %q: the reference is not what this test assumes", want, tt.want)
			}
			got := run(e.addr, tt.stdin, tt.args...)
			mask := func(out string) []string {
				lines := strings.Split(out, "\n")
				for i, l := range lines {
					for _, v := range tt.vary {
						if strings.HasPrefix(l, v) {
							lines[i] = v + " ..."
						}
					}
				}
				return lines
			}
			sameSteps(t, mask(got), mask(want))
		})
	}

	// What the interactive prompt asks when it starts.
	t.Run("completion refresh", func(t *testing.T) {
		refresh := func(addr string) []string {
			t.Helper()
			host, port, _ := net.SplitHostPort(addr)
			cmd := exec.Command(py, filepath.Join("testdata", "mycli_refresh.py"), host, port, "app", "app-secret", "sharding_db")
			cmd.Env = append(os.Environ(), "HOME="+home)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("the refresh against %s: %v\n%s\n%s", addr, err, out, stderr.String())
			}
			return strings.Split(strings.TrimSpace(string(out)), "\n")
		}
		want := refresh(ref.Addr())
		if all := strings.Join(want, "\n"); !strings.Contains(all, "table sharding_db t_order ['*', 'order_id', 'user_id', 'status']") {
			t.Fatalf("directly on MariaDB the refresh printed\n%s\nwithout t_order's columns: the reference is not what this test assumes", all)
		}
		mu.Lock()
		seen = nil
		mu.Unlock()
		sameSteps(t, refresh(e.addr), want)
		mu.Lock()
		t.Logf("the statements mycli sent the proxy at connect and in its completion refresh:\n%s", strings.Join(seen, "\n"))
		mu.Unlock()
	})
}
