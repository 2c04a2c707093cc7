package proxy

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestNormalizedTextQueries runs text queries whose literals the proxy
// turns into placeholders (one plan per statement shape) and compares
// their results, rows and column definitions, with MariaDB's for the same
// text run directly on reference tables: escapes, quotes, LIKE patterns,
// signs, integer bounds, positional ORDER BY, literals in the select list.
func TestNormalizedTextQueries(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	proxied := e.open(t)
	direct := e.backend(t, 0)
	// The reference: the same tables on ds_0, written directly.
	ref := func(q string) string {
		return strings.NewReplacer("t_dict", "ref_dict", "t_plain", "ref_plain").Replace(q)
	}
	for _, q := range []string{
		"DROP TABLE IF EXISTS ref_dict", "DROP TABLE IF EXISTS ref_plain",
		"CREATE TABLE ref_dict LIKE t_dict", "CREATE TABLE ref_plain LIKE t_plain",
	} {
		if _, err := direct.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() { direct.Exec("DROP TABLE IF EXISTS ref_dict, ref_plain") })
	exec := func(q string) {
		t.Helper()
		if _, err := proxied.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if _, err := direct.Exec(ref(q)); err != nil {
			t.Fatalf("%s: %v", ref(q), err)
		}
	}
	for _, q := range []string{
		`INSERT INTO t_dict (code, label) VALUES ('a''b', 'it\'s \\ back\nline \0 \Z \t %_ "q"')`,
		`INSERT INTO t_dict (code, label) VALUES ('pct', '100\% sure'), ('und', 'a\_b'), ('uni', 'héllo wörld ✓')`,
		`INSERT INTO t_dict (code, label) VALUES ('neg', '-5'), ('max', '18446744073709551615')`,
		`INSERT INTO t_plain (id, v) VALUES (1, 'one'), (-2, 'minus two'), (2147483647, 'max int')`,
	} {
		exec(q)
	}
	queries := []string{
		`SELECT label FROM t_dict WHERE code = 'a''b'`,
		`SELECT label FROM t_dict WHERE code = 'a\'b'`,
		`SELECT code FROM t_dict WHERE label LIKE '%\%%' OR label LIKE 'a\_b'`,
		`SELECT code FROM t_dict WHERE label LIKE '%\\%%'`,
		`SELECT code, label FROM t_dict WHERE label = 'héllo wörld ✓'`,
		`SELECT code FROM t_dict WHERE label = '-5' OR label = -5`,
		`SELECT code FROM t_dict WHERE label = 18446744073709551615`,
		`SELECT id, v FROM t_plain WHERE id = -2`,
		`SELECT id, v FROM t_plain WHERE id = - 2 OR id = 2147483647`,
		`SELECT id, v FROM t_plain WHERE id > -9223372036854775808 ORDER BY 1 DESC LIMIT 2`,
		`SELECT id, v FROM t_plain WHERE id BETWEEN -5 AND 5 ORDER BY 2`,
		`SELECT id + 1, 'lit', -3, v FROM t_plain WHERE id = 1`,
		`SELECT COUNT(*), 7 FROM t_plain WHERE v <> 'x' GROUP BY 2 HAVING COUNT(*) > 1`,
		`SELECT id FROM t_plain WHERE v IN ('one', 'max int') ORDER BY id LIMIT 1, 1`,
		`SELECT v FROM t_plain ORDER BY id`,
		`SELECT code, label FROM t_dict ORDER BY code`,
	}
	exec(`UPDATE t_plain SET v = 'it''s\n' WHERE id = 1`)
	for _, q := range queries {
		want, wantTypes := readAll(t, direct, ref(q))
		got, gotTypes := readAll(t, proxied, q)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: through the proxy\n%v\ndirectly\n%v", q, got, want)
		}
		if !reflect.DeepEqual(gotTypes, wantTypes) {
			t.Errorf("%s: columns through the proxy\n%v\ndirectly\n%v", q, gotTypes, wantTypes)
		}
	}
}

// TestNormalizedShapeIsPlannedOnce: point queries that differ only in
// their values share one cached plan, and each still reads its own row
// from the data node its values route to.
func TestNormalizedShapeIsPlannedOnce(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	db := e.open(t)
	const n = 20
	for i := range n {
		q := fmt.Sprintf("INSERT INTO t_order (order_id, user_id, status) VALUES (%d, %d, 's%d')", 100+i, i, i)
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	before := e.srv.current().cache.len()
	for i := range n {
		got := queryStrings(t, db, fmt.Sprintf("SELECT status FROM t_order WHERE user_id = %d AND order_id = %d", i, 100+i))
		if want := []string{fmt.Sprintf("s%d", i)}; !reflect.DeepEqual(got, want) {
			t.Errorf("order %d: got %v, want %v", 100+i, got, want)
		}
	}
	if got := e.srv.current().cache.len() - before; got != 1 {
		t.Errorf("%d point queries of one shape added %d plans, want 1", n, got)
	}
	where := landed(t, e)
	for i := range n {
		id := int64(100 + i)
		if want := fmt.Sprintf("ds_%d.t_order_%d", i%2, id%2); where[id] != want {
			t.Errorf("order %d landed on %s, want %s", id, where[id], want)
		}
	}
}
