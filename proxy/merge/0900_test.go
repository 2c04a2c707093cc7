package merge

import (
	"context"
	"errors"
	"io"
	"slices"
	"strconv"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/proxy/internal/sqlvalue"
	"github.com/shardflake/shardflake/proxy/rows"
	"github.com/shardflake/shardflake/router"
)

// col0900 is a string column as MySQL 8 (and the demo's go-mysql-server
// backends) describe one of a utf8mb4 table with the server's default
// collation, utf8mb4_0900_ai_ci (id 255).
func col0900(name string, id uint16) *mysql.Field {
	return fld(name, mysql.MYSQL_TYPE_VAR_STRING, 0, id, 0)
}

// TestMerge0900Collations: GROUP BY, DISTINCT and ORDER BY over MySQL 8's
// utf8mb4_0900 collations merge as the data node compares (they got 1235
// "collation id 255 is not one the merge can compare with").
func TestMerge0900Collations(t *testing.T) {
	ai := col0900("status", 255)
	cs := col0900("status", 278)
	checkMerges(t, []mergeCase{
		{
			name: "GROUP BY status, COUNT(*) under ai_ci",
			cols: []*mysql.Field{ai, intCol("n")},
			spec: &router.Merge{Group: &router.Group{Keys: []router.ColumnRef{0},
				Aggregates: []router.Aggregate{{Func: router.AggCount, Column: 1}}}},
			blocks: [][][]*string{rowsOf("new|2", "Paid|1"), rowsOf("NEW|1", "paid|3", "shipped|1")},
			want:   []string{"new|3", "Paid|4", "shipped|1"},
		},
		{
			name:   "DISTINCT under ai_ci folds case and accents",
			cols:   []*mysql.Field{ai},
			spec:   &router.Merge{Distinct: true},
			blocks: [][][]*string{rowsOf("café", "new"), rowsOf("CAFE", "New", "straße"), rowsOf("STRASSE")},
			want:   []string{"café", "new", "straße"},
		},
		{
			name:    "ORDER BY under ai_ci",
			cols:    []*mysql.Field{ai},
			spec:    &router.Merge{Sort: []router.OrderKey{{Column: 0}}},
			blocks:  [][][]*string{rowsOf("apple", "Éclair", "zebra"), rowsOf("Banana", "eclairs", "Zoo")},
			want:    []string{"apple", "Banana", "Éclair", "eclairs", "zebra", "Zoo"},
			ordered: true,
		},
		{
			name:    "ORDER BY under as_cs puts lower case first",
			cols:    []*mysql.Field{cs},
			spec:    &router.Merge{Sort: []router.OrderKey{{Column: 0}}},
			blocks:  [][][]*string{rowsOf("a", "b"), rowsOf("A", "B")},
			want:    []string{"a", "A", "b", "B"},
			ordered: true,
		},
		{
			name:   "DISTINCT under as_cs keeps case apart",
			cols:   []*mysql.Field{cs},
			spec:   &router.Merge{Distinct: true},
			blocks: [][][]*string{rowsOf("a", "b"), rowsOf("A", "b")},
			want:   []string{"a", "A", "b"},
		},
	})
}

// BenchmarkMergeSortStringCollations measures the k-way ORDER BY merge
// of 1,000,000 string rows over 8 routes under each collation family:
// MariaDB's table-driven ones and MySQL 8's UCA ones (x/text).
func BenchmarkMergeSortStringCollations(b *testing.B) {
	for _, id := range []uint16{sqlvalue.Utf8mb4Bin, sqlvalue.Utf8mb4GeneralCI, sqlvalue.Utf8mb4UnicodeCI, 309, 255, 278} {
		cols := []*mysql.Field{intCol("id"), col0900("note", id)}
		typ := sqlvalue.TypeOf(cols[1], 0)
		data := make([][]rows.Row, 8)
		for i := range benchRows {
			data[i%8] = append(data[i%8], rows.Row{[]byte(strconv.Itoa(i)), []byte("Note-" + strconv.Itoa(i%977) + "-é")})
		}
		for _, block := range data {
			slices.SortStableFunc(block, func(x, y rows.Row) int { return typ.Compare(x[1], y[1]) })
		}
		b.Run(typ.Collation.Name, func(b *testing.B) {
			b.ReportAllocs()
			m := &ResultMerger{}
			plan := &router.Plan{Kind: router.KindSelect, Merge: &router.Merge{Sort: []router.OrderKey{{Column: 1}}}, Routes: make([]router.Route, len(data))}
			for range b.N {
				streams := make([]rows.Stream, len(data))
				for i, block := range data {
					streams[i] = &sliceStream{cols: cols, rows: block}
				}
				rs, err := m.Merge(context.Background(), plan, streams, 64<<20)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for {
					_, err := rs.Next()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				if n != benchRows {
					b.Fatalf("got %d rows", n)
				}
			}
			b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
