package proxy

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// TestMariadbShowAndImport: mariadb-show (databases, tables with --count,
// columns of a sharded table with a wildcard) and mariadb-import --local
// (--ignore, --replace, --columns, --delete, into a sharded, a broadcast
// and a single table) print through the proxy what they print for MariaDB
// holding the logical tables, and leave the same rows.
func TestMariadbShowAndImport(t *testing.T) {
	show := mariadbtest.RequireBinary(t, "mariadb-show")
	imp := mariadbtest.RequireBinary(t, "mariadb-import")
	e, ref, refDB := maintenanceEnv(t)
	dir := t.TempDir()
	write := func(sub, name, data string) string {
		t.Helper()
		p := filepath.Join(dir, sub, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// 1000 and 1013 exist, on user_id 0 and 1: the same data node.
	dup := write("dup", "t_order.txt", "5001,3,imp1\n5002,4,imp2\n1000,0,dup\n1013,1,dup\n")
	dict := write("dup", "t_dict.txt", "a,dupa\nq,new\n")
	plain := write("dup", "t_plain.txt", "1,dup1\n500,new\n")
	cols := write("cols", "t_order.txt", "imp3;7;6001\n")
	fresh := write("fresh", "t_dict.txt", "k1,one\nk2,two\n")
	run := func(bin, addr, user, password string, args ...string) string {
		t.Helper()
		host, port, _ := net.SplitHostPort(addr)
		a := []string{"--no-defaults", "--protocol=tcp", "-h", host, "-P", port, "-u" + user, "--skip-ssl"}
		if password != "" {
			a = append(a, "-p"+password)
		}
		out, err := exec.Command(bin, append(a, args...)...).CombinedOutput()
		if err != nil {
			return string(out) + "exit: " + err.Error()
		}
		return string(out)
	}
	for _, tt := range []struct {
		bin  string
		args []string
	}{
		{show, []string{"sharding%"}},
		{show, []string{"sharding_db"}},
		{show, []string{"--count", "sharding_db"}},
		{show, []string{"sharding_db", "t_%"}},
		{show, []string{"sharding_db", "t_order", "%id"}},
		{imp, []string{"--local", "--fields-terminated-by=,", "--ignore", "sharding_db", dup, dict, plain}},
		{imp, []string{"--local", "--fields-terminated-by=,", "--replace", "sharding_db", dup, dict, plain}},
		{imp, []string{"--local", "--fields-terminated-by=,", "sharding_db", dup}},
		{imp, []string{"--local", "--fields-terminated-by=;", "--columns=status,user_id,order_id", "sharding_db", cols}},
		{imp, []string{"--local", "--fields-terminated-by=,", "--delete", "--lock-tables", "sharding_db", fresh}},
		{show, []string{"--count", "sharding_db"}},
	} {
		got := run(tt.bin, e.addr, "app", "app-secret", tt.args...)
		want := run(tt.bin, ref.Addr(), ref.User(), "", tt.args...)
		if got != want || strings.Contains(want, "exit:") {
			t.Errorf("%s %v:\nproxy:\n%s\nMariaDB:\n%s", filepath.Base(tt.bin), tt.args, got, want)
		}
	}
	for _, q := range []string{
		"SELECT order_id, user_id, status FROM t_order ORDER BY order_id",
		"SELECT code, label FROM t_dict ORDER BY code",
		"SELECT id, v FROM t_plain ORDER BY id",
	} {
		if got, want := maintenanceResult(t, e.open(t), q), maintenanceResult(t, refDB, q); got != want {
			t.Errorf("%s:\nproxy:\n%s\nMariaDB:\n%s", q, got, want)
		}
	}
}
