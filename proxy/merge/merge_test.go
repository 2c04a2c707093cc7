package merge

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/router"
)

func TestMergeOrderLimitDistinct(t *testing.T) {
	idName := []*mysql.Field{intCol("id"), strCol("name")}
	tests := []mergeCase{
		{
			name: "no merge spec concatenates",
			cols: idName,
			spec: nil,
			blocks: [][][]*string{
				rowsOf("3|c", "1|a"), rowsOf(), rowsOf("2|b"),
			},
			want: []string{"3|c", "1|a", "2|b"},
		},
		{
			name: "k-way merge ascending, NULLs first",
			cols: idName,
			spec: &router.Merge{Sort: []router.OrderKey{{Column: 0}}},
			blocks: [][][]*string{
				rowsOf(N+"|x", "2|b", "5|e"), rowsOf("1|a", "4|d"), rowsOf(), rowsOf("-7|z", "3|c", "6|f"),
			},
			want:    []string{"NULL|x", "-7|z", "1|a", "2|b", "3|c", "4|d", "5|e", "6|f"},
			ordered: true,
		},
		{
			name: "descending, NULLs last, integers by value not text",
			cols: idName,
			spec: &router.Merge{Sort: []router.OrderKey{{Column: 0, Desc: true}}},
			blocks: [][][]*string{
				rowsOf("100|c", "9|a", N+"|n"), rowsOf("10|b", "-1|m"),
			},
			want:    []string{"100|c", "10|b", "9|a", "-1|m", "NULL|n"},
			ordered: true,
		},
		{
			name: "mixed directions on a string (general_ci) and a hidden key, hidden stripped",
			cols: []*mysql.Field{strCol("name"), intCol("id")},
			spec: &router.Merge{Hidden: 1, Sort: []router.OrderKey{{Column: 0}, {Column: -1, Desc: true}}},
			blocks: [][][]*string{
				rowsOf("abc|9", "B|1"), rowsOf("ABC |5", "b|3", "é|2"), rowsOf("a|4", "Abc|1"),
			},
			// abc, "ABC " and Abc tie under general_ci: by id descending.
			want:    []string{"a", "abc", "ABC ", "Abc", "b", "B", "é"},
			ordered: true,
		},
		{
			name: "LIMIT with OFFSET while streaming",
			cols: idName,
			spec: &router.Merge{Sort: []router.OrderKey{{Column: 0}}, Limit: &router.Limit{Offset: 3, Count: 2}},
			blocks: [][][]*string{
				rowsOf("1|a", "4|d", "7|g"), rowsOf("2|b", "5|e"), rowsOf("3|c", "6|f"),
			},
			want:    []string{"4|d", "5|e"},
			ordered: true,
		},
		{
			name: "LIMIT 0",
			cols: idName,
			spec: &router.Merge{Sort: []router.OrderKey{{Column: 0}}, Limit: &router.Limit{Count: 0}},
			blocks: [][][]*string{
				rowsOf("1|a"), rowsOf("2|b"),
			},
			want: nil,
		},
		{
			name: "LIMIT without ORDER BY stops early",
			cols: idName,
			spec: &router.Merge{Limit: &router.Limit{Offset: 1, Count: 2}},
			blocks: [][][]*string{
				rowsOf("1|a", "2|b"), rowsOf("3|c", "4|d"),
			},
			want:    []string{"2|b", "3|c"},
			ordered: true,
		},
		{
			name: "DISTINCT compares by collation and treats NULLs as equal",
			cols: []*mysql.Field{strCol("name")},
			spec: &router.Merge{Distinct: true},
			blocks: [][][]*string{
				rowsOf("a", "B", N), rowsOf("A", "b ", N, "c"),
			},
			want: []string{"a", "B", "NULL", "c"},
		},
		{
			name: "DISTINCT over routes sorted on it keeps one row per run of equals, empty strings apart from NULLs",
			cols: []*mysql.Field{strCol("name"), intCol("n")},
			spec: &router.Merge{Distinct: true, Sort: []router.OrderKey{{Column: 0}, {Column: 1}}},
			blocks: [][][]*string{
				rowsOf(N+"|1", "|1", "|1", "a|1", "a|2"), rowsOf(N+"|1", "|1", "a|1", "b|"+N), rowsOf("|2", "b|"+N, "c|1"),
			},
			want:    []string{"NULL|1", "|1", "|2", "a|1", "a|2", "b|NULL", "c|1"},
			ordered: true,
		},
		{
			name: "DISTINCT on visible columns only",
			cols: []*mysql.Field{intCol("x"), intCol("hidden")},
			spec: &router.Merge{Hidden: 1, Distinct: true, Sort: []router.OrderKey{{Column: 0}}},
			blocks: [][][]*string{
				rowsOf("1|1", "2|2"), rowsOf("1|3", "2|4", "3|5"),
			},
			want:    []string{"1", "2", "3"},
			ordered: true,
		},
		{
			name: "in-memory ORDER BY with LIMIT keeps the best rows, stable",
			cols: idName,
			spec: &router.Merge{OrderBy: []router.OrderKey{{Column: 1}}, Limit: &router.Limit{Offset: 1, Count: 3}},
			blocks: [][][]*string{
				rowsOf("1|d", "2|b", "3|a"), rowsOf("4|b", "5|c", "6|a"),
			},
			want:    []string{"6|a", "2|b", "4|b"},
			ordered: true,
		},
		{
			name: "in-memory ORDER BY decimals exactly",
			cols: []*mysql.Field{decCol("d", 2)},
			spec: &router.Merge{OrderBy: []router.OrderKey{{Column: 0, Desc: true}}},
			blocks: [][][]*string{
				rowsOf("10.00", "-0.50", "9.99"), rowsOf("100.01", N, "-10.00"),
			},
			want:    []string{"100.01", "10.00", "9.99", "-0.50", "-10.00", "NULL"},
			ordered: true,
		},
	}
	checkMerges(t, tests)
}

// TestMergeLimitReadsOnlyWhatItNeeds checks that a satisfied LIMIT stops
// reading and releases the routes at once.
func TestMergeLimitReadsOnlyWhatItNeeds(t *testing.T) {
	var a, b []string
	for i := range 1000 {
		a = append(a, fmt.Sprintf("%04d", 2*i))
		b = append(b, fmt.Sprintf("%04d", 2*i+1))
	}
	fs := streamsOf([]*mysql.Field{intCol("id")}, rowsOf(a...), rowsOf(b...))
	spec := &router.Merge{Sort: []router.OrderKey{{Column: 0}}, Limit: &router.Limit{Offset: 10, Count: 5}}
	got, err := runMerge(t, &ResultMerger{}, spec, fs, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"0010", "0011", "0012", "0013", "0014"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if reads := fs[0].reads + fs[1].reads; reads > 17 {
		t.Errorf("read %d rows for OFFSET 10 LIMIT 5 of two routes, want at most 17", reads)
	}
}

func TestMergeErrors(t *testing.T) {
	enum := fld("e", mysql.MYSQL_TYPE_STRING, mysql.ENUM_FLAG, 45, 0)
	odd := fld("s", mysql.MYSQL_TYPE_VAR_STRING, 0, 2304, 0) // a uca1400 collation
	// An INET6 column's definition from a data source connection without
	// MariaDB's extended metadata (over TLS), and one with it.
	unnamed := fld("ip", mysql.MYSQL_TYPE_STRING, mysql.UNSIGNED_FLAG|mysql.BINARY_FLAG, 45, 0)
	uuid := fld("u", mysql.MYSQL_TYPE_STRING, mysql.UNSIGNED_FLAG|mysql.BINARY_FLAG, 45, 0)
	uuid.Data = []byte("\x00\x04uuid")
	tests := []struct {
		name     string
		merger   ResultMerger
		cols     []*mysql.Field
		spec     *router.Merge
		blocks   [][][]*string
		budget   int64
		wantCode uint16
		wantText string
	}{
		{
			name:     "scatter cap",
			merger:   ResultMerger{MaxScatterRows: 3},
			cols:     []*mysql.Field{intCol("id")},
			blocks:   [][][]*string{rowsOf("1", "2"), rowsOf("3", "4")},
			wantCode: mysql.ER_TOO_BIG_SELECT,
			wantText: "maxScatterRows",
		},
		{
			name:     "ORDER BY an ENUM",
			cols:     []*mysql.Field{enum},
			spec:     &router.Merge{Sort: []router.OrderKey{{Column: 0}}},
			blocks:   [][][]*string{rowsOf("x"), rowsOf("y")},
			wantCode: mysql.ER_NOT_SUPPORTED_YET,
			wantText: "ENUM",
		},
		{
			name:     "GROUP BY an unknown collation",
			cols:     []*mysql.Field{odd},
			spec:     &router.Merge{Group: &router.Group{Keys: []router.ColumnRef{0}}},
			blocks:   [][][]*string{rowsOf("x"), rowsOf("y")},
			wantCode: mysql.ER_NOT_SUPPORTED_YET,
			wantText: "collation id 2304",
		},
		{
			name:     "ORDER BY a type without its name",
			cols:     []*mysql.Field{unnamed},
			spec:     &router.Merge{Sort: []router.OrderKey{{Column: 0}}},
			blocks:   [][][]*string{rowsOf("::1"), rowsOf("2001:db8::")},
			wantCode: mysql.ER_NOT_SUPPORTED_YET,
			wantText: "no data type name",
		},
		{
			name:     "MIN of a type without its name",
			cols:     []*mysql.Field{unnamed},
			spec:     &router.Merge{Group: &router.Group{Aggregates: []router.Aggregate{{Func: router.AggMin, Column: 0}}}},
			blocks:   [][][]*string{rowsOf("::1"), rowsOf("2001:db8::")},
			wantCode: mysql.ER_NOT_SUPPORTED_YET,
			wantText: "no data type name",
		},
		{
			name: "a UUID in HAVING",
			cols: []*mysql.Field{uuid},
			spec: &router.Merge{
				Group:  &router.Group{Aggregates: []router.Aggregate{{Func: router.AggMax, Column: 0}}},
				Having: &router.Expr{Op: router.ExprGT, Args: []*router.Expr{{Op: router.ExprColumn, Column: 0}, {Op: router.ExprValue, Value: "0"}}},
			},
			blocks:   [][][]*string{rowsOf("00000000-0000-0000-0000-000000000001"), rowsOf("00000000-0000-0000-0000-000000000002")},
			wantCode: mysql.ER_NOT_SUPPORTED_YET,
			wantText: "of type uuid in an expression",
		},
		{
			name:     "routes out of the merge's order",
			cols:     []*mysql.Field{strCol("s")},
			spec:     &router.Merge{Sort: []router.OrderKey{{Column: 0}}},
			blocks:   [][][]*string{rowsOf("b", "a"), rowsOf("c")},
			wantCode: mysql.ER_NOT_SUPPORTED_YET,
			wantText: "compares differently",
		},
		{
			name:     "DISTINCT over budget",
			cols:     []*mysql.Field{intCol("id")},
			spec:     &router.Merge{Distinct: true},
			blocks:   [][][]*string{rowsOf("1", "2", "3", "4", "5", "6"), rowsOf("7", "8", "9")},
			budget:   200,
			wantCode: mysql.ER_OUT_OF_SORTMEMORY,
			wantText: "DISTINCT",
		},
		{
			name:     "hashed GROUP BY over budget",
			cols:     []*mysql.Field{intCol("g"), intCol("c")},
			spec:     &router.Merge{Group: &router.Group{Keys: []router.ColumnRef{0}, Aggregates: []router.Aggregate{{Func: router.AggCount, Column: 1}}}},
			blocks:   [][][]*string{rowsOf("1|1", "2|1", "3|1", "4|1"), rowsOf("5|1", "6|1")},
			budget:   300,
			wantCode: mysql.ER_OUT_OF_SORTMEMORY,
			wantText: "GROUP BY",
		},
		{
			name:     "in-memory ORDER BY over budget",
			cols:     []*mysql.Field{intCol("id")},
			spec:     &router.Merge{OrderBy: []router.OrderKey{{Column: 0}}},
			blocks:   [][][]*string{rowsOf("1", "2", "3", "4"), rowsOf("5", "6")},
			budget:   200,
			wantCode: mysql.ER_OUT_OF_SORTMEMORY,
			wantText: "ORDER BY",
		},
		{
			name:     "a reference past the columns",
			cols:     []*mysql.Field{intCol("id")},
			spec:     &router.Merge{Sort: []router.OrderKey{{Column: 3}}},
			blocks:   [][][]*string{rowsOf("1"), rowsOf("2")},
			wantCode: mysql.ER_UNKNOWN_ERROR,
		},
		{
			name:     "a route's error ends the merge",
			cols:     []*mysql.Field{intCol("id")},
			spec:     &router.Merge{Sort: []router.OrderKey{{Column: 0}}},
			blocks:   [][][]*string{rowsOf("1", "2"), rowsOf("3")},
			wantCode: 1317,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := streamsOf(tt.cols, tt.blocks...)
			if tt.wantCode == 1317 {
				fs[1].err = mysql.NewError(1317, "Query execution was interrupted")
			}
			budget := tt.budget
			if budget == 0 {
				budget = 1 << 20
			}
			_, err := runMerge(t, &tt.merger, tt.spec, fs, budget)
			if got := mysqlCode(err); got != tt.wantCode {
				t.Fatalf("error %v (code %d), want code %d", err, got, tt.wantCode)
			}
			if !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("error %q does not mention %q", err, tt.wantText)
			}
		})
	}
}

// mergeCase is a merge of route results (blocks, one per route, over
// cols) under spec and the rows it must give.
type mergeCase struct {
	name    string
	cols    []*mysql.Field
	spec    *router.Merge
	blocks  [][][]*string
	want    []string
	ordered bool // compare in order; otherwise as a multiset
}

// checkMerges runs each case through the ResultMerger.
func checkMerges(t *testing.T, tests []mergeCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := streamsOf(tt.cols, tt.blocks...)
			got, err := runMerge(t, &ResultMerger{}, tt.spec, fs, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			if !tt.ordered {
				slices.Sort(got)
				want = slices.Clone(want)
				slices.Sort(want)
			}
			if !slices.Equal(got, want) {
				t.Errorf("got  %q\nwant %q", got, want)
			}
		})
	}
}
