package proxy

import (
	"database/sql"
	"slices"
	"strings"
	"testing"
)

// TestShowWhereDifferential: the WHERE clause of the SHOW statements the
// proxy answers with logical names filters their rows as one MariaDB
// filters them: SHOW INDEX WHERE (it returned every index), SHOW [FULL]
// TABLES WHERE (Laravel's dropAllTables lists the tables so; it was 1235)
// and SHOW DATABASES WHERE.
func TestShowWhereDifferential(t *testing.T) {
	e := startEnv(t, envOptions{databases: "shw"})
	createTables(t, e)
	db := e.open(t)
	e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS shwref", "CREATE DATABASE shwref")
	ref := e.backends[0].Open(t, "shwref")
	for _, q := range []string{
		"CREATE TABLE t_order (order_id BIGINT NOT NULL, user_id INT NOT NULL, status VARCHAR(32), PRIMARY KEY (order_id))",
		"CREATE TABLE t_dict (code VARCHAR(16) PRIMARY KEY, label VARCHAR(64))",
		"CREATE TABLE t_plain (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(32))",
	} {
		if _, err := ref.Exec(q); err != nil {
			t.Fatalf("reference: %s: %v", q, err)
		}
	}
	for _, q := range []string{
		"CREATE INDEX idx_user ON t_order (user_id, status)",
		"CREATE INDEX idx_v ON t_plain (v)",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("proxy: %s: %v", q, err)
		}
		if _, err := ref.Exec(q); err != nil {
			t.Fatalf("reference: %s: %v", q, err)
		}
	}
	// Cardinality is the first data node's, not the logical table's:
	// the index columns only.
	indexCols := []string{"Table", "Non_unique", "Key_name", "Seq_in_index", "Column_name", "Null", "Index_type"}
	tests := []struct {
		query string // {db}: the schema's name
		cols  []string
	}{
		{"SHOW INDEX FROM t_order WHERE Key_name = 'PRIMARY'", indexCols},
		{"SHOW KEYS FROM t_order WHERE Non_unique = 1 AND Seq_in_index > 1", indexCols},
		{"SHOW INDEXES IN t_order FROM {db} WHERE Column_name LIKE 'user%'", indexCols},
		{"SHOW INDEX FROM t_dict WHERE Key_name = 'nosuch'", indexCols},
		{"SHOW INDEX FROM t_plain WHERE Key_name <> 'PRIMARY'", indexCols},
		{"SHOW FULL TABLES WHERE Table_type = 'BASE TABLE'", nil},
		{"SHOW FULL TABLES FROM {db} WHERE Table_type = 'VIEW'", nil},
		{"SHOW TABLES WHERE Tables_in_{db} LIKE 't\\_o%' OR Tables_in_{db} = 't_plain'", nil},
		{"SHOW TABLES FROM {db} WHERE `Tables_in_{db}` IN ('t_dict', 'nosuch')", nil},
		{"SHOW DATABASES WHERE `Database` = '{db}'", nil},
	}
	for _, tt := range tests {
		got, gotCols := showRows(t, db, strings.ReplaceAll(tt.query, "{db}", "sharding_db"), tt.cols)
		want, wantCols := showRows(t, ref, strings.ReplaceAll(tt.query, "{db}", "shwref"), tt.cols)
		for i := range gotCols {
			gotCols[i] = strings.ReplaceAll(gotCols[i], "sharding_db", "shwref")
		}
		for i := range got {
			got[i] = strings.ReplaceAll(got[i], "sharding_db", "shwref")
		}
		if !slices.Equal(got, want) || !slices.Equal(gotCols, wantCols) {
			t.Errorf("%s\nproxy:     %q %q\nreference: %q %q", tt.query, gotCols, got, wantCols, want)
		}
	}
}

// showRows runs q and returns its column names and its rows (the named
// columns only, when cols is not nil), sorted.
func showRows(t *testing.T, db *sql.DB, q string, cols []string) (rows, names []string) {
	t.Helper()
	rs, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rs.Close()
	names, err = rs.Columns()
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]sql.NullString, len(names))
	ptrs := make([]any, len(names))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rs.Next() {
		if err := rs.Scan(ptrs...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var parts []string
		for i, n := range names {
			if cols != nil && !slices.Contains(cols, n) {
				continue
			}
			v := "NULL"
			if vals[i].Valid {
				v = vals[i].String
			}
			parts = append(parts, n+"="+v)
		}
		rows = append(rows, strings.Join(parts, ","))
	}
	if err := rs.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	slices.Sort(rows)
	return rows, names
}
