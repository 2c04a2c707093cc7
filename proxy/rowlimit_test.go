package proxy

import (
	"database/sql"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// TestRowLimitAcrossDataNodes: an UPDATE or DELETE with LIMIT over
// several data nodes of t_order takes at most LIMIT rows in all, as the
// same statement on one MariaDB table does (pt-archiver --bulk-delete
// sends DELETE ... LIMIT over a range of keys). Without ORDER BY which
// rows it takes is MariaDB's choice in both, so the test compares what
// does not depend on it: the rows affected and matched, and counts of
// what is left; with an ORDER BY on a unique key, the rows left
// themselves; against the same table on one MariaDB.
func TestRowLimitAcrossDataNodes(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	proxyDB, direct := e.open(t), e.backend(t, 0)
	const ref = "rl_ref"
	sides := orderRef(t, proxyDB, direct, ref, "")
	// Orders 1-12 belong to user 1 (ds_1, both tables), 13-24 to user 2
	// (ds_0, both tables); every third is 'b', the others 'a'.
	var values []string
	for id := 1; id <= 24; id++ {
		user, status := 1, "a"
		if id > 12 {
			user = 2
		}
		if id%3 == 0 {
			status = "b"
		}
		values = append(values, fmt.Sprintf("(%d, %d, '%s')", id, user, status))
	}
	reset := func(t *testing.T) {
		t.Helper()
		for _, side := range sides {
			execAll(t, side.db, "DELETE FROM "+side.table, "INSERT INTO "+side.table+" (order_id, user_id, status) VALUES "+strings.Join(values, ", "))
		}
	}
	counts := func(t *testing.T, db *sql.DB, q string) string {
		t.Helper()
		return strings.Join(queryStrings(t, db, q), "; ")
	}

	tests := []struct {
		name  string
		give  string // %s (or %[1]s) is the table
		args  []any
		check string // what is left, the same on both
	}{
		{"DELETE carried over to the next data node", "DELETE FROM %s WHERE user_id = 1 LIMIT 8", nil, "SELECT user_id, COUNT(*) FROM %s GROUP BY user_id ORDER BY user_id"},
		{"DELETE over both data sources", "DELETE FROM %s WHERE status = 'b' LIMIT 5", nil, "SELECT status, COUNT(*) FROM %s GROUP BY status ORDER BY status"},
		{"DELETE with a LIMIT above the rows that match", "DELETE FROM %s WHERE status <> 'x' LIMIT 100", nil, "SELECT COUNT(*), MIN(order_id) FROM %s"},
		{"DELETE LIMIT 0", "DELETE FROM %s WHERE user_id = 1 LIMIT 0", nil, "SELECT COUNT(*) FROM %s"},
		{"UPDATE", "UPDATE %s SET status = 'c' WHERE status = 'a' LIMIT 10", nil, "SELECT status, COUNT(*) FROM %s GROUP BY status ORDER BY status"},
		{"prepared DELETE with LIMIT ?", "DELETE FROM %s WHERE user_id = ? LIMIT ?", []any{1, 7}, "SELECT user_id, COUNT(*) FROM %s GROUP BY user_id ORDER BY user_id"},
		{"DELETE whose IN subquery the proxy runs first", "DELETE FROM %[1]s WHERE user_id IN (SELECT user_id FROM %[1]s WHERE status = 'b') LIMIT 13", nil, "SELECT COUNT(*) FROM %s"},
		{"DELETE ORDER BY ... LIMIT takes the first rows in that order", "DELETE FROM %s WHERE user_id = 1 ORDER BY order_id DESC LIMIT 5", nil, "SELECT order_id, status FROM %s ORDER BY order_id"},
		{"DELETE ORDER BY two columns over both data sources", "DELETE FROM %s ORDER BY status DESC, order_id LIMIT 11", nil, "SELECT order_id, status FROM %s ORDER BY order_id"},
		{"UPDATE ORDER BY ... LIMIT", "UPDATE %s SET status = 'z' WHERE status = 'a' ORDER BY user_id DESC, order_id LIMIT 9", nil, "SELECT order_id, status FROM %s ORDER BY order_id"},
		{"prepared UPDATE ORDER BY ... LIMIT ?", "UPDATE %s SET status = ? WHERE status <> ? ORDER BY order_id LIMIT ?", []any{"p", "b", 14}, "SELECT order_id, status FROM %s ORDER BY order_id"},
		{"ORDER BY ... LIMIT above the rows that match", "DELETE FROM %s WHERE status = 'b' ORDER BY order_id LIMIT 50", nil, "SELECT order_id, status FROM %s ORDER BY order_id"},
		{"prepared UPDATE with LIMIT ?", "UPDATE %s SET status = ? WHERE user_id = ? LIMIT ?", []any{"z", 2, 9}, "SELECT user_id, SUM(status = 'z'), COUNT(*) FROM %s GROUP BY user_id ORDER BY user_id"},
		// ORDER BY without LIMIT (Rails' update_all and delete_all under
		// a default_scope with an order): every row that matches.
		{"UPDATE ORDER BY without LIMIT", "UPDATE %s SET status = 'o' WHERE status = 'a' ORDER BY order_id DESC", nil, "SELECT order_id, status FROM %s ORDER BY order_id"},
		{"DELETE ORDER BY without LIMIT", "DELETE FROM %s WHERE status = 'b' OR user_id = 2 ORDER BY user_id, order_id", nil, "SELECT order_id, status FROM %s ORDER BY order_id"},
		{"prepared UPDATE ORDER BY without LIMIT", "UPDATE %s SET status = ? WHERE status <> ? ORDER BY status, order_id", []any{"r", "b"}, "SELECT order_id, status FROM %s ORDER BY order_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reset(t)
			var affected [2]int64
			for i, side := range sides {
				res, err := side.db.Exec(fmt.Sprintf(tt.give, side.table), tt.args...)
				if err != nil {
					t.Fatalf("%s on %s: %v", tt.give, side.table, err)
				}
				if affected[i], err = res.RowsAffected(); err != nil {
					t.Fatal(err)
				}
			}
			if affected[0] != affected[1] {
				t.Errorf("rows affected: proxy %d, MariaDB %d", affected[0], affected[1])
			}
			got, want := counts(t, proxyDB, fmt.Sprintf(tt.check, "t_order")), counts(t, direct, fmt.Sprintf(tt.check, ref))
			if got != want {
				t.Errorf("left:\n got %s\nwant %s", got, want)
			}
		})
	}

	// An UPDATE's LIMIT counts the rows it matches, changed or not: the
	// mariadb client shows both counts. ds_1.t_order_0, the first route,
	// holds user 1's six even rows, all 'b' already: the UPDATE matches
	// five there, changes none, and stops.
	t.Run("UPDATE counts matched rows", func(t *testing.T) {
		reset(t)
		if _, err := proxyDB.Exec("UPDATE t_order SET status = 'b' WHERE user_id = 1 AND order_id % 2 = 0"); err != nil {
			t.Fatal(err)
		}
		if _, err := direct.Exec("UPDATE " + ref + " SET status = 'b' WHERE user_id = 1 AND order_id % 2 = 0"); err != nil {
			t.Fatal(err)
		}
		q := "UPDATE %s SET status = 'b' WHERE user_id = 1 LIMIT 5"
		out, err := mariadbCLI(t, e, fmt.Sprintf(q, "t_order"), "-vvv")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		dout := directCLI(t, e.backends[0], "ds_0", fmt.Sprintf(q, ref))
		matched := regexp.MustCompile(`Rows matched: (\d+)`)
		g, w := matched.FindStringSubmatch(out), matched.FindStringSubmatch(dout)
		if g == nil || w == nil || g[1] != w[1] {
			t.Errorf("proxy:\n%s\nMariaDB:\n%s", out, dout)
		}
		// With ORDER BY, and when nothing matches (MariaDB's answer to
		// an UPDATE ... LIMIT 0 has no info string: no route may run so).
		info := regexp.MustCompile(`Rows matched: .*`)
		for _, q := range []string{
			"UPDATE %s SET status = 'o' WHERE status = 'a' ORDER BY user_id, order_id DESC LIMIT 6",
			"UPDATE %s SET status = 'o' WHERE status = 'none' ORDER BY order_id LIMIT 3",
		} {
			out, err := mariadbCLI(t, e, fmt.Sprintf(q, "t_order"), "-vvv")
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			dout := directCLI(t, e.backends[0], "ds_0", fmt.Sprintf(q, ref))
			if g, w := info.FindString(out), info.FindString(dout); g == "" || g != w {
				t.Errorf("%s:\nproxy:\n%s\nMariaDB:\n%s", q, out, dout)
			}
		}
		if n := counts(t, proxyDB, "SELECT COUNT(*) FROM t_order WHERE user_id = 1 AND status = 'b'"); n != "8" {
			t.Errorf("user 1's 'b' rows: %s, want 8 (the 6 even and 2 odd ones: the LIMIT was spent on the first data node)", n)
		}
	})

	t.Run("DELETE RETURNING", func(t *testing.T) {
		reset(t)
		got := queryStrings(t, proxyDB, "DELETE FROM t_order WHERE user_id = 1 LIMIT 8 RETURNING user_id, status IN ('a', 'b')")
		want := queryStrings(t, direct, "DELETE FROM "+ref+" WHERE user_id = 1 LIMIT 8 RETURNING user_id, status IN ('a', 'b')")
		if strings.Join(got, ";") != strings.Join(want, ";") {
			t.Errorf("RETURNING rows:\n got %v\nwant %v", got, want)
		}
		if n := counts(t, proxyDB, "SELECT COUNT(*) FROM t_order WHERE user_id = 1"); n != "4" {
			t.Errorf("user 1's rows left: %s, want 4", n)
		}
	})

	// With ORDER BY the rows come back in that order, as MariaDB
	// returns the rows it deletes.
	t.Run("DELETE ORDER BY ... LIMIT ... RETURNING", func(t *testing.T) {
		reset(t)
		q := "DELETE FROM %s WHERE status = 'a' ORDER BY user_id DESC, order_id DESC LIMIT 9 RETURNING order_id, user_id"
		got := queryStrings(t, proxyDB, fmt.Sprintf(q, "t_order"))
		want := queryStrings(t, direct, fmt.Sprintf(q, ref))
		if strings.Join(got, ";") != strings.Join(want, ";") {
			t.Errorf("RETURNING rows:\n got %v\nwant %v", got, want)
		}
	})

	t.Run("UPDATE ORDER BY without LIMIT: rows matched and changed", func(t *testing.T) {
		reset(t)
		q := "UPDATE %s SET status = 'b' WHERE status <> 'x' ORDER BY order_id"
		out, err := mariadbCLI(t, e, fmt.Sprintf(q, "t_order"), "-vvv")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		dout := directCLI(t, e.backends[0], "ds_0", fmt.Sprintf(q, ref))
		info := regexp.MustCompile(`Rows matched: .*`)
		if g, w := info.FindString(out), info.FindString(dout); g == "" || g != w {
			t.Errorf("proxy:\n%s\nMariaDB:\n%s", out, dout)
		}
	})

	t.Run("DELETE ORDER BY without LIMIT ... RETURNING", func(t *testing.T) {
		reset(t)
		q := "DELETE FROM %s WHERE status = 'a' ORDER BY status, order_id DESC RETURNING order_id, user_id"
		got := queryStrings(t, proxyDB, fmt.Sprintf(q, "t_order"))
		want := queryStrings(t, direct, fmt.Sprintf(q, ref))
		if strings.Join(got, ";") != strings.Join(want, ";") || len(got) != 16 {
			t.Errorf("RETURNING rows:\n got %v\nwant %v (16 rows)", got, want)
		}
	})

	t.Run("rolled back in a transaction", func(t *testing.T) {
		reset(t)
		c := e.conn(t)
		for _, q := range []string{"BEGIN", "DELETE FROM t_order WHERE user_id = 2 LIMIT 9"} {
			if _, err := c.ExecContext(t.Context(), q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		var n int
		if err := c.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM t_order").Scan(&n); err != nil || n != 15 {
			t.Errorf("inside the transaction: %d rows, %v; want 15", n, err)
		}
		if _, err := c.ExecContext(t.Context(), "ROLLBACK"); err != nil {
			t.Fatal(err)
		}
		if n := counts(t, proxyDB, "SELECT COUNT(*) FROM t_order"); n != "24" {
			t.Errorf("after ROLLBACK: %s rows, want 24", n)
		}
	})

	// All or nothing: the second data node refuses, and the rows the
	// first one deleted come back, as on one MariaDB.
	t.Run("a refused route undoes the routes before it", func(t *testing.T) {
		reset(t)
		trigger := "CREATE TRIGGER %s BEFORE DELETE ON %s FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'refused'"
		for _, q := range []string{fmt.Sprintf(trigger, "rl_no_delete", "t_order_1"), fmt.Sprintf(trigger, "rl_no_delete_ref", ref)} {
			if _, err := direct.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() {
			direct.Exec("DROP TRIGGER IF EXISTS rl_no_delete")
			direct.Exec("DROP TRIGGER IF EXISTS rl_no_delete_ref")
		})
		if _, err := direct.Exec("DELETE FROM " + ref + " WHERE user_id = 2 LIMIT 9"); errCode(err) != 1644 {
			t.Fatalf("MariaDB: %v, want 1644", err)
		}
		_, err := proxyDB.Exec("DELETE FROM t_order WHERE user_id = 2 LIMIT 9")
		if errCode(err) != 1644 {
			t.Errorf("proxy: %v, want 1644", err)
		}
		if n := counts(t, proxyDB, "SELECT COUNT(*) FROM t_order"); n != "24" {
			t.Errorf("after the refused DELETE: %s rows, want 24", n)
		}
	})
}

// directCLI runs sql with the mariadb client on database db of server
// s, verbosely (-vvv: the OK's info string), and returns its output.
func directCLI(t *testing.T, s *mariadbtest.Server, db, sql string) string {
	t.Helper()
	out, err := directCLIOutput(t, s, db, sql)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return out
}

// directCLIOutput is directCLI for a statement that may fail: the
// client's output, the error with it.
func directCLIOutput(t *testing.T, s *mariadbtest.Server, db, sql string) (string, error) {
	t.Helper()
	bin := mariadbtest.RequireBinary(t, "mariadb")
	out, err := exec.Command(bin, "--no-defaults", "-h"+s.Host(), "-P"+strconv.Itoa(s.Port()), "-u"+s.User(), "-vvv", db, "-e", sql).CombinedOutput()
	return string(out), err
}

// tableSide is a table the same statements run on: t_order through the
// proxy, or its reference on one MariaDB.
type tableSide struct {
	db    *sql.DB
	table string
}

// orderRef creates on direct, one MariaDB, a table name shaped as
// createTables' t_order, for the statements a test runs through the
// proxy to run there too, and drops it when the test ends; key is what
// order_id's definition adds (AUTO_INCREMENT or nothing). It returns the
// two sides, the proxy's first.
func orderRef(t *testing.T, proxyDB, direct *sql.DB, name, key string) []tableSide {
	t.Helper()
	if _, err := direct.Exec("CREATE OR REPLACE TABLE " + name + " (order_id BIGINT NOT NULL " + key + ", user_id INT NOT NULL, status VARCHAR(32), PRIMARY KEY (order_id))"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { direct.Exec("DROP TABLE IF EXISTS " + name) })
	return []tableSide{{proxyDB, "t_order"}, {direct, name}}
}
