package proxy

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// connectorJJar is MariaDB Connector/J as Debian's libmariadb-java
// installs it (scripts/install-deps.sh).
const connectorJJar = "/usr/share/java/mariadb-java-client.jar"

// connectorJRules are the binding tables, range conditions on user_id
// allowed (the application reads ranges of users), and t_dict broadcast.
var connectorJRules = strings.ReplaceAll(bindingTestRules,
	`"ds_${user_id % 2}" }`, `"ds_${user_id % 2}", allow-range-query-with-inline-sharding: true }`) +
	"  - !BROADCAST\n    tables: [t_dict]\n"

// TestConnectorJApplication compiles and runs a small JDBC application
// (testdata/connectorj/ConnectorJApp.java, MariaDB Connector/J 2.x from
// Debian's libmariadb-java) through the proxy over binding tables and
// directly on one MariaDB: under the driver's defaults, server-side
// prepared statements, rewritten batches and compression, both runs print
// the same, step by step (session setup, generated keys of statements and
// batches, transactions and savepoints, result metadata, streaming, LOBs,
// temporal and decimal types, errors, query timeouts and max rows, pooled
// connections reset, DatabaseMetaData).
func TestConnectorJApplication(t *testing.T) {
	javac, err := exec.LookPath("javac")
	var java string
	if err == nil {
		java, err = exec.LookPath("java")
	}
	if err == nil {
		_, err = os.Stat(connectorJJar)
	}
	if err != nil {
		mariadbtest.Require(t, fmt.Errorf("javac, java and %s (scripts/install-deps.sh installs default-jdk-headless and libmariadb-java): %v", connectorJJar, err))
	}
	classes := t.TempDir()
	if out, err := exec.Command(javac, "-d", classes, "-cp", connectorJJar, filepath.Join("testdata", "connectorj", "ConnectorJApp.java")).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	e := startEnv(t, envOptions{rules: connectorJRules})
	e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS cj_ref", "CREATE DATABASE cj_ref")
	t.Cleanup(func() {
		e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS cj_ref")
		db := e.open(t)
		for _, q := range []string{"DROP TABLE IF EXISTS t_order_item", "DROP TABLE IF EXISTS t_order", "DROP TABLE IF EXISTS t_dict"} {
			if _, err := db.Exec(q); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
	})
	run := func(host, port, user, password, db string) []string {
		t.Helper()
		cmd := exec.Command(java, "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-cp", connectorJJar+string(os.PathListSeparator)+classes,
			"ConnectorJApp", host, port, user, password, db)
		return appOutput(t, cmd, host+":"+port, false)
	}
	want := run(e.backends[0].Host(), fmt.Sprint(e.backends[0].Port()), "root", "", "cj_ref")
	referencePrinted(t, "the application", want,
		"default | statement multi-row keys | 3 3 keys, positive true, consecutive true, rows [m1,m2,m3]",
		"default | query timeout | [22] [one] SQLTimeoutException 1969 70100 [1]",
		"default | max rows | [101] [102] [103] [22] [1]",
		"serverPrep | batch error | BatchUpdateException 1062 23000",
		"pool | second lease | true 4 [NULL,1,REPEATABLE-READ,1] [0]",
	)
	host, port, _ := strings.Cut(e.addr, ":")
	sameSteps(t, run(host, port, "app", "app-secret", "sharding_db"), want)
}
