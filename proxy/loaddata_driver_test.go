package proxy

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// driverLoadRules shard the driver's table test over two data sources by
// id ranges (ids 1 and 2 on ds_0, 3 and 4 on ds_1), so that its SELECT
// without ORDER BY reads the rows back in the order the test expects.
const driverLoadRules = `  - !SHARDING
    tables:
      test:
        actualDataNodes: ds_${0..1}.test
        databaseStrategy:
          standard: { shardingColumn: id, shardingAlgorithmName: test_range }
    shardingAlgorithms:
      test_range: { type: BOUNDARY_RANGE, props: { sharding-ranges: "3" } }
`

// TestGoSQLDriverLoadDataSharded runs go-sql-driver/mysql's own
// TestLoadData (an empty file, a registered local file, a reader
// handler, the files that do not exist) through the proxy with its table
// sharded over two data sources; both data sources must have run LOAD
// DATA.
func TestGoSQLDriverLoadDataSharded(t *testing.T) {
	bin := buildDriverSuite(t)
	backends := sharedServers(t)[:2]
	e := startEnv(t, envOptions{backends: backends, rules: driverLoadRules, server: driverSuiteUsers})
	comLoad := func(i int) string {
		return queryStrings(t, e.backend(t, i), "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'COM_LOAD'")[0]
	}
	before := []string{comLoad(0), comLoad(1)}
	cmd := exec.Command(bin, "-test.v", "-test.count=1", "-test.timeout=2m", "-test.run=^TestLoadData$")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(),
		"MYSQL_TEST_ADDR="+e.addr, "MYSQL_TEST_USER=app", "MYSQL_TEST_PASS=app-secret",
		"MYSQL_TEST_DBNAME=sharding_db", "MYSQL_TEST_PROT=tcp")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestLoadData") {
		t.Fatalf("TestLoadData through the proxy on a sharded table: %v\n%s", err, out)
	}
	for i := range 2 {
		if after := comLoad(i); after == before[i] {
			t.Errorf("ds_%d ran no LOAD DATA (Com_load %s before and after)", i, after)
		}
	}
	t.Logf("%d results passed", strings.Count(string(out), "--- PASS"))
}
