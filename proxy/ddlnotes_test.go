package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// ddlNotesRules add t_gone to manyNodesRules: a sharded table of 10
// physical tables on each data source that no test creates.
var ddlNotesRules = strings.NewReplacer("    tables:\n", `    tables:
      t_gone:
        actualDataNodes: ds_${0..1}.t_gone_${0..9}
        databaseStrategy:
          standard: { shardingColumn: user_id, shardingAlgorithmName: db_inline }
        tableStrategy:
          standard: { shardingColumn: order_id, shardingAlgorithmName: gone_inline }
`, "    shardingAlgorithms:\n", `    shardingAlgorithms:
      gone_inline: { type: INLINE, props: { algorithm-expression: "t_gone_${order_id % 10}" } }
`).Replace(manyNodesRules)

// TestDDLNotesOncePerTable: a DDL statement that every data node answers
// with the same note (DROP TABLE IF EXISTS of a table that does not
// exist, CREATE TABLE IF NOT EXISTS of one that does) tells the client
// that note once, in its warning count and in SHOW WARNINGS, as MariaDB
// holding the logical table does, not once per data node. A DROP TABLE
// of several tables names each missing logical table once, in the
// client's order, in its note (IF EXISTS) or its 1051 error, as MariaDB
// does: not a sharded table once per physical table, nor cut short
// before MariaDB's own limit.
func TestDDLNotesOncePerTable(t *testing.T) {
	e := startEnv(t, envOptions{databases: "ddlnote", rules: ddlNotesRules})
	ref := mariadbtest.Start(t, mariadbtest.Options{Databases: []string{"sharding_db"}})
	refDB, err := ref.DB("sharding_db")
	if err != nil {
		t.Fatal(err)
	}
	defer refDB.Close()
	run := func(db *sql.DB, q string) string {
		t.Helper()
		ctx := context.Background()
		c := oneConn(t, db)
		if _, err := c.ExecContext(ctx, q); err != nil {
			return err.Error()
		}
		var count int
		if err := c.QueryRowContext(ctx, "SELECT @@warning_count").Scan(&count); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%d warnings %q", count, sortedWarnings(t, ctx, c))
	}
	const create = "CREATE TABLE t_order (order_id BIGINT NOT NULL, user_id INT NOT NULL, status VARCHAR(32), PRIMARY KEY (order_id))"
	var long []string
	for i := range 4 {
		long = append(long, fmt.Sprintf("t_missing_with_a_rather_long_name_%d", i))
	}
	for _, q := range []string{
		"DROP TABLE IF EXISTS t_order",
		create,
		"CREATE TABLE IF NOT EXISTS t_order (order_id BIGINT NOT NULL, user_id INT NOT NULL, PRIMARY KEY (order_id))",
		"DROP TABLE IF EXISTS t_order, t_gone",
		"DROP TABLE IF EXISTS t_order",
		create,
		"DROP TABLE IF EXISTS t_gone, t_order",
		create,
		"DROP TABLE IF EXISTS t_gone, t_other, t_order",
		"DROP TABLE IF EXISTS t_other, t_dict, t_gone",
		"DROP TABLE IF EXISTS t_gone, " + strings.Join(long, ", "),
		"DROP TABLE t_gone",
		create,
		// MariaDB drops the tables that exist and names the others in
		// its error: the CREATE after it succeeds on both.
		"DROP TABLE t_gone, t_order, t_other",
		create,
		// Only the default data source's DROP fails.
		"DROP TABLE t_other, t_order",
		create,
		"DROP TABLE " + strings.Join(long, ", ") + ", t_gone",
		"DROP TABLE IF EXISTS t_order",
	} {
		if got, want := run(e.open(t), q), run(refDB, q); got != want {
			t.Errorf("%s:\nproxy   %s\nMariaDB %s", q, got, want)
		}
	}
}
