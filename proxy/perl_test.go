package proxy

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// requirePerlDBI returns Debian's perl after checking that it has DBI with
// DBD::MariaDB, skipping (or failing under CI=true) when it has not.
func requirePerlDBI(t *testing.T) string {
	t.Helper()
	return requireCommand(t, "perl", "perl with DBI and DBD::MariaDB (scripts/install-deps.sh installs libdbd-mariadb-perl)",
		"-MDBI", "-MDBD::MariaDB", "-MJSON::PP", "-e", "1")
}

// TestPerlDBIApplication runs a small Perl DBI application
// (testdata/perl_app.pl, DBD::MariaDB) through the proxy over binding
// tables and directly on one MariaDB, with the driver's default
// (placeholders replaced in the client) and with server-side prepared
// statements (mariadb_server_prepare=1, no fallback to text): DDL,
// inserts without keys and last_insert_id, selectall_arrayref,
// selectrow_*, fetch loops and bind_columns, paging with LIMIT ? OFFSET ?,
// aggregates, joins of the binding tables, updates and deletes with their
// row counts, begin_work/rollback/commit, and errors with err, errstr and
// state, the connection usable after each. Both runs print the same,
// step by step.
func TestPerlDBIApplication(t *testing.T) {
	perl := requirePerlDBI(t)
	e := startEnv(t, envOptions{rules: bindingTestRules})
	e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS perl_ref", "CREATE DATABASE perl_ref")
	t.Cleanup(func() {
		e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS perl_ref")
		db := e.open(t)
		for _, q := range []string{"DROP TABLE IF EXISTS t_order_item", "DROP TABLE IF EXISTS t_order"} {
			if _, err := db.Exec(q); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
	})
	run := func(host, port, user, password, db string) []string {
		t.Helper()
		cmd := exec.Command(perl, filepath.Join("testdata", "perl_app.pl"), host, port, user, password, db)
		return appOutput(t, cmd, host+":"+port, true)
	}
	want := run(e.backends[0].Host(), fmt.Sprint(e.backends[0].Port()), "root", "", "perl_ref")
	referencePrinted(t, "the application", want,
		"client | connect | 1 | 1 | 0 | 1",
		"server | connect | 1 | 1 | 1 | 1",
	)
	host, port, _ := strings.Cut(e.addr, ":")
	sameSteps(t, run(host, port, "app", "app-secret", "sharding_db"), want)
	bindingRowsPlaced(t, e, "perl_ref")
}
