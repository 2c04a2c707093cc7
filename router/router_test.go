package router

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/shardflake/shardflake/algorithm"
	"github.com/shardflake/shardflake/config"

	"github.com/shardflake/shardflake/idgen"
)

func prepare(t *testing.T, r *Router, sql string) *Prepared {
	t.Helper()
	stmt, err := ParseOne(sql)
	if err != nil {
		t.Fatalf("parse %q: %v", sql, err)
	}
	p, err := r.Prepare(stmt, sql, "sharding_db")
	if err != nil {
		t.Fatalf("prepare %q: %v", sql, err)
	}
	return p
}

func bind(t *testing.T, p *Prepared, args ...any) *Plan {
	t.Helper()
	plan, err := p.Bind(args)
	if err != nil {
		t.Fatalf("bind %q %v: %v", p.SQL(), args, err)
	}
	return plan
}

func TestPrepareDescribesStatement(t *testing.T) {
	r, _ := newGoldenRouter(t, loadGoldenRules(t))
	tests := []struct {
		give       string
		wantKind   StatementKind
		wantParams int
		wantTables []string
	}{
		{"SELECT * FROM t_order WHERE user_id = ? AND order_id = ?", KindSelect, 2, []string{"t_order"}},
		{"SELECT * FROM t_order o JOIN t_order_item i ON o.order_id = i.order_id AND o.user_id = i.user_id WHERE o.user_id = 1", KindSelect, 0, []string{"t_order", "t_order_item"}},
		{"INSERT INTO t_order (user_id, status) VALUES (?, ?), (?, ?)", KindInsert, 4, []string{"t_order"}},
		{"UPDATE t_config SET v = ? WHERE k = ?", KindUpdate, 2, []string{"t_config"}},
		{"DELETE FROM t_single WHERE id = 1", KindDelete, 0, []string{"t_single"}},
		{"CREATE INDEX i ON t_order (status)", KindDDL, 0, []string{"t_order"}},
		{"SHOW CREATE TABLE t_order", KindShow, 0, []string{"t_order"}},
		{"SET NAMES utf8mb4", KindOther, 0, nil},
		{"SELECT * FROM information_schema.columns WHERE table_name = ?", KindOther, 1, nil},
		{"SHOW TABLES", KindOther, 0, nil},
		{"SET @x = ?", KindOther, 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			p := prepare(t, r, tt.give)
			if p.Kind() != tt.wantKind || p.ParamCount() != tt.wantParams || fmt.Sprint(p.Tables()) != fmt.Sprint(tt.wantTables) {
				t.Fatalf("got kind %v, %d params, tables %v; want %v, %d, %v", p.Kind(), p.ParamCount(), p.Tables(), tt.wantKind, tt.wantParams, tt.wantTables)
			}
		})
	}
}

func TestBindReusesStaticPlan(t *testing.T) {
	r, _ := newGoldenRouter(t, loadGoldenRules(t))
	p := prepare(t, r, "SELECT * FROM t_order WHERE user_id = 1 AND order_id = 2")
	a, b := bind(t, p), bind(t, p)
	if a != b {
		t.Fatal("a statement without parameters should be planned once, at Prepare")
	}
	_, err := p.Bind([]any{int64(1)})
	var re *Error
	if !errors.As(err, &re) || re.Code != CodeWrongArgs {
		t.Fatalf("Bind with an extra argument: got %v, want error %d", err, CodeWrongArgs)
	}
}

func TestBindOtherStatementFails(t *testing.T) {
	r, _ := newGoldenRouter(t, loadGoldenRules(t))
	_, err := prepare(t, r, "BEGIN").Bind(nil)
	if !errors.Is(err, ErrProxyStatement) {
		t.Fatalf("got %v, want ErrProxyStatement", err)
	}
}

func TestBindArgumentTypes(t *testing.T) {
	r, _ := newGoldenRouter(t, loadGoldenRules(t))
	tests := []struct {
		give string
		args []any
		want string // the only data node
	}{
		{"SELECT * FROM t_order WHERE user_id = ? AND order_id = ?", []any{int(1), int32(5)}, "ds_1.t_order_5"},
		{"SELECT * FROM t_order WHERE user_id = ? AND order_id = ?", []any{uint64(2), []byte("6")}, "ds_2.t_order_6"},
		{"SELECT * FROM t_order WHERE user_id = ? AND order_id = ?", []any{"3", float64(7)}, "ds_3.t_order_7"},
		{"SELECT * FROM t_order WHERE user_id = ? AND order_id = ?", []any{true, uint8(1)}, "ds_1.t_order_1"},
		{"SELECT * FROM t_log WHERE created_at = ?", []any{time.Date(2024, 9, 3, 10, 0, 0, 0, time.UTC)}, "ds_1.t_log_202409"},
		{"SELECT * FROM t_log WHERE created_at = ?", []any{time.Date(2024, 2, 29, 23, 59, 59, 5000, time.UTC)}, "ds_1.t_log_202402"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.args), func(t *testing.T) {
			plan := bind(t, prepare(t, r, tt.give), tt.args...)
			if len(plan.Routes) != 1 || len(plan.Routes[0].Nodes) != 1 || plan.Routes[0].Nodes[0].String() != tt.want {
				t.Fatalf("got routes %+v, want one route to %s", plan.Routes, tt.want)
			}
			if len(plan.Routes[0].Args) != len(tt.args) {
				t.Fatalf("route args %v, want the %d given", plan.Routes[0].Args, len(tt.args))
			}
		})
	}
}

func TestInsertGeneratesKeysInBlocks(t *testing.T) {
	r, keys := newGoldenRouter(t, loadGoldenRules(t))
	var rows []string
	for i := 0; i < 10; i++ {
		rows = append(rows, fmt.Sprintf("(%d, 'r%d')", i%4, i))
	}
	p := prepare(t, r, "INSERT INTO t_order (user_id, note) VALUES "+strings.Join(rows, ", "))
	plan := bind(t, p)
	if keys.calls != 3 {
		t.Fatalf("10 keys with MaxBatch 4 took %d NextN calls, want 3", keys.calls)
	}
	if plan.Keys == nil || plan.Keys.First != 1000 || plan.Keys.Count != 10 || plan.Keys.Column != "order_id" {
		t.Fatalf("generated keys %+v, want order_id from 1000, 10 keys", plan.Keys)
	}
	seen := 0
	for _, rt := range plan.Routes {
		node := rt.Nodes[0]
		for i := 0; i < 10; i++ {
			key := 1000 + i
			row := fmt.Sprintf("(%d,'r%d',%d)", i%4, i, key)
			want := config.DataNode{DataSource: fmt.Sprintf("ds_%d", i%4), Table: fmt.Sprintf("t_order_%d", key%8)}
			if strings.Contains(rt.SQL, row) {
				seen++
				if node != want {
					t.Errorf("row %s sent to %s, want %s", row, node, want)
				}
			}
		}
	}
	if seen != 10 {
		t.Fatalf("found %d of 10 rows in the routes: %+v", seen, plan.Routes)
	}
	// A second execution gets new keys.
	if plan2 := bind(t, p); plan2.Keys.First != 1010 {
		t.Fatalf("second execution starts at %d, want 1010", plan2.Keys.First)
	}
}

type failingKeys struct{ err error }

func (f failingKeys) NextN(int) (int64, error) { return 0, f.err }
func (failingKeys) MaxBatch() int              { return 100 }

func TestInsertKeyGeneratorError(t *testing.T) {
	cause := errors.New("clock moved backwards by 20ms")
	r, err := New(loadGoldenRules(t), map[string]idgen.KeyGenerator{"snowflake": failingKeys{cause}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = prepare(t, r, "INSERT INTO t_order (user_id) VALUES (1)").Bind(nil)
	var re *Error
	if !errors.As(err, &re) || re.Code != CodeUnknown || !errors.Is(err, cause) || !strings.Contains(re.Message, "snowflake") {
		t.Fatalf("got %v, want 1105 naming the generator and wrapping the cause", err)
	}
	// A statement that needs no key still works.
	if _, err := prepare(t, r, "INSERT INTO t_order (user_id, order_id) VALUES (1, 2)").Bind(nil); err != nil {
		t.Fatal(err)
	}
}

func TestNewNeedsEveryKeyGenerator(t *testing.T) {
	_, err := New(loadGoldenRules(t), nil)
	if err == nil || !strings.Contains(err.Error(), "snowflake") {
		t.Fatalf("got %v, want an error naming the missing generator", err)
	}
}

func TestInsertWithKnownColumns(t *testing.T) {
	cols := func(table string) []string {
		if table == "t_order" {
			return []string{"order_id", "user_id", "status"}
		}
		return nil
	}
	r, err := New(loadGoldenRules(t), map[string]idgen.KeyGenerator{"snowflake": &fakeKeys{next: 1, batch: 10}}, WithTableColumns(cols))
	if err != nil {
		t.Fatal(err)
	}
	plan := bind(t, prepare(t, r, "INSERT INTO t_order VALUES (9, 2, 'x'), (NULL, 3, 'y')"))
	var got []string
	for _, rt := range plan.Routes {
		got = append(got, rt.DataSource+": "+rt.SQL)
	}
	want := []string{
		"ds_2: INSERT INTO `t_order_1` (`order_id`,`user_id`,`status`) VALUES (9,2,'x')",
		"ds_3: INSERT INTO `t_order_1` (`order_id`,`user_id`,`status`) VALUES (1,3,'y')",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestConcurrentBind shares one Prepared between goroutines (run with
// -race): every plan must match its own arguments.
func TestConcurrentBind(t *testing.T) {
	r, _ := newGoldenRouter(t, loadGoldenRules(t))
	p := prepare(t, r, "SELECT o.order_id, COUNT(*) FROM t_order o WHERE o.user_id = ? AND o.order_id IN (?, ?) GROUP BY o.order_id HAVING COUNT(*) > ? LIMIT ?")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				user, a, b := int64(g), int64(i), int64(i+1)
				plan, err := p.Bind([]any{user, a, b, int64(g), int64(i + 1)})
				if err != nil {
					errs <- err
					return
				}
				if len(plan.Routes) != 2 {
					errs <- fmt.Errorf("user %d, orders %d,%d: %d routes", user, a, b, len(plan.Routes))
					return
				}
				for _, rt := range plan.Routes {
					if rt.DataSource != fmt.Sprintf("ds_%d", g%4) || len(rt.Args) != 2 || rt.Args[0] != user {
						errs <- fmt.Errorf("route %+v for user %d", rt, user)
						return
					}
				}
				if plan.Merge.Limit.Count != int64(i+1) || plan.Merge.Having.Args[1].Value != int64(g) {
					errs <- fmt.Errorf("merge %+v for execution %d/%d", plan.Merge, g, i)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestColumnRefIndex(t *testing.T) {
	tests := []struct {
		give ColumnRef
		n    int
		want int
	}{
		{0, 5, 0},
		{3, 5, 3},
		{-1, 5, 4},
		{-5, 5, 0},
	}
	for _, tt := range tests {
		if got := tt.give.Index(tt.n); got != tt.want {
			t.Errorf("ColumnRef(%d).Index(%d) = %d, want %d", tt.give, tt.n, got, tt.want)
		}
	}
}

func TestArgValue(t *testing.T) {
	tests := []struct {
		give any
		want algorithm.Value
	}{
		{nil, nil},
		{int64(-3), int64(-3)},
		{uint32(7), uint64(7)},
		{[]byte("ab"), "ab"},
		{false, int64(0)},
		{float32(1.5), float64(1.5)},
		{time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC), "2024-05-06 07:08:09"},
		{time.Date(2024, 5, 6, 7, 8, 9, 120000, time.UTC), "2024-05-06 07:08:09.00012"},
		{-(26*time.Hour + 3*time.Minute + 4*time.Second + 5*time.Microsecond), "-26:03:04.000005"},
		{struct{}{}, nil},
	}
	for _, tt := range tests {
		if got := argValue(tt.give); got != tt.want {
			t.Errorf("argValue(%#v) = %#v, want %#v", tt.give, got, tt.want)
		}
	}
}

// TestParseSyntaxErrorMessage: a syntax error reads as MySQL's and
// MariaDB's 1064, near the text from the offending token, at its line.
func TestParseSyntaxErrorMessage(t *testing.T) {
	const prefix = "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near "
	long := "SELECT * FROM t_order WHERE note = 'x" + strings.Repeat("ä", 60) + "'"
	tests := []struct {
		give string
		want string
	}{
		{give: "SELEC 1", want: prefix + "'SELEC 1' at line 1"},
		{give: "SELECT 1 FROM t_order WHERE", want: prefix + "'' at line 1"},
		{give: "SELECT 1\nFROM t_order\nWHERE WHERE x", want: prefix + "'WHERE x' at line 3"},
		// Cut at 80 bytes, never inside a UTF-8 sequence.
		{give: "SELEC " + long, want: prefix + "'" + strings.ToValidUTF8(("SELEC " + long)[:80], "") + "' at line 1"},
		{give: `SELEC "a""b"`, want: prefix + `'SELEC "a""b"' at line 1`},
	}
	for _, tt := range tests {
		_, err := ParseOne(tt.give)
		var re *Error
		if !errors.As(err, &re) || re.Code != CodeParse {
			t.Fatalf("ParseOne(%q) = %v, want a 1064 *Error", tt.give, err)
		}
		if re.Message != tt.want {
			t.Errorf("ParseOne(%q):\n got %s\nwant %s", tt.give, re.Message, tt.want)
		}
	}
}

// TestMariaDBSyntaxMessage: MariaDB's 1064 names its manual and cuts a
// text longer than 80 bytes to 77 and "..." (its %-.80T), never inside a
// UTF-8 sequence; MySQL's cuts at 80.
func TestMariaDBSyntaxMessage(t *testing.T) {
	const prefix = "You have an error in your SQL syntax; check the manual that corresponds to your MariaDB server version for the right syntax to use near "
	eighty := strings.Repeat("x", 80)
	tests := []struct {
		give string
		want string
	}{
		{give: `line 2 column 5 near "SELECT 2"`, want: prefix + "'SELECT 2' at line 2"},
		{give: `line 1 column 0 near "` + eighty + `"`, want: prefix + "'" + eighty + "' at line 1"},
		{give: `line 1 column 0 near "` + eighty + `y"`, want: prefix + "'" + eighty[:77] + "...' at line 1"},
		{give: `line 1 column 0 near "` + strings.Repeat("x", 76) + `äyyyy"`, want: prefix + "'" + strings.Repeat("x", 76) + "...' at line 1"},
		{give: "not a parser error", want: "not a parser error"},
	}
	for _, tt := range tests {
		if got := MariaDBSyntaxMessage(tt.give); got != tt.want {
			t.Errorf("MariaDBSyntaxMessage(%q):\n got %s\nwant %s", tt.give, got, tt.want)
		}
	}
}

// A string literal may hold any bytes, the marker prefix NUL 's' 'f'
// included (a random 16 MB blob holds it about once): it reaches every
// route with its bytes intact, written with \0 for NUL, never as a marker.
func TestLiteralsHoldingMarkerBytes(t *testing.T) {
	r, _ := newGoldenRouter(t, loadGoldenRules(t))
	value := "a\x00sfT0\x00b\x00sfP1\x00'\\c\x00"
	escaped := `a\0sfT0\0b\0sfP1\0''\\c\0`
	for _, sql := range []string{
		"INSERT INTO t_order (user_id, note) VALUES (1, '" + escaped + "'), (2, 'plain')",
		"INSERT INTO t_order (user_id, note) VALUES (1, _binary'" + escaped + "')",
		"UPDATE t_order SET note = '" + escaped + "' WHERE user_id = 1",
		"SELECT * FROM t_order WHERE note = '" + escaped + "'",
		"SELECT '" + escaped + "' AS v FROM t_order WHERE user_id = 3",
		"INSERT INTO t_order (user_id, note) VALUES (1, '" + strings.ReplaceAll(escaped, `\0`, "\x00") + "')",
	} {
		plan := bind(t, prepare(t, r, sql))
		checkRoutes(t, sql, plan)
		var found literalFinder
		for _, rt := range plan.Routes {
			stmt, err := ParseOne(rt.SQL)
			if err != nil {
				t.Fatalf("%q: route %q: %v", sql, rt.SQL, err)
			}
			stmt.Accept(&found)
		}
		if !found.has(value) {
			t.Fatalf("%q: routes %+v lost the value %q (have %q)", sql, plan.Routes, value, found.values)
		}
	}
	// A name holding the prefix is still refused: markers are names.
	stmt, err := ParseOne("SELECT `a\x00sfT0\x00` FROM t_order")
	if err == nil {
		if _, err = r.Prepare(stmt, "SELECT `a\x00sfT0\x00` FROM t_order", "sharding_db"); err == nil {
			t.Fatal("a name holding the marker prefix was accepted")
		}
	}
}

type literalFinder struct{ values []string }

func (f *literalFinder) Enter(n ast.Node) (ast.Node, bool) {
	if v, ok := n.(*driver.ValueExpr); ok && (v.Kind() == driver.KindString || v.Kind() == driver.KindBytes) {
		f.values = append(f.values, v.GetString())
	}
	return n, false
}

func (f *literalFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

func (f *literalFinder) has(s string) bool {
	for _, v := range f.values {
		if v == s {
			return true
		}
	}
	return false
}
