package algorithm

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestExpandList(t *testing.T) {
	tests := []struct {
		give string
		want []string
	}{
		{"ds_${0..1}.t_order_${0..3}", []string{
			"ds_0.t_order_0", "ds_0.t_order_1", "ds_0.t_order_2", "ds_0.t_order_3",
			"ds_1.t_order_0", "ds_1.t_order_1", "ds_1.t_order_2", "ds_1.t_order_3"}},
		{"ds_$->{0..1}.t_$->{['a','b']}", []string{"ds_0.t_a", "ds_0.t_b", "ds_1.t_a", "ds_1.t_b"}},
		{"t_${3..1}", []string{"t_3", "t_2", "t_1"}},
		{"t_${0..<3}", []string{"t_0", "t_1", "t_2"}},
		{"t_${[1, 5, 'x']}", []string{"t_1", "t_5", "t_x"}},
		{"t_${1+1..2*2}", []string{"t_2", "t_3", "t_4"}},
		{"ds_0.t_a, ds_1.t_${0..1} ,ds_2.t_c", []string{"ds_0.t_a", "ds_1.t_0", "ds_1.t_1", "ds_2.t_c"}},
		{"ds_0.t_log_2024${['01','02']}", []string{"ds_0.t_log_202401", "ds_0.t_log_202402"}},
		{"<GROOVY>ds_${0..1}.t", []string{"ds_0.t", "ds_1.t"}},
		{"<LITERAL>ds_0.t_${x},ds_1.t", []string{"ds_0.t_${x}", "ds_1.t"}},
		{"plain", []string{"plain"}},
		{"t_${-1..1}", []string{"t_-1", "t_0", "t_1"}},
		{`t_\${0}`, []string{"t_${0}"}},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			got, err := ExpandList(tt.give)
			if err != nil {
				t.Fatalf("ExpandList(%q): %v", tt.give, err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("ExpandList(%q) = %q, want %q", tt.give, got, tt.want)
			}
		})
	}
}

func TestExpandListErrors(t *testing.T) {
	tests := []struct {
		give string
		want string // substring of the error
	}{
		{"t_${user_id}", "column user_id cannot be used in a list of data nodes"},
		{"t_${0..99999999}", "more than 65536"},
		{"ds_${0..255}.t_${0..255}_${0..3}", "expands to more than 65536 names"},
		{"t_${0..", "missing }"},
		{"t_${}", "empty ${}"},
		{"a,,b", "empty item between commas"},
		{"t_${'a'..'c'}", "range bounds must be integers"},
		{"t_${[]}", "empty list"},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			_, err := ExpandList(tt.give)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ExpandList(%q) error = %v, want it to contain %q", tt.give, err, tt.want)
			}
		})
	}
}

// evalString compiles src as an algorithm expression and evaluates it with
// the given column values, in the template's var order.
func evalString(t *testing.T, src string, vals map[string]Value) (string, error) {
	t.Helper()
	tm, err := compileTemplate(src, exprScalar)
	if err != nil {
		t.Fatalf("compileTemplate(%q): %v", src, err)
	}
	vars := make([]val, len(tm.vars))
	for i, name := range tm.vars {
		v, ok := vals[name]
		if !ok {
			t.Fatalf("%q reads %s, not given", src, name)
		}
		if vars[i], err = valOf(v); err != nil {
			return "", err
		}
	}
	out, err := tm.appendEval(nil, vars)
	return string(out), err
}

func TestTemplateEval(t *testing.T) {
	tests := []struct {
		give string
		vals map[string]Value
		want string
	}{
		{"t_order_${order_id % 4}", map[string]Value{"order_id": int64(10)}, "t_order_2"},
		{"t_order_$->{order_id % 4}", map[string]Value{"order_id": int64(11)}, "t_order_3"},
		{"ds_${user_id % 2}.x", map[string]Value{"user_id": int64(7)}, "ds_1.x"},
		{"${1 + 2 * 3}", nil, "7"},
		{"${(1 + 2) * 3}", nil, "9"},
		{"${10 - 4 - 3}", nil, "3"},
		{"${17 % 5 * 2}", nil, "4"},
		{"${-3 + 10}", nil, "7"},
		{"${- (2 + 3)}", nil, "-5"},
		{"${12 / 4}", nil, "3"},
		{"${x.intdiv(1000) % 4}", map[string]Value{"x": int64(7777)}, "3"},
		{"${x.intdiv(2 + 1)}", map[string]Value{"x": int64(10)}, "3"},
		{"${Math.abs(x)}", map[string]Value{"x": int64(-42)}, "42"},
		{"${x.abs()}", map[string]Value{"x": int64(-42)}, "42"},
		{"${X % 3}", map[string]Value{"x": int64(5)}, "2"}, // columns are case-insensitive
		{"${-7 % 4}", nil, "-3"},                           // Java/Groovy remainder keeps the sign
		{"${'hello'.hashCode()}", nil, "99162322"},
		{"${'abc'.hashCode()}", nil, "96354"},
		{"${''.hashCode()}", nil, "0"},
		{"${'polygenelubricants'.hashCode()}", nil, "-2147483648"},
		{"${name.hashCode()}", map[string]Value{"name": "é"}, "233"},
		{"${name.hashCode()}", map[string]Value{"name": "😀"}, "1772899"}, // surrogate pair D83D DE00
		{"${name.hashCode()}", map[string]Value{"name": []byte("abc")}, "96354"},
		{"${Math.abs(name.hashCode()) % 8}", map[string]Value{"name": "polygenelubricants"}, "0"},
		{"${Math.abs(name.hashCode()) % 3}", map[string]Value{"name": "polygenelubricants"}, "-2"}, // Java: abs(MIN_VALUE) < 0
		{"${Math.abs(x - 2147483648)}", map[string]Value{"x": int64(0)}, "2147483648"},             // a long, not an int
		{"${x.hashCode()}", map[string]Value{"x": int64(-1)}, "-1"},                                // Integer.hashCode
		{"${x.hashCode()}", map[string]Value{"x": int64(1) << 32}, "1"},                            // Long.hashCode
		{"${x.hashCode()}", map[string]Value{"x": int64(-1) << 40}, "-256"},                        // (int)(v ^ v>>>32)
		{"${x.hashCode()}", map[string]Value{"x": int64(math.MaxInt32) + 1}, "-2147483648"},
		{"${x % 4}", map[string]Value{"x": "42"}, "2"},     // numeric string, as MySQL compares with BIGINT
		{"${x % 4}", map[string]Value{"x": " 42abc"}, "2"}, // leading numeric prefix
		{"${x % 4}", map[string]Value{"x": "abc"}, "0"},    // no number: 0
		{"${x % 4}", map[string]Value{"x": "4.5"}, "1"},    // rounds half away from zero: 5
		{"${x % 4}", map[string]Value{"x": "1e1"}, "2"},    // 10
		{"${x % 4}", map[string]Value{"x": float64(6.4)}, "2"},
		{"${x % 4}", map[string]Value{"x": uint64(7)}, "3"},
		{"${x % 4}", map[string]Value{"x": int(9)}, "1"},
		{"t_${x}", map[string]Value{"x": "eu"}, "t_eu"},
		{"t_${x}", map[string]Value{"x": nil}, "t_null"},
		{"t_${'a' + x}", map[string]Value{"x": int64(1)}, "t_a1"}, // + with a string literal concatenates
		{"t_${x + 1}", map[string]Value{"x": "41"}, "t_42"},       // a column's string is a number in arithmetic
		{"${a * 2 + b}", map[string]Value{"a": int64(3), "b": int64(1)}, "7"},
		{"${9223372036854775807 + 1}", nil, "-9223372036854775808"}, // Java long arithmetic wraps
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			got, err := evalString(t, tt.give, tt.vals)
			if err != nil {
				t.Fatalf("eval %q: %v", tt.give, err)
			}
			if got != tt.want {
				t.Errorf("eval %q = %q, want %q", tt.give, got, tt.want)
			}
		})
	}
}

func TestTemplateEvalErrors(t *testing.T) {
	tests := []struct {
		give string
		vals map[string]Value
		want error
	}{
		{"${7 / 2}", nil, errNotInteger},
		{"${x / 0}", map[string]Value{"x": int64(1)}, errDivByZero},
		{"${x % 0}", map[string]Value{"x": int64(1)}, errDivByZero},
		{"${x.intdiv(0)}", map[string]Value{"x": int64(1)}, errDivByZero},
		{"${x % 4}", map[string]Value{"x": nil}, errNullValue},
		{"${'a' * 2}", nil, errTextInArith},
		{"${x % 4}", map[string]Value{"x": "99999999999999999999"}, errOutOfRange},
		{"${x % 4}", map[string]Value{"x": uint64(math.MaxUint64)}, errOutOfRange},
		{"${x % 4}", map[string]Value{"x": math.Inf(1)}, errOutOfRange},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			_, err := evalString(t, tt.give, tt.vals)
			if !errors.Is(err, tt.want) {
				t.Fatalf("eval %q error = %v, want %v", tt.give, err, tt.want)
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		give       string
		wantReason string
		wantOffset int
	}{
		{"t_${order_id.toString()}", "method .toString() is not in shardflake's expression subset", 13},
		{"t_${a ? 1 : 2}", `unexpected "? 1 : 2"`, 6},
		{"t_$order_id", "a $ must start ${...} or $->{...}", 2},
		{"t_${order_id % 4", "missing } after ${", 4},
		{"t_${}", "empty ${}", 4},
		{"t_${0..3}", "a range is only allowed in actualDataNodes", 5},
		{"t_${[1,2]}", "a list is only allowed in actualDataNodes", 4},
		{"t_${Math.max(a, b)}", "Math.max is not in shardflake's expression subset", 9},
		{"t_${'abc}", "unterminated string literal", 4},
		{"t_${1.5 * x}", "decimal numbers are not supported", 5},
		{`t_${"a${x}"}`, "interpolation inside a string literal", 6},
		{"t_${x %}", "expression ends early", 7},
		{"t_${99999999999999999999}", "integer 99999999999999999999 out of range", 4},
		{"t_${x.intdiv(2}", `expected ")"`, 14},
		{"", "empty expression", 0},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			_, err := compileTemplate(tt.give, exprScalar)
			var ee *ExprError
			if !errors.As(err, &ee) {
				t.Fatalf("compileTemplate(%q) error = %v, want an *ExprError", tt.give, err)
			}
			if !strings.Contains(ee.Reason, tt.wantReason) || ee.Offset != tt.wantOffset {
				t.Errorf("compileTemplate(%q) = %q at %d, want %q at %d", tt.give, ee.Reason, ee.Offset, tt.wantReason, tt.wantOffset)
			}
			if ee.Expr != tt.give || !strings.Contains(ee.Error(), strconv.Quote(tt.give)) {
				t.Errorf("error %q does not name the expression %q", ee.Error(), tt.give)
			}
		})
	}
}

func TestTemplateVars(t *testing.T) {
	tm, err := compileTemplate("ds_${(User_ID + shop_id) % 2}_${user_id}", exprScalar)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"user_id", "shop_id"}; !slices.Equal(tm.vars, want) {
		t.Errorf("vars = %q, want %q", tm.vars, want)
	}
	if tm.numeric() {
		t.Errorf("numeric() = true for an expression that prints user_id as text")
	}
	tm, _ = compileTemplate("t_${Math.abs(code.hashCode()) % 4}", exprScalar)
	if !tm.numeric() {
		t.Errorf("numeric() = false for hashCode arithmetic")
	}
}

func TestMySQLInt(t *testing.T) {
	tests := []struct {
		give string
		want int64
	}{
		{"0", 0}, {"-17", -17}, {"+5", 5}, {"  12  ", 12}, {"12abc", 12}, {"abc", 0}, {"", 0},
		{"-", 0}, {".5", 1}, {"-.5", -1}, {"2.5", 3}, {"-2.5", -3}, {"2.49", 2}, {"4.", 4},
		{"1e3", 1000}, {"1.5e1", 15}, {"1e", 1}, {"e5", 0}, {"9223372036854775807", math.MaxInt64},
	}
	for _, tt := range tests {
		got, err := mysqlInt(tt.give)
		if err != nil || got != tt.want {
			t.Errorf("mysqlInt(%q) = %d, %v; want %d", tt.give, got, err, tt.want)
		}
	}
}

// TestIntChain: an expression compiled into an integer chain gives for
// every integer column value what the expression tree gives, value and
// error alike; expressions that are not a chain keep the tree.
func TestIntChain(t *testing.T) {
	tests := []struct {
		give  string
		chain bool
	}{
		{"t_${id % 4}", true},
		{"ds_${Math.abs(id) % 2}", true},
		{"t_${Math.abs(id).intdiv(2) % 4}", true},
		{"t_${(id + 3) * 2 - 1}", true},
		{"t_${10 - id}", true},
		{"t_${100 % id}", true},
		{"t_${id / 2}", true},
		{"t_${id.intdiv(-3)}", true},
		{"t_${-id % 3}_x", true},
		{"t_${id % 0}", true},
		{"a${id % 2}b${id.intdiv(2) % 4}", true},
		{"t_${id % 4 + id % 2}", false},
		{"t_${Math.abs(id.hashCode()) % 16}", false},
		{"t_${id + 'x'}", false},
		// The first part reads column 0, the second column 1 (the tree).
		{"t_${Math.abs(user_id) % 2}${order_id % 4}", true},
		{"t_${order_id % 4}", true},
	}
	xs := []int64{0, 1, -1, 2, 7, -7, 8, 100, -100, 1234567, math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1, math.MaxInt32, math.MinInt32}
	for _, tt := range tests {
		tm, err := compileTemplate(tt.give, exprScalar)
		if err != nil {
			t.Fatalf("%s: %v", tt.give, err)
		}
		chained := false
		for _, p := range tm.parts {
			chained = chained || p.chainOK
		}
		if chained != tt.chain {
			t.Errorf("%s: compiled to a chain %v, want %v", tt.give, chained, tt.chain)
		}
		for _, x := range xs {
			vars := make([]val, len(tm.vars))
			for i := range vars {
				vars[i] = val{k: vInt, i: x + int64(i)*3}
			}
			got, gotErr := tm.appendEval(nil, vars)
			var want []byte
			var wantErr error
			for _, p := range tm.parts {
				if p.node == nil {
					want = append(want, p.text...)
					continue
				}
				v, err := p.node.eval(vars)
				if err != nil {
					wantErr = err
					break
				}
				want = v.appendText(want)
			}
			if wantErr != nil {
				if gotErr != wantErr {
					t.Errorf("%s with %d: error %v, want %v", tt.give, x, gotErr, wantErr)
				}
				continue
			}
			if gotErr != nil || string(got) != string(want) {
				t.Errorf("%s with %d = %q, %v; want %q", tt.give, x, got, gotErr, want)
			}
		}
	}
}

// BenchmarkTemplateEval evaluates t_order_${order_id % 4} into a reused
// buffer, the hot path of INLINE routing.
func BenchmarkTemplateEval(b *testing.B) { benchTemplate(b, "t_order_${order_id % 4}") }

// BenchmarkTemplateEvalChain evaluates sysbench's table expression, an
// integer chain.
func BenchmarkTemplateEvalChain(b *testing.B) {
	benchTemplate(b, "sbtest1_${Math.abs(id).intdiv(2) % 4}")
}

// benchTemplate evaluates the template src of one integer column into a
// reused buffer.
func benchTemplate(b *testing.B, src string) {
	tm, err := compileTemplate(src, exprScalar)
	if err != nil {
		b.Fatal(err)
	}
	var buf [64]byte
	vars := []val{{k: vInt, i: 1234567}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tm.appendEval(buf[:0], vars); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTemplateEvalHash(b *testing.B) {
	tm, err := compileTemplate("t_user_${Math.abs(name.hashCode()) % 16}", exprScalar)
	if err != nil {
		b.Fatal(err)
	}
	var buf [64]byte
	vars := []val{{k: vRaw, s: "someone@example.com"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tm.appendEval(buf[:0], vars); err != nil {
			b.Fatal(err)
		}
	}
}
