package merge

import (
	"context"
	"slices"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/router"
)

// TestMergeComputedColumns merges routes whose computed columns are NULL
// (the describing route, first, gives their definitions and no rows):
// the merge fills them from the merged aggregates, as the describing
// route's types print, computing a column DISTINCT and ORDER BY do not
// read only for the rows the client receives.
func TestMergeComputedColumns(t *testing.T) {
	// g, COUNT(*) + 1, SUM(d) / COUNT(*), -MAX(u), then hidden COUNT(*),
	// SUM(d) and MAX(u); the routes return NULL for the computed ones.
	described := []*mysql.Field{strCol("g"), intCol("count(*) + 1"), decCol("sum(d) / count(*)", 6),
		intCol("-max(u)"), intCol("c"), decCol("s", 2), fld("m", mysql.MYSQL_TYPE_LONGLONG, mysql.UNSIGNED_FLAG, 63, 0)}
	routed := slices.Clone(described)
	for _, i := range []int{1, 2, 3} {
		routed[i] = fld(string(described[i].Name), mysql.MYSQL_TYPE_NULL, 0, 63, 0)
	}
	plus := op(router.ExprPlus, col(-3), lit(int64(1)))
	mean := op(router.ExprDiv, col(-2), col(-3))
	neg := op(router.ExprNeg, col(-1))
	group := func() *router.Group {
		return &router.Group{Keys: []router.ColumnRef{0}, Streamed: true, Aggregates: []router.Aggregate{
			{Func: router.AggCount, Column: -3}, {Func: router.AggSum, Column: -2}, {Func: router.AggMax, Column: -1},
		}}
	}
	compute := []router.Computed{{Column: 1, Expr: plus}, {Column: 2, Expr: mean}, {Column: 3, Expr: neg}}
	blocks := [][][]*string{
		rowsOf("a|"+N+"|"+N+"|"+N+"|2|1.50|7", "b|"+N+"|"+N+"|"+N+"|1|-0.25|18446744073709551615"),
		rowsOf("a|"+N+"|"+N+"|"+N+"|1|0.25|3", "c|"+N+"|"+N+"|"+N+"|4|1.00|0"),
	}
	tests := []struct {
		name    string
		spec    *router.Merge
		want    []string
		wantErr uint16
	}{
		{
			name: "computed from the merged aggregates",
			spec: &router.Merge{Hidden: 3, Sort: []router.OrderKey{{Column: 0}}, Group: group(), Compute: compute, Describe: true,
				Limit: &router.Limit{Count: 1}},
			want: []string{"a|4|0.583333|-7"},
		},
		{
			name:    "a value out of range in a row the client receives",
			spec:    &router.Merge{Hidden: 3, Sort: []router.OrderKey{{Column: 0}}, Group: group(), Compute: compute, Describe: true},
			wantErr: mysql.ER_DATA_OUT_OF_RANGE,
		},
		{
			name: "no error for a row OFFSET skips",
			spec: &router.Merge{Hidden: 3, Sort: []router.OrderKey{{Column: 0}}, Group: group(), Compute: compute, Describe: true,
				Limit: &router.Limit{Offset: 2, Count: 5}},
			want: []string{"c|5|0.250000|0"},
		},
		{
			name: "ordered by a computed column, in memory",
			spec: &router.Merge{Hidden: 3, Group: &router.Group{Keys: []router.ColumnRef{0}, Aggregates: group().Aggregates},
				Compute: compute[:2], Describe: true, OrderBy: []router.OrderKey{{Column: 2, Desc: true}}},
			want: []string{"a|4|0.583333|NULL", "c|5|0.250000|NULL", "b|2|-0.250000|NULL"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := append([]*fakeStream{{cols: described}}, streamsOf(routed, blocks...)...)
			got, err := runMerge(t, &ResultMerger{}, tt.spec, fs, 1<<20)
			if tt.wantErr != 0 {
				if code := mysqlCode(err); code != tt.wantErr {
					t.Fatalf("error %v (code %d), want %d", err, code, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}

	// The client sees the described definitions of computed columns and
	// the routes' of the others.
	fs := append([]*fakeStream{{cols: described}}, streamsOf(routed, blocks...)...)
	spec := &router.Merge{Hidden: 3, Group: group(), Compute: compute, Describe: true}
	plan := &router.Plan{Kind: router.KindSelect, Merge: spec, Routes: make([]router.Route, len(fs))}
	rs, err := (&ResultMerger{}).Merge(context.Background(), plan, asRowStreams(fs), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	cols := rs.Columns()
	if len(cols) != 4 || cols[0] != routed[0] || cols[1] != described[1] || cols[2] != described[2] || cols[3] != described[3] {
		t.Errorf("columns %v, want g from the routes and the computed ones described", cols)
	}
}

// TestMergeComputedRefusals: a computed column whose type the merge would
// have to convert to another kind, and a describing route that is not
// there, fail rather than answer.
func TestMergeComputedRefusals(t *testing.T) {
	cols := []*mysql.Field{fld("d", mysql.MYSQL_TYPE_DATETIME, 0, 63, 0), intCol("c")}
	spec := &router.Merge{Hidden: 1, Group: &router.Group{Aggregates: []router.Aggregate{{Func: router.AggCount, Column: -1}}},
		Compute: []router.Computed{{Column: 0, Expr: op(router.ExprPlus, col(-1), lit(int64(1)))}}, Describe: true}
	_, err := runMerge(t, &ResultMerger{}, spec, streamsOf(cols, rowsOf(), rowsOf("x|1"), rowsOf("y|2")), 1<<20)
	if code := mysqlCode(err); code != mysql.ER_NOT_SUPPORTED_YET {
		t.Errorf("a number into a DATETIME: error %v, want 1235", err)
	}
	// A DATE read into a DATETIME column.
	dates := []*mysql.Field{fld("d", mysql.MYSQL_TYPE_DATETIME, 0, 63, 0), fld("day", mysql.MYSQL_TYPE_DATE, 0, 63, 0)}
	dspec := &router.Merge{Hidden: 1, Group: &router.Group{Aggregates: []router.Aggregate{{Func: router.AggMax, Column: -1}}},
		Compute: []router.Computed{{Column: 0, Expr: op(router.ExprIfNull, col(-1), col(-1))}}, Describe: true}
	_, err = runMerge(t, &ResultMerger{}, dspec, streamsOf(dates, rowsOf(), rowsOf(N+"|2024-01-01")), 1<<20)
	if code := mysqlCode(err); code != mysql.ER_NOT_SUPPORTED_YET {
		t.Errorf("a DATE into a DATETIME: error %v, want 1235", err)
	}
	spec.Compute[0].Column = 5
	if _, err := runMerge(t, &ResultMerger{}, spec, streamsOf(cols, rowsOf(), rowsOf("x|1")), 1<<20); err == nil {
		t.Error("a computed column past the row: no error")
	}
	spec.Compute[0].Column = 0
	if _, err := runMerge(t, &ResultMerger{}, spec, streamsOf(cols, rowsOf()), 1<<20); err == nil {
		t.Error("a describing route alone: no error")
	}
}
