package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"testing"
)

// isRules shard is_order over two data sources, two tables each, and
// broadcast is_dict; is_single has no rule.
const isRules = `  - !SHARDING
    tables:
      is_order:
        actualDataNodes: ds_${0..1}.is_order_${0..1}
        databaseStrategy: { standard: { shardingColumn: user_id, shardingAlgorithmName: db_inline } }
        tableStrategy: { standard: { shardingColumn: order_id, shardingAlgorithmName: order_inline } }
      is_missing:
        actualDataNodes: ds_${0..1}.is_missing
        databaseStrategy: { standard: { shardingColumn: user_id, shardingAlgorithmName: db_inline } }
    shardingAlgorithms:
      db_inline:    { type: INLINE, props: { algorithm-expression: "ds_${user_id % 2}" } }
      order_inline: { type: INLINE, props: { algorithm-expression: "is_order_${order_id % 2}" } }
  - !BROADCAST
    tables: [is_dict]
`

// TestInfoSchemaShapesDifferential: information_schema queries of any
// shape (UNION as TypeORM writes it, joins between information_schema
// tables, subqueries, derived tables) describe the logical schema through
// the proxy as they describe one MariaDB holding the same tables (a UNION
// returned no rows; columns named information_schema.TABLE.COLUMN, as
// drizzle-kit pull writes them, got 1054); SHOW TABLES lists a table of the rules only once its
// physical tables exist.
func TestInfoSchemaShapesDifferential(t *testing.T) {
	e := startEnv(t, envOptions{rules: isRules})
	db := e.open(t)
	e.backends[0].Exec(t, "ds_0", "CREATE DATABASE IF NOT EXISTS isref")
	ref := e.backends[0].Open(t, "isref")
	drop := []string{"DROP VIEW IF EXISTS is_view", "DROP TABLE IF EXISTS is_order", "DROP TABLE IF EXISTS is_dict", "DROP TABLE IF EXISTS is_single"}
	for _, q := range drop {
		db.Exec(q)
		ref.Exec(q)
	}
	t.Cleanup(func() {
		for _, q := range drop {
			db.Exec(q)
			ref.Exec(q)
		}
	})
	showTables := "SHOW TABLES LIKE 'is\\_%'"
	if got := queryStrings(t, db, showTables); len(got) != 0 {
		t.Errorf("SHOW TABLES before any CREATE TABLE: %q, want none (the rules name tables that do not exist)", got)
	}
	for _, q := range []string{
		"CREATE TABLE is_order (order_id BIGINT NOT NULL PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(10))",
		"CREATE TABLE is_dict (code VARCHAR(10) NOT NULL PRIMARY KEY, label VARCHAR(20))",
		"CREATE TABLE is_single (id INT NOT NULL PRIMARY KEY, user_id INT)",
		"CREATE VIEW is_view AS SELECT id, user_id FROM is_single WHERE user_id > 0",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("proxy: %s: %v", q, err)
		}
		if _, err := ref.Exec(q); err != nil {
			t.Fatalf("reference: %s: %v", q, err)
		}
	}
	if got, want := queryStrings(t, db, showTables), queryStrings(t, ref, showTables); !slices.Equal(got, want) {
		t.Errorf("SHOW TABLES: proxy %q, reference %q", got, want)
	}
	queries := []string{
		// TypeORM's MysqlQueryRunner.loadTables shape.
		"SELECT TABLE_NAME FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = '%[1]s' AND TABLE_NAME = 'is_order' UNION SELECT TABLE_NAME FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = '%[1]s' AND TABLE_NAME = 'is_dict'",
		"(SELECT TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES WHERE TABLE_SCHEMA = '%[1]s' AND TABLE_NAME LIKE 'is\\_%%') UNION ALL (SELECT TABLE_NAME, COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = '%[1]s' AND TABLE_NAME LIKE 'is\\_%%') ORDER BY 1, 2",
		"SELECT c.TABLE_NAME, c.COLUMN_NAME, c.DATA_TYPE FROM information_schema.COLUMNS c JOIN information_schema.TABLES t ON t.TABLE_SCHEMA = c.TABLE_SCHEMA AND t.TABLE_NAME = c.TABLE_NAME WHERE t.TABLE_SCHEMA = '%[1]s' AND t.TABLE_NAME LIKE 'is\\_%%' ORDER BY 1, 2",
		"SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = '%[1]s' AND TABLE_NAME IN (SELECT TABLE_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = '%[1]s' AND COLUMN_NAME = 'user_id') AND TABLE_NAME LIKE 'is\\_%%' ORDER BY 1",
		"SELECT COUNT(*) FROM (SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = '%[1]s' AND TABLE_NAME LIKE 'is\\_%%') x",
		"SELECT s.INDEX_NAME, s.COLUMN_NAME FROM information_schema.STATISTICS s WHERE s.TABLE_SCHEMA = '%[1]s' AND EXISTS (SELECT 1 FROM information_schema.TABLES t WHERE t.TABLE_SCHEMA = s.TABLE_SCHEMA AND t.TABLE_NAME = s.TABLE_NAME AND t.TABLE_NAME = 'is_order')",
		// TypeORM's MysqlQueryRunner.clearDatabase (dropSchema: true)
		// drops the views first; VIEWS lists the default data source's.
		"SELECT concat('DROP VIEW IF EXISTS `', table_name, '`') AS `query` FROM `INFORMATION_SCHEMA`.`VIEWS` WHERE `TABLE_SCHEMA` = '%[1]s'",
		"SELECT TABLE_NAME, REPLACE(VIEW_DEFINITION, '`%[1]s`', '`db`'), CHECK_OPTION, IS_UPDATABLE, SECURITY_TYPE, ALGORITHM FROM information_schema.VIEWS WHERE TABLE_SCHEMA = '%[1]s' AND TABLE_NAME LIKE 'is\\_%%'",
		"SELECT t.TABLE_NAME, t.TABLE_TYPE, v.IS_UPDATABLE FROM information_schema.TABLES t LEFT JOIN information_schema.VIEWS v ON v.TABLE_SCHEMA = t.TABLE_SCHEMA AND v.TABLE_NAME = t.TABLE_NAME WHERE t.TABLE_SCHEMA = '%[1]s' AND t.TABLE_NAME LIKE 'is\\_%%' ORDER BY 1",
		"SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = '%[1]s' AND TABLE_NAME LIKE 'is\\_%%' EXCEPT SELECT TABLE_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = '%[1]s' AND COLUMN_NAME = 'status' ORDER BY 1",
		// drizzle-kit pull names STATISTICS' columns with schema and
		// table (the schema in any case, the table as FROM names it).
		"select TABLE_NAME, INDEX_NAME, COLUMN_NAME, NON_UNIQUE from INFORMATION_SCHEMA.STATISTICS WHERE INFORMATION_SCHEMA.STATISTICS.TABLE_SCHEMA = '%[1]s' and INFORMATION_SCHEMA.STATISTICS.INDEX_NAME = 'PRIMARY' and information_schema.STATISTICS.TABLE_NAME LIKE 'is\\_%%' ORDER BY Information_Schema.STATISTICS.TABLE_NAME",
		"SELECT information_schema.TABLES.TABLE_NAME FROM information_schema.TABLES WHERE information_schema.TABLES.TABLE_SCHEMA = '%[1]s' AND EXISTS (SELECT 1 FROM information_schema.COLUMNS WHERE information_schema.COLUMNS.TABLE_SCHEMA = information_schema.TABLES.TABLE_SCHEMA AND information_schema.COLUMNS.TABLE_NAME = information_schema.TABLES.TABLE_NAME AND COLUMN_NAME = 'user_id') AND information_schema.TABLES.TABLE_NAME LIKE 'is\\_%%' ORDER BY 1",
	}
	for _, q := range queries {
		got := queryStrings(t, db, fmt.Sprintf(q, "sharding_db"))
		want := queryStrings(t, ref, fmt.Sprintf(q, "isref"))
		if !slices.Equal(got, want) || len(want) == 0 {
			t.Errorf("%s\nproxy:     %q\nreference: %q", q, got, want)
		}
	}
}

// TestInfoSchemaCollationOrder: information_schema rows through the proxy
// sort and compare in their columns' own collation (utf8mb3_general_ci,
// as MariaDB describes them), not in the client's: tables and columns
// named apart by case and by '_' against letters come in MariaDB's order
// for a client on utf8mb4_bin or utf8mb4_unicode_ci, in ORDER BY, MIN,
// MAX and a range of names, as text and prepared, beside a sharded
// table, and SHOW TABLES ... WHERE compares them so. The proxy's rows
// sorted and compared in the client's collation.
func TestInfoSchemaCollationOrder(t *testing.T) {
	e := startEnv(t, envOptions{rules: isRules})
	ctx := context.Background()
	db := e.open(t)
	e.backends[0].Exec(t, "ds_0", "CREATE DATABASE IF NOT EXISTS isref")
	ref := e.backends[0].Open(t, "isref")
	tables := []string{"isc_Abc", "isc_abd", "isc_a_b", "isc_aBa", "is_order"}
	drop := func() {
		for _, name := range tables {
			db.Exec("DROP TABLE IF EXISTS " + name)
			ref.Exec("DROP TABLE IF EXISTS " + name)
		}
	}
	drop()
	t.Cleanup(drop)
	for _, name := range tables {
		q := "CREATE TABLE " + name + " (order_id BIGINT NOT NULL PRIMARY KEY, user_id INT NOT NULL, Zeta INT, a_col INT, aCol INT, Acm INT)"
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("proxy: %s: %v", q, err)
		}
		if _, err := ref.Exec(q); err != nil {
			t.Fatalf("reference: %s: %v", q, err)
		}
	}
	of := "FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND (TABLE_NAME LIKE 'isc\\_%' OR TABLE_NAME = 'is_order')"
	queries := []string{
		"SELECT TABLE_NAME " + of + " ORDER BY TABLE_NAME",
		"SELECT TABLE_NAME " + of + " ORDER BY TABLE_NAME DESC LIMIT 3",
		"SELECT MIN(TABLE_NAME), MAX(TABLE_NAME) " + of,
		"SELECT TABLE_NAME " + of + " AND TABLE_NAME > 'isc_Abc' ORDER BY 1",
		"SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'isc_a_b' ORDER BY COLUMN_NAME",
		"SELECT TABLE_NAME, COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN ('is_order', 'isc_aBa') ORDER BY COLUMN_NAME DESC, TABLE_NAME",
	}
	for _, collation := range []string{"utf8mb4_bin", "utf8mb4_unicode_ci"} {
		pc, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rc, err := ref.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []*sql.Conn{pc, rc} {
			if _, err := c.ExecContext(ctx, "SET NAMES utf8mb4 COLLATE "+collation); err != nil {
				t.Fatal(err)
			}
		}
		for _, q := range queries {
			got, want := queryStrings(t, pc, q), queryStrings(t, rc, q)
			if !slices.Equal(got, want) || len(want) == 0 {
				t.Errorf("%s: %s\nproxy:     %q\nreference: %q", collation, q, got, want)
			}
		}
		// Prepared: a ? for the name.
		q := "SELECT TABLE_NAME " + of + " AND TABLE_NAME <> ? ORDER BY TABLE_NAME"
		if got, want := queryStrings(t, pc, q, "x"), queryStrings(t, rc, q, "x"); !slices.Equal(got, want) {
			t.Errorf("%s: %s (prepared)\nproxy:     %q\nreference: %q", collation, q, got, want)
		}
		// SHOW ... WHERE compares the names as information_schema's
		// columns do (it got none of these rows).
		for _, q := range []string{
			"SHOW TABLES WHERE Tables_in_%s LIKE 'isc%%' AND Tables_in_%[1]s > 'isc_Abc'",
			"SHOW FULL TABLES WHERE Tables_in_%s IN ('ISC_ABC', 'IS_Order')",
		} {
			got, want := queryStrings(t, pc, fmt.Sprintf(q, "sharding_db")), queryStrings(t, rc, fmt.Sprintf(q, "isref"))
			if !slices.Equal(got, want) || len(want) == 0 {
				t.Errorf("%s: %s\nproxy:     %q\nreference: %q", collation, q, got, want)
			}
		}
		pc.Close()
		rc.Close()
	}
}
