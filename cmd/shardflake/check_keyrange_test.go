package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

func TestCheckConnectRangeCheck(t *testing.T) {
	backend := mariadbtest.Start(t, mariadbtest.Options{Databases: []string{"ds_0"}})
	backend.Exec(t, "ds_0",
		"CREATE TABLE t_narrow (id INT NOT NULL PRIMARY KEY, user_id INT)",
		"CREATE TABLE t_wide (id BIGINT NOT NULL PRIMARY KEY, user_id INT)",
		"CREATE TABLE t_count (id INT NOT NULL PRIMARY KEY, user_id INT)")
	rules := fmt.Sprintf(`databaseName: sharding_db
dataSources:
  ds_0: { url: "mysql://%s/ds_0", username: root, password: "" }
rules:
  - !SHARDING
    tables:
      t_narrow: { actualDataNodes: ds_0.t_narrow, keyGenerateStrategy: { column: id, keyGeneratorName: snowflake } }
      t_wide:   { actualDataNodes: ds_0.t_wide, keyGenerateStrategy: { column: id, keyGeneratorName: snowflake } }
      t_count:  { actualDataNodes: ds_0.t_count, keyGenerateStrategy: { column: id, keyGeneratorName: seg } }
      t_later:  { actualDataNodes: ds_0.t_later, keyGenerateStrategy: { column: id, keyGeneratorName: snowflake } }
    keyGenerators:
      snowflake: { type: SNOWFLAKE }
      seg: { type: SEGMENT, props: { url: "jdbc:mysql://127.0.0.1:1/ids" } }
`, backend.Addr())
	file := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(file, []byte(rules), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := runCheck([]string{"--config", file, "--rows", "100", "--connect"}, &stdout, &stderr)
	out := stdout.String()
	if code != 1 || !strings.Contains(stderr.String(), "1 key columns cannot hold") {
		t.Fatalf("exit %d, stderr %s\n%s", code, stderr.String(), out)
	}
	for _, want := range []string{
		"range error: key column id (int(11) on ds_0.t_narrow) cannot hold the keys of SNOWFLAKE generator snowflake",
		"key column type: bigint(20) on ds_0.t_wide fits the keys of SNOWFLAKE generator snowflake",
		"warning: key column id (int(11) on ds_0.t_count): column type int(11) holds keys up to 2147483647",
		"ds_0.t_later has no column id yet",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Without --connect nothing is read and the file is valid.
	stdout.Reset()
	if code := runCheck([]string{"--config", file, "--rows", "100"}, &stdout, &stderr); code != 0 || strings.Contains(stdout.String(), "range error") {
		t.Fatalf("exit %d without --connect:\n%s", code, stdout.String())
	}
}
