package proxy

import (
	"database/sql"
	"net"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/shardflake/shardflake/internal/mariadbtest"
	"github.com/shardflake/shardflake/internal/sqllex"
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
// administer the server (flush-*, reload, refresh, debug, shutdown,
// start-slave, stop-slave) are refused through the proxy as MariaDB
// refuses them to an account with privileges on the logical schema only
// (1227 naming RELOAD, SUPER, SHUTDOWN or REPLICATION SLAVE ADMIN): no proxy user holds the powers of the data sources' account.
// The connection that was refused FLUSH stays usable.
func TestMariadbAdminServerCommands(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	ref := mariadbtest.Start(t, mariadbtest.Options{Databases: []string{"sharding_db"}})
	ref.Exec(t, "", "CREATE USER app@'%' IDENTIFIED BY 'app-secret'", "GRANT ALL ON sharding_db.* TO app@'%'")
	for _, cmd := range []string{"flush-status", "flush-tables", "flush-privileges", "flush-logs", "flush-hosts", "reload", "refresh", "debug", "shutdown",
		// MariaDB's forms, which the proxy's parser does not read.
		"flush-user-resources", "flush-table-statistics", "flush-all-statistics", "flush-all-status", "flush-relay-log",
		"start-slave", "stop-slave"} {
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

// TestRestrictedSessionVariables: session variables MariaDB lets only an
// account with SUPER, BINLOG ADMIN or BINLOG REPLAY set (sql_log_bin,
// sql_log_off, which mariadb-admin password sets first, binlog_format,
// gtid_domain_id, ...) are refused through the proxy as MariaDB refuses
// them to an account with privileges on sharding_db only, in SET and in
// SET STATEMENT; the session keeps its value and stays usable. Applied to
// the data sources' connections they would keep the session's writes out
// of the binary log the replicas read.
func TestRestrictedSessionVariables(t *testing.T) {
	e := startEnv(t, envOptions{})
	ref := mariadbtest.Start(t, mariadbtest.Options{Databases: []string{"sharding_db"}})
	ref.Exec(t, "", "CREATE USER app@'%' IDENTIFIED BY 'app-secret'", "GRANT ALL ON sharding_db.* TO app@'%'")
	refDB, err := sql.Open("mysql", "app:app-secret@tcp("+ref.Addr()+")/sharding_db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { refDB.Close() })
	ctx := t.Context()
	proxyConn, refConn := e.conn(t), oneConn(t, refDB)
	result := func(c *sql.Conn, q string) string {
		t.Helper()
		if _, err := c.ExecContext(ctx, q); err != nil {
			return err.Error()
		}
		var v string
		if err := c.QueryRowContext(ctx, "SELECT CONCAT_WS(',', @@sql_log_bin, @@sql_log_off, @@binlog_format, @@gtid_domain_id, @@server_id = @@GLOBAL.server_id)").Scan(&v); err != nil {
			return "after: " + err.Error()
		}
		return "ok " + v
	}
	for _, q := range []string{
		"SET sql_log_bin = 0", "SET SESSION sql_log_off = 1", "SET @@binlog_format = 'STATEMENT'",
		"SET @@SESSION.gtid_domain_id = 9", "SET gtid_seq_no = 5", "SET server_id = 77", "SET pseudo_thread_id = 5",
		"SET binlog_annotate_row_events = 0", "SET binlog_row_image = 'MINIMAL'",
		"SET binlog_direct_non_transactional_updates = 1", "SET enforce_storage_engine = 'InnoDB'", "SET wsrep_on = 0",
		"SET @a = 1, sql_log_bin = 0", "SET sql_log_off = 1, password = '*0000000000000000000000000000000000000000'",
		"SET STATEMENT sql_log_bin = 0 FOR SELECT 1", "SET STATEMENT binlog_format = 'STATEMENT' FOR SELECT 1",
		"SET skip_replication = 1", "SET slow_query_log = 0",
	} {
		got, want := result(proxyConn, q), result(refConn, q)
		if got != want {
			t.Errorf("%s:\nproxy:   %s\nMariaDB: %s", q, got, want)
		}
	}
}

// TestMariadbAdminVariablesVersion: the version mariadb-admin variables
// (SHOW VARIABLES) lists is the one mariadb-admin version (the greeting)
// names, and SHOW VARIABLES' version_comment is @@version_comment, through
// the proxy as on MariaDB.
func TestMariadbAdminVariablesVersion(t *testing.T) {
	e := startEnv(t, envOptions{})
	ref := sharedServers(t)[0]
	serverVersion := regexp.MustCompile(`(?m)^Server version\s+(\S+)$`)
	versionRow := regexp.MustCompile(`(?m)^\| version +\| (\S+) +\|$`)
	for _, tt := range []struct{ name, addr, user, password string }{
		{"proxy", e.addr, "app", "app-secret"}, {"MariaDB", ref.Addr(), ref.User(), ""},
	} {
		version := serverVersion.FindStringSubmatch(mariadbAdmin(t, tt.addr, tt.user, tt.password, "version"))
		vars := mariadbAdmin(t, tt.addr, tt.user, tt.password, "variables")
		listed := versionRow.FindStringSubmatch(vars)
		if version == nil || listed == nil || version[1] != listed[1] {
			t.Errorf("%s: mariadb-admin version says %q, variables %q", tt.name, version, listed)
		}
	}
	for _, db := range []*sql.DB{e.open(t), e.backend(t, 0)} {
		var name, shown, selected string
		if err := db.QueryRow("SHOW VARIABLES LIKE 'version_comment'").Scan(&name, &shown); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRow("SELECT @@version_comment").Scan(&selected); err != nil {
			t.Fatal(err)
		}
		if shown != selected {
			t.Errorf("SHOW VARIABLES: version_comment %q, @@version_comment %q", shown, selected)
		}
	}
	// SHOW VARIABLES runs as any statement: under SET STATEMENT, on the
	// transaction's connection.
	ctx := t.Context()
	var got, want []string
	for i, c := range []*sql.Conn{e.conn(t), oneConn(t, e.backend(t, 0))} {
		for _, q := range []string{
			"SET STATEMENT max_statement_time = 7 FOR SHOW VARIABLES LIKE 'max_statement_time'",
			"BEGIN", "SHOW SESSION VARIABLES WHERE Variable_name = 'in_transaction'", "ROLLBACK",
		} {
			rows, err := c.QueryContext(ctx, q)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			for rows.Next() {
				var name, value string
				if err := rows.Scan(&name, &value); err != nil {
					t.Fatal(err)
				}
				if i == 0 {
					got = append(got, name+"="+value)
				} else {
					want = append(want, name+"="+value)
				}
			}
			rows.Close()
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") || len(want) != 2 {
		t.Errorf("SHOW VARIABLES under SET STATEMENT and in a transaction: proxy %v, MariaDB %v", got, want)
	}
}

// TestUnparsedAdminPrivilege: only FLUSH, START and STOP SLAVE texts are
// taken for server administration; anything else the parser refused stays
// its syntax error.
func TestUnparsedAdminPrivilege(t *testing.T) {
	tests := []struct{ give, want string }{
		{"FLUSH USER_RESOURCES", "RELOAD"},
		{"flush /*!40101 LOCAL */ table_statistics, index_statistics;", "RELOAD"},
		{"FLUSH RELAY LOGS FOR CHANNEL 'a'", "RELOAD"},
		{"START SLAVE", "SUPER, REPLICATION SLAVE ADMIN"},
		{"stop replica 'm1' io_thread", "SUPER, REPLICATION SLAVE ADMIN"},
		{"START ALL SLAVES", "SUPER, REPLICATION SLAVE ADMIN"},
		{"FLUSH", ""},
		{"FLUSH TABLES t WITH (READ LOCK", ""},
		{"FLUSH TABLES t = 1", ""},
		{"SELECT 1 FLUSH TABLES", ""},
		{"START TRANSACTION WITH", ""},
		{"STOP ALL", ""},
		{"'FLUSH' TABLES", ""},
	}
	for _, tt := range tests {
		if got := unparsedAdminPrivilege(tt.give, sqllex.Backslash); got != tt.want {
			t.Errorf("%q: %q, want %q", tt.give, got, tt.want)
		}
	}
}

// TestUnparsedShowPrivilege: only SHOW ALL SLAVES | REPLICAS STATUS,
// SHOW SLAVE | REPLICA 'name' STATUS, SHOW BINARY | MASTER LOGS and SHOW
// SLAVE | REPLICA HOSTS (pt-online-schema-change's, 1064 before) are
// taken for SHOWs about replication; other texts stay syntax errors.
func TestUnparsedShowPrivilege(t *testing.T) {
	tests := []struct{ give, want string }{
		{"SHOW ALL SLAVES STATUS", "SUPER, SLAVE MONITOR"},
		{"show all replicas status;", "SUPER, SLAVE MONITOR"},
		{"SHOW SLAVE 'm1' STATUS", "SUPER, SLAVE MONITOR"},
		{"SHOW REPLICA `m1` STATUS", "SUPER, SLAVE MONITOR"},
		{"SHOW BINARY LOGS", "SUPER, BINLOG MONITOR"},
		{"SHOW /*!40101 MASTER */ LOGS", "SUPER, BINLOG MONITOR"},
		{"SHOW SLAVE HOSTS", "REPLICATION MASTER ADMIN"},
		{"show replica hosts;", "REPLICATION MASTER ADMIN"},
		{"SHOW SLAVE HOSTS x", ""},
		{"SHOW ALL STATUS", ""},
		{"SHOW ALL SLAVES", ""},
		{"SHOW SLAVE m1 STATUS", ""},
		{"SHOW BINARY LOGS x", ""},
		{"SELECT 1 SHOW BINARY LOGS", ""},
	}
	for _, tt := range tests {
		if got := unparsedShowPrivilege(tt.give, sqllex.Backslash); got != tt.want {
			t.Errorf("%q: %q, want %q", tt.give, got, tt.want)
		}
	}
}

// TestAccountManagementRefused: SET PASSWORD (also as mariadb-admin
// password sends it, with sql_log_off after it), ALTER USER, CREATE USER
// and GRANT get 1235 saying the proxy's users are server.users in the
// rules file, and the connection stays usable. mariadb-admin password
// stops before, at SET sql_log_off = 1, as for MariaDB's account without
// SUPER.
func TestAccountManagementRefused(t *testing.T) {
	e := startEnv(t, envOptions{})
	ref := mariadbtest.Start(t, mariadbtest.Options{Databases: []string{"sharding_db"}})
	ref.Exec(t, "", "CREATE USER app@'%' IDENTIFIED BY 'app-secret'", "GRANT ALL ON sharding_db.* TO app@'%'")
	got := mariadbAdmin(t, e.addr, "app", "app-secret", "password", "new-secret")
	if want := mariadbAdmin(t, ref.Addr(), "app", "app-secret", "password", "new-secret"); got != want {
		t.Errorf("mariadb-admin password:\nproxy:\n%s\nMariaDB:\n%s", got, want)
	}
	c := e.conn(t)
	for _, q := range []string{
		"SET PASSWORD = PASSWORD('x')", "SET PASSWORD FOR app = PASSWORD('x')",
		"SET PASSWORD = '*0000000000000000000000000000000000000000', sql_log_off = 0",
		"ALTER USER CURRENT_USER() IDENTIFIED BY 'x'", "CREATE USER u2 IDENTIFIED BY 'x'",
		"GRANT SELECT ON sharding_db.* TO app", "REVOKE SELECT ON sharding_db.* FROM app", "DROP USER u2",
	} {
		_, err := c.ExecContext(t.Context(), q)
		if errCode(err) != 1235 || !strings.Contains(err.Error(), "server.users in the rules file") {
			t.Errorf("%s: %v", q, err)
		}
		var n int
		if err := c.QueryRowContext(t.Context(), "SELECT 1").Scan(&n); err != nil {
			t.Errorf("after %s: %v", q, err)
		}
	}
}
