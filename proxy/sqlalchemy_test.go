package proxy

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// TestSQLAlchemyApplication runs a small SQLAlchemy application
// (testdata/sqlalchemy_app.py: models, eager loading, bulk inserts,
// pagination, nested transactions, a rollback, a row that moves to
// another data source, a join with an aggregate) with the PyMySQL and the
// mysqlclient dialect, through the proxy over binding tables and against
// one MariaDB: both runs print the same, step by step.
func TestSQLAlchemyApplication(t *testing.T) {
	e := startEnv(t, envOptions{rules: bindingTestRules})
	e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS sa_ref", "CREATE DATABASE sa_ref")
	t.Cleanup(func() {
		e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS sa_ref")
		db := e.open(t)
		for _, q := range []string{"DROP TABLE IF EXISTS t_order_item", "DROP TABLE IF EXISTS sa_users"} {
			if _, err := db.Exec(q); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
	})
	for _, d := range []struct{ dialect, module, pkg string }{
		{"pymysql", "pymysql", "python3-pymysql"},
		{"mysqldb", "MySQLdb", "python3-mysqldb"},
	} {
		t.Run(d.dialect, func(t *testing.T) {
			requirePython(t, d.module, d.pkg)
			py := requirePython(t, "sqlalchemy", "python3-sqlalchemy")
			run := func(url string) string {
				t.Helper()
				cmd := exec.Command(py, "testdata/sqlalchemy_app.py", url, "sa_")
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("the application against %s: %v\n%s", url, err, stderr.String())
				}
				return strings.TrimSpace(string(out))
			}
			want := run(fmt.Sprintf("mysql+%s://root@%s/sa_ref", d.dialect, e.backends[0].Addr()))
			for _, step := range []string{"('nested failed', 'IntegrityError', 1062)", "('rolled back', 0)", "('after nested', [101, 901], 'PAID')"} {
				if !strings.Contains(want, step) {
					t.Fatalf("directly on MariaDB the application printed\n%s\nwithout %s: the reference is not what this test assumes", want, step)
				}
			}
			got := run(fmt.Sprintf("mysql+%s://app:app-secret@%s/sharding_db", d.dialect, e.addr))
			sameSteps(t, strings.Split(got, "\n"), strings.Split(want, "\n"))
		})
	}
}

// appOutput runs a test application and returns the lines it printed; the
// test fails when it exits non-zero or, strict, when it wrote anything to
// standard error. target names the server it ran against.
func appOutput(t *testing.T, cmd *exec.Cmd, target string, strict bool) []string {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || strict && stderr.Len() > 0 {
		t.Fatalf("the application against %s: %v\n%s\n%s", target, err, out, stderr.String())
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// referencePrinted stops the test unless an application's output directly
// on MariaDB (want, a line a step) holds each of steps: the comparison
// through the proxy is only as good as the reference it is compared with.
func referencePrinted(t *testing.T, app string, want []string, steps ...string) {
	t.Helper()
	all := strings.Join(want, "\n")
	for _, step := range steps {
		if !strings.Contains(all, step) {
			t.Fatalf("directly on MariaDB %s printed\n%s\nwithout %q: the reference is not what this test assumes", app, all, step)
		}
	}
}

// sameSteps compares an application's output through the proxy with its
// output on MariaDB, line by line (a line a step), and reports each step
// that differs.
func sameSteps(t *testing.T, got, want []string) {
	t.Helper()
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("step %d through the proxy: %s\n           on MariaDB: %s", i+1, g, w)
		}
	}
}
