package proxy

import (
	"bytes"
	"net"
	"os/exec"
	"strings"
	"testing"
)

// djangoTables are the tables the Django application's migrations create:
// the built-in apps' (no rules: the default data source) and the shop
// app's (t_order and t_order_item, binding tables).
var djangoTables = []string{
	"t_order_item", "t_order",
	"auth_user_user_permissions", "auth_user_groups", "auth_group_permissions",
	"auth_user", "auth_group", "auth_permission", "django_content_type", "django_migrations",
}

// TestDjangoApplication runs a small Django project (testdata/django:
// Debian's python3-django with mysqlclient) through the proxy over binding
// tables whose keys the proxy generates, and against one MariaDB: migrate
// (twice), showmigrations, sqlmigrate, and the ORM's default paths (see
// app.py). Both runs print the same, step by step; once with Django's
// default connection, once with OPTIONS a project may set (init_command
// with NO_BACKSLASH_ESCAPES, another isolation level, a charset).
func TestDjangoApplication(t *testing.T) {
	requirePython(t, "MySQLdb", "python3-mysqldb")
	py := requirePython(t, "django", "python3-django")
	e := startEnv(t, envOptions{rules: bindingTestRules})
	db := e.open(t)
	drop := func() {
		for _, table := range djangoTables {
			if _, err := db.Exec("DROP TABLE IF EXISTS " + table); err != nil {
				t.Errorf("DROP TABLE %s: %v", table, err)
			}
		}
	}
	t.Cleanup(func() {
		e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS dj_ref")
		drop()
	})
	for _, tt := range []struct{ name, options string }{
		{"defaults", `{}`},
		{"options", `{"init_command": "SET sql_mode = 'STRICT_ALL_TABLES,NO_BACKSLASH_ESCAPES'", "isolation_level": "repeatable read", "charset": "utf8mb4"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			drop()
			e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS dj_ref", "CREATE DATABASE dj_ref")
			run := func(addr, user, password, database string) ([]string, string) {
				t.Helper()
				host, port, err := net.SplitHostPort(addr)
				if err != nil {
					t.Fatal(err)
				}
				cmd := exec.Command(py, "testdata/django/app.py", host, port, user, password, database, tt.options)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("the application against %s: %v\n%s\n%s", addr, err, out, stderr.String())
				}
				return strings.Split(strings.TrimSpace(string(out)), "\n"), stderr.String()
			}
			want, _ := run(e.backends[0].Addr(), "root", "", "dj_ref")
			for _, line := range want {
				if strings.Contains(line, "'error'") && !strings.HasPrefix(line, "('get missing'") && !strings.HasPrefix(line, "('get many'") {
					t.Fatalf("directly on MariaDB the application printed\n%s\nwith an unexpected error: the reference is not what this test assumes", strings.Join(want, "\n"))
				}
			}
			got, stderr := run(e.addr, "app", "app-secret", "sharding_db")
			if sameSteps(t, got, want); t.Failed() {
				t.Logf("the application's errors through the proxy:\n%s", stderr)
			}
		})
	}
}
