package proxy

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// TestLoadDataShardedCLI loads a file with the mariadb command-line
// client (--local-infile) into a sharded table through the proxy and
// into the same table on MariaDB directly (a database name as long as
// sharding_db, so that the tables line up): the client prints the same
// affected rows, Records/Deleted/Skipped/Warnings line and warnings.
func TestLoadDataShardedCLI(t *testing.T) {
	e := startEnv(t, envOptions{rules: loadRules})
	bin := mariadbtest.RequireBinary(t, "mariadb")
	path := filepath.Join(t.TempDir(), "rows.tsv")
	if err := os.WriteFile(path, []byte("1\talice\t1\n2\tbob\tx\n3\n4\tdan\t4\textra\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS ldrefcli_db", "CREATE DATABASE ldrefcli_db")
	e.backends[0].Exec(t, "ldrefcli_db", "CREATE TABLE t_ld "+fmt.Sprintf(loadTable, " AUTO_INCREMENT"))
	e.open(t).Exec("DROP TABLE IF EXISTS t_ld")
	if _, err := e.open(t).Exec("CREATE TABLE t_ld " + fmt.Sprintf(loadTable, "")); err != nil {
		t.Fatal(err)
	}
	sql := fmt.Sprintf("LOAD DATA LOCAL INFILE '%s' INTO TABLE t_ld (user_id, name, n); SHOW WARNINGS; SELECT user_id, name, n FROM t_ld ORDER BY user_id", path)
	run := func(addr, user, pass, db string) string {
		t.Helper()
		host, port, _ := net.SplitHostPort(addr)
		args := []string{"--no-defaults", "-h" + host, "-P" + port, "-u" + user, "--local-infile=1", "-vvv", "--table"}
		if pass != "" {
			args = append(args, "-p"+pass)
		}
		out, err := exec.Command(bin, append(args, db, "-e", sql)...).CombinedOutput()
		if err != nil {
			t.Fatalf("mariadb on %s: %v\n%s", addr, err, out)
		}
		// Timings differ: "(0.003 sec)".
		return regexp.MustCompile(`\([0-9.]+ sec\)`).ReplaceAllString(string(out), "(t)")
	}
	got := run(e.addr, "app", "app-secret", "sharding_db")
	want := strings.ReplaceAll(run(e.backends[0].Addr(), e.backends[0].User(), "", "ldrefcli_db"), "`ldrefcli_db`.", "`sharding_db`.")
	if got != want {
		t.Errorf("the client's output differs:\nproxy:\n%s\nMariaDB:\n%s", got, want)
	}
	if !strings.Contains(got, "Records: 4  Deleted: 0  Skipped: 0  Warnings: 4") {
		t.Errorf("no Records line in:\n%s", got)
	}
}
