package router

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
)

// FuzzRoute plans arbitrary statements: the router never panics, returns
// only catalogued *Errors, renders SQL that parses again with as many ?s
// as arguments, and routes a statement that pins both sharding columns of
// t_order to a literal to exactly one data node.
func FuzzRoute(f *testing.F) {
	for _, file := range goldenFiles(f) {
		for i, c := range readCases(f, file) {
			f.Add(c.Query, int64(i), int64(i*7+3))
		}
	}
	rules := loadGoldenRules(f)
	f.Fuzz(func(t *testing.T, sql string, a, b int64) {
		r, _ := newGoldenRouter(t, rules)
		checkPlanned(t, r, sql)
		pinned(t, r, sql, a, b)
	})
}

// checkPlanned plans sql and checks the invariants of the result.
func checkPlanned(t *testing.T, r *Router, sql string) {
	t.Helper()
	stmt, err := ParseOne(sql)
	if err != nil {
		return
	}
	p, err := r.Prepare(stmt, sql, "sharding_db")
	if err != nil {
		checkError(t, sql, err)
		return
	}
	args := make([]any, p.ParamCount())
	for i := range args {
		switch i % 3 {
		case 0:
			args[i] = int64(i + 1)
		case 1:
			args[i] = fmt.Sprintf("s%d", i)
		default:
			args[i] = uint64(i)
		}
	}
	plan, err := p.Bind(args)
	if err != nil {
		if p.Kind() != KindOther {
			checkError(t, sql, err)
		}
		return
	}
	checkRoutes(t, sql, plan)
}

func checkError(t *testing.T, sql string, err error) {
	t.Helper()
	var re *Error
	if !errors.As(err, &re) {
		t.Fatalf("%q: error %v (%T) is not a *router.Error", sql, err, err)
	}
	state, ok := StateOf(re.Code)
	if !ok || state != re.State {
		t.Fatalf("%q: error %v has code %d state %q, not in the catalog", sql, err, re.Code, re.State)
	}
}

func checkRoutes(t *testing.T, sql string, plan *Plan) {
	t.Helper()
	if len(plan.Routes) == 0 {
		t.Fatalf("%q: plan without routes", sql)
	}
	for _, rt := range plan.Routes {
		if strings.Contains(rt.SQL, markerPrefix) {
			t.Fatalf("%q: route SQL keeps a marker: %q", sql, rt.SQL)
		}
		stmt, err := ParseOne(rt.SQL)
		if err != nil {
			t.Fatalf("%q: route SQL %q does not parse: %v", sql, rt.SQL, err)
		}
		var c paramCollector
		stmt.Accept(&c)
		if len(c.params) != len(rt.Args) {
			t.Fatalf("%q: route SQL %q has %d placeholders for %d args", sql, rt.SQL, len(c.params), len(rt.Args))
		}
	}
}

// pinned adds "user_id = a AND order_id = b" to a SELECT, UPDATE or DELETE
// whose top-level FROM names t_order and checks the plan has one route.
func pinned(t *testing.T, r *Router, sql string, a, b int64) {
	t.Helper()
	if a == math.MinInt64 || b == math.MinInt64 {
		return
	}
	if a < 0 {
		a = -a
	}
	if b < 0 {
		b = -b
	}
	stmt, err := ParseOne(sql)
	if err != nil {
		return
	}
	var where *ast.ExprNode
	var from *ast.TableRefsClause
	switch s := stmt.(type) {
	case *ast.SelectStmt:
		where, from = &s.Where, s.From
	case *ast.UpdateStmt:
		where, from = &s.Where, s.TableRefs
	case *ast.DeleteStmt:
		where, from = &s.Where, s.TableRefs
	default:
		return
	}
	alias, ok := topLevelOrder(from)
	if !ok {
		return
	}
	col := func(name string) ast.ExprNode {
		return &ast.ColumnNameExpr{Name: &ast.ColumnName{Table: ast.NewCIStr(alias), Name: ast.NewCIStr(name)}}
	}
	eq := func(name string, v int64) ast.ExprNode {
		return &ast.BinaryOperationExpr{Op: opcode.EQ, L: col(name), R: ast.NewValueExpr(v, "", "")}
	}
	pin := &ast.BinaryOperationExpr{Op: opcode.LogicAnd, L: eq("user_id", a), R: eq("order_id", b)}
	if *where != nil {
		*where = &ast.BinaryOperationExpr{Op: opcode.LogicAnd, L: &ast.ParenthesesExpr{Expr: *where}, R: pin}
	} else {
		*where = pin
	}
	p, err := r.Prepare(stmt, sql, "sharding_db")
	if err != nil {
		checkError(t, sql, err)
		return
	}
	args := make([]any, p.ParamCount())
	for i := range args {
		args[i] = int64(i)
	}
	plan, err := p.Bind(args)
	if err != nil {
		checkError(t, sql, err)
		return
	}
	if len(plan.Routes) != 1 {
		t.Fatalf("%q pinned to user_id=%d, order_id=%d reaches %d routes", sql, a, b, len(plan.Routes))
	}
	checkRoutes(t, sql, plan)
}

// topLevelOrder returns how t_order is named in the FROM clause (its
// alias or name), when it appears there once and not under an outer join.
func topLevelOrder(from *ast.TableRefsClause) (string, bool) {
	if from == nil || from.TableRefs == nil {
		return "", false
	}
	var found []string
	var walk func(n ast.ResultSetNode) bool
	walk = func(n ast.ResultSetNode) bool {
		switch x := n.(type) {
		case *ast.Join:
			if x.Tp != ast.CrossJoin && x.Tp != 0 {
				return false
			}
			return (x.Left == nil || walk(x.Left)) && (x.Right == nil || walk(x.Right))
		case *ast.TableSource:
			if tn, ok := x.Source.(*ast.TableName); ok && tn.Name.L == "t_order" && (tn.Schema.L == "" || tn.Schema.L == "sharding_db") {
				name := tn.Name.O
				if x.AsName.O != "" {
					name = x.AsName.O
				}
				found = append(found, name)
			}
			if j, ok := x.Source.(*ast.Join); ok {
				return walk(j)
			}
		}
		return true
	}
	if !walk(from.TableRefs) || len(found) != 1 {
		return "", false
	}
	return found[0], true
}

// TestPinnedOneRoute checks the fuzz property on every golden query.
func TestPinnedOneRoute(t *testing.T) {
	rules := loadGoldenRules(t)
	for _, file := range goldenFiles(t) {
		for i, c := range readCases(t, file) {
			r, _ := newGoldenRouter(t, rules)
			checkPlanned(t, r, c.Query)
			pinned(t, r, c.Query, int64(i), int64(3*i+1))
		}
	}
}
