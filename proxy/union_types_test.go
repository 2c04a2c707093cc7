package proxy

import (
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// upRules shard up like ut (unionRules): 2 data sources × 4 tables by id.
const upRules = `  - !SHARDING
    tables:
      up:
        actualDataNodes: ds_${0..1}.up_${0..3}
        databaseStrategy:
          standard: { shardingColumn: id, shardingAlgorithmName: up_db }
        tableStrategy:
          standard: { shardingColumn: id, shardingAlgorithmName: up_table }
    shardingAlgorithms:
      up_db:    { type: INLINE, props: { algorithm-expression: "ds_${id % 2}", allow-range-query-with-inline-sharding: true } }
      up_table: { type: INLINE, props: { algorithm-expression: "up_${id.intdiv(2) % 4}", allow-range-query-with-inline-sharding: true } }
`

// upTable has columns of most kinds, among them those whose values a
// UNION or the binary protocol may show otherwise than the table does.
const upTable = `(id INT PRIMARY KEY, k INT NOT NULL, c VARCHAR(20) NULL, de DECIMAL(12,3), u BIGINT UNSIGNED,
	t TINYINT, e ENUM('a','b'), vb VARBINARY(8), f DOUBLE, fl FLOAT, dt DATETIME(3), z INT(6) ZEROFILL, dz DECIMAL(8,2) ZEROFILL, y YEAR, bt BIT(8))`

func upRows() []string {
	var rows []string
	for id := 1; id <= 60; id++ {
		c := fmt.Sprintf("'c%02d'", (id*7)%13)
		if id%7 == 0 {
			c = "NULL"
		}
		rows = append(rows, fmt.Sprintf("(%d, %d, %s, %d.%03d, %d, %d, '%s', x'%02x00', %d.1e-%d, %d.3, '2024-01-%02d 10:11:12.%03d', %d, %d.%02d, %d, b'%08b')",
			id, (id*31)%17, c, id*1000-30000, id*7%1000, uint64(1)<<63+uint64(id), id-30, []string{"a", "b"}[id%2], id,
			id, id%9, id, id%28+1, id*37%1000, id*3, id, id%100, 1990+id, id))
	}
	return rows
}

// upSetup creates the physical tables on both backends and the reference
// table on backend 0, and fills them through the proxy.
func upSetup(t *testing.T, e *testEnv) *sql.DB {
	t.Helper()
	for i := range 2 {
		db := e.backend(t, i)
		for j := range 4 {
			unionExec(t, db, fmt.Sprintf("DROP TABLE IF EXISTS up_%d", j))
			unionExec(t, db, fmt.Sprintf("CREATE TABLE up_%d %s", j, upTable))
		}
	}
	ref := e.backend(t, 0)
	unionExec(t, ref, "DROP DATABASE IF EXISTS up_ref")
	unionExec(t, ref, "CREATE DATABASE up_ref")
	unionExec(t, ref, "CREATE TABLE up_ref.up "+upTable)
	values := strings.Join(upRows(), ", ")
	unionExec(t, ref, "INSERT INTO up_ref.up VALUES "+values)
	unionExec(t, e.open(t), "INSERT INTO up VALUES "+values)
	t.Cleanup(func() {
		for i := range 2 {
			for j := range 4 {
				e.backend(t, i).Exec(fmt.Sprintf("DROP TABLE IF EXISTS up_%d", j))
			}
		}
		ref.Exec("DROP DATABASE IF EXISTS up_ref")
	})
	return e.backends[0].Open(t, "up_ref")
}

// TestUnionZerofill: a UNION drops ZEROFILL from its columns, and its
// values with it (MariaDB sends 4.50 where the table sends 000004.50), so
// a shape with a ZEROFILL column runs apart and answers as the table
// does; YEAR, ZEROFILL too, keeps it in a UNION and joins.
func TestUnionZerofill(t *testing.T) {
	e := startEnv(t, envOptions{rules: upRules})
	upSetup(t, e)
	ref := openDSN(t, e.backends[0].DSN("up_ref"), "interpolateParams=true")
	p := e.open(t, "interpolateParams=true")
	for _, tt := range []struct {
		sql     string
		selects int
	}{
		{"SELECT id, dz FROM up WHERE id BETWEEN ? AND ?", 8},
		{"SELECT id, z FROM up WHERE id BETWEEN ? AND ?", 8},
		{"SELECT id, y FROM up WHERE id BETWEEN ? AND ?", 2},
	} {
		_, want := queryRows(t, ref, tt.sql, 1, 60)
		queryRows(t, p, tt.sql, 1, 60)
		before := comSelect(t, e)
		_, got := queryRows(t, p, tt.sql, 1, 60)
		if n := comSelect(t, e) - before; n != tt.selects {
			t.Errorf("%s: backends ran %d SELECTs, want %d", tt.sql, n, tt.selects)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: rows:\n got %q\nwant %q", tt.sql, got, want)
		}
	}
}

// openDSN opens dsn with params added.
func openDSN(t *testing.T, dsn string, params ...string) *sql.DB {
	t.Helper()
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	db, err := sql.Open("mysql", dsn+sep+strings.Join(params, "&"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
