//go:build demo

package main

import (
	"database/sql"
	"slices"
	"strings"
	"testing"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// checkDemoStringMerges runs GROUP BY, DISTINCT and ORDER BY on a string
// column through the demo proxy, whose embedded backends describe utf8mb4
// columns as MySQL 8 does (utf8mb4_0900_ai_ci, id 255: 1235 before the
// merge knew it), and on one MariaDB holding the same rows: the answers
// must agree, up to the case the two collations both ignore. The
// backends' columns really are utf8mb4_0900_ai_ci (the demo sets it as
// their databases' default; go-mysql-server's own, utf8mb4_0900_bin, was
// described as 255 too, and the merge rightly refused a data node's
// binary order with 1235 whenever one physical table held 'Paid' and
// 'new'; TestDemoSeedsEveryBackend checks the collation directly).
func checkDemoStringMerges(t *testing.T, demo *sql.DB) {
	t.Helper()
	for _, st := range []string{"NEW", "Paid", "shipped"} {
		if _, err := demo.Exec("INSERT INTO t_order (user_id, status) VALUES (?, ?)", 7, st); err != nil {
			t.Fatal(err)
		}
	}
	ref := mariadbtest.Start(t, mariadbtest.Options{Databases: []string{"ref"}})
	ref.Exec(t, "ref", "CREATE TABLE t_order (order_id BIGINT NOT NULL, user_id INT NOT NULL, status VARCHAR(32) NOT NULL, PRIMARY KEY (order_id)) DEFAULT CHARSET utf8mb4")
	refDB := ref.Open(t, "ref")
	for _, r := range queryText(t, demo, "SELECT order_id, user_id, status FROM t_order") {
		f := strings.Split(r, "|")
		if _, err := refDB.Exec("INSERT INTO t_order VALUES (?, ?, ?)", f[0], f[1], f[2]); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		query   string
		ordered bool
	}{
		{"SELECT status, COUNT(*) FROM t_order GROUP BY status", false},
		{"SELECT DISTINCT status FROM t_order", false},
		{"SELECT status FROM t_order ORDER BY status", true},
		{"SELECT status, MIN(user_id) FROM t_order GROUP BY status ORDER BY status DESC", true},
		{"SELECT COUNT(DISTINCT status) FROM t_order", false},
		{"SELECT GROUP_CONCAT(DISTINCT status ORDER BY status SEPARATOR ' ') FROM t_order", false},
		{"SELECT user_id, GROUP_CONCAT(status ORDER BY status DESC) FROM t_order GROUP BY user_id", false},
	}
	for _, tt := range tests {
		got, want := queryText(t, demo, tt.query), queryText(t, refDB, tt.query)
		if !tt.ordered {
			slices.Sort(got)
			slices.Sort(want)
		}
		if !slices.Equal(got, want) || len(got) == 0 {
			t.Errorf("%s\nproxy:   %q\nMariaDB: %q", tt.query, got, want)
		}
	}
}

// queryText returns the rows of q, each as its lower-cased values joined
// by "|".
func queryText(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		var f []string
		for _, v := range vals {
			f = append(f, strings.ToLower(v.String))
		}
		out = append(out, strings.Join(f, "|"))
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}
