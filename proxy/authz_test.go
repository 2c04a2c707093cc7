package proxy

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/internal/mariadbtest"
	"github.com/shardflake/shardflake/proxy/keygen"
)

// authzUsers are the proxy users of the privilege matrix: an application
// account (no privilege keys), a read-only one, one without a schema, and
// an operator with every grant.
const authzUsers = `users: [{user: app, password: app-secret}, {user: ro, password: ro-secret, access: read-only}, {user: nobody, password: nobody-secret, schemas: []}, {user: ops, password: ops-secret, hints: true, otherSchemas: true, files: true}]`

// referenceGrants are the MariaDB accounts that hold on one server what
// each proxy user holds on the logical schema: the same statement sent
// to both must be refused alike.
var referenceGrants = map[string][]string{
	"app":    {"GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, INDEX, ALTER ON sharding_db.* TO app@'%'"},
	"ro":     {"GRANT SELECT ON sharding_db.* TO ro@'%'"},
	"nobody": nil,
}

// TestPrivilegeMatrix sends each forbidden action as each kind of proxy
// user and wants the error a MariaDB account with the same grants gets
// from a live MariaDB (same number, SQLSTATE and text but for the client
// host), and checks the allowed actions work, the operator's too.
func TestPrivilegeMatrix(t *testing.T) {
	e := startEnv(t, envOptions{server: authzUsers})
	createTables(t, e)
	ref := mariadbtest.Start(t, mariadbtest.Options{Databases: []string{"sharding_db"}})
	root, err := ref.DB("sharding_db")
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	setup := []string{
		"CREATE TABLE t_order (order_id BIGINT NOT NULL, user_id INT NOT NULL, status VARCHAR(32), PRIMARY KEY (order_id))",
		"CREATE TABLE t_dict (code VARCHAR(16) PRIMARY KEY, label VARCHAR(64))",
	}
	for user, grants := range referenceGrants {
		setup = append(setup, fmt.Sprintf("CREATE USER %s@'%%' IDENTIFIED BY '%s-secret'", user, user))
		setup = append(setup, grants...)
	}
	for _, q := range setup {
		if _, err := root.Exec(q); err != nil {
			t.Fatalf("reference %s: %v", q, err)
		}
	}
	proxyAs := func(user, db string) *sql.DB {
		cfg := mysql.NewConfig()
		cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = user, user+"-secret", "tcp", e.addr, db
		c, err := mysql.NewConnector(cfg)
		if err != nil {
			t.Fatal(err)
		}
		d := sql.OpenDB(c)
		d.SetMaxOpenConns(1)
		t.Cleanup(func() { d.Close() })
		return d
	}
	refAs := func(user, db string) *sql.DB {
		cfg := mysql.NewConfig()
		cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = user, user+"-secret", "tcp", ref.Addr(), db
		c, err := mysql.NewConnector(cfg)
		if err != nil {
			t.Fatal(err)
		}
		d := sql.OpenDB(c)
		d.SetMaxOpenConns(1)
		t.Cleanup(func() { d.Close() })
		return d
	}
	// Each user's database at login: nobody has none.
	loginDB := map[string]string{"app": "sharding_db", "ro": "sharding_db", "nobody": "", "ops": "sharding_db"}
	outfile := filepath.Join(t.TempDir(), "out.txt")

	forbidden := []struct {
		sql   string
		users []string
		// code when MariaDB answers differently (or the statement needs the
		// proxy's sharding), else 0: compare with the reference server.
		code uint16
	}{
		{"SELECT user, password FROM mysql.user", []string{"app", "ro", "nobody"}, 0},
		{"SELECT * FROM performance_schema.threads", []string{"app", "ro"}, 0},
		{"SELECT COUNT(*) FROM t_order JOIN mysql.user", []string{"app", "ro"}, 0},
		{"SHOW GRANTS FOR root@localhost", []string{"app", "ro", "nobody"}, 0},
		{"SHOW MASTER STATUS", []string{"app", "ro"}, 0},
		{"SELECT 1 INTO OUTFILE '" + outfile + "'", []string{"app", "ro", "nobody"}, 0},
		{"SELECT order_id FROM t_order INTO OUTFILE '" + outfile + "'", []string{"app", "ro"}, 0},
		{"LOAD DATA INFILE '/etc/hostname' INTO TABLE t_dict", []string{"app", "ro"}, 0},
		{"CALL mysql.no_such_proc()", []string{"app", "ro"}, 0},
		{"SELECT sys.version_major()", []string{"app", "ro"}, errProcAccessDenied},
		{"INSERT INTO t_order (order_id, user_id, status) VALUES (1, 1, 'x')", []string{"ro"}, 0},
		{"REPLACE INTO t_dict (code, label) VALUES ('a', 'b')", []string{"ro"}, 0},
		{"UPDATE t_order SET status = 'y' WHERE user_id = 1", []string{"ro"}, 0},
		{"EXPLAIN UPDATE t_order SET status = 'y' WHERE user_id = 1", []string{"ro"}, 0},
		{"EXPLAIN SELECT user, password FROM mysql.user", []string{"app", "ro", "nobody"}, 0},
		{"DELETE FROM t_order WHERE user_id = 1", []string{"ro"}, 0},
		{"CREATE TABLE t_new (id INT)", []string{"ro"}, 0},
		{"DROP TABLE t_dict", []string{"ro"}, 0},
		{"ALTER TABLE t_dict ADD COLUMN extra INT", []string{"ro"}, 0},
		{"TRUNCATE TABLE t_dict", []string{"ro"}, 0},
		{"SELECT * FROM sharding_db.t_dict", []string{"nobody"}, 0},
		// The logical schema exists: 1007 for who may create in it.
		{"CREATE DATABASE sharding_db", []string{"app", "ro"}, 0},
		{"CREATE DATABASE sharding_db /*!40100 DEFAULT CHARACTER SET utf8mb4 */", []string{"app"}, 0},
		{"CREATE DATABASE IF NOT EXISTS sharding_db", []string{"ro"}, 0},
		{"CREATE DATABASE IF NOT EXISTS another_db", []string{"app", "ro"}, 0},
		{"USE sharding_db", []string{"nobody"}, 0},
		// Table maintenance: SELECT for CHECK and CHECKSUM, SELECT and
		// INSERT for the others.
		{"ANALYZE TABLE t_dict", []string{"ro"}, 0},
		{"OPTIMIZE TABLE t_order, t_dict", []string{"ro"}, 0},
		{"REPAIR NO_WRITE_TO_BINLOG TABLE t_dict", []string{"ro"}, 0},
		{"CHECK TABLE mysql.user", []string{"app", "ro"}, 0},
		{"CHECKSUM TABLE sharding_db.t_dict", []string{"nobody"}, 0},
		// MariaDB answers LOAD_FILE without FILE with NULL; the proxy refuses.
		{"SELECT LOAD_FILE('/etc/hostname')", []string{"app", "ro"}, errSpecificAccessDenied},
		// Beyond the logical view of information_schema: the backend
		// account's sessions, with their SQL.
		{"SELECT ID, INFO FROM information_schema.PROCESSLIST", []string{"app", "ro"}, errTableAccessDenied},
		{"SELECT * FROM information_schema.USER_PRIVILEGES", []string{"app", "ro"}, errTableAccessDenied},
		// A data source's own database: physical tables, unrouted.
		{"SELECT * FROM ds_0.t_order_0", []string{"app", "ro"}, errTableAccessDenied},
		{"INSERT INTO ds_1.t_order_1 (order_id, user_id) VALUES (7, 7)", []string{"app"}, errTableAccessDenied},
		// Routing hints, the proxy's own privilege.
		{"/* SHARDINGSPHERE_HINT: DATA_SOURCE_NAME=ds_1 */ SELECT 1 INTO OUTFILE '" + outfile + "'", []string{"app", "ro"}, errSpecificAccessDenied},
		{"/* SHARDINGSPHERE_HINT: DATA_SOURCE_NAME=ds_0 */ SELECT COUNT(*) FROM t_order_0", []string{"app", "ro"}, errSpecificAccessDenied},
		{"/* SHARDINGSPHERE_HINT: t_order.SHARDING_DATABASE_VALUE=1 */ SELECT COUNT(*) FROM t_order WHERE user_id = 2", []string{"app", "ro"}, errSpecificAccessDenied},
		{"/* shardflake: slice=0/2 */ SELECT COUNT(*) FROM t_order", []string{"app"}, errSpecificAccessDenied},
	}
	hostPart := regexp.MustCompile(`'@'[^']*'`)
	for _, tt := range forbidden {
		for _, user := range tt.users {
			t.Run(user+"/"+tt.sql, func(t *testing.T) {
				_, err := proxyAs(user, loginDB[user]).Exec(tt.sql)
				var got *mysql.MySQLError
				if !errors.As(err, &got) {
					t.Fatalf("through the proxy: %v, want an error", err)
				}
				if tt.code != 0 {
					if got.Number != tt.code || string(got.SQLState[:]) != "42000" || !strings.Contains(got.Message, "enied") {
						t.Errorf("through the proxy: %d (%s) %s, want %d (42000) access denied", got.Number, got.SQLState, got.Message, tt.code)
					}
					return
				}
				_, refErr := refAs(user, loginDB[user]).Exec(tt.sql)
				var want *mysql.MySQLError
				if !errors.As(refErr, &want) {
					t.Fatalf("MariaDB as %s: %v, want an error", user, refErr)
				}
				if got.Number != want.Number || got.SQLState != want.SQLState ||
					hostPart.ReplaceAllString(got.Message, "'@'H'") != hostPart.ReplaceAllString(want.Message, "'@'H'") {
					t.Errorf("through the proxy: %d (%s) %s\nMariaDB:           %d (%s) %s", got.Number, got.SQLState, got.Message, want.Number, want.SQLState, want.Message)
				}
			})
		}
	}
	if _, err := os.Stat(outfile); err == nil {
		t.Fatalf("%s was written by a refused statement", outfile)
	}

	t.Run("login with a schema not granted", func(t *testing.T) {
		err := proxyAs("nobody", "sharding_db").Ping()
		_, refErr := refAs("nobody", "sharding_db").Exec("SELECT 1")
		var got, want *mysql.MySQLError
		if !errors.As(err, &got) || !errors.As(refErr, &want) || got.Number != 1044 || got.Number != want.Number || got.Message != want.Message {
			t.Errorf("login: proxy %v, MariaDB %v; want the same 1044", err, refErr)
		}
	})

	allowed := []struct {
		user string
		sql  string
	}{
		{"app", "INSERT INTO t_order (order_id, user_id, status) VALUES (1, 1, 'new'), (2, 2, 'new')"},
		{"app", "UPDATE t_order SET status = 'paid' WHERE user_id = 1"},
		{"app", "SELECT COUNT(*) FROM t_order"},
		{"app", "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'sharding_db'"},
		{"app", "SELECT COUNT(*) FROM information_schema.COLLATIONS"},
		// pt-mysql-summary's look for keyring plugins.
		{"ro", `SELECT PLUGIN_NAME, PLUGIN_STATUS FROM INFORMATION_SCHEMA.PLUGINS WHERE PLUGIN_NAME LIKE "keyring%"`},
		{"ro", "SELECT COUNT(*) FROM information_schema.ALL_PLUGINS"},
		{"app", "SHOW TABLES"},
		{"app", "SHOW PROCESSLIST"},
		{"app", "CREATE TABLE t_scratch (id INT PRIMARY KEY)"},
		{"app", "DROP TABLE t_scratch"},
		{"ro", "SELECT COUNT(*) FROM t_order WHERE user_id = 1"},
		{"ro", "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_NAME = 't_order'"},
		{"ro", "SHOW CREATE TABLE t_order"},
		{"ro", "SET @x = 1"},
		{"ro", "CHECK TABLE t_order, t_dict"},
		{"ro", "CHECKSUM TABLE t_order"},
		{"app", "ANALYZE TABLE t_order"},
		{"ops", "CHECK TABLE mysql.db"},
		{"ro", "BEGIN"},
		{"nobody", "SELECT 1"},
		{"ops", "SELECT COUNT(*) FROM mysql.user"},
		{"ops", "SELECT COUNT(*) FROM information_schema.PROCESSLIST"},
		// Replication SHOWs the parser does not read, on the default data
		// source (pt-online-schema-change's look for replicas).
		{"ops", "SHOW SLAVE HOSTS"},
		{"ops", "SHOW ALL SLAVES STATUS"},
		{"ops", "/* SHARDINGSPHERE_HINT: DATA_SOURCE_NAME=ds_0 */ SELECT COUNT(*) FROM t_order_0"},
		{"ops", "SELECT LOAD_FILE('/etc/hostname')"},
		{"ops", "SHOW GRANTS FOR root@localhost"},
	}
	for _, tt := range allowed {
		if _, err := proxyAs(tt.user, loginDB[tt.user]).Exec(tt.sql); err != nil {
			t.Errorf("%s: %s: %v", tt.user, tt.sql, err)
		}
	}

	// mysqldump --databases writes CREATE DATABASE /*!32312 IF NOT
	// EXISTS*/ (from SHOW CREATE DATABASE IF NOT EXISTS), which restores
	// over the logical schema with a note 1007, as on MariaDB.
	for _, q := range []string{"SHOW CREATE DATABASE IF NOT EXISTS sharding_db", "SHOW CREATE DATABASE sharding_db"} {
		var gotName, got, wantName, want string
		if err := proxyAs("app", "sharding_db").QueryRow(q).Scan(&gotName, &got); err != nil {
			t.Fatalf("through the proxy: %s: %v", q, err)
		}
		if err := refAs("app", "sharding_db").QueryRow(q).Scan(&wantName, &want); err != nil {
			t.Fatalf("MariaDB: %s: %v", q, err)
		}
		// The character set clause is the data source's; the statement
		// up to it must be MariaDB's.
		head := func(s string) string { return strings.TrimSpace(strings.SplitN(s, "/*!40100", 2)[0]) }
		if gotName != wantName || head(got) != head(want) {
			t.Errorf("%s: proxy %q %q, MariaDB %q %q", q, gotName, got, wantName, want)
		}
	}
	for _, q := range []string{"CREATE DATABASE IF NOT EXISTS sharding_db", "CREATE DATABASE /*!32312 IF NOT EXISTS*/ `sharding_db` /*!40100 DEFAULT CHARACTER SET utf8mb4 */"} {
		diag := func(d *sql.DB) string {
			conn, err := d.Conn(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			res, err := conn.ExecContext(context.Background(), q)
			if err != nil {
				return err.Error()
			}
			n, _ := res.RowsAffected()
			var level, message string
			var code int
			if err := conn.QueryRowContext(context.Background(), "SHOW WARNINGS").Scan(&level, &code, &message); err != nil {
				return fmt.Sprintf("%d rows, SHOW WARNINGS: %v", n, err)
			}
			return fmt.Sprintf("%d rows, %s %d %s", n, level, code, message)
		}
		if got, want := diag(proxyAs("app", "sharding_db")), diag(refAs("app", "sharding_db")); got != want {
			t.Errorf("%s as app:\nproxy   %s\nMariaDB %s", q, got, want)
		}
	}

	// SHOW GRANTS tells a user its own proxy grants, not the backend
	// account's.
	var grant string
	rows, err := proxyAs("ro", "sharding_db").Query("SHOW GRANTS")
	if err != nil {
		t.Fatal(err)
	}
	var grants []string
	for rows.Next() {
		if err := rows.Scan(&grant); err != nil {
			t.Fatal(err)
		}
		grants = append(grants, grant)
	}
	rows.Close()
	if want := []string{"GRANT USAGE ON *.* TO `ro`@`%`", "GRANT SELECT, SHOW VIEW ON `sharding_db`.* TO `ro`@`%`"}; strings.Join(grants, "\n") != strings.Join(want, "\n") {
		t.Errorf("SHOW GRANTS as ro: %q, want %q", grants, want)
	}
}

// TestPrivilegesSurviveCachedPlans: a plan cached after one user's
// statement was allowed is not reused for a user without the privilege,
// on the text path, its normalized shape, or a prepared statement.
func TestPrivilegesSurviveCachedPlans(t *testing.T) {
	e := startEnv(t, envOptions{server: authzUsers})
	createTables(t, e)
	open := func(user string, params ...string) *sql.DB {
		d, err := sql.Open("mysql", e.dsn(user, user+"-secret", params...))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		return d
	}
	ops, app, ro := open("ops"), open("app"), open("ro")
	hinted := "/* SHARDINGSPHERE_HINT: DATA_SOURCE_NAME=ds_0 */ SELECT COUNT(*) FROM t_order_0 WHERE order_id = 5"
	insert := "INSERT INTO t_order (order_id, user_id, status) VALUES (5, 1, 'x')"
	for range 3 {
		for _, q := range []string{hinted, "SELECT COUNT(*) FROM t_order WHERE user_id = 1"} {
			if _, err := ops.Exec(q); err != nil {
				t.Fatalf("ops: %s: %v", q, err)
			}
		}
	}
	if _, err := app.Exec(insert); err != nil {
		t.Fatalf("app: %v", err)
	}
	if _, err := app.Exec(hinted); errCode(err) != errSpecificAccessDenied {
		t.Errorf("app after ops cached the hinted plan: %v, want 1227", err)
	}
	for _, q := range []string{insert, "INSERT INTO t_order (order_id, user_id, status) VALUES (6, 1, 'x')"} {
		if _, err := ro.Exec(q); errCode(err) != errTableAccessDenied {
			t.Errorf("ro: %s after app ran it: %v, want 1142", q, err)
		}
	}
	// Prepared (interpolateParams off: the driver prepares on the proxy).
	stmt, err := open("ro").Prepare("INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, ?)")
	if err == nil {
		_, err = stmt.Exec(7, 1, "x")
		stmt.Close()
	}
	if errCode(err) != errTableAccessDenied {
		t.Errorf("ro: prepared INSERT: %v, want 1142", err)
	}
	if _, err := open("app").Prepare("SELECT user FROM mysql.user WHERE user = ?"); errCode(err) != errTableAccessDenied {
		t.Errorf("app: prepared SELECT on mysql.user: %v, want 1142", err)
	}
	var n int
	if err := ro.QueryRow("SELECT COUNT(*) FROM t_order WHERE user_id = ?", 1).Scan(&n); err != nil || n != 1 {
		t.Errorf("ro: prepared SELECT: %d, %v; want 1 row", n, err)
	}
}

// leastPrivilegeGrants are the privileges the README's Security section
// gives the proxy's backend account on each data source's database
// (deploy/mysql/init-*.sql grants the same).
const leastPrivilegeGrants = "SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, INDEX, ALTER, CREATE TEMPORARY TABLES, LOCK TABLES, CREATE VIEW, SHOW VIEW"

// TestLeastPrivilegeBackendAccount serves the test rules with a backend
// account that holds only leastPrivilegeGrants on its databases: what an
// application does through the proxy works, and the backend account
// itself cannot read mysql.* or write files.
func TestLeastPrivilegeBackendAccount(t *testing.T) {
	backends := sharedServers(t)
	for i, b := range backends {
		b.Exec(t, "", fmt.Sprintf("CREATE DATABASE IF NOT EXISTS lp_%d", i),
			"CREATE USER IF NOT EXISTS shardflake_lp@'%' IDENTIFIED BY 'lp-secret'",
			fmt.Sprintf("GRANT %s ON lp_%d.* TO shardflake_lp@'%%'", leastPrivilegeGrants, i))
	}
	rules := strings.NewReplacer("username: root, password: \"\"", "username: shardflake_lp, password: lp-secret").
		Replace(rulesYAMLOn(backends, "", "", "lp"))
	e := startOpsEnv(t, opsOptions{prefix: "lp", rules: rules})
	if u := e.rules.DataSources[1].User; u != "shardflake_lp" {
		t.Fatalf("data source user %q, want shardflake_lp", u)
	}
	c := e.conn(t)
	for _, q := range []string{
		"DROP TABLE IF EXISTS t_order", "DROP TABLE IF EXISTS t_dict",
		"CREATE TABLE t_order (order_id BIGINT NOT NULL PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32), KEY (user_id))",
		"CREATE TABLE t_dict (code VARCHAR(16) PRIMARY KEY, label VARCHAR(64))",
		"INSERT INTO t_order (user_id, status) VALUES (1, 'a'), (2, 'b'), (3, 'c')",
		"INSERT INTO t_dict VALUES ('x', 'y')",
		"UPDATE t_order SET status = 'paid' WHERE user_id = 1",
		"DELETE FROM t_order WHERE user_id = 3",
		"ALTER TABLE t_dict ADD COLUMN extra INT",
		"CREATE INDEX t_dict_label ON t_dict (label)",
		"CREATE TEMPORARY TABLE tmp_lp (id INT)",
		"INSERT INTO tmp_lp VALUES (1)",
		"DROP TEMPORARY TABLE tmp_lp",
		"BEGIN", "INSERT INTO t_order (order_id, user_id, status) VALUES (10, 0, 'txn')", "COMMIT",
		"SHOW TABLES",
		"SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'sharding_db'",
		"SHOW CREATE TABLE t_order",
	} {
		mustExec(t, c, q)
	}
	if got := queryInts(t, c, "SELECT user_id FROM t_order ORDER BY user_id"); !slices.Equal(got, []int64{0, 1, 2}) {
		t.Errorf("rows: %v, want [0 1 2]", got)
	}
	// The backend account itself holds nothing beyond its databases.
	d := backends[0].Open(t, "")
	var grants []string
	rows, err := d.Query("SHOW GRANTS FOR shardflake_lp@'%'")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var g string
		rows.Scan(&g)
		grants = append(grants, g)
	}
	rows.Close()
	if len(grants) != 2 || !strings.HasPrefix(grants[0], "GRANT USAGE ON *.*") {
		t.Errorf("backend account grants: %q, want USAGE on *.* and the database grant", grants)
	}
}

// BenchmarkAuthorize is the check each statement that is not served from
// a cached plan pays: a join on logical tables, as an application account.
func BenchmarkAuthorize(b *testing.B) {
	rules, err := config.Parse([]byte(`databaseName: sharding_db
server:
  users: [{user: app, password: x}]
dataSources:
  ds_0: {url: "jdbc:mysql://127.0.0.1:1/ds_0"}
  ds_1: {url: "jdbc:mysql://127.0.0.1:1/ds_1"}
rules:
`+defaultTestRules), "bench.yaml")
	if err != nil {
		b.Fatal(err)
	}
	keys, closeKeys, err := keygen.Open(context.Background(), rules)
	if err != nil {
		b.Fatal(err)
	}
	defer closeKeys()
	srv, err := New(Config{Rules: rules, Keys: keys})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	s := newSession(srv)
	s.user, s.db = "app", "sharding_db"
	sql := "SELECT o.order_id, d.label FROM t_order o JOIN t_dict d ON d.code = o.status WHERE o.user_id = 7 AND o.order_id IN (SELECT order_id FROM t_order WHERE user_id = 7)"
	stmts, err := s.parse(sql)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.access().authorize(stmts[0], sql); err != nil {
			b.Fatal(err)
		}
	}
}
