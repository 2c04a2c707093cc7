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

// benchRows is the rows the in-process benchmarks merge (as many as the
// proxy's scatter benchmarks read from their tables).
const benchRows = 1_000_000

// sliceStream returns prepared rows without copying: the cost of the
// merge alone.
type sliceStream struct {
	cols []*mysql.Field
	rows []rows.Row
	pos  int
}

func (s *sliceStream) Columns() []*mysql.Field { return s.cols }

func (s *sliceStream) Next() (rows.Row, error) {
	if s.pos >= len(s.rows) {
		return nil, io.EOF
	}
	s.pos++
	return s.rows[s.pos-1], nil
}

func (s *sliceStream) Close() error { return nil }

// benchStreams splits n ordered rows (id BIGINT, note VARCHAR) over k
// streams, each ordered.
func benchStreams(n, k int) [][]rows.Row {
	out := make([][]rows.Row, k)
	for i := range n {
		out[i%k] = append(out[i%k], rows.Row{[]byte(strconv.Itoa(i)), []byte("note-" + strconv.Itoa(i%977))})
	}
	return out
}

// BenchmarkMergeInProcess measures the merge stages on in-memory routes
// (8 routes, 1,000,000 rows): a k-way merge on an integer, on a string
// (utf8mb4_general_ci), a streamed GROUP BY, and one with a column
// computed from its aggregates (MIN(id) * 2 + COUNT(*) / 3, after an
// empty describing route).
func BenchmarkMergeInProcess(b *testing.B) {
	cols := []*mysql.Field{intCol("id"), strCol("note")}
	data := benchStreams(benchRows, 8)
	byNote := make([][]rows.Row, len(data))
	for i, block := range data {
		byNote[i] = slices.Clone(block)
		typ := sqlvalue.TypeOf(cols[1], 0)
		slices.SortStableFunc(byNote[i], func(x, y rows.Row) int { return typ.Compare(x[1], y[1]) })
	}
	// note alone, sorted: sysbench's SELECT DISTINCT c ... ORDER BY c.
	notes := []*mysql.Field{strCol("note")}
	noteOnly := make([][]rows.Row, len(byNote))
	for i, block := range byNote {
		for _, r := range block {
			noteOnly[i] = append(noteOnly[i], rows.Row{r[1]})
		}
	}
	// id, note, the computed column (NULL from the routes), COUNT(*).
	cols4 := []*mysql.Field{intCol("id"), strCol("note"), decCol("computed", 4), intCol("count")}
	described := [][]rows.Row{nil}
	for _, block := range byNote {
		var out []rows.Row
		for _, r := range block {
			out = append(out, rows.Row{r[0], r[1], nil, []byte("1")})
		}
		described = append(described, out)
	}
	computed := &router.Expr{Op: router.ExprPlus, Args: []*router.Expr{
		{Op: router.ExprMul, Args: []*router.Expr{{Op: router.ExprColumn, Column: 0}, {Op: router.ExprValue, Value: int64(2)}}},
		{Op: router.ExprDiv, Args: []*router.Expr{{Op: router.ExprColumn, Column: 3}, {Op: router.ExprValue, Value: int64(3)}}},
	}}
	tests := []struct {
		name string
		cols []*mysql.Field
		data [][]rows.Row
		spec *router.Merge
		want int
	}{
		{"sort-int-offset", cols, data, &router.Merge{Sort: []router.OrderKey{{Column: 0}}, Limit: &router.Limit{Offset: 900000, Count: 10}}, 10},
		{"sort-string", cols, byNote, &router.Merge{Sort: []router.OrderKey{{Column: 1}}}, benchRows},
		{"distinct-sorted-string", notes, noteOnly, &router.Merge{Sort: []router.OrderKey{{Column: 0}}, Distinct: true}, 977},
		{"group-streamed", cols, byNote, &router.Merge{Sort: []router.OrderKey{{Column: 1}}, Group: &router.Group{
			Keys: []router.ColumnRef{1}, Streamed: true, Aggregates: []router.Aggregate{{Func: router.AggMin, Column: 0}}}}, 977},
		{"group-computed", cols4, described, &router.Merge{Sort: []router.OrderKey{{Column: 1}}, Group: &router.Group{
			Keys: []router.ColumnRef{1}, Streamed: true, Aggregates: []router.Aggregate{{Func: router.AggMin, Column: 0}, {Func: router.AggCount, Column: 3}}},
			Compute: []router.Computed{{Column: 2, Expr: computed}}, Describe: true}, 977},
	}
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			b.ReportAllocs()
			m := &ResultMerger{}
			plan := &router.Plan{Kind: router.KindSelect, Merge: tt.spec, Routes: make([]router.Route, len(tt.data))}
			for range b.N {
				streams := make([]rows.Stream, len(tt.data))
				for i, block := range tt.data {
					streams[i] = &sliceStream{cols: tt.cols, rows: block}
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
				if n != tt.want {
					b.Fatalf("got %d rows, want %d", n, tt.want)
				}
			}
			b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
