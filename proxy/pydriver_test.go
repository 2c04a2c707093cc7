package proxy

import (
	"bytes"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// debianPython is Debian's interpreter, which has the python3-pymysql and
// python3-mysqldb packages (python3 on PATH may be another one).
const debianPython = "/usr/bin/python3"

// pyTransactionScript runs as PyMySQL and mysqlclient applications do:
// connect with the driver's defaults (autocommit off), INSERT, and
// conn.rollback(); then a second connection counts what is left, and the
// same with conn.commit(). It prints "rolled_back=N committed=M autocommit=A"
// where A is @@autocommit as the first connection saw it.
const pyTransactionScript = `
import sys
driver, host, port, user, password, db, table, base = sys.argv[1:9]
port, base = int(port), int(base)
if driver == "pymysql":
    import pymysql as m
    connect = lambda: m.connect(host=host, port=port, user=user, password=password, database=db)
else:
    import MySQLdb as m
    connect = lambda: m.connect(host=host, port=port, user=user, passwd=password, db=db)

c = connect()
cur = c.cursor()
cur.execute("SELECT @@autocommit")
autocommit = cur.fetchone()[0]
cur.execute("INSERT INTO " + table + " (order_id, user_id) VALUES (%s, 0), (%s, 1)", (base, base + 1))
c.rollback()
cur.execute("INSERT INTO " + table + " (order_id, user_id) VALUES (%s, 0), (%s, 1)", (base + 2, base + 3))
c.commit()
# The connection goes on after an error, inside a transaction too.
try:
    cur.execute("INSERT INTO " + table + " (order_id, user_id) VALUES (%s, 0)", (base + 2,))
except m.IntegrityError:
    pass
cur.execute("INSERT INTO " + table + " (order_id, user_id) VALUES (%s, 1)", (base + 4,))
c.rollback()
c.close()

o = connect()
cur = o.cursor()
cur.execute("SELECT COUNT(*) FROM " + table + " WHERE order_id IN (%s, %s, %s)", (base, base + 1, base + 4))
rolled_back = cur.fetchone()[0]
cur.execute("SELECT COUNT(*) FROM " + table + " WHERE order_id IN (%s, %s)", (base + 2, base + 3))
committed = cur.fetchone()[0]
o.close()
print("rolled_back=%d committed=%d autocommit=%d" % (rolled_back, committed, autocommit))
`

// pyEscapeScript sets NO_BACKSLASH_ESCAPES and stores values with
// backslashes, quotes and NUL bytes (NUL 's' 'f' starts the router's
// markers) as parameters: the drivers escape them as the
// status flags of the OK packets say (PyMySQL reads
// SERVER_STATUS_NO_BACKSLASH_ESCAPES there; mysqlclient asks libmariadb,
// which does the same). It prints each value read back, hex-encoded.
const pyEscapeScript = `
import sys, binascii
driver, host, port, user, password, db, table, base = sys.argv[1:9]
port, base = int(port), int(base)
if driver == "pymysql":
    import pymysql as m
    c = m.connect(host=host, port=port, user=user, password=password, database=db, autocommit=True)
else:
    import MySQLdb as m
    c = m.connect(host=host, port=port, user=user, passwd=password, db=db)
    c.autocommit(True)
cur = c.cursor()
values = ["a\\b", "it's", "c:\\dir\\", "q\\'x", 'say "hi"', "n\x00sfT0\x00ul", "\x00sf\\0"]
for mode in ["''", "'NO_BACKSLASH_ESCAPES'"]:
    cur.execute("SET SESSION sql_mode = " + mode)
    for i, v in enumerate(values):
        cur.execute("INSERT INTO " + table + " (order_id, user_id, status) VALUES (%s, %s, %s)", (base + i, i % 2, "-"))
        cur.execute("UPDATE " + table + " SET status = %s WHERE order_id = %s", (v, base + i))
    ids = ", ".join(str(base + i) for i in range(len(values)))
    cur.execute("SELECT status FROM " + table + " WHERE order_id IN (" + ids + ") ORDER BY order_id")
    got = [r[0] for r in cur.fetchall()]
    for v in values:
        cur.execute("SELECT %s FROM " + table + " WHERE status = %s", (v, v))
        got += [r[0] for r in cur.fetchall()]
    values2 = values + values
    print(mode, "same" if got == values2 else "differ", " ".join(binascii.hexlify(g.encode()).decode() for g in got))
    cur.execute("DELETE FROM " + table + " WHERE order_id IN (" + ids + ")")
`

// requirePython returns Debian's python3 after checking that it can
// import module, skipping (or failing under CI=true) when it cannot.
func requirePython(t *testing.T, module, pkg string) string {
	t.Helper()
	out, err := exec.Command(debianPython, "-c", "import "+module).CombinedOutput()
	if err != nil {
		mariadbtest.Require(t, fmt.Errorf("%s cannot import %s (Debian package %s, scripts/install-deps.sh): %v: %s", debianPython, module, pkg, err, out))
	}
	return debianPython
}

// TestPythonDriversRollback runs PyMySQL and mysqlclient with their
// default settings through the proxy and on one plain MariaDB: a rollback
// leaves no row, a commit keeps both, as on MariaDB. They decide from the
// greeting's status flags whether to send SET AUTOCOMMIT = 0; with
// status 0 they sent nothing and ROLLBACK undid nothing.
func TestPythonDriversRollback(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	statusRefDB(t, e, "py_ref")
	proxyHost, proxyPort, _ := net.SplitHostPort(e.addr)
	drivers := []struct{ name, module, pkg string }{
		{"pymysql", "pymysql", "python3-pymysql"},
		{"mysqlclient", "MySQLdb", "python3-mysqldb"},
	}
	for i, d := range drivers {
		t.Run(d.name, func(t *testing.T) {
			py := requirePython(t, d.module, d.pkg)
			run := func(host, port, user, password, db, table string) string {
				t.Helper()
				base := fmt.Sprint(1000 + 10*i)
				cmd := exec.Command(py, "-c", pyTransactionScript, d.name, host, port, user, password, db, table, base)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("%s against %s:%s: %v\n%s", d.name, host, port, err, stderr.String())
				}
				return strings.TrimSpace(string(out))
			}
			want := run(e.backends[0].Host(), fmt.Sprint(e.backends[0].Port()), "root", "", "py_ref", "t_order")
			if want != "rolled_back=0 committed=2 autocommit=0" {
				t.Fatalf("directly on MariaDB: %s; the reference is not what this test assumes", want)
			}
			if got := run(proxyHost, proxyPort, "app", "app-secret", "sharding_db", "t_order"); got != want {
				t.Errorf("%s through the proxy: %s, on MariaDB: %s", d.name, got, want)
			}
		})
	}
}

// TestPythonDriversNoBackslashEscapes: PyMySQL and mysqlclient store and
// read back values with backslashes and quotes as parameters, with and
// without NO_BACKSLASH_ESCAPES, through the proxy and on one MariaDB: the
// values come back unchanged either way.
func TestPythonDriversNoBackslashEscapes(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	statusRefDB(t, e, "pyesc_ref")
	proxyHost, proxyPort, _ := net.SplitHostPort(e.addr)
	for _, d := range []struct{ name, module, pkg string }{
		{"pymysql", "pymysql", "python3-pymysql"},
		{"mysqlclient", "MySQLdb", "python3-mysqldb"},
	} {
		t.Run(d.name, func(t *testing.T) {
			py := requirePython(t, d.module, d.pkg)
			run := func(host, port, user, password, db string) string {
				t.Helper()
				cmd := exec.Command(py, "-c", pyEscapeScript, d.name, host, port, user, password, db, "t_order", "2000")
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("%s against %s:%s: %v\n%s", d.name, host, port, err, stderr.String())
				}
				return strings.TrimSpace(string(out))
			}
			want := run(e.backends[0].Host(), fmt.Sprint(e.backends[0].Port()), "root", "", "pyesc_ref")
			if strings.Contains(want, "differ") {
				t.Fatalf("directly on MariaDB the values changed: %s; the reference is not what this test assumes", want)
			}
			if got := run(proxyHost, proxyPort, "app", "app-secret", "sharding_db"); got != want {
				t.Errorf("%s through the proxy:\n%s\non MariaDB:\n%s", d.name, got, want)
			}
		})
	}
}
