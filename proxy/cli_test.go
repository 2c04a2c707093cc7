package proxy

import (
	"net"
	"os/exec"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// mariadbCLI runs the mariadb command-line client against the proxy in
// batch mode and returns its output.
func mariadbCLI(t *testing.T, e *testEnv, sql string, extra ...string) (string, error) {
	t.Helper()
	bin := mariadbtest.RequireBinary(t, "mariadb")
	host, port, _ := net.SplitHostPort(e.addr)
	args := []string{"--no-defaults", "-h" + host, "-P" + port, "-uapp", "-papp-secret"}
	if len(extra) == 0 {
		args = append(args, "--batch", "--skip-column-names")
	}
	args = append(args, extra...)
	args = append(args, "sharding_db", "-e", sql)
	out, err := exec.Command(bin, args...).CombinedOutput()
	return string(out), err
}

func TestMariaDBClient(t *testing.T) {
	// Fresh databases: the client lists every table (SHOW TABLES).
	e := startEnv(t, envOptions{databases: "lst"})
	createTables(t, e)
	out, err := mariadbCLI(t, e, "INSERT INTO t_order (user_id, status) VALUES (3, 'cli'); SELECT LAST_INSERT_ID() > 0; SELECT status FROM t_order WHERE user_id = 3; SHOW TABLES; SELECT DATABASE(), @@version_comment")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := "1\ncli\nt_dict\nt_order\nt_plain\nsharding_db\t" + versionComment + "\n"
	if out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
	out, err = mariadbCLI(t, e, "SELECT * FROM no_such_table")
	if err == nil || !strings.Contains(out, "ERROR 1146 (42S02)") {
		t.Errorf("missing table: %v\n%s", err, out)
	}
	// The client's status command (COM_STATISTICS and friends).
	out, err = mariadbCLI(t, e, "status", "--table")
	if err != nil || !strings.Contains(out, e.srv.version()) || !strings.Contains(out, "Uptime:") {
		t.Errorf("status: %v\n%s", err, out)
	}
	// Over TLS, when the proxy offers it.
	cert, key := writeCert(t)
	te := startEnv(t, envOptions{server: "tls: { cert: " + cert + ", key: " + key + " }"})
	out, err = mariadbCLI(t, te, "status", "--ssl", "--disable-ssl-verify-server-cert")
	if err != nil || !strings.Contains(out, "Cipher in use") {
		t.Errorf("mariadb --ssl: %v\n%s", err, out)
	}
}

func TestFieldList(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	c, err := client.Connect(e.addr, "app", "app-secret", "sharding_db")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fields, err := c.FieldList("t_order", "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range fields {
		names = append(names, string(f.Name))
		if string(f.Table) != "t_order" || string(f.Schema) != "sharding_db" {
			t.Errorf("field %s: table %q schema %q, want t_order in sharding_db", f.Name, f.Table, f.Schema)
		}
	}
	if strings.Join(names, ",") != "order_id,user_id,status" {
		t.Errorf("fields %v", names)
	}
}
