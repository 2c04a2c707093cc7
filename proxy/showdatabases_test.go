package proxy

import (
	"database/sql"
	"slices"
	"testing"
)

// TestShowDatabasesColumnName: SHOW DATABASES names its column as MariaDB
// does, "Database (pattern)" with a LIKE pattern and "Database" without
// (clients that read the row by column name, or print it, see the same
// through the proxy as directly).
func TestShowDatabasesColumnName(t *testing.T) {
	e := startEnv(t, envOptions{})
	proxy, direct := e.open(t), e.backend(t, 0)
	columns := func(db *sql.DB, q string) []string {
		t.Helper()
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer rows.Close()
		cols, err := rows.Columns()
		if err != nil {
			t.Fatal(err)
		}
		return cols
	}
	for _, q := range []string{
		"SHOW DATABASES",
		"SHOW DATABASES LIKE 'sharding%'",
		"SHOW DATABASES LIKE 'no\\_such'",
		"SHOW SCHEMAS LIKE '%'",
		"SHOW DATABASES WHERE `Database` LIKE 'sharding%'",
	} {
		if got, want := columns(proxy, q), columns(direct, q); !slices.Equal(got, want) {
			t.Errorf("%s: columns %q through the proxy, %q on MariaDB", q, got, want)
		}
	}
}
