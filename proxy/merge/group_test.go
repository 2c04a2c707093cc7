package merge

import (
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/router"
)

func TestMergeAggregates(t *testing.T) {
	// COUNT(*), SUM(i), MIN(i), MAX(i), AVG(i) and AVG's hidden SUM and
	// COUNT, as MariaDB types them over an INT column.
	aggCols := []*mysql.Field{
		intCol("count(*)"), decCol("sum(i)", 0), intCol("min(i)"), intCol("max(i)"), decCol("avg(i)", 4),
		decCol("sum(i)", 0), intCol("count(i)"),
	}
	aggs := []router.Aggregate{
		{Func: router.AggCount, Column: 0},
		{Func: router.AggSum, Column: 1},
		{Func: router.AggMin, Column: 2},
		{Func: router.AggMax, Column: 3},
		{Func: router.AggAvg, Column: 4, Sum: -2, Count: -1},
	}
	grouped := []*mysql.Field{strCol("g"), intCol("other"), intCol("count(*)"), decCol("sum(d)", 2)}
	groupAggs := []router.Aggregate{{Func: router.AggCount, Column: 2}, {Func: router.AggSum, Column: 3}}
	tests := []mergeCase{
		{
			name: "aggregates without GROUP BY, one row per route",
			cols: aggCols,
			spec: &router.Merge{Hidden: 2, Group: &router.Group{Aggregates: aggs}},
			blocks: [][][]*string{
				rowsOf("2|5|1|4|2.5000|5|2"),
				rowsOf("0|" + N + "|" + N + "|" + N + "|" + N + "|" + N + "|0"),
				rowsOf("1|-3|-3|-3|-3.0000|-3|1"),
			},
			want: []string{"3|2|-3|4|0.6667"},
		},
		{
			name: "aggregates over no rows at all",
			cols: aggCols,
			spec: &router.Merge{Hidden: 2, Group: &router.Group{Aggregates: aggs}},
			blocks: [][][]*string{
				rowsOf(), rowsOf(),
			},
			want: []string{"0|NULL|NULL|NULL|NULL"},
		},
		{
			name: "MIN of the empty string is not NULL",
			cols: []*mysql.Field{strCol("min(s)")},
			spec: &router.Merge{Group: &router.Group{Aggregates: []router.Aggregate{{Func: router.AggMin, Column: 0}}}},
			blocks: [][][]*string{
				rowsOf("b"), rowsOf(""), rowsOf(N),
			},
			want: []string{""},
		},
		{
			name: "AVG rounds half up at scale 4 from a larger sum",
			cols: []*mysql.Field{decCol("avg(d)", 6), decCol("sum(d)", 2), intCol("count(d)")},
			spec: &router.Merge{Hidden: 2, Group: &router.Group{Aggregates: []router.Aggregate{{Func: router.AggAvg, Column: 0, Sum: 1, Count: 2}}}},
			blocks: [][][]*string{
				rowsOf("0.010000|0.01|1"), rowsOf("0.005000|0.01|2"),
			},
			// 0.02 / 3 = 0.0066666... -> 0.006667
			want: []string{"0.006667"},
		},
		{
			name: "AVG and SUM over DOUBLE",
			cols: []*mysql.Field{dblCol("avg(f)"), dblCol("sum(f)"), dblCol("sum(f)"), intCol("count(f)")},
			spec: &router.Merge{Hidden: 2, Group: &router.Group{Aggregates: []router.Aggregate{
				{Func: router.AggAvg, Column: 0, Sum: 2, Count: 3}, {Func: router.AggSum, Column: 1},
			}}},
			blocks: [][][]*string{
				rowsOf("0.25|0.5|0.5|2"), rowsOf("1e20|1e20|1e20|1"),
			},
			want: []string{"3.333333333333333e19|1e20"},
		},
		{
			name: "streamed GROUP BY, keys by collation, other columns from the first row",
			cols: grouped,
			spec: &router.Merge{
				Sort:  []router.OrderKey{{Column: 0}},
				Group: &router.Group{Keys: []router.ColumnRef{0}, Streamed: true, Aggregates: groupAggs},
			},
			blocks: [][][]*string{
				rowsOf(N+"|1|2|1.00", "a|2|1|0.50", "b|3|2|-1.25"),
				rowsOf("A|4|3|2.00", "c|5|1|"+N),
				rowsOf(N+"|6|1|"+N, "B |7|1|1.25"),
			},
			want:    []string{"NULL|1|3|1.00", "a|2|4|2.50", "b|3|3|0.00", "c|5|1|NULL"},
			ordered: true,
		},
		{
			name: "Streamed without a matching sort falls back to hashing",
			cols: grouped,
			spec: &router.Merge{Group: &router.Group{Keys: []router.ColumnRef{0}, Streamed: true, Aggregates: groupAggs}},
			blocks: [][][]*string{
				rowsOf("b|3|2|-1.25", N+"|1|2|1.00", "a|2|1|0.50"),
				rowsOf("c|5|1|"+N, "A|4|3|2.00"),
				rowsOf("B |7|1|1.25", N+"|6|1|"+N),
			},
			want: []string{"b|3|3|0.00", "NULL|1|3|1.00", "a|2|4|2.50", "c|5|1|NULL"},
		},
		{
			name: "hashed GROUP BY gives the same groups",
			cols: grouped,
			spec: &router.Merge{Group: &router.Group{Keys: []router.ColumnRef{0}, Aggregates: groupAggs}},
			blocks: [][][]*string{
				rowsOf("b|3|2|-1.25", N+"|1|2|1.00", "a|2|1|0.50"),
				rowsOf("c|5|1|"+N, "A|4|3|2.00"),
				rowsOf("B |7|1|1.25", N+"|6|1|"+N),
			},
			want: []string{"b|3|3|0.00", "NULL|1|3|1.00", "a|2|4|2.50", "c|5|1|NULL"},
		},
		{
			name: "hashed GROUP BY, ORDER BY the aggregate DESC, LIMIT after grouping",
			cols: grouped,
			spec: &router.Merge{
				Group:   &router.Group{Keys: []router.ColumnRef{0}, Aggregates: groupAggs},
				OrderBy: []router.OrderKey{{Column: 3, Desc: true}},
				Limit:   &router.Limit{Count: 2},
			},
			blocks: [][][]*string{
				rowsOf("b|3|2|-1.25", N+"|1|2|1.00", "a|2|1|0.50"),
				rowsOf("c|5|1|"+N, "A|4|3|2.00"),
				rowsOf("B |7|1|1.25", N+"|6|1|"+N),
			},
			want:    []string{"a|2|4|2.50", "NULL|1|3|1.00"},
			ordered: true,
		},
		{
			name: "HAVING after grouping with three-valued logic",
			cols: grouped,
			spec: &router.Merge{
				Sort:  []router.OrderKey{{Column: 0}},
				Group: &router.Group{Keys: []router.ColumnRef{0}, Streamed: true, Aggregates: groupAggs},
				// HAVING SUM(d) > 0 OR COUNT(*) = 1: b fails both; c's
				// NULL sum is unknown, but its count of 1 makes it true.
				Having: &router.Expr{Op: router.ExprOr, Args: []*router.Expr{
					{Op: router.ExprGT, Args: []*router.Expr{{Op: router.ExprColumn, Column: 3}, {Op: router.ExprValue, Value: int64(0)}}},
					{Op: router.ExprEQ, Args: []*router.Expr{{Op: router.ExprColumn, Column: 2}, {Op: router.ExprValue, Value: int64(1)}}},
				}},
			},
			blocks: [][][]*string{
				rowsOf(N+"|1|2|1.00", "a|2|1|0.50", "b|3|2|-1.25"),
				rowsOf("A|4|3|2.00", "c|5|1|"+N),
				rowsOf(N+"|6|1|"+N, "B |7|1|1.25"),
			},
			want:    []string{"NULL|1|3|1.00", "a|2|4|2.50", "c|5|1|NULL"},
			ordered: true,
		},
		{
			name: "COUNT(DISTINCT) and SUM(DISTINCT) per group, NULLs ignored",
			// g, COUNT(DISTINCT s), SUM(DISTINCT d), hidden s, hidden d:
			// routes group by g, s, d and return partial values.
			cols: []*mysql.Field{intCol("g"), intCol("count(distinct s)"), decCol("sum(distinct d)", 1), strCol("s"), decCol("d", 1)},
			spec: &router.Merge{
				Hidden: 2,
				Sort:   []router.OrderKey{{Column: 0}},
				Group: &router.Group{Keys: []router.ColumnRef{0}, Streamed: true, Aggregates: []router.Aggregate{
					{Func: router.AggCount, Column: 1, Distinct: true, Args: []router.ColumnRef{-2}},
					{Func: router.AggSum, Column: 2, Distinct: true, Args: []router.ColumnRef{-1}},
				}},
			},
			blocks: [][][]*string{
				rowsOf("1|1|1.5|x|1.5", "1|1|2.0|y|2.0", "2|0|"+N+"|"+N+"|"+N),
				rowsOf("1|1|1.5|X|1.5", "1|1|2.5|z |2.5", "2|1|-1.0|q|-1.0"),
				rowsOf("1|1|1.5|z|1.50", "3|1|0.0|"+N+"|0.0"),
			},
			want:    []string{"1|3|6.0", "2|1|-1.0", "3|0|0.0"},
			ordered: true,
		},
		{
			name: "COUNT(DISTINCT) without GROUP BY over no rows",
			cols: []*mysql.Field{intCol("count(distinct s)"), strCol("s")},
			spec: &router.Merge{Hidden: 1, Group: &router.Group{Aggregates: []router.Aggregate{
				{Func: router.AggCount, Column: 0, Distinct: true, Args: []router.ColumnRef{-1}},
			}}},
			blocks: [][][]*string{rowsOf(), rowsOf()},
			want:   []string{"0"},
		},
		{
			name: "AVG(DISTINCT) of integers",
			cols: []*mysql.Field{decCol("avg(distinct i)", 4), intCol("i")},
			spec: &router.Merge{Hidden: 1, Group: &router.Group{Aggregates: []router.Aggregate{
				{Func: router.AggAvg, Column: 0, Distinct: true, Args: []router.ColumnRef{-1}},
			}}},
			blocks: [][][]*string{rowsOf("1.0000|1", "2.0000|2"), rowsOf("2.0000|2", "2.0000|"+N)},
			want:   []string{"1.5000"},
		},
	}
	checkMerges(t, tests)
}

// TestStreamedGroupingHoldsOneGroup checks that a streamed GROUP BY over
// many groups fits a budget that holds only a few of them.
func TestStreamedGroupingHoldsOneGroup(t *testing.T) {
	var a, b []string
	for i := range 5000 {
		a = append(a, itoaPad(i)+"|1")
		b = append(b, itoaPad(i)+"|2")
	}
	cols := []*mysql.Field{intCol("g"), intCol("count(*)")}
	group := &router.Group{Keys: []router.ColumnRef{0}, Aggregates: []router.Aggregate{{Func: router.AggCount, Column: 1}}}
	streamed := &router.Merge{Sort: []router.OrderKey{{Column: 0}}, Group: &router.Group{Keys: group.Keys, Streamed: true, Aggregates: group.Aggregates}}
	got, err := runMerge(t, &ResultMerger{}, streamed, streamsOf(cols, rowsOf(a...), rowsOf(b...)), 4096)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5000 || got[0] != "0000|3" || got[4999] != "4999|3" {
		t.Errorf("got %d groups, first %q, last %q", len(got), got[0], got[len(got)-1])
	}
	hashed := &router.Merge{Group: group}
	if _, err := runMerge(t, &ResultMerger{}, hashed, streamsOf(cols, rowsOf(a...), rowsOf(b...)), 4096); mysqlCode(err) != mysql.ER_OUT_OF_SORTMEMORY {
		t.Errorf("hashed grouping of 5000 groups in 4096 bytes: got %v, want the memory error", err)
	}
}

func itoaPad(i int) string {
	s := []byte("0000")
	for p := 3; p >= 0; p-- {
		s[p] = byte('0' + i%10)
		i /= 10
	}
	return string(s)
}

// TestMergeJSONArrayAggMaxLen: the routes' arrays join with "," within the
// session's group_concat_max_len (the hidden column); an array that
// MariaDB would cut, or a route's array that it may have cut (within 3
// bytes of the limit), is 1235.
func TestMergeJSONArrayAggMaxLen(t *testing.T) {
	cols := []*mysql.Field{strCol("JSON_ARRAYAGG(x)"), intCol("@@group_concat_max_len")}
	spec := &router.Merge{Hidden: 1, Group: &router.Group{Aggregates: []router.Aggregate{
		{Func: router.AggJSONArrayAgg, Column: 0, Concat: &router.GroupConcat{Separator: ",", MaxLen: -1}},
	}}}
	for _, tt := range []struct {
		name   string
		blocks [][][]*string
		want   string
		code   uint16
	}{
		{name: "no rows", blocks: [][][]*string{rowsOf(N + "|7"), rowsOf()}, want: "NULL"},
		{name: "one route's array", blocks: [][][]*string{rowsOf(N + "|7"), rowsOf(`["a"]|7`)}, want: `["a"]`},
		{name: "as long as the limit", blocks: [][][]*string{rowsOf("[1,1]|7"), rowsOf("[1,1]|7")}, want: "[1,1,1,1]"},
		{name: "longer than the limit", blocks: [][][]*string{rowsOf("[1,1]|6"), rowsOf("[1,1]|6")}, code: 1235},
		{name: "a route's array may have been cut", blocks: [][][]*string{rowsOf("[1234]|7"), rowsOf(N + "|7")}, code: 1235},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := runMerge(t, &ResultMerger{}, spec, streamsOf(cols, tt.blocks...), 1<<20)
			if tt.code != 0 {
				if mysqlCode(err) != tt.code {
					t.Fatalf("got %q, %v; want error %d", got, err, tt.code)
				}
				return
			}
			if err != nil || len(got) != 1 || got[0] != tt.want {
				t.Fatalf("got %q, %v; want %s", got, err, tt.want)
			}
		})
	}
}
