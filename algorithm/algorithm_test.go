package algorithm

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// testStrategy builds a strategy the way the loader does, addressing
// targets like the table logical's data nodes.
func testStrategy(t testing.TB, kind StrategyKind, typ string, props map[string]string, cols []string, logical string, targets []string) *Strategy {
	t.Helper()
	a, err := New(typ, props)
	if err != nil {
		t.Fatalf("New(%s, %v): %v", typ, props, err)
	}
	s := &Strategy{Kind: kind, Columns: cols, AlgorithmName: strings.ToLower(typ), Algorithm: a}
	s.prefix, s.suffixLen = dataNodeInfo(logical, targets)
	return s
}

func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}

func eq(vs ...Value) map[string]ColumnCondition {
	return map[string]ColumnCondition{"k": {Column: "k", Values: vs}}
}

func between(lo, hi Value, loIncl, hiIncl bool) map[string]ColumnCondition {
	return map[string]ColumnCondition{"k": {Column: "k", Range: &Range{Low: lo, High: hi, LowInclusive: loIncl, HighInclusive: hiIncl}}}
}

type routeCase struct {
	name  string
	conds map[string]ColumnCondition
	want  []string // nil with wantErr
	// wantErr is a substring of the *RouteError's message (code 1235).
	wantErr string
}

func runRouteCases(t *testing.T, s *Strategy, available []string, tests []routeCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Route(available, tt.conds)
			if tt.wantErr != "" {
				var re *RouteError
				if !errors.As(err, &re) || !strings.Contains(re.Message, tt.wantErr) {
					t.Fatalf("Route error = %v, want 1235 containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Route: %v", err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Route = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestInlineRoute(t *testing.T) {
	tables := names("t_order_", 4)
	s := testStrategy(t, StrategyStandard, AlgInline, map[string]string{"algorithm-expression": "t_order_${k % 4}"}, []string{"k"}, "t_order", tables)
	runRouteCases(t, s, tables, []routeCase{
		{"one value", eq(int64(6)), []string{"t_order_2"}, ""},
		{"IN keeps available's order", eq(int64(7), int64(4), int64(5)), []string{"t_order_0", "t_order_1", "t_order_3"}, ""},
		{"duplicates collapse", eq(int64(1), int64(5), int64(9)), []string{"t_order_1"}, ""},
		{"numeric string", eq("10"), []string{"t_order_2"}, ""},
		{"NULL matches no row", eq(nil), nil, ""},
		{"NULL among values", eq(nil, int64(3)), []string{"t_order_3"}, ""},
		{"empty IN", map[string]ColumnCondition{"k": {Values: []Value{}}}, nil, ""},
		{"no condition", map[string]ColumnCondition{"other": {Values: []Value{int64(1)}}}, tables, ""},
		{"empty condition", map[string]ColumnCondition{"k": {Column: "k"}}, tables, ""},
		{"range forbidden", between(int64(1), int64(3), true, true), nil, "cannot route a range query: set allow-range-query-with-inline-sharding"},
		{"negative value names no table", eq(int64(-1)), nil, "t_order_${k % 4} evaluates to t_order_-1, which is not among t_order_0,t_order_1,t_order_2,t_order_3"},
		{"value named in error", eq(int64(-6)), nil, "cannot route k = -6"},
		{"uint64 too large", eq(uint64(1) << 63), nil, "value out of BIGINT range"},
		{"unsupported type", eq(struct{}{}), nil, "unsupported value type"},
	})
	allow := testStrategy(t, StrategyStandard, AlgInline, map[string]string{
		"algorithm-expression": "t_order_${k % 4}", "allow-range-query-with-inline-sharding": "true"}, []string{"k"}, "t_order", tables)
	runRouteCases(t, allow, tables, []routeCase{
		{"range allowed: all", between(int64(1), int64(2), true, true), tables, ""},
	})
	// A table strategy consulted for one data source's tables only.
	runRouteCases(t, s, tables[:2], []routeCase{
		{"target on another data source is an error", eq(int64(3)), nil, "evaluates to t_order_3, which is not among t_order_0,t_order_1"},
	})
}

func TestModRoute(t *testing.T) {
	tables := names("t_", 4)
	s := testStrategy(t, StrategyStandard, AlgMod, map[string]string{"sharding-count": "4"}, []string{"k"}, "t", tables)
	runRouteCases(t, s, tables, []routeCase{
		{"value", eq(int64(5)), []string{"t_1"}, ""},
		{"negative mods like BigInteger.mod", eq(int64(-1)), []string{"t_3"}, ""},
		{"string", eq("7"), []string{"t_3"}, ""},
		{"float rounds", eq(float64(5.5)), []string{"t_2"}, ""},
		{"narrow range prunes", between(int64(5), int64(6), true, true), []string{"t_1", "t_2"}, ""},
		{"exclusive bounds", between(int64(4), int64(7), false, false), []string{"t_1", "t_2"}, ""},
		{"fractional bounds", between(float64(4.5), "6.5", true, true), []string{"t_1", "t_2"}, ""},
		{"wraps around", between(int64(3), int64(4), true, true), []string{"t_0", "t_3"}, ""},
		{"range as wide as the count", between(int64(10), int64(13), true, true), tables, ""},
		{"open range", between(int64(10), nil, true, false), tables, ""},
		{"empty range", between(int64(5), int64(5), false, true), nil, ""},
		{"huge range does not overflow", between(int64(-1)<<62, int64(1)<<62, true, true), tables, ""},
	})
	// MOD on a data source that holds only some of the tables (autoTables):
	// the suffix not on it is skipped, not an error.
	runRouteCases(t, s, []string{"t_0", "t_2"}, []routeCase{
		{"suffix on another data source", eq(int64(1)), nil, ""},
		{"suffix here", eq(int64(6)), []string{"t_2"}, ""},
	})
	padded := names("t_0", 10)[:1] // t_00
	padded = append(padded, "t_01", "t_02", "t_03", "t_04", "t_05", "t_06", "t_07", "t_08", "t_09", "t_10", "t_11")
	p := testStrategy(t, StrategyStandard, AlgMod, map[string]string{"sharding-count": "12"}, []string{"k"}, "t", padded)
	runRouteCases(t, p, padded, []routeCase{
		{"suffix padded to the data nodes' width", eq(int64(13)), []string{"t_01"}, ""},
		{"two digits", eq(int64(11)), []string{"t_11"}, ""},
	})
	off := testStrategy(t, StrategyStandard, AlgMod, map[string]string{"sharding-count": "4", "start-offset": "1", "stop-offset": "1"}, []string{"k"}, "t", tables)
	runRouteCases(t, off, tables, []routeCase{
		{"offsets cut the value's text", eq(int64(91239)), []string{"t_3"}, ""}, // 123 % 4
		{"value too short", eq(int64(12)), nil, "shorter than start-offset"},
	})
}

func TestHashModRoute(t *testing.T) {
	tables := names("t_", 6)
	s := testStrategy(t, StrategyStandard, AlgHashMod, map[string]string{"sharding-count": "6"}, []string{"k"}, "t", tables)
	runRouteCases(t, s, tables, []routeCase{
		{"string hash", eq("abc"), []string{"t_0"}, ""},                           // 96354 % 6
		{"MIN_VALUE hash as long", eq("polygenelubricants"), []string{"t_2"}, ""}, // 2147483648 % 6
		{"int", eq(int64(7)), []string{"t_1"}, ""},
		{"negative int", eq(int64(-7)), []string{"t_1"}, ""},
		{"range: all", between(int64(1), int64(2), true, true), tables, ""},
	})
}

func TestRangeAlgorithms(t *testing.T) {
	tables := names("t_", 5)
	b := testStrategy(t, StrategyStandard, AlgBoundaryRange, map[string]string{"sharding-ranges": "40, 10,20,30"}, []string{"k"}, "t", tables)
	runRouteCases(t, b, tables, []routeCase{
		{"below first boundary", eq(int64(-5)), []string{"t_0"}, ""},
		{"just below", eq(int64(9)), []string{"t_0"}, ""},
		{"boundary opens its partition", eq(int64(10)), []string{"t_1"}, ""},
		{"last boundary", eq(int64(40)), []string{"t_4"}, ""},
		{"above all", eq(int64(1) << 60), []string{"t_4"}, ""},
		{"range", between(int64(15), int64(35), true, true), []string{"t_1", "t_2", "t_3"}, ""},
		{"exclusive high at a boundary", between(int64(15), int64(20), true, false), []string{"t_1"}, ""},
		{"inclusive high at a boundary", between(int64(15), int64(20), true, true), []string{"t_1", "t_2"}, ""},
		{"no low bound", between(nil, int64(15), false, true), []string{"t_0", "t_1"}, ""},
		{"no high bound", between(int64(35), nil, true, false), []string{"t_3", "t_4"}, ""},
		{"empty", between(int64(20), int64(10), true, true), nil, ""},
	})
	vtables := names("t_", 6)
	v := testStrategy(t, StrategyStandard, AlgVolumeRange, map[string]string{"range-lower": "10", "range-upper": "45", "sharding-volume": "10"}, []string{"k"}, "t", vtables)
	runRouteCases(t, v, vtables, []routeCase{
		{"below lower", eq(int64(9)), []string{"t_0"}, ""},
		{"lower", eq(int64(10)), []string{"t_1"}, ""},
		{"volume step", eq(int64(29)), []string{"t_2"}, ""},
		{"short last volume", eq(int64(44)), []string{"t_4"}, ""},
		{"upper", eq(int64(45)), []string{"t_5"}, ""},
		{"range", between(int64(25), int64(41), true, true), []string{"t_2", "t_3", "t_4"}, ""},
	})
	if n := v.Algorithm.(Auto).AutoTablesAmount(); n != 6 {
		t.Errorf("VOLUME_RANGE 10..45 by 10: %d partitions, want 6", n)
	}
}

func TestIntervalRoute(t *testing.T) {
	months := names("t_log_2024", 0)
	for m := 1; m <= 12; m++ {
		months = append(months, fmt.Sprintf("t_log_2024%02d", m))
	}
	s := testStrategy(t, StrategyStandard, AlgInterval, map[string]string{
		"datetime-pattern": "yyyy-MM-dd HH:mm:ss", "datetime-lower": "2024-01-01 00:00:00",
		"datetime-upper": "2024-12-31 23:59:59", "sharding-suffix-pattern": "yyyyMM",
		"datetime-interval-unit": "MONTHS"}, []string{"k"}, "t_log", months)
	runRouteCases(t, s, months, []routeCase{
		{"value", eq("2024-03-05 10:00:00"), []string{"t_log_202403"}, ""},
		{"first instant", eq("2024-01-01 00:00:00"), []string{"t_log_202401"}, ""},
		{"last instant", eq("2024-12-31 23:59:59"), []string{"t_log_202412"}, ""},
		{"fraction cut off", eq("2024-03-31 23:59:59.999"), []string{"t_log_202403"}, ""},
		{"date only", eq("2024-07-01"), []string{"t_log_202407"}, ""},
		{"before lower: no table", eq("2023-12-31 23:59:59"), nil, ""},
		{"after the last window: no table", eq("2025-01-01 00:00:00"), nil, ""},
		{"range", between("2024-02-15 00:00:00", "2024-04-01 00:00:00", true, true), []string{"t_log_202402", "t_log_202403", "t_log_202404"}, ""},
		{"range, exclusive high at a window start", between("2024-02-15 00:00:00", "2024-04-01 00:00:00", true, false), []string{"t_log_202402", "t_log_202403"}, ""},
		{"open low", between(nil, "2024-01-20", false, true), []string{"t_log_202401"}, ""},
		{"open high", between("2024-11-02", nil, true, false), []string{"t_log_202411", "t_log_202412"}, ""},
		{"not a date", eq("yesterday"), nil, `does not match pattern "yyyy-MM-dd HH:mm:ss"`},
		{"integer value", eq(int64(20240101)), nil, "a date-time string"},
	})
	days := []string{"t_20240301", "t_20240302", "t_20240303"}
	d := testStrategy(t, StrategyStandard, AlgInterval, map[string]string{
		"datetime-pattern": "yyyy-MM-dd", "datetime-lower": "2024-03-01", "datetime-upper": "2024-03-03",
		"sharding-suffix-pattern": "yyyyMMdd", "datetime-interval-amount": "1"}, []string{"k"}, "t", days)
	runRouteCases(t, d, days, []routeCase{
		{"day, default unit DAYS", eq("2024-03-02"), []string{"t_20240302"}, ""},
		{"datetime cut to the pattern", eq("2024-03-03 18:00:00"), []string{"t_20240303"}, ""},
	})
}

func TestAutoIntervalRoute(t *testing.T) {
	tables := names("t_", 6)
	s := testStrategy(t, StrategyStandard, AlgAutoInterval, map[string]string{
		"datetime-lower": "2024-01-01 00:00:00", "datetime-upper": "2024-01-01 00:00:40", "sharding-seconds": "10"}, []string{"k"}, "t", tables)
	runRouteCases(t, s, tables, []routeCase{
		{"before lower", eq("2023-06-01 00:00:00"), []string{"t_0"}, ""},
		{"lower", eq("2024-01-01 00:00:00"), []string{"t_0"}, ""},
		{"a second later", eq("2024-01-01 00:00:01"), []string{"t_1"}, ""},
		{"end of the first interval", eq("2024-01-01 00:00:10"), []string{"t_1"}, ""},
		{"next interval", eq("2024-01-01 00:00:11"), []string{"t_2"}, ""},
		{"upper", eq("2024-01-01 00:00:40"), []string{"t_4"}, ""},
		{"far later: last", eq("2030-01-01 00:00:00"), []string{"t_5"}, ""},
		{"range", between("2024-01-01 00:00:05", "2024-01-01 00:00:25", true, true), []string{"t_1", "t_2", "t_3"}, ""},
		{"date only", eq("2024-01-01"), []string{"t_0"}, ""},
		{"bad value", eq("soon"), nil, "does not match pattern"},
	})
}

func TestComplexRoute(t *testing.T) {
	dss := names("ds_", 2)
	s := testStrategy(t, StrategyComplex, AlgComplexInline, map[string]string{
		"algorithm-expression": "ds_${(user_id + shop_id) % 2}", "sharding-columns": "user_id,shop_id"}, []string{"user_id", "shop_id"}, "", dss)
	both := func(u, sh []Value) map[string]ColumnCondition {
		return map[string]ColumnCondition{"user_id": {Values: u}, "shop_id": {Values: sh}}
	}
	runRouteCases(t, s, dss, []routeCase{
		{"both columns", both([]Value{int64(1)}, []Value{int64(2)}), []string{"ds_1"}, ""},
		{"Cartesian product", both([]Value{int64(1), int64(2)}, []Value{int64(2)}), dss, ""},
		{"product, one target", both([]Value{int64(1), int64(3)}, []Value{int64(1), int64(3)}), []string{"ds_0"}, ""},
		{"NULL skips its combinations", both([]Value{nil, int64(1)}, []Value{int64(1)}), []string{"ds_0"}, ""},
		{"empty IN", both([]Value{}, []Value{int64(1)}), nil, ""},
		{"one column missing: all", map[string]ColumnCondition{"user_id": {Values: []Value{int64(1)}}}, dss, ""},
		{"range forbidden", map[string]ColumnCondition{"user_id": {Values: []Value{int64(1)}}, "shop_id": {Range: &Range{Low: int64(1)}}}, nil, "cannot route a range query"},
	})
	if _, err := s.RouteHint(dss, []Value{int64(1)}); err == nil {
		t.Errorf("RouteHint on a complex strategy: no error")
	}
}

func TestRouteHint(t *testing.T) {
	tables := names("t_", 4)
	h := testStrategy(t, StrategyHint, AlgHintInline, map[string]string{}, nil, "t", tables)
	for _, tt := range []struct {
		name    string
		values  []Value
		want    []string
		wantErr string
	}{
		{"default ${value}", []Value{"t_2"}, []string{"t_2"}, ""},
		{"several", []Value{"t_3", "t_0"}, []string{"t_0", "t_3"}, ""},
		{"no values: all", nil, tables, ""},
		{"unknown target", []Value{"t_9"}, nil, "evaluates to t_9"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := h.RouteHint(tables, tt.values)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("RouteHint error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("RouteHint = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	if got, err := h.Route(tables, eq(int64(1))); err != nil || !slices.Equal(got, tables) {
		t.Errorf("Route on a hint strategy = %q, %v; want all", got, err)
	}
	expr := testStrategy(t, StrategyHint, AlgHintInline, map[string]string{"algorithm-expression": "t_${value % 4}"}, nil, "t", tables)
	if got, err := expr.RouteHint(tables, []Value{int64(7)}); err != nil || !slices.Equal(got, []string{"t_3"}) {
		t.Errorf("RouteHint t_${value %% 4} with 7 = %q, %v", got, err)
	}
	std := testStrategy(t, StrategyStandard, AlgMod, map[string]string{"sharding-count": "4"}, []string{"k"}, "t", tables)
	if got, err := std.RouteHint(tables, []Value{int64(6)}); err != nil || !slices.Equal(got, []string{"t_2"}) {
		t.Errorf("RouteHint on a standard strategy = %q, %v; want [t_2]", got, err)
	}
	var none *Strategy
	if got, err := none.RouteHint(tables, []Value{int64(6)}); err != nil || !slices.Equal(got, tables) {
		t.Errorf("RouteHint on no strategy = %q, %v; want all", got, err)
	}
	if got, err := none.Route(tables, eq(int64(6))); err != nil || !slices.Equal(got, tables) {
		t.Errorf("Route on no strategy = %q, %v; want all", got, err)
	}
}

func TestRouteManyTargets(t *testing.T) {
	tables := names("t_", 300) // beyond the on-stack bit set
	s := testStrategy(t, StrategyStandard, AlgMod, map[string]string{"sharding-count": "300"}, []string{"k"}, "t", tables)
	got, err := s.Route(tables, eq(int64(299), int64(5), int64(600+257)))
	if want := []string{"t_5", "t_257", "t_299"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("Route over 300 tables = %q, %v; want %q", got, err, want)
	}
}

func TestRouteResultSharesAvailable(t *testing.T) {
	tables := names("t_", 4)
	s := testStrategy(t, StrategyStandard, AlgMod, map[string]string{"sharding-count": "4"}, []string{"k"}, "t", tables)
	got, _ := s.Route(tables, eq(int64(1), int64(2)))
	if &got[0] != &tables[1] || cap(got) != 2 {
		t.Errorf("a contiguous result should be a capped sub-slice of available")
	}
	got = append(got, "x") // must not overwrite available
	if tables[3] != "t_3" {
		t.Errorf("appending to a result changed available: %q", tables)
	}
}

func TestAlgorithmPropErrors(t *testing.T) {
	tests := []struct {
		typ      string
		props    map[string]string
		wantProp string
		want     string
	}{
		{AlgInline, map[string]string{}, "algorithm-expression", "required"},
		{AlgInline, map[string]string{"algorithm-expression": "t_${x.foo()}"}, "algorithm-expression", "method .foo()"},
		{AlgInline, map[string]string{"algorithm-expression": "t_${x}", "sharding-count": "2"}, "sharding-count", "unknown prop"},
		{AlgInline, map[string]string{"algorithm-expression": "t_${x}", "allow-range-query-with-inline-sharding": "yes"}, "allow-range-query-with-inline-sharding", "want true or false"},
		{AlgHintInline, map[string]string{"algorithm-expression": "t_${x}"}, "algorithm-expression", "can only read ${value}"},
		{AlgMod, map[string]string{}, "sharding-count", "required"},
		{AlgMod, map[string]string{"sharding-count": "0"}, "sharding-count", "positive"},
		{AlgMod, map[string]string{"sharding-count": "four"}, "sharding-count", "want an integer"},
		{AlgHashMod, map[string]string{"sharding-count": "4", "zero-padding": "true"}, "zero-padding", "unknown prop"},
		{AlgBoundaryRange, map[string]string{"sharding-ranges": "1,x"}, "sharding-ranges", `"x" is not an integer`},
		{AlgBoundaryRange, map[string]string{"sharding-ranges": "1,1"}, "sharding-ranges", "appears twice"},
		{AlgVolumeRange, map[string]string{"range-lower": "0", "range-upper": "5", "sharding-volume": "10"}, "range-upper", "at least sharding-volume"},
		{AlgVolumeRange, map[string]string{"range-lower": "0", "sharding-volume": "10"}, "range-upper", "required"},
		{AlgInterval, map[string]string{"datetime-pattern": "yyyy-MM-dd", "datetime-lower": "2024-01-01", "sharding-suffix-pattern": "yyyyMM"}, "datetime-upper", "no clock"},
		{AlgInterval, map[string]string{"datetime-pattern": "yyyy-MM-dd", "datetime-lower": "01/01/2024", "datetime-upper": "2024-02-01", "sharding-suffix-pattern": "yyyyMM"}, "datetime-lower", "does not match"},
		{AlgInterval, map[string]string{"datetime-pattern": "yyyy-MM-dd EEE", "datetime-lower": "x"}, "datetime-pattern", "pattern letter E"},
		{AlgInterval, map[string]string{"datetime-pattern": "yyyy-MM-dd", "datetime-lower": "2024-01-01", "datetime-upper": "2024-02-01", "sharding-suffix-pattern": "yyyyMM", "datetime-interval-unit": "FORTNIGHTS"}, "datetime-interval-unit", "not a supported unit"},
		{AlgInterval, map[string]string{"datetime-pattern": "yyyy-MM-dd", "datetime-lower": "2000-01-01", "datetime-upper": "2024-02-01", "sharding-suffix-pattern": "yyyyMMddHH", "datetime-interval-unit": "HOURS"}, "datetime-interval-unit", "more than 65536 windows"},
		{AlgAutoInterval, map[string]string{"datetime-lower": "2024-01-01", "datetime-upper": "2024-01-02 00:00:00", "sharding-seconds": "60"}, "datetime-lower", "required"},
		{AlgAutoInterval, map[string]string{"datetime-lower": "2024-01-01 00:00:00", "datetime-upper": "2024-01-02 00:00:00"}, "sharding-seconds", "required"},
	}
	for _, tt := range tests {
		t.Run(tt.typ+" "+tt.wantProp+" "+tt.want, func(t *testing.T) {
			_, err := New(tt.typ, tt.props)
			var pe *PropError
			if !errors.As(err, &pe) || pe.Prop != tt.wantProp || !strings.Contains(pe.Reason, tt.want) {
				t.Fatalf("newAlgorithm error = %v, want prop %s: %q", err, tt.wantProp, tt.want)
			}
		})
	}
	for _, typ := range []string{"CLASS_BASED", "FOO"} {
		if _, err := New(typ, nil); err == nil {
			t.Errorf("New(%s): no error", typ)
		}
	}
}

func TestJavaLayout(t *testing.T) {
	tests := []struct{ give, want string }{
		{"yyyy-MM-dd HH:mm:ss", "2006-01-02 15:04:05"},
		{"yyyyMM", "200601"},
		{"yyMMdd", "060102"},
		{"yyyy-MM-dd'T'HH:mm:ss.SSS", "2006-01-02T15:04:05.000"},
		{"d/M/yyyy h:mm a", "2/1/2006 3:04 PM"},
		{"uuuu_MMM", "2006_Jan"},
	}
	for _, tt := range tests {
		if got, err := javaLayout(tt.give); err != nil || got != tt.want {
			t.Errorf("javaLayout(%q) = %q, %v; want %q", tt.give, got, err, tt.want)
		}
	}
	for _, bad := range []string{"yyyy-MM-dd z", "yyyySSS", "yyyy'2'", "yyyy'MST'", "'open"} {
		if got, err := javaLayout(bad); err == nil {
			t.Errorf("javaLayout(%q) = %q, want an error", bad, got)
		}
	}
}

// BenchmarkStrategyRoute is the router's per-statement work for one
// sharding condition: t_order_${order_id % 4} over four tables.
func BenchmarkStrategyRoute(b *testing.B) {
	tables := names("t_order_", 4)
	bench := func(name string, s *Strategy, conds map[string]ColumnCondition) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Route(tables, conds); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	inline := testStrategy(b, StrategyStandard, AlgInline, map[string]string{"algorithm-expression": "t_order_${order_id % 4}"}, []string{"order_id"}, "t_order", tables)
	mod := testStrategy(b, StrategyStandard, AlgMod, map[string]string{"sharding-count": "4"}, []string{"order_id"}, "t_order", tables)
	hash := testStrategy(b, StrategyStandard, AlgInline, map[string]string{"algorithm-expression": "t_order_${Math.abs(order_id.hashCode()) % 4}"}, []string{"order_id"}, "t_order", tables)
	one := map[string]ColumnCondition{"order_id": {Column: "order_id", Values: []Value{int64(1234567)}}}
	in := map[string]ColumnCondition{"order_id": {Column: "order_id", Values: []Value{int64(1), int64(3), int64(8), int64(13), int64(22)}}}
	rng := map[string]ColumnCondition{"order_id": {Column: "order_id", Range: &Range{Low: int64(10), High: int64(11), LowInclusive: true, HighInclusive: true}}}
	bench("inline/eq", inline, one)
	bench("inline/in5", inline, in)
	bench("inline-hash/eq", hash, map[string]ColumnCondition{"order_id": {Values: []Value{"A-1234567"}}})
	bench("mod/eq", mod, one)
	bench("mod/in5", mod, in)
	bench("mod/range", mod, rng)
}

// TestRouteAllocs: routing a value through the Algorithm interface keeps
// the target set on the stack (the methods take it by value), as the type
// switches did.
func TestRouteAllocs(t *testing.T) {
	tables := names("t_order_", 4)
	one := eq(int64(1234567))
	for _, tt := range []struct {
		typ   string
		props map[string]string
	}{
		{AlgInline, map[string]string{"algorithm-expression": "t_order_${k % 4}"}},
		{AlgMod, map[string]string{"sharding-count": "4"}},
	} {
		s := testStrategy(t, StrategyStandard, tt.typ, tt.props, []string{"k"}, "t_order", tables)
		if n := testing.AllocsPerRun(100, func() {
			if _, err := s.Route(tables, one); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%s: %v allocations per Route, want 0", tt.typ, n)
		}
	}
}
