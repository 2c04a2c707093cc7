package proxy

import (
	"database/sql"
	"fmt"
	"slices"
	"testing"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// TestMergePluginTypesLikeMariaDB: ORDER BY (ascending and descending,
// with LIMIT), MIN, MAX, GROUP BY, DISTINCT and COUNT(DISTINCT) merged
// over every data node on MariaDB's INET6, UUID and INET4 columns answer
// as one MariaDB holding all the rows: those types compare by their
// binary form (a UUID of versions 1 to 5 with its segments reversed),
// which their text's order does not follow, and the merge learns the
// type from MariaDB's extended metadata. The values are spread so that
// each data node holds some whose text order and MariaDB's differ.
func TestMergePluginTypesLikeMariaDB(t *testing.T) {
	e := startEnv(t, envOptions{rules: byIDRules("t_plug"), databases: "mplug"})
	db := e.open(t)
	refDatabase(t, e.backends[0], "mplugref")
	ref := e.backends[0].Open(t, "mplugref")

	const create = "CREATE TABLE t_plug (id BIGINT PRIMARY KEY, ip INET6, u UUID, ip4 INET4, g INT)"
	if _, err := db.Exec(create); err != nil {
		t.Fatalf("proxy: %v", err)
	}
	if _, err := ref.Exec(create); err != nil {
		t.Fatalf("reference: %v", err)
	}
	rows := []struct{ ip, u, ip4 string }{
		{"::1", "00000001-0000-1000-8000-000000000000", "9.0.0.1"},
		{"2001:db8::2", "00000000-0001-1000-8000-000000000000", "10.0.0.1"},
		{"::ffff:1.2.3.4", "00000000-0000-1001-8000-000000000000", "100.1.1.1"},
		{"::1.2.3.4", "00000000-0000-1000-8001-000000000000", "2.2.2.2"},
		{"fe80::1", "00000000-0000-1000-8000-000000000001", "255.0.0.0"},
		{"::", "ffffffff-0000-1000-8000-000000000000", "20.0.0.0"},
		{"10::", "10000000-0000-0000-0000-000000000000", "9.0.0.1"},
		{"9::1", "00000000-0000-4000-8000-000000000002", "10.0.0.1"},
		{"::ffff:10.0.0.1", "00000000-0000-7000-8000-000000000000", "3.0.0.0"},
		{"ffff::", "123e4567-e89b-12d3-a456-426614174000", "100.1.1.1"},
		{"::1", "0000000f-0000-1000-8000-000000000000", "1.0.0.0"},
		{"2001:db8::2", "00000001-0000-1000-8000-000000000000", "30.0.0.0"},
		{"::2:0:0:1", "a0000000-0000-1000-8000-000000000000", "9.0.0.1"},
		{"NULL", "NULL", "NULL"},
		{"1::", "00000000-0000-0000-0000-000000000003", "200.0.0.0"},
		{"::ffff:9.0.0.0", "ffffffff-ffff-5fff-bfff-000000000000", "4.0.0.0"},
	}
	quote := func(s string) string {
		if s == "NULL" {
			return s
		}
		return "'" + s + "'"
	}
	for i, r := range rows {
		ins := fmt.Sprintf("INSERT INTO t_plug VALUES (%d, %s, %s, %s, %d)", i+1, quote(r.ip), quote(r.u), quote(r.ip4), i%3)
		if _, err := db.Exec(ins); err != nil {
			t.Fatalf("proxy: %s: %v", ins, err)
		}
		if _, err := ref.Exec(ins); err != nil {
			t.Fatalf("reference: %s: %v", ins, err)
		}
	}
	// Each data node holds rows whose order on their column is not their
	// text's, and so does the reference.
	for _, col := range []string{"ip", "u", "ip4"} {
		q := "SELECT " + col + " FROM t_plug WHERE " + col + " IS NOT NULL ORDER BY " + col
		if got := queryStrings(t, ref, q); slices.IsSorted(got) {
			t.Fatalf("reference: %s gives %q, in text order: the values do not test what they should", q, got)
		}
	}

	for _, q := range []string{
		"SELECT id, ip FROM t_plug ORDER BY ip, id",
		"SELECT id, ip FROM t_plug ORDER BY ip DESC, id",
		"SELECT id, u FROM t_plug ORDER BY u, id",
		"SELECT id, u FROM t_plug ORDER BY u DESC, id DESC",
		"SELECT id, ip4 FROM t_plug ORDER BY ip4, id",
		"SELECT id, ip4 FROM t_plug ORDER BY ip4 DESC, id",
		"SELECT ip, u FROM t_plug ORDER BY u, ip LIMIT 4",
		"SELECT id FROM t_plug ORDER BY ip DESC, id LIMIT 3",
		"SELECT MIN(ip), MAX(ip), MIN(u), MAX(u), MIN(ip4), MAX(ip4) FROM t_plug",
		"SELECT g, MIN(ip), MAX(ip), MIN(u), MAX(u), MIN(ip4), MAX(ip4) FROM t_plug GROUP BY g ORDER BY g",
		"SELECT ip, COUNT(*) FROM t_plug GROUP BY ip",
		"SELECT u, COUNT(*) FROM t_plug GROUP BY u ORDER BY u DESC",
		"SELECT ip4, COUNT(*), MIN(u) FROM t_plug GROUP BY ip4",
		"SELECT DISTINCT ip FROM t_plug ORDER BY ip",
		"SELECT DISTINCT u FROM t_plug ORDER BY u DESC",
		"SELECT DISTINCT ip4 FROM t_plug ORDER BY ip4",
		"SELECT COUNT(DISTINCT ip), COUNT(DISTINCT u), COUNT(DISTINCT ip4) FROM t_plug",
		"SELECT g, GROUP_CONCAT(u ORDER BY u) FROM t_plug GROUP BY g ORDER BY g",
		"SELECT GROUP_CONCAT(DISTINCT ip4 ORDER BY ip4 DESC), GROUP_CONCAT(ip ORDER BY ip) FROM t_plug",
	} {
		want, err := ref.Query(q)
		if err != nil {
			t.Fatalf("reference: %s: %v", q, err)
		}
		w := scanStrings(t, want, q, "|")
		// As text (COM_QUERY) and prepared (COM_STMT_EXECUTE).
		for _, prepared := range []bool{false, true} {
			g, err := proxyStrings(db, q, prepared)
			if err != nil {
				t.Errorf("proxy (prepared %v): %s: %v", prepared, q, err)
				continue
			}
			if !slices.Equal(g, w) {
				t.Errorf("%s (prepared %v)\nproxy:     %q\nreference: %q", q, prepared, g, w)
			}
		}
	}
	// DISTINCT without ORDER BY: the same set of rows.
	for _, q := range []string{"SELECT DISTINCT ip FROM t_plug", "SELECT DISTINCT u, ip4 FROM t_plug"} {
		g, w := queryStrings(t, db, q), queryStrings(t, ref, q)
		slices.Sort(g)
		slices.Sort(w)
		if !slices.Equal(g, w) {
			t.Errorf("%s\nproxy:     %q\nreference: %q", q, g, w)
		}
	}
}

// proxyStrings runs q through db, as text or prepared, and returns its
// rows as scanStrings does, or the error.
func proxyStrings(db *sql.DB, q string, prepared bool) ([]string, error) {
	if !prepared {
		rows, err := db.Query(q)
		if err != nil {
			return nil, err
		}
		return rowStrings(rows, "|")
	}
	stmt, err := db.Prepare(q)
	if err != nil {
		return nil, err
	}
	defer stmt.Close()
	rows, err := stmt.Query()
	if err != nil {
		return nil, err
	}
	return rowStrings(rows, "|")
}

// TestMergePluginTypesOverTLS: a data source connection over TLS asks
// for MariaDB's extended metadata too (in the SSL request, the handshake
// packet that goes out before TLS encrypts the rest), so its column
// definitions say that a column is INET6 or UUID, and ORDER BY, MIN, MAX
// and COUNT(DISTINCT) on such columns across data nodes answer as one
// MariaDB holding all the rows (the server takes only TLS connections:
// --require-secure-transport), read over TLS as well. Old code: the
// connection went without, and the merge refused them (1235, no data
// type name).
func TestMergePluginTypesOverTLS(t *testing.T) {
	b, ca := startTLSOnlyServer(t, "shardflake-plugin-ca", "tlsplug_ref")
	ds := `?sslMode=VERIFY_IDENTITY", tls: { ca: ` + ca.path + ` }`
	e := startOpsEnv(t, opsOptions{backends: []*mariadbtest.Server{b, b}, prefix: "tlsplug", rules: tlsRules(b, "tlsplug", ds, ds)})
	db := e.open(t)
	ref := b.Open(t, "tlsplug_ref")
	const values = `(1, 0, '::1', '00000001-0000-1000-8000-000000000000'), (2, 1, '2001:db8::2', '00000000-0000-1000-8000-000000000001'),
		(3, 0, '::ffff:1.2.3.4', 'ffffffff-0000-1000-8000-000000000000'), (4, 1, 'fe80::1', '10000000-0000-0000-0000-000000000000'),
		(5, 0, '10::', '00000000-0000-1000-8001-000000000000'), (6, 1, '::', '00000000-0001-1000-8000-000000000000'),
		(7, 0, '::2', '00000002-0000-1000-8000-000000000000'), (8, 1, '::fffe:1.2.3.4', '00000000-0000-1000-8000-000000000002')`
	for _, d := range []*sql.DB{db, ref} {
		if _, err := d.Exec("CREATE TABLE t_order (order_id BIGINT NOT NULL PRIMARY KEY, user_id INT NOT NULL, ip INET6, u UUID)"); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Exec("INSERT INTO t_order (order_id, user_id, ip, u) VALUES " + values); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{
		"SELECT ip FROM t_order ORDER BY ip",
		"SELECT u FROM t_order ORDER BY u DESC",
		"SELECT order_id FROM t_order ORDER BY ip DESC LIMIT 3",
		"SELECT MIN(ip), MAX(ip), MIN(u), MAX(u) FROM t_order",
		"SELECT COUNT(DISTINCT ip), COUNT(*) FROM t_order",
	} {
		want, err := proxyStrings(ref, q, false)
		if err != nil {
			t.Fatalf("MariaDB: %s: %v", q, err)
		}
		for _, prepared := range []bool{false, true} {
			got, err := proxyStrings(db, q, prepared)
			if err != nil || !slices.Equal(got, want) {
				t.Errorf("%s over TLS (prepared %v)\nproxy:     %q %v\nreference: %q", q, prepared, got, err, want)
			}
		}
	}
}
