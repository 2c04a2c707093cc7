package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"testing"
)

// TestMergeUnderConnectionCollation: a text column's definition carries
// the connection's collation (SET NAMES ... COLLATE), not the column's;
// the merge compares in the column's own collation and needs only the
// connection's charset to read the values. Under a connection collation
// the merge cannot compare in itself (latin1_german2_ci,
// utf8mb4_german2_ci, MariaDB's uca1400 ones), ORDER BY, GROUP BY and
// DISTINCT across data nodes got 1235 (naming the column's collation, 45);
// they now answer as one MariaDB holding the same rows, in that charset.
func TestMergeUnderConnectionCollation(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	const rows = "INSERT INTO t_order (order_id, user_id, status) VALUES " +
		"(1, 0, 'apple'), (2, 1, 'Banana'), (3, 2, 'äbc'), (4, 3, 'cherry'), (5, 4, 'Zed')," +
		"(6, 5, 'apple'), (7, 6, 'zz'), (8, 7, 'ÄBD'), (9, 8, 'Öl'), (10, 9, 'Om')"
	mustExec(t, e.conn(t), rows)
	e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS names_ref", "CREATE DATABASE names_ref",
		"CREATE TABLE names_ref.t_order (order_id BIGINT NOT NULL, user_id INT NOT NULL, status VARCHAR(32), PRIMARY KEY (order_id))",
		"INSERT INTO names_ref."+rows[len("INSERT INTO "):])
	ref := e.backends[0].Open(t, "names_ref")
	queries := []string{
		"SELECT status FROM t_order ORDER BY status, order_id",
		"SELECT status, COUNT(*) FROM t_order GROUP BY status ORDER BY status",
		"SELECT DISTINCT status FROM t_order ORDER BY status DESC",
		"SELECT MIN(status), MAX(status) FROM t_order WHERE order_id <> 6",
		"SELECT order_id FROM t_order ORDER BY status DESC, order_id LIMIT 3",
	}
	for _, names := range []string{
		"SET NAMES latin1 COLLATE latin1_german2_ci",
		"SET NAMES utf8mb4 COLLATE utf8mb4_german2_ci",
		"SET NAMES utf8mb4 COLLATE utf8mb4_uca1400_ai_ci",
		"SET NAMES utf8mb3 COLLATE utf8mb3_unicode_520_nopad_ci",
		"SET NAMES latin1 COLLATE latin1_swedish_ci",
	} {
		ctx := context.Background()
		pc, err := e.open(t).Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rc, err := ref.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		mustExec(t, pc, names)
		mustExec(t, rc, names)
		for _, q := range queries {
			got, gerr := namesRows(ctx, pc, q)
			want, werr := namesRows(ctx, rc, q)
			if fmt.Sprint(gerr) != fmt.Sprint(werr) || !slices.Equal(got, want) {
				t.Errorf("%s; %s\nproxy     %q %v\nreference %q %v", names, q, got, gerr, want, werr)
			}
		}
		pc.Close()
		rc.Close()
	}
}

// namesRows reads q's rows, each row's values (their bytes, in the
// connection's charset) joined by |.
func namesRows(ctx context.Context, c *sql.Conn, q string) ([]string, error) {
	rows, err := c.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	return rowStrings(rows, "|")
}
