package proxy

import (
	"database/sql"
	"strings"
	"testing"
)

// The rows the INSERT ... SELECT tests start from: t_plain's, and
// t_order's (and its reference's) after "INSERT INTO t ".
const (
	fillPlainRows = `INSERT INTO t_plain (id, v) VALUES (1, 'a'), (2, 'b'), (3, 'it''s \\ here'), (4, NULL), (5, 'a')`
	fillOrderRows = "(order_id, user_id, status) VALUES (10, 1, 'a'), (11, 1, 'b'), (12, 2, 'a'), (13, 3, 'c')"
)

// TestInsertSelectReadFirst: an INSERT ... SELECT into the sharded
// t_order that the data nodes cannot run as it is (the rows need keys
// the proxy generates, or are read on other data nodes than theirs)
// inserts what the same statement inserts on one MariaDB table with an
// AUTO_INCREMENT key: the same rows, rows affected, duplicates and
// errors, all or nothing.
func TestInsertSelectReadFirst(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	proxyDB, direct := e.open(t), e.backend(t, 0)
	// t_plain lives on the default data source, ds_0: MariaDB's side
	// reads the same table.
	const ref = "fill_ref"
	sides := orderRef(t, proxyDB, direct, ref, "AUTO_INCREMENT")
	reset := func(t *testing.T) {
		t.Helper()
		execAll(t, proxyDB, "DELETE FROM t_plain", fillPlainRows, "DELETE FROM t_order", "INSERT INTO t_order "+fillOrderRows)
		execAll(t, direct, "DELETE FROM "+ref, "INSERT INTO "+ref+" "+fillOrderRows)
	}
	rowsOf := func(t *testing.T, db *sql.DB, table string) string {
		t.Helper()
		return strings.Join(queryStrings(t, db, "SELECT user_id, status FROM "+table+" ORDER BY user_id, status"), "; ")
	}

	tests := []struct {
		name string
		give string // %s is the target table
		args []any
		code uint16 // the error both answer
	}{
		{"keys generated for rows of an unsharded table", "INSERT INTO %s (user_id, status) SELECT id, v FROM t_plain", nil, 0},
		{"rows read across data nodes go to other data nodes", "INSERT INTO %s (user_id, status) SELECT user_id + 1, CONCAT(status, '-copy') FROM t_order WHERE status IN ('a', 'c')", nil, 0},
		{"a DECIMAL rounds into the INT column", "INSERT INTO %s (user_id, status) SELECT id + 0.5, 'half' FROM t_plain WHERE id <= 2", nil, 0},
		{"a DATETIME", "INSERT INTO %s (user_id, status) SELECT id, TIMESTAMP('2024-01-02 03:04:05.125') + INTERVAL id DAY FROM t_plain", nil, 0},
		{"a DOUBLE", "INSERT INTO %s (user_id, status) SELECT id, id / 3e0 FROM t_plain", nil, 0},
		{"a binary string", "INSERT INTO %s (user_id, status) SELECT id, CAST(v AS BINARY) FROM t_plain", nil, 0},
		{"JSON", "INSERT INTO %s (user_id, status) SELECT id, JSON_OBJECT('v', v) FROM t_plain", nil, 0},
		{"no rows", "INSERT INTO %s (user_id, status) SELECT id, v FROM t_plain WHERE id > 100", nil, 0},
		{"prepared, with arguments", "INSERT INTO %s (user_id, status) SELECT id, ? FROM t_plain WHERE id > ?", []any{"arg", 2}, 0},
		{"IGNORE skips the duplicate keys", "INSERT IGNORE INTO %s (order_id, user_id, status) SELECT id + 9, IF(id <= 2, 1, id - 1), v FROM t_plain", nil, 0},
		{"a duplicate key inserts nothing", "INSERT INTO %s (order_id, user_id, status) SELECT id + 20, 1, v FROM t_plain UNION ALL SELECT 10, 1, 'dup'", nil, 1062},
		{"a NULL into a NOT NULL column inserts nothing", "INSERT INTO %s (user_id, status) SELECT IF(id = 4, NULL, id), v FROM t_plain", nil, 1048},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reset(t)
			var affected [2]int64
			for i, side := range sides {
				q := strings.Replace(tt.give, "%s", side.table, 1)
				if side.table == ref {
					q = strings.ReplaceAll(q, "FROM t_order", "FROM "+ref)
				}
				res, err := side.db.Exec(q, tt.args...)
				if errCode(err) != tt.code {
					t.Fatalf("%s on %s: %v, want error %d", q, side.table, err, tt.code)
				}
				if err == nil {
					affected[i], _ = res.RowsAffected()
				}
			}
			if affected[0] != affected[1] {
				t.Errorf("rows affected: proxy %d, MariaDB %d", affected[0], affected[1])
			}
			if got, want := rowsOf(t, proxyDB, "t_order"), rowsOf(t, direct, ref); got != want {
				t.Errorf("rows:\n got %s\nwant %s", got, want)
			}
		})
	}

	// Each row is on the data node its user_id and order_id pick, and
	// LAST_INSERT_ID() is the first key generated, as MariaDB's is the
	// first AUTO_INCREMENT value.
	t.Run("routed rows and LAST_INSERT_ID", func(t *testing.T) {
		reset(t)
		if _, err := proxyDB.Exec("DELETE FROM t_order"); err != nil {
			t.Fatal(err)
		}
		c := e.conn(t)
		res, err := c.ExecContext(t.Context(), "INSERT INTO t_order (user_id, status) SELECT id, v FROM t_plain ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		id, _ := res.LastInsertId()
		var last, first int64
		if err := c.QueryRowContext(t.Context(), "SELECT LAST_INSERT_ID()").Scan(&last); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(t.Context(), "SELECT MIN(order_id) FROM t_order").Scan(&first); err != nil {
			t.Fatal(err)
		}
		if id == 0 || id != last || id != first {
			t.Errorf("insert id %d, LAST_INSERT_ID() %d, first generated key %d", id, last, first)
		}
		for id, node := range landed(t, e) {
			var user int
			if err := proxyDB.QueryRow("SELECT user_id FROM t_order WHERE order_id = ?", id).Scan(&user); err != nil {
				t.Fatal(err)
			}
			want := "ds_" + string(rune('0'+user%2)) + ".t_order_" + string(rune('0'+id%2))
			if node != want {
				t.Errorf("order %d of user %d is on %s, want %s", id, user, node, want)
			}
		}
	})

	t.Run("rolled back in a transaction", func(t *testing.T) {
		reset(t)
		before := rowsOf(t, proxyDB, "t_order")
		c := e.conn(t)
		for _, q := range []string{"BEGIN", "INSERT INTO t_order (user_id, status) SELECT id, v FROM t_plain", "ROLLBACK"} {
			if _, err := c.ExecContext(t.Context(), q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		if got := rowsOf(t, proxyDB, "t_order"); got != before {
			t.Errorf("after ROLLBACK:\n got %s\nwant %s", got, before)
		}
	})

	// ON DUPLICATE KEY UPDATE that names a column of the SELECT cannot
	// follow rows of literals: 1235, and the connection goes on
	// (TestInsertSelectReadFirstNoColumnsAndDuplicateUpdate runs the
	// clauses that can).
	t.Run("ON DUPLICATE KEY UPDATE naming the SELECT's column", func(t *testing.T) {
		_, err := proxyDB.Exec("INSERT INTO t_order (user_id, status) SELECT id, v FROM t_plain ON DUPLICATE KEY UPDATE status = v")
		if errCode(err) != 1235 {
			t.Errorf("got %v, want 1235", err)
		}
	})
}
