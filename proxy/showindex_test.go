package proxy

import (
	"context"
	"slices"
	"strconv"
	"testing"
)

// TestShowIndexCardinality: SHOW INDEX FROM a sharded table reports each
// index column's Cardinality summed over the data nodes, the logical
// table's figure: after ANALYZE TABLE, the primary key's is the number of
// rows, as MariaDB reports it for one table holding the same rows. The
// rows are compared whole with the reference's, as text and prepared.
func TestShowIndexCardinality(t *testing.T) {
	e := diffEnvironment(t)
	ctx := context.Background()
	for _, table := range []string{"t_order", "t_order_item"} {
		t.Run(table, func(t *testing.T) {
			var proxyCount, refCount int
			if err := e.proxy.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table).Scan(&proxyCount); err != nil {
				t.Fatal(err)
			}
			if err := e.ref.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table).Scan(&refCount); err != nil {
				t.Fatal(err)
			}
			if proxyCount != refCount || proxyCount < 20 {
				t.Fatalf("%d rows through the proxy, %d in the reference", proxyCount, refCount)
			}
			// ANALYZE TABLE answers a result set.
			for _, q := range []string{"ANALYZE TABLE " + table} {
				if got := e.run(ctx, e.proxyRaw, e.proxy, q); got.err != nil {
					t.Fatalf("proxy: %s: %v", q, got.err)
				}
				if want := e.run(ctx, e.refRaw, e.ref, q); want.err != nil {
					t.Fatalf("reference: %s: %v", q, want.err)
				}
			}
			q := "SHOW INDEX FROM " + table
			tc := diffCase{sql: q, ordered: true}
			got := e.run(ctx, e.proxyRaw, e.proxy, q)
			want := e.run(ctx, e.refRaw, e.ref, q)
			if d := compareResults(tc, got, want); d != "" {
				t.Errorf("%s\n%s", q, d)
			}
			prepGot, prepWant := e.runPrepared(e.proxyRaw, q), e.runPrepared(e.refRaw, q)
			if d := compareResults(tc, prepGot, prepWant); d != "" {
				t.Errorf("prepared %s\n%s", q, d)
			}
			// The primary key's Cardinality is the row count in both.
			for side, r := range map[string]diffResult{"proxy": got, "reference": want} {
				found := false
				for _, row := range r.rows {
					if len(row) > 6 && row[2] != nil && *row[2] == "PRIMARY" {
						found = true
						if row[6] == nil || *row[6] != strconv.Itoa(refCount) {
							t.Errorf("%s: PRIMARY Cardinality %v, want %d", side, deref(row[6]), refCount)
						}
					}
				}
				if !found {
					t.Errorf("%s: no PRIMARY row in %s", side, q)
				}
			}
		})
	}
	t.Run("unique index of two columns", func(t *testing.T) {
		// Each data node holds a share of the rows, so the sum of a
		// unique index's last column is the row count too; its first
		// column's figure is per data node distinct values, summed
		// (an estimate either way).
		for _, db := range []func(string) error{
			func(q string) error { _, err := e.proxy.ExecContext(ctx, q); return err },
			func(q string) error { _, err := e.ref.ExecContext(ctx, q); return err },
		} {
			for _, q := range []string{"ALTER TABLE t_range ADD UNIQUE KEY uk_grp_id (grp, id)", "ANALYZE TABLE t_range"} {
				if err := db(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			t.Cleanup(func() {
				if err := db("ALTER TABLE t_range DROP KEY uk_grp_id"); err != nil {
					t.Error(err)
				}
			})
		}
		var rows int
		if err := e.ref.QueryRowContext(ctx, "SELECT COUNT(*) FROM t_range").Scan(&rows); err != nil {
			t.Fatal(err)
		}
		// WHERE reads the summed figure.
		where := "SHOW INDEX FROM t_range WHERE Cardinality = " + strconv.Itoa(rows)
		if d := compareResults(diffCase{sql: where, ordered: true}, e.run(ctx, e.proxyRaw, e.proxy, where), e.run(ctx, e.refRaw, e.ref, where)); d != "" {
			t.Errorf("%s\n%s", where, d)
		}
		q := "SHOW INDEX FROM t_range"
		for side, r := range map[string]diffResult{"proxy": e.run(ctx, e.proxyRaw, e.proxy, q), "reference": e.run(ctx, e.refRaw, e.ref, q)} {
			if r.err != nil {
				t.Fatalf("%s: %v", side, r.err)
			}
			var got []string
			for _, row := range r.rows {
				if *row[2] == "PRIMARY" || *row[2] == "uk_grp_id" && *row[3] == "2" {
					got = append(got, *row[2]+" "+*row[3]+" "+deref(row[6]))
				}
			}
			n := strconv.Itoa(rows)
			if want := []string{"PRIMARY 1 " + n, "uk_grp_id 2 " + n}; !slices.Equal(got, want) {
				t.Errorf("%s: %q, want %q", side, got, want)
			}
		}
	})
}

func deref(s *string) string {
	if s == nil {
		return "NULL"
	}
	return *s
}
