package router

import (
	"math"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/shardflake/shardflake/algorithm"
)

// operand is a value a condition compares a sharding column with: a
// literal known at Prepare, or a ? bound at Bind.
type operand struct {
	param int // -1 for a literal
	val   algorithm.Value
	// cast is set for a ? cast to an integer in a condition (CAST(? AS
	// SIGNED)): the bound value is read as castOperand reads a literal.
	cast castKind
}

// castKind is the integer type of CAST(? AS ...).
type castKind byte

const (
	castSigned castKind = iota + 1
	castUnsigned
)

func (o operand) value(args []any) algorithm.Value {
	v, ok := o.bound(args)
	if !ok {
		return argValue(args[o.param])
	}
	return v
}

// bound returns the operand's value for args; false for a cast ? whose
// value is not one MariaDB casts to itself (castValue), which then
// constrains nothing. value gives the argument as bound there, which
// equals another operand's only where their casts are equal too.
func (o operand) bound(args []any) (algorithm.Value, bool) {
	if o.param < 0 {
		return o.val, true
	}
	v := argValue(args[o.param])
	if o.cast == 0 {
		return v, true
	}
	return castValue(v, o.cast == castUnsigned)
}

// atom is one condition on one sharding column of one table reference:
// exact values (=, <=>, IN) or a range (<, <=, >, >=, BETWEEN).
type atom struct {
	ref    int
	col    string
	values []operand // non-nil for exact values
	low    *operand
	high   *operand
	lowInc bool
	hiInc  bool
}

func (at *atom) hasParam() bool {
	for _, v := range at.values {
		if v.param >= 0 {
			return true
		}
	}
	return (at.low != nil && at.low.param >= 0) || (at.high != nil && at.high.param >= 0)
}

// condition binds the atom's operands; exact values are appended to
// scratch, which the condition's Values then share (the caller clears it
// once the conditions are routed).
func (at *atom) condition(args []any, scratch *[]algorithm.Value) algorithm.ColumnCondition {
	c := algorithm.ColumnCondition{Column: at.col}
	if at.values != nil {
		start := len(*scratch)
		for _, v := range at.values {
			x, ok := v.bound(args)
			if !ok {
				*scratch = (*scratch)[:start]
				return c // no condition: every data node
			}
			*scratch = append(*scratch, x)
		}
		c.Values = (*scratch)[start:len(*scratch):len(*scratch)]
		return c
	}
	r := &algorithm.Range{LowInclusive: at.lowInc, HighInclusive: at.hiInc}
	var ok bool
	if at.low != nil {
		if r.Low, ok = at.low.bound(args); !ok {
			return c
		}
	}
	if at.high != nil {
		if r.High, ok = at.high.bound(args); !ok {
			return c
		}
	}
	c.Range = r
	return c
}

// dnf is a condition in disjunctive normal form over atoms: the rows it
// admits satisfy all atoms of at least one group. A group without atoms
// admits every row; an expression the router does not understand is such
// a group, so a dnf always admits a superset of the rows the statement
// touches, which is what routing needs.
type dnf [][]atom

// maxGroups bounds the size of a dnf; a larger one is replaced by "every
// row" (a superset, so still correct).
const maxGroups = 64

// dnfAll admits every row.
func dnfAll() dnf { return dnf{nil} }

func (d dnf) isTrue() bool {
	for _, g := range d {
		if len(g) == 0 {
			return true
		}
	}
	return false
}

func dnfOr(x, y dnf) dnf {
	if x.isTrue() || y.isTrue() || len(x)+len(y) > maxGroups {
		return dnfAll()
	}
	out := make(dnf, 0, len(x)+len(y))
	return append(append(out, x...), y...)
}

func dnfAnd(x, y dnf) dnf {
	if x.isTrue() && len(x) == 1 {
		return y
	}
	if y.isTrue() && len(y) == 1 {
		return x
	}
	if len(x)*len(y) > maxGroups {
		// Keep the side with fewer groups: still a superset.
		if len(x) <= len(y) {
			return x
		}
		return y
	}
	out := make(dnf, 0, len(x)*len(y))
	for _, gx := range x {
		for _, gy := range y {
			g := make([]atom, 0, len(gx)+len(gy))
			out = append(out, append(append(g, gx...), gy...))
		}
	}
	return out
}

// conditions returns the dnf of block s's conjuncts.
func (a *analysis) conditions(s *scope) dnf {
	d := dnfAll()
	for _, c := range s.conds {
		d = dnfAnd(d, a.cond(s, c))
	}
	return d
}

// cond converts one boolean expression of block s.
func (a *analysis) cond(s *scope, e ast.ExprNode) dnf {
	switch e := e.(type) {
	case *ast.ParenthesesExpr:
		return a.cond(s, e.Expr)
	case *ast.BinaryOperationExpr:
		switch e.Op {
		case opcode.LogicAnd:
			return dnfAnd(a.cond(s, e.L), a.cond(s, e.R))
		case opcode.LogicOr:
			return dnfOr(a.cond(s, e.L), a.cond(s, e.R))
		case opcode.EQ, opcode.NullEQ, opcode.LT, opcode.LE, opcode.GT, opcode.GE:
			return a.comparison(s, e)
		}
	case *ast.PatternInExpr:
		if e.Not || e.Sel != nil {
			return dnfAll()
		}
		cn := columnOf(e.Expr)
		if cn == nil {
			return dnfAll()
		}
		vals := make([]operand, 0, len(e.List))
		for _, item := range e.List {
			o, ok := condOperandOf(item)
			if !ok {
				return dnfAll()
			}
			vals = append(vals, o)
		}
		return a.atoms(s, cn, atom{values: vals})
	case *ast.BetweenExpr:
		if e.Not {
			return dnfAll()
		}
		cn := columnOf(e.Expr)
		lo, ok1 := condOperandOf(e.Left)
		hi, ok2 := condOperandOf(e.Right)
		if cn == nil || !ok1 || !ok2 {
			return dnfAll()
		}
		return a.atoms(s, cn, atom{low: &lo, high: &hi, lowInc: true, hiInc: true})
	}
	return dnfAll()
}

func (a *analysis) comparison(s *scope, e *ast.BinaryOperationExpr) dnf {
	op := e.Op
	cn := columnOf(e.L)
	o, ok := condOperandOf(e.R)
	if cn == nil || !ok {
		cn = columnOf(e.R)
		o, ok = condOperandOf(e.L)
		if cn == nil || !ok {
			return dnfAll()
		}
		switch op { // value < col is col > value
		case opcode.LT:
			op = opcode.GT
		case opcode.LE:
			op = opcode.GE
		case opcode.GT:
			op = opcode.LT
		case opcode.GE:
			op = opcode.LE
		}
	}
	if op == opcode.NullEQ && o.param < 0 && o.val == nil {
		// col <=> NULL holds for NULLs, which no data node routes, and
		// for the NULLs of an outer join's missing rows: no narrowing.
		return dnfAll()
	}
	var at atom
	switch op {
	case opcode.EQ, opcode.NullEQ:
		at.values = []operand{o}
	case opcode.LT, opcode.LE:
		at.high, at.hiInc = &o, op == opcode.LE
	case opcode.GT, opcode.GE:
		at.low, at.lowInc = &o, op == opcode.GE
	}
	return a.atoms(s, cn, at)
}

// atoms applies a condition on column cn to every sharded table of block
// s it can name (see columnRefs); columns that shard nothing add nothing.
func (a *analysis) atoms(s *scope, cn *ast.ColumnName, at atom) dnf {
	var buf [4]int
	refs := a.columnRefs(s, cn, buf[:0])
	var group []atom
	for _, i := range refs {
		if a.refs[i].info.role(cn.Name.L) == 0 {
			continue
		}
		x := at
		x.ref = i
		x.col = cn.Name.L
		group = append(group, x)
	}
	if len(group) == 0 {
		return dnfAll()
	}
	return dnf{group}
}

func columnOf(e ast.ExprNode) *ast.ColumnName {
	for {
		switch x := e.(type) {
		case *ast.ColumnNameExpr:
			return x.Name
		case *ast.ParenthesesExpr:
			e = x.Expr
		default:
			return nil
		}
	}
}

// operandOf reads a literal or a ? (possibly signed, in parentheses), or
// a literal cast to an integer (castOperand).
func operandOf(e ast.ExprNode) (operand, bool) {
	switch x := e.(type) {
	case *ast.FuncCastExpr:
		return castOperand(x)
	case *driver.ParamMarkerExpr:
		return operand{param: x.Order}, true
	case *driver.ValueExpr:
		v, ok := literalValue(x)
		return operand{param: -1, val: v}, ok
	case *ast.ParenthesesExpr:
		return operandOf(x.Expr)
	case *ast.UnaryOperationExpr:
		o, ok := operandOf(x.V)
		if !ok || o.param >= 0 {
			return operand{}, false
		}
		switch x.Op {
		case opcode.Plus:
			if _, isNum := numeric(o.val); isNum {
				return o, true
			}
		case opcode.Minus:
			if v, ok := negate(o.val); ok {
				return operand{param: -1, val: v}, true
			}
		}
	}
	return operand{}, false
}

// castOperand reads CAST(v AS SIGNED) or CONVERT(v, UNSIGNED) (INT and
// INTEGER are read as SIGNED) of a literal v as the integer MariaDB makes
// of it, where that is v itself: an integer, or a string of decimal
// digits with an optional sign, in the type's range. Anything else, a
// fraction (which MariaDB rounds), a string it reads with a warning, a
// value it wraps around, a ?, is no operand: the statement is not routed
// by it.
func castOperand(x *ast.FuncCastExpr) (operand, bool) {
	unsigned, ok := integerCast(x)
	if !ok {
		return operand{}, false
	}
	o, ok := operandOf(x.Expr)
	if !ok || o.param >= 0 {
		return operand{}, false
	}
	v, ok := castValue(o.val, unsigned)
	return operand{param: -1, val: v}, ok
}

// integerCast reports whether x is CAST or CONVERT to an integer type,
// and whether that type is UNSIGNED.
func integerCast(x *ast.FuncCastExpr) (unsigned, ok bool) {
	if x.FunctionType != ast.CastFunction && x.FunctionType != ast.CastConvertFunction ||
		x.Tp == nil || x.Tp.GetType() != mysql.TypeLonglong {
		return false, false
	}
	return mysql.HasUnsignedFlag(x.Tp.GetFlag()), true
}

// castValue is v cast to SIGNED or UNSIGNED as MariaDB casts it, where
// that is v itself (see castOperand); false for any other v.
func castValue(v algorithm.Value, unsigned bool) (algorithm.Value, bool) {
	switch v := v.(type) {
	case nil:
		return nil, true // NULL
	case int64:
		if !unsigned {
			return v, true
		}
		if v >= 0 {
			return uint64(v), true
		}
	case uint64:
		if unsigned {
			return v, true
		}
		if v <= math.MaxInt64 {
			return int64(v), true
		}
	case string:
		if unsigned {
			if n, err := strconv.ParseUint(strings.TrimPrefix(v, "+"), 10, 64); err == nil {
				return n, true
			}
		} else if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n, true
		}
	}
	return nil, false
}

// condOperandOf is operandOf for the value a condition compares a
// sharding column with, where a ? cast to an integer (CAST(? AS SIGNED),
// CONVERT(?, UNSIGNED)) is an operand too: its bound value routes as the
// same cast of a literal does, when castValue reads it; otherwise the
// condition constrains nothing (operand.bound).
func condOperandOf(e ast.ExprNode) (operand, bool) {
	for {
		p, ok := e.(*ast.ParenthesesExpr)
		if !ok {
			break
		}
		e = p.Expr
	}
	if x, ok := e.(*ast.FuncCastExpr); ok {
		unsigned, isInt := integerCast(x)
		if o, isOp := operandOf(x.Expr); isInt && isOp && o.param >= 0 {
			o.cast = castSigned
			if unsigned {
				o.cast = castUnsigned
			}
			return o, true
		}
	}
	return operandOf(e)
}

func numeric(v algorithm.Value) (algorithm.Value, bool) {
	switch v.(type) {
	case int64, uint64, float64:
		return v, true
	}
	return nil, false
}

func negate(v algorithm.Value) (algorithm.Value, bool) {
	switch n := v.(type) {
	case int64:
		if n == math.MinInt64 {
			return nil, false
		}
		return -n, true
	case uint64:
		if n <= 1<<63 {
			return -int64(n-1) - 1, true
		}
	case float64:
		return -n, true
	}
	return nil, false
}

// literalValue converts a parsed literal into a routing Value. Decimals
// become int64 when integral, else float64; bit and hex literals and
// temporal values are not routing values (ok false).
func literalValue(x *driver.ValueExpr) (algorithm.Value, bool) {
	switch x.Kind() {
	case driver.KindNull:
		return nil, true
	case driver.KindInt64:
		return x.GetInt64(), true
	case driver.KindUint64:
		return x.GetUint64(), true
	case driver.KindFloat32, driver.KindFloat64:
		return x.GetFloat64(), true
	case driver.KindString, driver.KindBytes:
		return x.GetString(), true
	case driver.KindMysqlDecimal:
		s := x.GetMysqlDecimal().String()
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, true
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, false
		}
		if f == math.Trunc(f) && math.Abs(f) < 1<<63 {
			return int64(f), true
		}
		return f, true
	}
	return nil, false
}
