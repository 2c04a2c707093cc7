package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestInsertSelectReadFirstNoColumnsAndDuplicateUpdate: an INSERT ...
// SELECT read first (TestInsertSelectReadFirst) without a column list,
// or with ON DUPLICATE KEY UPDATE, answers what the same statement
// answers on one MariaDB table with an AUTO_INCREMENT key: rows
// affected, the info string, errors, and the table's rows; what cannot
// be rewritten keeps 1235, changes nothing and leaves the connection
// usable.
func TestInsertSelectReadFirstNoColumnsAndDuplicateUpdate(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	proxyDB, direct := e.open(t), e.backend(t, 0)
	// t_plain and t_stage live on the default data source, ds_0:
	// MariaDB's side reads the same tables.
	const ref = "odku_ref"
	sides := orderRef(t, proxyDB, direct, ref, "AUTO_INCREMENT")
	execAll(t, proxyDB, "DROP TABLE IF EXISTS t_stage", "CREATE TABLE t_stage (order_id BIGINT NULL, user_id INT NULL, status VARCHAR(32))")
	t.Cleanup(func() { direct.Exec("DROP TABLE IF EXISTS t_stage") })
	reset := func(t *testing.T) {
		t.Helper()
		execAll(t, proxyDB, "DELETE FROM t_plain", fillPlainRows,
			"DELETE FROM t_stage", "INSERT INTO t_stage VALUES (10, 1, 'stage-a'), (20, 2, 'stage-b'), (NULL, 3, 'stage-new'), (21, 1, NULL), (11, 1, 'b')",
			"DELETE FROM t_order", "INSERT INTO t_order "+fillOrderRows)
		// Keys MariaDB makes are above the ones the statements give.
		execAll(t, direct, "DELETE FROM "+ref, "ALTER TABLE "+ref+" AUTO_INCREMENT = 1000000", "INSERT INTO "+ref+" "+fillOrderRows)
	}
	// The rows, a key either side generated shown as "new".
	rowsOf := func(t *testing.T, db *sql.DB, table string) string {
		t.Helper()
		return strings.Join(queryStrings(t, db, "SELECT IF(order_id >= 1000000, 'new', order_id), user_id, status FROM "+table+" ORDER BY 1, 2, 3"), "; ")
	}
	sideSQL := func(q, table string) string {
		q = strings.ReplaceAll(q, "%s", table)
		if table == ref {
			q = strings.ReplaceAll(q, "FROM t_order", "FROM "+ref)
		}
		return q
	}

	tests := []struct {
		name string
		give string // %s is the target table; FROM t_order reads it
		args []any  // run prepared, else as text with the mariadb client
		code uint16 // the error of a prepared run
	}{
		{name: "no column list, keys generated for NULL", give: "INSERT INTO %s SELECT NULL, id, v FROM t_plain"},
		{name: "no column list, a staging table's rows", give: "INSERT INTO %s SELECT * FROM t_stage WHERE order_id IS NULL OR order_id > 11"},
		{name: "no column list, an archive copy across data nodes", give: "INSERT INTO %s SELECT order_id + 100, user_id + 1, CONCAT(status, '-old') FROM t_order WHERE status IN ('a', 'c')"},
		{name: "no column list, too few columns", give: "INSERT INTO %s SELECT * FROM t_plain"},
		{name: "no column list, too few columns, no rows", give: "INSERT INTO %s SELECT * FROM t_plain WHERE id > 100"},
		{name: "column list, too many columns, no rows", give: "INSERT INTO %s (user_id, status) SELECT id, v, v FROM t_plain WHERE id > 100"},
		{name: "no column list, a duplicate key inserts nothing", give: "INSERT INTO %s SELECT * FROM t_stage WHERE order_id IS NOT NULL"},
		{name: "no column list, IGNORE", give: "INSERT IGNORE INTO %s SELECT * FROM t_order"},
		{name: "no column list, REPLACE", give: "REPLACE INTO %s SELECT * FROM t_stage WHERE order_id IS NOT NULL"},
		{name: "no column list, a NULL into a NOT NULL column inserts nothing", give: "INSERT INTO %s SELECT NULL, IF(id = 4, NULL, id), v FROM t_plain"},
		{name: "no column list, prepared", give: "INSERT INTO %s SELECT NULL, id, ? FROM t_plain WHERE id > ?", args: []any{"arg", 2}},
		{name: "no column list, prepared, too few columns", give: "INSERT INTO %s SELECT id, ? FROM t_plain WHERE id > ?", args: []any{"arg", 2}, code: 1136},

		{name: "ODKU VALUES(): inserted, updated, unchanged", give: "INSERT INTO %s (order_id, user_id, status) SELECT id + 9, IF(id <= 2, 1, id - 1), v FROM t_plain ON DUPLICATE KEY UPDATE status = VALUES(status)"},
		{name: "ODKU of the table's own column", give: "INSERT INTO %s (order_id, user_id, status) SELECT id + 9, IF(id <= 2, 1, id - 1), v FROM t_plain ON DUPLICATE KEY UPDATE status = CONCAT(IFNULL(status, '-'), '+', IFNULL(VALUES(status), '-'))"},
		{name: "ODKU qualified with the table", give: "INSERT INTO %s (order_id, user_id, status) SELECT id + 9, IF(id <= 2, 1, id - 1), 'q' FROM t_plain ON DUPLICATE KEY UPDATE %s.status = CONCAT(%s.status, '!')"},
		{name: "ODKU, no column list, read from the table itself", give: "INSERT INTO %s SELECT order_id, user_id, CONCAT(status, '!') FROM t_order WHERE user_id = 1 ON DUPLICATE KEY UPDATE status = VALUES(status)"},
		{name: "ODKU with keys generated", give: "INSERT INTO %s (user_id, status) SELECT id, v FROM t_plain ON DUPLICATE KEY UPDATE status = 'never'"},
		{name: "ODKU of a sharding column to itself", give: "INSERT INTO %s SELECT * FROM t_stage WHERE order_id IS NOT NULL ON DUPLICATE KEY UPDATE user_id = VALUES(user_id), status = IFNULL(VALUES(status), 'was null')"},
		{name: "ODKU with IGNORE", give: "INSERT IGNORE INTO %s (order_id, user_id, status) SELECT id + 9, IF(id <= 2, 1, id - 1), v FROM t_plain ON DUPLICATE KEY UPDATE status = VALUES(status)"},
		{name: "ODKU, a NULL into a NOT NULL column changes nothing", give: "INSERT INTO %s (order_id, user_id, status) SELECT id + 9, IF(id = 4, NULL, IF(id <= 2, 1, id - 1)), 'n' FROM t_plain ON DUPLICATE KEY UPDATE status = VALUES(status)"},
		{name: "ODKU, no rows", give: "INSERT INTO %s (order_id, user_id, status) SELECT id, id, v FROM t_plain WHERE id > 100 ON DUPLICATE KEY UPDATE status = VALUES(status)"},
		{name: "ODKU, prepared", give: "INSERT INTO %s (order_id, user_id, status) SELECT id + 9, IF(id <= 2, 1, id - 1), ? FROM t_plain WHERE id > ? ON DUPLICATE KEY UPDATE status = CONCAT(VALUES(status), ?)", args: []any{"p", 1, "!"}},
		{name: "ODKU, prepared, NULL into a NOT NULL column", give: "INSERT INTO %s (order_id, user_id, status) SELECT id + 9, IF(id = ?, NULL, 1), v FROM t_plain ON DUPLICATE KEY UPDATE status = VALUES(status)", args: []any{3}, code: 1048},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reset(t)
			var answers [2]string
			for i, side := range sides {
				q := sideSQL(tt.give, side.table)
				if tt.args == nil {
					answers[i] = cliAnswer(t, e, i == 0, q)
					continue
				}
				res, err := side.db.Exec(q, tt.args...)
				if errCode(err) != tt.code {
					t.Fatalf("%s on %s: %v, want error %d", q, side.table, err, tt.code)
				}
				if err == nil {
					n, _ := res.RowsAffected()
					answers[i] = strconv.FormatInt(n, 10) + " rows affected"
				}
			}
			if answers[0] != answers[1] {
				t.Errorf("answer:\n proxy   %s\n MariaDB %s", answers[0], answers[1])
			}
			if got, want := rowsOf(t, proxyDB, "t_order"), rowsOf(t, direct, ref); got != want {
				t.Errorf("rows:\n got %s\nwant %s", got, want)
			}
		})
	}

	// LAST_INSERT_ID() is the first key generated, where some rows update
	// and some insert, on both sides.
	t.Run("LAST_INSERT_ID with ON DUPLICATE KEY UPDATE", func(t *testing.T) {
		reset(t)
		for _, side := range sides {
			c, err := side.db.Conn(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			q := sideSQL("INSERT INTO %s (order_id, user_id, status) SELECT IF(id <= 2, id + 9, NULL), 1, v FROM t_plain ON DUPLICATE KEY UPDATE status = 'dup'", side.table)
			res, err := c.ExecContext(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			id, _ := res.LastInsertId()
			var last int64
			if err := c.QueryRowContext(t.Context(), "SELECT LAST_INSERT_ID()").Scan(&last); err != nil {
				t.Fatal(err)
			}
			first := int64(-1)
			for _, k := range queryStrings(t, c, "SELECT order_id FROM "+side.table) {
				if n, _ := strconv.ParseInt(k, 10, 64); n >= 1000000 && (first < 0 || n < first) {
					first = n
				}
			}
			if id == 0 || id != last || id != first {
				t.Errorf("%s: insert id %d, LAST_INSERT_ID() %d, first generated key %d", side.table, id, last, first)
			}
		}
		if got, want := rowsOf(t, proxyDB, "t_order"), rowsOf(t, direct, ref); got != want {
			t.Errorf("rows:\n got %s\nwant %s", got, want)
		}
	})

	// In a transaction: a failing statement changes nothing and the
	// transaction goes on; a ROLLBACK undoes the ones that ran.
	t.Run("in a transaction", func(t *testing.T) {
		reset(t)
		for _, side := range sides {
			c, err := side.db.Conn(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				// A failed step leaves no transaction open on a pooled
				// connection (its locks would hold the cleanup's DROP).
				c.ExecContext(context.Background(), "ROLLBACK")
				c.Close()
			}()
			run := func(q string, code uint16) {
				t.Helper()
				if _, err := c.ExecContext(t.Context(), sideSQL(q, side.table)); errCode(err) != code {
					t.Fatalf("%s on %s: %v, want error %d", q, side.table, err, code)
				}
			}
			run("BEGIN", 0)
			run("INSERT INTO %s SELECT NULL, id, 'kept' FROM t_plain WHERE id <= 2", 0)
			run("INSERT INTO %s SELECT * FROM t_plain", 1136)
			run("INSERT INTO %s (order_id, user_id, status) SELECT id + 9, IF(id = 4, NULL, 1), 'no' FROM t_plain ON DUPLICATE KEY UPDATE status = VALUES(status)", 1048)
			run("INSERT INTO %s (order_id, user_id, status) SELECT id + 9, IF(id <= 2, 1, id - 1), 'tx' FROM t_plain ON DUPLICATE KEY UPDATE status = VALUES(status)", 0)
			run("COMMIT", 0)
			run("BEGIN", 0)
			run("INSERT INTO %s (order_id, user_id, status) SELECT id + 9, IF(id <= 2, 1, id - 1), 'gone' FROM t_plain ON DUPLICATE KEY UPDATE status = VALUES(status)", 0)
			run("INSERT INTO %s SELECT NULL, id, 'gone' FROM t_plain", 0)
			run("ROLLBACK", 0)
		}
		if got, want := rowsOf(t, proxyDB, "t_order"), rowsOf(t, direct, ref); got != want {
			t.Errorf("rows:\n got %s\nwant %s", got, want)
		}
	})

	// ON DUPLICATE KEY UPDATE that names a column the SELECT has, or
	// changes a sharding column, cannot be rewritten: 1235 before
	// anything runs, text or prepared, and the connection goes on.
	t.Run("still 1235", func(t *testing.T) {
		reset(t)
		before := rowsOf(t, proxyDB, "t_order")
		c := e.conn(t)
		for _, q := range []string{
			"INSERT INTO t_order (order_id, user_id, status) SELECT id + 9, 1, 'x' FROM t_plain ON DUPLICATE KEY UPDATE status = v",
			"INSERT INTO t_order (order_id, user_id, status) SELECT id + 9, 1, 'x' FROM t_plain ON DUPLICATE KEY UPDATE status = t_plain.v",
			"INSERT INTO t_order SELECT * FROM t_stage ON DUPLICATE KEY UPDATE status = CONCAT(status, '+')",
			"INSERT INTO t_order SELECT * FROM t_stage s ON DUPLICATE KEY UPDATE status = s.status",
			"INSERT INTO t_order (order_id, user_id, status) SELECT id + 9, 1, v FROM t_plain ON DUPLICATE KEY UPDATE status = (SELECT MAX(v) FROM t_plain)",
			"INSERT INTO t_order (order_id, user_id, status) SELECT id + 9, 1, v FROM t_plain ON DUPLICATE KEY UPDATE user_id = user_id + 1",
			"INSERT INTO t_order (order_id, user_id, status) SELECT id + 9, 1, v FROM t_plain WHERE id > 100 ON DUPLICATE KEY UPDATE user_id = user_id + 1",
		} {
			for _, args := range [][]any{nil, {}} {
				var err error
				if args == nil {
					_, err = c.ExecContext(t.Context(), q)
				} else {
					var st *sql.Stmt
					if st, err = c.PrepareContext(t.Context(), q); err == nil {
						_, err = st.ExecContext(t.Context())
						st.Close()
					}
				}
				if errCode(err) != 1235 {
					t.Errorf("%s (prepared %v): %v, want 1235", q, args != nil, err)
				}
				var one int
				if err := c.QueryRowContext(t.Context(), "SELECT 1").Scan(&one); err != nil || one != 1 {
					t.Fatalf("after %s: SELECT 1 = %d, %v", q, one, err)
				}
			}
		}
		if got := rowsOf(t, proxyDB, "t_order"); got != before {
			t.Errorf("after the refused statements:\n got %s\nwant %s", got, before)
		}
	})
}

// cliAnswerLine finds what the mariadb client printed of a statement's
// answer: rows affected and the info string, or the error's number.
var cliAnswerLine = regexp.MustCompile(`(?m)^(Query OK, \d+ rows? affected|Records: .*|ERROR \d+ \(\w+\))`)

// cliAnswer runs q with the mariadb client, through the proxy or on
// backend 0's ds_0, and returns its answer (cliAnswerLine).
func cliAnswer(t *testing.T, e *testEnv, proxied bool, q string) string {
	t.Helper()
	var out string
	if proxied {
		out, _ = mariadbCLI(t, e, q, "-vvv")
	} else {
		out, _ = directCLIOutput(t, e.backends[0], "ds_0", q)
	}
	answer := strings.Join(cliAnswerLine.FindAllString(out, -1), "; ")
	if answer == "" {
		t.Fatalf("%s: the client printed no answer:\n%s", q, out)
	}
	return answer
}

// TestInsertWithoutColumnListSkipsInvisibleColumns: an INSERT without a
// column list fills the visible columns, as MariaDB does (an INVISIBLE
// column takes its default), through INSERT ... VALUES and INSERT ...
// SELECT read first alike, and ON DUPLICATE KEY UPDATE may name the
// INVISIBLE column.
func TestInsertWithoutColumnListSkipsInvisibleColumns(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	proxyDB, direct := e.open(t), e.backend(t, 0)
	const ref = "invisible_ref"
	sides := orderRef(t, proxyDB, direct, ref, "")
	// The proxy's SQL parser knows no INVISIBLE: the column is added on
	// each physical table, as an operator would, before the proxy reads
	// the table's columns.
	const add = " ADD COLUMN note VARCHAR(16) INVISIBLE DEFAULT 'n'"
	for i := range e.backends {
		for j := range 2 {
			if _, err := e.backend(t, i).Exec(fmt.Sprintf("ALTER TABLE t_order_%d%s", j, add)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, q := range []string{
		"ALTER TABLE " + ref + add,
		"DELETE FROM t_plain",
		"INSERT INTO t_plain (id, v) VALUES (1, 'a'), (2, 'b'), (3, NULL)",
	} {
		if _, err := direct.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	rows := func(db *sql.DB, table string) string {
		return strings.Join(queryStrings(t, db, "SELECT order_id, user_id, status, note FROM "+table+" ORDER BY user_id, order_id"), "; ")
	}
	for _, q := range []string{
		"INSERT INTO %s VALUES (1, 1, 'a')",
		"INSERT INTO %s SELECT id + 10, id, v FROM t_plain",
		"INSERT INTO %s SELECT id + 10, id, 'again' FROM t_plain WHERE id <= 2 ON DUPLICATE KEY UPDATE note = CONCAT(note, '+', VALUES(status))",
	} {
		var affected [2]int64
		for i, side := range sides {
			res, err := side.db.Exec(strings.ReplaceAll(q, "%s", side.table))
			if err != nil {
				t.Fatalf("%s on %s: %v", q, side.table, err)
			}
			affected[i], _ = res.RowsAffected()
		}
		if affected[0] != affected[1] {
			t.Errorf("%s: rows affected: proxy %d, MariaDB %d", q, affected[0], affected[1])
		}
		if got, want := rows(proxyDB, "t_order"), rows(direct, ref); got != want {
			t.Fatalf("%s: rows:\n got %s\nwant %s", q, got, want)
		}
	}
}
