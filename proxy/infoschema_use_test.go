package proxy

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"testing"
)

// TestUseInformationSchema: USE information_schema (it was 1049), and a
// login naming it, make it the schema in use, as in MariaDB: its tables
// read without a schema, SHOW TABLES, SHOW COLUMNS, SHOW CREATE TABLE and
// SHOW INDEX about them answer as MariaDB answers, writing or creating
// there is MariaDB's 1044, CALL of a procedure there its 1305; the logical
// schema, named, is still read, and USE goes back to it.
func TestUseInformationSchema(t *testing.T) {
	e := startEnv(t, envOptions{databases: "usis"})
	createTables(t, e)
	ctx := context.Background()
	proxied := e.conn(t)
	if _, err := proxied.ExecContext(ctx, "USE information_schema"); err != nil {
		t.Fatalf("USE information_schema: %v", err)
	}
	db, err := sql.Open("mysql", strings.Replace(e.dsn("app", "app-secret"), "/sharding_db", "/INFORMATION_SCHEMA", 1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	login, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { login.Close() })
	direct, err := e.backends[0].Open(t, "information_schema").Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { direct.Close() })

	rows := func(c *sql.Conn, q string) ([]string, error) {
		rs, err := c.QueryContext(ctx, q)
		if err != nil {
			return nil, err
		}
		return scanStrings(t, rs, q, "|"), nil
	}
	for _, q := range []string{
		"SELECT DATABASE()",
		"SHOW TABLES LIKE 'COLUMN%'",
		"SHOW FULL TABLES WHERE Tables_in_information_schema LIKE 'ENG%'",
		"SHOW COLUMNS FROM ENGINES",
		"DESCRIBE ENGINES",
		"SHOW CREATE TABLE ENGINES",
		"SHOW INDEX FROM ENGINES",
		"SHOW COLUMNS FROM COLLATIONS FROM information_schema LIKE 'ID'",
		"SELECT ENGINE, SUPPORT FROM ENGINES ORDER BY ENGINE",
		"SELECT COUNT(*) FROM COLLATIONS c JOIN CHARACTER_SETS s ON c.COLLATION_NAME = s.DEFAULT_COLLATE_NAME",
		"SELECT COLLATION_NAME FROM COLLATIONS WHERE ID = 8 UNION SELECT 'x'",
		"INSERT INTO t_plain VALUES (1)",
		"CREATE TABLE t_new (a INT)",
		"DROP TABLE t_order",
		"UPDATE TABLES SET TABLE_NAME = 'x'",
		"CALL nosuch()",
		"SELECT * FROM nosuch",
		"SELECT * FROM information_schema.nosuch",
		"SHOW COLUMNS FROM nosuch",
	} {
		want, wantErr := rows(direct, q)
		for name, c := range map[string]*sql.Conn{"USE": proxied, "login": login} {
			got, err := rows(c, q)
			if errCode(err) != errCode(wantErr) || (err == nil) != (wantErr == nil) || !slices.Equal(got, want) {
				t.Errorf("%s (%s)\nproxy:     %q %v\nreference: %q %v", q, name, got, err, want, wantErr)
			}
		}
	}

	// Prepared, as MariaDB prepares it: an unknown information_schema
	// table is its 1109 there too.
	for _, q := range []string{"SELECT * FROM information_schema.nosuch", "SELECT * FROM nosuch"} {
		_, wantErr := direct.PrepareContext(ctx, q)
		for name, c := range map[string]*sql.Conn{"USE": proxied, "login": login} {
			if _, err := c.PrepareContext(ctx, q); errCode(err) != errCode(wantErr) || (err == nil) != (wantErr == nil) {
				t.Errorf("prepare %s (%s)\nproxy:     %v\nreference: %v", q, name, err, wantErr)
			}
		}
	}

	// The logical schema, named, and USE back to it.
	if _, err := proxied.ExecContext(ctx, "INSERT INTO sharding_db.t_dict (code, label) VALUES ('is', 'information_schema') ON DUPLICATE KEY UPDATE label = VALUES(label)"); err != nil {
		t.Fatal(err)
	}
	if got, err := rows(proxied, "SELECT label FROM sharding_db.t_dict WHERE code = 'is'"); err != nil || !slices.Equal(got, []string{"information_schema"}) {
		t.Errorf("sharding_db.t_dict from information_schema: %q %v", got, err)
	}
	if _, err := proxied.ExecContext(ctx, "USE sharding_db"); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{"SELECT DATABASE()": "sharding_db", "SELECT COUNT(*) FROM t_dict WHERE code = 'is'": "1"} {
		if got, err := rows(proxied, q); err != nil || !slices.Equal(got, []string{want}) {
			t.Errorf("back in sharding_db: %s: %q %v", q, got, err)
		}
	}
	if _, err := proxied.ExecContext(ctx, "DELETE FROM t_dict WHERE code = 'is'"); err != nil {
		t.Fatal(err)
	}
}
