package proxy

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"testing"
)

// fkRules shard fk_order and fk_item alike (binding tables, two data
// sources with two physical tables each) and broadcast fk_country.
const fkRules = `  - !SHARDING
    tables:
      fk_order:
        actualDataNodes: ds_${0..1}.fk_order_${0..1}
        databaseStrategy: { standard: { shardingColumn: user_id, shardingAlgorithmName: db_inline } }
        tableStrategy: { standard: { shardingColumn: order_id, shardingAlgorithmName: order_inline } }
      fk_item:
        actualDataNodes: ds_${0..1}.fk_item_${0..1}
        databaseStrategy: { standard: { shardingColumn: user_id, shardingAlgorithmName: db_inline } }
        tableStrategy: { standard: { shardingColumn: order_id, shardingAlgorithmName: item_inline } }
    bindingTables:
      - fk_order,fk_item
    shardingAlgorithms:
      db_inline:    { type: INLINE, props: { algorithm-expression: "ds_${user_id % 2}" } }
      order_inline: { type: INLINE, props: { algorithm-expression: "fk_order_${order_id % 2}" } }
      item_inline:  { type: INLINE, props: { algorithm-expression: "fk_item_${order_id % 2}" } }
  - !BROADCAST
    tables: [fk_country]
`

// TestForeignKeysDifferential runs the DDL migration tools write (GORM's
// inline CONSTRAINT in CREATE TABLE, Django's ALTER TABLE ADD CONSTRAINT,
// an unnamed FOREIGN KEY, DROP FOREIGN KEY, named CHECK constraints, which
// were restored with MySQL 8's ENFORCED, 1064 on MariaDB) through the proxy and on one
// plain MariaDB database: every physical table gets its constraints, and
// SHOW CREATE TABLE, SHOW INDEX and information_schema's KEY_COLUMN_USAGE,
// REFERENTIAL_CONSTRAINTS, TABLE_CONSTRAINTS and STATISTICS read back what
// the reference shows. Before, the second physical table of each data
// source failed with 1005 (errno 121, duplicate constraint name).
func TestForeignKeysDifferential(t *testing.T) {
	e := startEnv(t, envOptions{rules: fkRules})
	db := e.open(t)
	e.backends[0].Exec(t, "ds_0", "CREATE DATABASE IF NOT EXISTS fkref")
	ref := e.backends[0].Open(t, "fkref")
	both := func(stmts ...string) { t.Helper(); execBoth(t, db, ref, stmts...) }
	both("DROP TABLE IF EXISTS fk_item", "DROP TABLE IF EXISTS fk_order", "DROP TABLE IF EXISTS fk_country")
	t.Cleanup(func() {
		for _, q := range []string{"DROP TABLE IF EXISTS fk_item", "DROP TABLE IF EXISTS fk_order", "DROP TABLE IF EXISTS fk_country"} {
			db.Exec(q)
			ref.Exec(q)
		}
	})
	both(
		"CREATE TABLE fk_country (id INT NOT NULL PRIMARY KEY, name VARCHAR(20))",
		"CREATE TABLE fk_order (order_id BIGINT NOT NULL PRIMARY KEY, user_id INT NOT NULL, country_id INT, KEY idx_user (user_id), CONSTRAINT fk_order_country FOREIGN KEY (country_id) REFERENCES fk_country (id), CONSTRAINT chk_user CHECK (user_id > 0))",
		"CREATE TABLE fk_item (item_id BIGINT NOT NULL PRIMARY KEY, order_id BIGINT NOT NULL, user_id INT NOT NULL, note VARCHAR(20) COMMENT 'CONSTRAINT `x` KEY `fk_item_0`')",
		"ALTER TABLE fk_item ADD CONSTRAINT fk_item_order FOREIGN KEY (order_id) REFERENCES fk_order (order_id) ON DELETE CASCADE",
		"ALTER TABLE fk_item ADD COLUMN country_id INT, ADD FOREIGN KEY (country_id) REFERENCES fk_country (id)",
		"ALTER TABLE fk_item ADD CONSTRAINT chk_item CHECK (item_id <> order_id)",
	)

	// Every physical table holds its constraints.
	for i := range 2 {
		got := queryStrings(t, e.backend(t, i), "SELECT TABLE_NAME, CONSTRAINT_NAME, REFERENCED_TABLE_NAME FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'fk\\_%' ORDER BY 1, 2")
		want := []string{
			"fk_item_0,fk_item_0_ibfk_1,fk_country", "fk_item_0,fk_item_order_fk_item_0,fk_order_0",
			"fk_item_1,fk_item_1_ibfk_1,fk_country", "fk_item_1,fk_item_order_fk_item_1,fk_order_1",
			"fk_order_0,fk_order_country_fk_order_0,fk_country", "fk_order_1,fk_order_country_fk_order_1,fk_country",
		}
		if !slices.Equal(got, want) {
			t.Errorf("ds_%d constraints:\n got %q\nwant %q", i, got, want)
		}
	}

	compare := func(label string) {
		t.Helper()
		for _, table := range []string{"fk_order", "fk_item", "fk_country"} {
			for _, q := range []string{"SHOW CREATE TABLE " + table, "SHOW INDEX FROM " + table} {
				got, want := queryStrings(t, db, q), queryStrings(t, ref, q)
				if strings.HasPrefix(q, "SHOW INDEX") {
					got, want = dropColumn(got, 6), dropColumn(want, 6) // Cardinality
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s: %s\nproxy:     %q\nreference: %q", label, q, got, want)
				}
			}
		}
		for _, q := range []string{
			"SELECT TABLE_NAME, CONSTRAINT_NAME, COLUMN_NAME, ORDINAL_POSITION, REFERENCED_TABLE_NAME, REFERENCED_COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'fk%' ORDER BY TABLE_NAME, CONSTRAINT_NAME, ORDINAL_POSITION",
			"SELECT CONSTRAINT_NAME, TABLE_NAME, REFERENCED_TABLE_NAME, UNIQUE_CONSTRAINT_NAME, UPDATE_RULE, DELETE_RULE FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = DATABASE() ORDER BY TABLE_NAME, CONSTRAINT_NAME",
			"SELECT TABLE_NAME, CONSTRAINT_NAME, CONSTRAINT_TYPE FROM information_schema.TABLE_CONSTRAINTS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'fk%' ORDER BY TABLE_NAME, CONSTRAINT_NAME",
			"SELECT TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME, NON_UNIQUE FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'fk%' ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX",
		} {
			got, want := queryStrings(t, db, q), queryStrings(t, ref, q)
			if !slices.Equal(got, want) || len(want) == 0 {
				t.Errorf("%s: %s\nproxy:     %q\nreference: %q", label, q, got, want)
			}
		}
	}
	compare("after CREATE and ALTER")

	// The constraints hold on the paired physical tables.
	both("INSERT INTO fk_country VALUES (1, 'x')", "INSERT INTO fk_order (order_id, user_id, country_id) VALUES (3, 1, 1), (4, 1, NULL), (5, 2, 1)",
		"INSERT INTO fk_item (item_id, order_id, user_id) VALUES (10, 3, 1), (11, 5, 2)")
	for _, q := range []string{
		"INSERT INTO fk_item (item_id, order_id, user_id) VALUES (12, 7, 1)",
		"INSERT INTO fk_order (order_id, user_id, country_id) VALUES (9, 1, 2)",
	} {
		_, perr := db.Exec(q)
		_, rerr := ref.Exec(q)
		if errCode(perr) != 1452 || errCode(rerr) != 1452 {
			t.Errorf("%s: proxy %v, reference %v; want 1452 from both", q, perr, rerr)
		}
	}
	both("DELETE FROM fk_order WHERE user_id = 1 AND order_id = 3")
	if got := queryStrings(t, db, "SELECT item_id FROM fk_item ORDER BY item_id"); !slices.Equal(got, []string{"11"}) {
		t.Errorf("ON DELETE CASCADE on the paired table: items %q, want [11]", got)
	}

	// What no data node could hold is refused before anything changes.
	before := queryStrings(t, db, "SHOW CREATE TABLE fk_country")
	for _, q := range []string{
		"ALTER TABLE fk_country ADD CONSTRAINT fk_country_order FOREIGN KEY (id) REFERENCES fk_order (order_id)",
		"ALTER TABLE fk_order ADD CONSTRAINT fk_order_with_a_name_too_long_for_mariadb_itself_xxxxxxxxxxxxxxxxxx FOREIGN KEY (country_id) REFERENCES fk_country (id)",
	} {
		if _, err := db.Exec(q); errCode(err) != 1235 && errCode(err) != 1059 {
			t.Errorf("%s: %v, want 1235 or 1059", q, err)
		}
	}
	if after := queryStrings(t, db, "SHOW CREATE TABLE fk_country"); !slices.Equal(before, after) {
		t.Errorf("a refused ALTER changed fk_country: %q", after)
	}

	if _, err := db.Exec("INSERT INTO fk_order (order_id, user_id) VALUES (6, -2)"); errCode(err) != 4025 {
		t.Errorf("a row that fails CHECK chk_user: %v, want 4025", err)
	}
	both("ALTER TABLE fk_item DROP FOREIGN KEY fk_item_order", "ALTER TABLE fk_order DROP FOREIGN KEY fk_order_country", "ALTER TABLE fk_item DROP CONSTRAINT chk_item")
	compare("after DROP FOREIGN KEY")
	both("DROP TABLE fk_item", "DROP TABLE fk_order")
	for i := range 2 {
		if got := queryStrings(t, e.backend(t, i), "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'fk\\_%\\_%'"); got[0] != "0" {
			t.Errorf("ds_%d: %s physical tables left", i, got[0])
		}
	}
}

// TestForeignKeyLongNames: a foreign-key name within MariaDB's 64
// characters that the <name>_<physical table> suffix would push past them
// (Django's <table>_<column>_<hash>_fk_<table>_<column> between sharded
// tables, which the user cannot choose) works as on MariaDB: the physical
// tables get a shortened name, the constraint holds, and DROP FOREIGN KEY
// finds it under the client's name and under the one the proxy shows.
// Before, the ALTER was refused with 1059.
func TestForeignKeyLongNames(t *testing.T) {
	e := startEnv(t, envOptions{rules: fkRules})
	db := e.open(t)
	e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS fklong_ref", "CREATE DATABASE fklong_ref")
	ref := e.backends[0].Open(t, "fklong_ref")
	both := func(stmts ...string) { t.Helper(); execBoth(t, db, ref, stmts...) }
	t.Cleanup(func() {
		db.Exec("DROP TABLE IF EXISTS fk_item")
		db.Exec("DROP TABLE IF EXISTS fk_order")
		e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS fklong_ref")
	})
	const long = "fk_item_order_id_5f2e8a1c_fk_fk_order_order_id_and_a_long_tail"
	add := "ALTER TABLE fk_item ADD CONSTRAINT " + long + " FOREIGN KEY (order_id) REFERENCES fk_order (order_id)"
	both("DROP TABLE IF EXISTS fk_item", "DROP TABLE IF EXISTS fk_order",
		"CREATE TABLE fk_order (order_id BIGINT NOT NULL PRIMARY KEY, user_id INT NOT NULL)",
		"CREATE TABLE fk_item (item_id BIGINT NOT NULL PRIMARY KEY, order_id BIGINT NOT NULL, user_id INT NOT NULL)",
		add,
		"INSERT INTO fk_order (order_id, user_id) VALUES (3, 1), (4, 2)",
		"INSERT INTO fk_item (item_id, order_id, user_id) VALUES (10, 3, 1), (11, 4, 2)")
	orphan := "INSERT INTO fk_item (item_id, order_id, user_id) VALUES (12, 5, 1)"
	_, perr := db.Exec(orphan)
	_, rerr := ref.Exec(orphan)
	if errCode(perr) != 1452 || errCode(rerr) != 1452 {
		t.Errorf("%s: proxy %v, reference %v; want 1452 from both", orphan, perr, rerr)
	}
	fks := "SELECT TABLE_NAME, CONSTRAINT_NAME FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'fk\\_item%' ORDER BY 1"
	shown := queryStrings(t, db, fks)
	if len(shown) != 1 || !strings.HasPrefix(shown[0], "fk_item,"+long[:40]) || len(shown[0]) != len("fk_item,")+64-len("_fk_item_0") {
		t.Fatalf("the proxy shows %q: want one constraint of fk_item, the name shortened to fit its physical tables", shown)
	}
	name := strings.TrimPrefix(shown[0], "fk_item,")
	for i := range 2 {
		got := queryStrings(t, e.backend(t, i), fks)
		want := []string{"fk_item_0," + name + "_fk_item_0", "fk_item_1," + name + "_fk_item_1"}
		if !slices.Equal(got, want) {
			t.Errorf("ds_%d: %q, want %q", i, got, want)
		}
	}
	// Dropped under the client's name, then added again and dropped under
	// the name the proxy shows (as Django drops what introspection found).
	both("ALTER TABLE fk_item DROP FOREIGN KEY " + long)
	for _, q := range []string{add, "ALTER TABLE fk_item DROP FOREIGN KEY " + name} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("proxy: %s: %v", q, err)
		}
	}
	if got := queryStrings(t, db, fks); len(got) != 0 {
		t.Errorf("after DROP FOREIGN KEY: %q", got)
	}
	for i := range 2 {
		if got := queryStrings(t, e.backend(t, i), fks); len(got) != 0 {
			t.Errorf("ds_%d after DROP FOREIGN KEY: %q", i, got)
		}
	}
}

// dropColumn removes the i-th comma-separated field of each row.
func dropColumn(rows []string, i int) []string {
	out := make([]string, len(rows))
	for n, r := range rows {
		f := strings.Split(r, ",")
		if i < len(f) {
			f = append(f[:i], f[i+1:]...)
		}
		out[n] = strings.Join(f, ",")
	}
	return out
}

// TestDropTablesDifferential: DROP TABLE of tables related by foreign
// keys answers as on one MariaDB, in either order, and leaves no physical
// table half dropped (it ran one DROP per table in parallel: 1451 "it
// succeeded on ..." with part of them gone).
func TestDropTablesDifferential(t *testing.T) {
	e := startEnv(t, envOptions{rules: fkRules})
	db := e.open(t)
	e.backends[0].Exec(t, "ds_0", "CREATE DATABASE IF NOT EXISTS fkref")
	ref := e.backends[0].Open(t, "fkref")
	create := []string{
		"DROP TABLE IF EXISTS fk_item, fk_order, fk_country",
		"CREATE TABLE fk_country (id INT NOT NULL PRIMARY KEY)",
		"CREATE TABLE fk_order (order_id BIGINT NOT NULL PRIMARY KEY, user_id INT NOT NULL, country_id INT, CONSTRAINT fk_order_country FOREIGN KEY (country_id) REFERENCES fk_country (id))",
		"CREATE TABLE fk_item (item_id BIGINT NOT NULL PRIMARY KEY, order_id BIGINT NOT NULL, user_id INT NOT NULL, CONSTRAINT fk_item_order FOREIGN KEY (order_id) REFERENCES fk_order (order_id))",
	}
	t.Cleanup(func() {
		db.Exec("DROP TABLE IF EXISTS fk_item, fk_order, fk_country")
		ref.Exec("DROP TABLE IF EXISTS fk_item, fk_order, fk_country")
	})
	tables := func(c interface {
		QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	}) []string {
		return queryStrings(t, c, "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'fk\\_%' ORDER BY 1")
	}
	for _, drop := range []string{
		"DROP TABLE fk_country, fk_order, fk_item", // parents first
		"DROP TABLE fk_item, fk_order, fk_country", // children first
		"DROP TABLE IF EXISTS fk_item, fk_nothing, fk_order, fk_country",
		"DROP TABLE fk_item, fk_order",
	} {
		for _, q := range create {
			for _, c := range []*sql.DB{db, ref} {
				if _, err := c.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
		}
		_, perr := db.Exec(drop)
		_, rerr := ref.Exec(drop)
		if errCode(perr) != errCode(rerr) {
			t.Errorf("%s: proxy %v, reference %v", drop, perr, rerr)
		}
		t.Logf("%s: %v", drop, rerr)
		if got, want := tables(db), tables(ref); !slices.Equal(got, want) {
			t.Errorf("%s: tables left through the proxy %q, on the reference %q", drop, got, want)
		}
		var left []string
		for i := range 2 {
			left = append(left, tables(e.backend(t, i))...)
		}
		wantLeft := 0
		for _, name := range tables(ref) {
			if name == "fk_country" {
				wantLeft += 2 // one per data source
			} else {
				wantLeft += 4
			}
		}
		if len(left) != wantLeft {
			t.Errorf("%s: physical tables left %q, want %d", drop, left, wantLeft)
		}
	}
}

// TestConstraintNamesInErrors: the errors of a foreign key (1452 for an
// orphan, 1451 for a parent with children) and of a CHECK (4025) name the
// constraint as the client named it, named or InnoDB's unnamed
// <table>_ibfk_N, as on one MariaDB. Before, they named the physical
// table's own constraint (fk_item_order_fk_item_1, fk_item_0_ibfk_1) in
// messages that otherwise read logical (`sharding_db`.`fk_item`), which
// Laravel prints in its QueryException.
func TestConstraintNamesInErrors(t *testing.T) {
	e := startEnv(t, envOptions{rules: fkRules, databases: "fkerr"})
	db := e.open(t)
	refDatabase(t, e.backends[0], "fkerr_ref")
	ref := e.backends[0].Open(t, "fkerr_ref")
	execBoth(t, db, ref,
		"CREATE TABLE fk_order (order_id BIGINT NOT NULL PRIMARY KEY, user_id INT NOT NULL, CONSTRAINT chk_order CHECK (order_id < 100))",
		"CREATE TABLE fk_item (item_id BIGINT NOT NULL PRIMARY KEY, order_id BIGINT NOT NULL, user_id INT NOT NULL, CONSTRAINT fk_item_order FOREIGN KEY (order_id) REFERENCES fk_order (order_id))",
		"ALTER TABLE fk_item ADD COLUMN parent BIGINT, ADD FOREIGN KEY (parent) REFERENCES fk_order (order_id)",
		"INSERT INTO fk_order (order_id, user_id) VALUES (3, 1), (4, 2)",
		"INSERT INTO fk_item (item_id, order_id, user_id) VALUES (10, 3, 1), (11, 4, 2)",
	)
	for _, tt := range []struct {
		give string
		code uint16
	}{
		{"INSERT INTO fk_item (item_id, order_id, user_id) VALUES (12, 7, 1)", 1452},
		{"INSERT INTO fk_item (item_id, order_id, user_id, parent) VALUES (13, 4, 2, 6)", 1452},
		{"DELETE FROM fk_order WHERE user_id = 1 AND order_id = 3", 1451},
		{"UPDATE fk_order SET order_id = 8 WHERE user_id = 2 AND order_id = 4", 1451},
		{"INSERT INTO fk_order (order_id, user_id) VALUES (105, 1)", 4025},
	} {
		_, perr := db.Exec(tt.give)
		_, rerr := ref.Exec(tt.give)
		if errCode(perr) != tt.code || errCode(rerr) != tt.code {
			t.Errorf("%s: proxy %v, reference %v; want %d from both", tt.give, perr, rerr, tt.code)
			continue
		}
		if got, want := perr.Error(), strings.ReplaceAll(rerr.Error(), "fkerr_ref", "sharding_db"); got != want {
			t.Errorf("%s:\nproxy:     %s\nreference: %s", tt.give, got, want)
		}
	}
}

// execBoth runs each statement through the proxy (db) and on the
// reference (ref), failing the test at the first error.
func execBoth(t *testing.T, db, ref *sql.DB, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("proxy: %s: %v", q, err)
		}
		if _, err := ref.Exec(q); err != nil {
			t.Fatalf("reference: %s: %v", q, err)
		}
	}
}

// TestDropUnnamedForeignKey runs what Sequelize's sync({ alter: true })
// sends for a model whose belongsTo made an unnamed foreign key: it reads
// the constraint's name from information_schema.KEY_COLUMN_USAGE
// (<table>_ibfk_1, InnoDB's name, which the proxy shows for each
// physical table's <physical table>_ibfk_1) and drops it under that name
// with ALTER TABLE ... DROP FOREIGN KEY. Through the proxy and on one
// MariaDB: the same names, the drop, an explicit name in InnoDB's form
// added and dropped again, and 1091 for a name no table has, naming it as
// the client wrote it. Before, the proxy dropped <name>_<physical table>
// and answered 1091; its 1091 named the physical table's constraint.
func TestDropUnnamedForeignKey(t *testing.T) {
	e := startEnv(t, envOptions{rules: fkRules})
	db := e.open(t)
	e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS fkdrop_ref", "CREATE DATABASE fkdrop_ref")
	ref := e.backends[0].Open(t, "fkdrop_ref")
	both := func(stmts ...string) { t.Helper(); execBoth(t, db, ref, stmts...) }
	t.Cleanup(func() {
		db.Exec("DROP TABLE IF EXISTS fk_item")
		db.Exec("DROP TABLE IF EXISTS fk_order")
		e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS fkdrop_ref")
	})
	both("DROP TABLE IF EXISTS fk_item", "DROP TABLE IF EXISTS fk_order",
		"CREATE TABLE IF NOT EXISTS `fk_order` (`order_id` BIGINT auto_increment , `user_id` INTEGER NOT NULL, PRIMARY KEY (`order_id`)) ENGINE=InnoDB",
		"CREATE TABLE IF NOT EXISTS `fk_item` (`item_id` BIGINT auto_increment , `order_id` BIGINT NOT NULL, `user_id` INTEGER NOT NULL, PRIMARY KEY (`item_id`), FOREIGN KEY (`order_id`) REFERENCES `fk_order` (`order_id`) ON DELETE CASCADE ON UPDATE CASCADE) ENGINE=InnoDB")
	keys := "SELECT CONSTRAINT_NAME, TABLE_NAME, COLUMN_NAME, REFERENCED_TABLE_NAME FROM INFORMATION_SCHEMA.KEY_COLUMN_USAGE WHERE TABLE_NAME = 'fk_item' AND CONSTRAINT_NAME != 'PRIMARY' AND CONSTRAINT_SCHEMA = DATABASE() ORDER BY CONSTRAINT_NAME"
	compare := func(label string, want int) {
		t.Helper()
		got, wantRows := queryStrings(t, db, keys), queryStrings(t, ref, keys)
		if !slices.Equal(got, wantRows) || len(wantRows) != want {
			t.Errorf("%s: %s\nproxy:     %q\nreference: %q (want %d rows)", label, keys, got, wantRows, want)
		}
		for _, q := range []string{"SHOW CREATE TABLE fk_item"} {
			if got, want := queryStrings(t, db, q), queryStrings(t, ref, q); !slices.Equal(got, want) {
				t.Errorf("%s: %s\nproxy:     %q\nreference: %q", label, q, got, want)
			}
		}
	}
	compare("after CREATE TABLE", 1)
	both("ALTER TABLE `fk_item` DROP FOREIGN KEY `fk_item_ibfk_1`")
	compare("after DROP FOREIGN KEY fk_item_ibfk_1", 0)
	for i := range 2 {
		if got := queryStrings(t, e.backend(t, i), "SELECT COUNT(*) FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'fk\\_item\\_%'"); got[0] != "0" {
			t.Errorf("ds_%d: %s foreign keys left on fk_item's physical tables", i, got[0])
		}
	}
	both("ALTER TABLE fk_item ADD FOREIGN KEY (order_id) REFERENCES fk_order (order_id)",
		"ALTER TABLE fk_item ADD CONSTRAINT fk_item_ibfk_7 FOREIGN KEY (order_id) REFERENCES fk_order (order_id)")
	compare("after ADD FOREIGN KEY unnamed and fk_item_ibfk_7", 2)
	both("ALTER TABLE fk_item DROP FOREIGN KEY fk_item_ibfk_7")
	compare("after DROP FOREIGN KEY fk_item_ibfk_7", 1)
	for _, q := range []string{"ALTER TABLE fk_item DROP FOREIGN KEY fk_item_ibfk_9", "ALTER TABLE fk_item DROP FOREIGN KEY fk_item_ibfk_7", "ALTER TABLE fk_item DROP FOREIGN KEY fk_nosuch"} {
		_, perr := db.Exec(q)
		_, rerr := ref.Exec(q)
		if errCode(perr) != 1091 || errCode(rerr) != 1091 || perr.Error() != rerr.Error() {
			t.Errorf("%s: proxy %v, reference %v; want the same 1091 from both", q, perr, rerr)
		}
	}
	if got := queryStrings(t, db, "SELECT 1"); len(got) != 1 {
		t.Errorf("the connection after 1091: %q", got)
	}
}
