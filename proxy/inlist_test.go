package proxy

import (
	"database/sql"
	"fmt"
	"slices"
	"testing"
)

// TestInListWithTruncatedStringAsMariaDB runs statements whose IN list on
// an integer sharding column holds a string that is no clean number
// through the proxy and on one MariaDB table holding the same rows, and
// wants the same answer (rows or error number) and the same rows after:
// MariaDB refuses the UPDATE (1292 in its default strict mode) once it
// compares a row, and selects and deletes with the string read as the
// number it truncates to (0), so no data node may apply what MariaDB
// refuses, nor miss the row the string matches.
func TestInListWithTruncatedStringAsMariaDB(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	proxy := e.open(t)
	ref := e.backend(t, 0)
	if _, err := ref.Exec("CREATE OR REPLACE TABLE t_ref (order_id BIGINT NOT NULL, user_id INT NOT NULL, status VARCHAR(32), PRIMARY KEY (order_id))"); err != nil {
		t.Fatal(err)
	}
	// The data sources are shared: other tests list their tables.
	t.Cleanup(func() { ref.Exec("DROP TABLE t_ref") })
	const rows = "(0, 0, 'zero'), (1, 1, 'one'), (14, 14, 'a'), (15, 15, 'b'), (58, 58, 'c')"
	reset := func() {
		for _, db := range []struct {
			db    *sql.DB
			table string
		}{{proxy, "t_order"}, {ref, "t_ref"}} {
			for _, q := range []string{"DELETE FROM " + db.table, "INSERT INTO " + db.table + " (order_id, user_id, status) VALUES " + rows} {
				if _, err := db.db.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
		}
	}
	answer := func(db *sql.DB, q string, args ...any) string {
		r, err := db.Query(q, args...)
		if err != nil {
			return fmt.Sprintf("error %d", errCode(err))
		}
		defer r.Close()
		var got []string
		for r.Next() {
			var id int64
			var st string
			if err := r.Scan(&id, &st); err != nil {
				return err.Error()
			}
			got = append(got, fmt.Sprintf("%d:%s", id, st))
		}
		if err := r.Err(); err != nil {
			return fmt.Sprintf("error %d", errCode(err))
		}
		slices.Sort(got)
		return fmt.Sprint(got)
	}
	exec := func(db *sql.DB, q string, args ...any) string {
		res, err := db.Exec(q, args...)
		if err != nil {
			return fmt.Sprintf("error %d", errCode(err))
		}
		n, _ := res.RowsAffected()
		return fmt.Sprintf("%d rows", n)
	}
	tests := []struct {
		sql   string // on t_order; t_ref for MariaDB
		args  []any
		query bool
	}{
		{sql: "UPDATE t_order SET status = 'x' WHERE user_id IN (14, 'ä', 15)"},
		{sql: "UPDATE t_order SET status = 'x' WHERE order_id IN (1, 'hunter2')"},
		{sql: "UPDATE t_order SET status = 'x' WHERE order_id IN (14, ?, 58)", args: []any{"ä"}},
		{sql: "UPDATE t_order SET status = 'x' WHERE user_id IN (14, '15', 58)"},
		{sql: "UPDATE t_order SET status = 'x' WHERE user_id IN (' 14', '1e1')"},
		{sql: "DELETE FROM t_order WHERE user_id IN (14, 'ä', 15)"},
		{sql: "DELETE FROM t_order WHERE order_id IN (1, '58abc')"},
		{sql: "SELECT order_id, status FROM t_order WHERE user_id IN (14, 'ä', 58)", query: true},
		{sql: "SELECT order_id, status FROM t_order WHERE order_id IN (?, ?, ?)", args: []any{1, "ä", 15}, query: true},
	}
	for _, tt := range tests {
		reset()
		refSQL := replaceTable(tt.sql)
		var got, want string
		if tt.query {
			got, want = answer(proxy, tt.sql, tt.args...), answer(ref, refSQL, tt.args...)
		} else {
			got, want = exec(proxy, tt.sql, tt.args...), exec(ref, refSQL, tt.args...)
		}
		if got != want {
			t.Errorf("%s %v: the proxy answered %s, MariaDB %s", tt.sql, tt.args, got, want)
		}
		after, wantAfter := answer(proxy, "SELECT order_id, status FROM t_order"), answer(ref, "SELECT order_id, status FROM t_ref")
		if after != wantAfter {
			t.Errorf("%s %v: rows after it %s, MariaDB's %s", tt.sql, tt.args, after, wantAfter)
		}
	}
}

func replaceTable(q string) string {
	out := []byte{}
	for i := 0; i < len(q); i++ {
		if i+7 <= len(q) && q[i:i+7] == "t_order" {
			out = append(out, "t_ref"...)
			i += 6
			continue
		}
		out = append(out, q[i])
	}
	return string(out)
}
