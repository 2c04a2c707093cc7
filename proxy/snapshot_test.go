package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// TestConsistentSnapshot: START TRANSACTION WITH CONSISTENT SNAPSHOT
// (mydumper's and mysqldump --single-transaction's, also in their
// /*!40108 ... */ spelling) takes its snapshot when it runs, as on
// MariaDB: rows another session commits afterwards, on any data source,
// are not seen by the transaction's first read. A plain START
// TRANSACTION takes it at the first read, on both.
func TestConsistentSnapshot(t *testing.T) {
	e := startEnv(t, envOptions{databases: "snap"})
	ref := mariadbtest.Start(t, mariadbtest.Options{Databases: []string{"sharding_db"}})
	refDB, err := ref.DB("sharding_db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { refDB.Close() })
	proxyDB := e.open(t)
	ctx := context.Background()
	run := func(db *sql.DB, begin string) []string {
		t.Helper()
		for _, q := range []string{
			"DROP TABLE IF EXISTS t_order",
			"CREATE TABLE t_order (order_id BIGINT NOT NULL PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32))",
			"INSERT INTO t_order VALUES (1, 0, 'before'), (2, 1, 'before')",
		} {
			if _, err := db.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		reader, writer := oneConn(t, db), oneConn(t, db)
		var steps []string
		step := func(c *sql.Conn, q string) {
			t.Helper()
			if _, err := c.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		read := func() {
			t.Helper()
			steps = append(steps, fmt.Sprint(queryStrings(t, reader, "SELECT user_id, COUNT(*) FROM t_order GROUP BY user_id ORDER BY user_id")))
		}
		step(reader, begin)
		// Committed after the snapshot, on both data sources.
		step(writer, "INSERT INTO t_order VALUES (3, 0, 'after'), (4, 1, 'after')")
		read()
		step(writer, "INSERT INTO t_order VALUES (5, 0, 'later'), (6, 1, 'later')")
		read()
		step(reader, "COMMIT")
		read()
		return steps
	}
	for _, begin := range []string{
		"START TRANSACTION WITH CONSISTENT SNAPSHOT",
		"START TRANSACTION /*!40108 WITH CONSISTENT SNAPSHOT */",
		"start transaction /*!40100 with consistent snapshot */",
		"START TRANSACTION",
		"BEGIN",
	} {
		t.Run(begin, func(t *testing.T) {
			got, want := run(proxyDB, begin), run(refDB, begin)
			sameSteps(t, got, want)
		})
	}
}
