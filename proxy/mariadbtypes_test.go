package proxy

import (
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// typesRules shard t_types by id over both data sources and two tables
// each.
var typesRules = byIDRules("t_types")

// TestMariaDBColumnTypes: CREATE and ALTER TABLE with MariaDB's UUID,
// INET6 and INET4 column types, which the parser does not know (they were
// 1064), make through the proxy the tables one MariaDB makes from the same
// statements, a sharded table's on every data node; rows of those types go
// in and come back as MariaDB answers them, and errors carry its codes.
func TestMariaDBColumnTypes(t *testing.T) {
	e := startEnv(t, envOptions{rules: typesRules, databases: "mdbt"})
	db := e.open(t)
	db.SetMaxOpenConns(1)
	refDatabase(t, e.backends[0], "mdbtref")
	ref := e.backends[0].Open(t, "mdbtref")
	ref.SetMaxOpenConns(1)

	both := func(q string) {
		t.Helper()
		_, got := db.Exec(q)
		_, want := ref.Exec(q)
		if errCode(got) != errCode(want) || (got == nil) != (want == nil) {
			t.Errorf("%s\nproxy:     %v\nreference: %v", q, got, want)
		}
	}
	for _, q := range []string{
		"CREATE TABLE t_types (id BIGINT PRIMARY KEY, u UUID NOT NULL DEFAULT '00000000-0000-0000-0000-000000000001', ip inet6, KEY k_u (u))",
		"ALTER TABLE t_types ADD COLUMN ip4 INET4 AFTER ip, MODIFY ip INET6 NOT NULL COMMENT 'UUID INET4'",
		"CREATE TABLE t_single (id BIGINT PRIMARY KEY, `uuid` Uuid, inet4 INET4 /* a UUID */ NULL)",
		"ALTER TABLE t_single ADD ip6 INET6 FIRST, ADD KEY inet6 (inet4)",
		// Still syntax errors, and MariaDB's own refusals.
		"CREATE TABLE t_len (id INT, u UUID(3), i INET6 (1, 2))",
		"CREATE TABLE t_bad (id INT, u UUID(x))",
		"ALTER TABLE t_single ADD v INET6 PRIMARY KEY AUTO_INCREMENT",
		"ALTER TABLE t_single MODIFY inet4 INET6",
	} {
		both(q)
	}
	// Prepared (COM_STMT_PREPARE), as a driver with server-side prepared
	// statements sends it.
	for name, c := range map[string]*sql.DB{"proxy": db, "reference": ref} {
		ps, err := c.Prepare("CREATE TABLE t_prep (id INT PRIMARY KEY, u UUID, ip INET6)")
		if err != nil {
			t.Fatalf("%s: prepare: %v", name, err)
		}
		if _, err := ps.Exec(); err != nil {
			t.Fatalf("%s: execute: %v", name, err)
		}
		ps.Close()
	}
	for _, table := range []string{"t_types", "t_single", "t_len", "t_prep"} {
		want := createTableText(t, ref, table, table)
		if got := createTableText(t, db, table, table); got != want {
			t.Errorf("SHOW CREATE TABLE %s through the proxy:\n%s\ndirectly:\n%s", table, got, want)
		}
	}
	for i, b := range e.backends {
		direct := b.Open(t, fmt.Sprintf("mdbt_%d", i))
		for _, node := range []string{"t_types_0", "t_types_1"} {
			if got, want := createTableText(t, direct, node, "t_types"), createTableText(t, ref, "t_types", "t_types"); got != want {
				t.Errorf("data node ds_%d.%s:\n%s\nwant:\n%s", i, node, got, want)
			}
		}
	}

	for id := 1; id <= 6; id++ {
		both(fmt.Sprintf("INSERT INTO t_types (id, u, ip, ip4) VALUES (%d, '123e4567-e89b-12d3-a456-42661417400%d', '2001:db8::%d', '10.0.0.%d')", id, id, id, id))
	}
	both("INSERT INTO t_types (id, ip) VALUES (7, '::ffff:192.0.2.1')")
	both("INSERT INTO t_types (id, u, ip) VALUES (8, 'not a uuid', '::1')")
	both("INSERT INTO t_types (id, u, ip, ip4) VALUES (9, '123e4567-e89b-12d3-a456-426614174009', '::1', '300.0.0.1')")
	both("INSERT INTO t_single (id, `uuid`, inet4, ip6) VALUES (1, '00000000-0000-0000-0000-0000000000ff', '192.168.0.1', 'fe80::1')")
	both("UPDATE t_types SET ip4 = '10.9.9.9' WHERE u = '123e4567-e89b-12d3-a456-426614174002'")
	for _, q := range []string{
		"SELECT id, u, ip, ip4 FROM t_types ORDER BY id",
		"SELECT id, HEX(u), ip FROM t_types WHERE ip = '2001:db8::3'",
		"SELECT id FROM t_types WHERE ip4 = '10.9.9.9'",
		"SELECT COUNT(*), COUNT(ip4) FROM t_types",
		"SELECT * FROM t_single",
	} {
		got, err := db.Query(q)
		if err != nil {
			t.Fatalf("proxy: %s: %v", q, err)
		}
		want, err := ref.Query(q)
		if err != nil {
			t.Fatalf("reference: %s: %v", q, err)
		}
		if g, w := scanStrings(t, got, q, "|"), scanStrings(t, want, q, "|"); !slices.Equal(g, w) {
			t.Errorf("%s\nproxy:     %q\nreference: %q", q, g, w)
		}
	}
}

// createTableText returns SHOW CREATE TABLE table's statement, with name
// (a physical table's) written as logical.
func createTableText(t *testing.T, db *sql.DB, name, logical string) string {
	t.Helper()
	var table, create string
	if err := db.QueryRow("SHOW CREATE TABLE "+name).Scan(&table, &create); err != nil {
		t.Fatalf("SHOW CREATE TABLE %s: %v", name, err)
	}
	return strings.Replace(create, "`"+name+"`", "`"+logical+"`", 1)
}
