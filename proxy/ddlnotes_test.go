package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// TestDDLNotesOncePerTable: a DDL statement that every data node answers
// with the same note (DROP TABLE IF EXISTS of a table that does not
// exist, CREATE TABLE IF NOT EXISTS of one that does) tells the client
// that note once, in its warning count and in SHOW WARNINGS, as MariaDB
// holding the logical table does, not once per data node.
func TestDDLNotesOncePerTable(t *testing.T) {
	e := startEnv(t, envOptions{databases: "ddlnote", rules: manyNodesRules})
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
	for _, q := range []string{
		"DROP TABLE IF EXISTS t_order",
		"CREATE TABLE t_order (order_id BIGINT NOT NULL, user_id INT NOT NULL, status VARCHAR(32), PRIMARY KEY (order_id))",
		"CREATE TABLE IF NOT EXISTS t_order (order_id BIGINT NOT NULL, user_id INT NOT NULL, PRIMARY KEY (order_id))",
		"DROP TABLE IF EXISTS t_order, t_gone",
		"DROP TABLE IF EXISTS t_order",
	} {
		if got, want := run(e.open(t), q), run(refDB, q); got != want {
			t.Errorf("%s:\nproxy   %s\nMariaDB %s", q, got, want)
		}
	}
}
