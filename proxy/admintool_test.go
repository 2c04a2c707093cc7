package proxy

import (
	"net"
	"os/exec"
	"strings"
	"testing"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// mariadbAdmin runs mariadb-admin with args on addr as user and returns
// what it prints, its exit status last.
func mariadbAdmin(t *testing.T, addr, user, password string, args ...string) string {
	t.Helper()
	bin := mariadbtest.RequireBinary(t, "mariadb-admin")
	host, port, _ := net.SplitHostPort(addr)
	a := append([]string{"--no-defaults", "--protocol=tcp", "-h", host, "-P", port, "-u" + user, "-p" + password, "--skip-ssl"}, args...)
	out, err := exec.Command(bin, a...).CombinedOutput()
	if err != nil {
		return string(out) + "exit: " + err.Error()
	}
	return string(out)
}

// TestMariadbAdminServerCommands: the mariadb-admin commands that
// administer the server (flush-*, reload, refresh, debug, shutdown) are
// refused through the proxy as MariaDB refuses them to an account with
// privileges on the logical schema only (1227 naming RELOAD, SUPER or
// SHUTDOWN): no proxy user holds the powers of the data sources' account.
// The connection that was refused FLUSH stays usable.
func TestMariadbAdminServerCommands(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	ref := mariadbtest.Start(t, mariadbtest.Options{Databases: []string{"sharding_db"}})
	ref.Exec(t, "", "CREATE USER app@'%' IDENTIFIED BY 'app-secret'", "GRANT ALL ON sharding_db.* TO app@'%'")
	for _, cmd := range []string{"flush-status", "flush-tables", "flush-privileges", "flush-logs", "flush-hosts", "reload", "refresh", "debug", "shutdown"} {
		got := mariadbAdmin(t, e.addr, "app", "app-secret", cmd)
		want := mariadbAdmin(t, ref.Addr(), "app", "app-secret", cmd)
		if got != want || !strings.Contains(want, "privilege(s) for this operation") {
			t.Errorf("mariadb-admin %s:\nproxy:\n%s\nMariaDB:\n%s", cmd, got, want)
		}
	}
	c := e.conn(t)
	_, err := c.ExecContext(t.Context(), "FLUSH NO_WRITE_TO_BINLOG TABLES t_order")
	if code := errCode(err); code != 1227 {
		t.Errorf("FLUSH TABLES t_order: %v, want 1227", err)
	}
	var one int
	if err := c.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM t_order WHERE user_id = 1").Scan(&one); err != nil {
		t.Errorf("after the refused FLUSH: %v", err)
	}
}
