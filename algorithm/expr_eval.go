package algorithm

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// valKind is the dynamic type of a value inside an expression.
type valKind uint8

const (
	vNull  valKind = iota // SQL NULL; prints as Groovy's "null"
	vInt                  // integer (literal, arithmetic result, int64 column value)
	vText                 // a string literal or concatenation: + concatenates
	vRaw                  // a column's string value: a number in arithmetic, text when printed
	vFloat                // a column's float value
)

// val is an expression value. It is a small struct passed by value so
// evaluation does not allocate.
type val struct {
	k valKind
	// i32 marks a Java int (the result of .hashCode()): Math.abs keeps
	// Integer.MIN_VALUE negative, as Java does, so Math.abs(x.hashCode()) % n
	// matches ShardingSphere even for that value.
	i32 bool
	i   int64
	s   string
	f   float64
}

// errNonInteger and friends are evaluation failures; the algorithm wraps
// them with the value and the expression.
var (
	errDivByZero   = errors.New("division by zero")
	errNullValue   = errors.New("NULL in arithmetic")
	errOutOfRange  = errors.New("value out of BIGINT range")
	errNotInteger  = errors.New("non-integral quotient of / (Groovy would yield a decimal; use .intdiv)")
	errTextInArith = errors.New("string literal in arithmetic")
)

// valOf converts a router Value into an expression value.
func valOf(v Value) (val, error) {
	switch x := v.(type) {
	case nil:
		return val{k: vNull}, nil
	case int64:
		return val{k: vInt, i: x}, nil
	case int:
		return val{k: vInt, i: int64(x)}, nil
	case int32:
		return val{k: vInt, i: int64(x)}, nil
	case uint64:
		if x > math.MaxInt64 {
			return val{}, errOutOfRange
		}
		return val{k: vInt, i: int64(x)}, nil
	case float64:
		return val{k: vFloat, f: x}, nil
	case string:
		return val{k: vRaw, s: x}, nil
	case []byte:
		return val{k: vRaw, s: string(x)}, nil
	}
	return val{}, fmt.Errorf("unsupported value type %T", v)
}

// toInt converts a value for integer arithmetic, the way MySQL reads it
// when comparing with a BIGINT column (see Value).
func (v val) toInt() (int64, error) {
	switch v.k {
	case vInt:
		return v.i, nil
	case vRaw:
		return mysqlInt(v.s)
	case vFloat:
		return roundFloat(v.f)
	case vText:
		return 0, errTextInArith
	}
	return 0, errNullValue
}

func roundFloat(f float64) (int64, error) {
	r := math.Round(f) // half away from zero, as MySQL stores into BIGINT
	if math.IsNaN(r) || r < math.MinInt64 || r >= math.MaxInt64 {
		return 0, errOutOfRange
	}
	return int64(r), nil
}

// mysqlInt reads a string as MySQL converts it to a number: leading
// spaces, an optional sign, digits, an optional fraction and exponent; the
// rest is ignored; no number at all is 0. A fraction rounds half away from
// zero.
func mysqlInt(s string) (int64, error) {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	start := i
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	intEnd := i
	simple := intEnd > digits
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j > i+1 || intEnd > digits {
			simple = false
			i = j
		}
	}
	if intEnd == digits && i == intEnd {
		return 0, nil // no digits: MySQL reads 0
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k > j {
			simple = false
			i = k
		}
	}
	if simple {
		n, err := strconv.ParseInt(s[start:intEnd], 10, 64)
		if err != nil {
			return 0, errOutOfRange
		}
		return n, nil
	}
	f, err := strconv.ParseFloat(s[start:i], 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, nil
	}
	return roundFloat(f)
}

// appendText appends the value as Groovy prints it.
func (v val) appendText(dst []byte) []byte {
	switch v.k {
	case vInt:
		return strconv.AppendInt(dst, v.i, 10)
	case vText, vRaw:
		return append(dst, v.s...)
	case vFloat:
		return strconv.AppendFloat(dst, v.f, 'f', -1, 64)
	}
	return append(dst, "null"...)
}

// javaHash returns Java's hashCode of the value: String.hashCode over UTF-16
// code units for strings; Integer.hashCode for integers that fit 32 bits and
// Long.hashCode otherwise (ShardingSphere reads SQL integer literals as
// Integer when they fit, Long otherwise); Double.hashCode for floats.
func (v val) javaHash() (int64, error) {
	switch v.k {
	case vText, vRaw:
		return int64(javaStringHash(v.s)), nil
	case vInt:
		if v.i >= math.MinInt32 && v.i <= math.MaxInt32 {
			return v.i, nil
		}
		return int64(int32(v.i ^ int64(uint64(v.i)>>32))), nil
	case vFloat:
		b := math.Float64bits(v.f)
		return int64(int32(b ^ b>>32)), nil
	}
	return 0, errNullValue
}

func javaStringHash(s string) int32 {
	var h int32
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			h = 31*h + int32(c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r >= 0x10000 {
			r1, r2 := utf16.EncodeRune(r)
			h = 31*h + int32(r1)
			h = 31*h + int32(r2)
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

// eval evaluates a scalar expression node with column values vars.
func (n *exprNode) eval(vars []val) (val, error) {
	switch n.op {
	case opInt:
		return val{k: vInt, i: n.ival}, nil
	case opStr:
		return val{k: vText, s: n.sval}, nil
	case opVar:
		if n.slot >= len(vars) {
			return val{k: vNull}, nil
		}
		return vars[n.slot], nil
	case opNeg, opAbs:
		a, err := n.a.eval(vars)
		if err != nil {
			return val{}, err
		}
		x, err := a.toInt()
		if err != nil {
			return val{}, err
		}
		if a.i32 && x == math.MinInt32 {
			return val{k: vInt, i: x}, nil // Java: Math.abs(Integer.MIN_VALUE) < 0
		}
		if n.op == opNeg || x < 0 {
			x = -x // MinInt64 stays negative, as in Java
		}
		return val{k: vInt, i: x}, nil
	case opHash:
		a, err := n.a.eval(vars)
		if err != nil {
			return val{}, err
		}
		h, err := a.javaHash()
		return val{k: vInt, i: h, i32: true}, err
	}
	a, err := n.a.eval(vars)
	if err != nil {
		return val{}, err
	}
	b, err := n.b.eval(vars)
	if err != nil {
		return val{}, err
	}
	if n.op == opAdd && (a.k == vText || b.k == vText) {
		return val{k: vText, s: string(b.appendText(a.appendText(nil)))}, nil
	}
	x, err := a.toInt()
	if err != nil {
		return val{}, err
	}
	y, err := b.toInt()
	if err != nil {
		return val{}, err
	}
	switch n.op {
	case opAdd:
		x += y
	case opSub:
		x -= y
	case opMul:
		x *= y
	case opDiv:
		if y == 0 {
			return val{}, errDivByZero
		}
		if x%y != 0 {
			return val{}, errNotInteger
		}
		x /= y
	case opIntDiv:
		if y == 0 {
			return val{}, errDivByZero
		}
		x /= y
	case opMod:
		if y == 0 {
			return val{}, errDivByZero
		}
		x %= y
	default:
		return val{}, fmt.Errorf("operator %d outside a list expression", n.op)
	}
	return val{k: vInt, i: x}, nil
}

// appendEval appends the template's text for column values vars.
func (t *template) appendEval(dst []byte, vars []val) ([]byte, error) {
	for i := range t.parts {
		p := &t.parts[i]
		if p.node == nil {
			dst = append(dst, p.text...)
			continue
		}
		if p.chainOK && len(vars) > 0 && vars[0].k == vInt {
			x, err := p.chain.eval(vars[0].i)
			if err != nil {
				return dst, err
			}
			dst = strconv.AppendInt(dst, x, 10)
			continue
		}
		v, err := p.node.eval(vars)
		if err != nil {
			return dst, err
		}
		dst = v.appendText(dst)
	}
	return dst, nil
}

// constant reports whether the template reads no column.
func (t *template) constant() bool { return len(t.vars) == 0 }

// expand evaluates a list template (actualDataNodes) into every name it
// denotes: the Cartesian product of its parts, the leftmost varying slowest.
func (t *template) expand() ([]string, error) {
	out := []string{""}
	for _, p := range t.parts {
		var items []string
		if p.node == nil {
			items = []string{p.text}
		} else {
			vs, err := p.node.expandNode()
			if err != nil {
				return nil, &ExprError{t.src, 0, err.Error()}
			}
			for _, v := range vs {
				items = append(items, string(v.appendText(nil)))
			}
		}
		next := make([]string, 0, len(out)*len(items))
		for _, prefix := range out {
			for _, it := range items {
				next = append(next, prefix+it)
			}
		}
		if len(next) > maxExpansion {
			return nil, &ExprError{t.src, 0, fmt.Sprintf("expands to more than %d names", maxExpansion)}
		}
		out = next
	}
	return out, nil
}

// maxExpansion bounds what one list expression may denote, so a typo such
// as ${0..99999999} is an error, not an out-of-memory.
const maxExpansion = 1 << 16

func (n *exprNode) expandNode() ([]val, error) {
	switch n.op {
	case opList:
		out := make([]val, 0, len(n.items))
		for _, it := range n.items {
			v, err := it.eval(nil)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case opRange, opRangeExcl:
		lo, err := n.a.eval(nil)
		if err != nil {
			return nil, err
		}
		hi, err := n.b.eval(nil)
		if err != nil {
			return nil, err
		}
		if lo.k != vInt || hi.k != vInt {
			return nil, errors.New("range bounds must be integers")
		}
		a, b := lo.i, hi.i
		step := int64(1)
		if b < a {
			step = -1
		}
		if n.op == opRangeExcl {
			if a == b {
				return nil, nil
			}
			b -= step
		}
		if (b-a)*step >= maxExpansion {
			return nil, fmt.Errorf("range %d..%d has more than %d values", a, b, maxExpansion)
		}
		var out []val
		for x := a; ; x += step {
			out = append(out, val{k: vInt, i: x})
			if x == b {
				break
			}
		}
		return out, nil
	}
	v, err := n.eval(nil)
	if err != nil {
		return nil, err
	}
	return []val{v}, nil
}

// ExpandList compiles and expands a comma-separated list expression, such
// as actualDataNodes' ds_${0..1}.t_order_${0..3}.
func ExpandList(src string) ([]string, error) {
	src, literal := stripParserPrefix(src)
	items, err := splitTopLevel(src)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, it := range items {
		if literal {
			out = append(out, it)
			continue
		}
		t, err := compileTemplate(it, exprList)
		if err != nil {
			return nil, err
		}
		names, err := t.expand()
		if err != nil {
			return nil, err
		}
		out = append(out, names...)
	}
	return out, nil
}

// stripParserPrefix removes ShardingSphere 5.4's inline parser selector:
// <GROOVY> (the default) or <LITERAL> (no ${} expansion).
func stripParserPrefix(src string) (string, bool) {
	switch {
	case len(src) >= 8 && src[:8] == "<GROOVY>":
		return src[8:], false
	case len(src) >= 9 && src[:9] == "<LITERAL>":
		return src[9:], true
	}
	return src, false
}

// intChain is an expression part that reads the first column once and
// applies integer steps to it, innermost first: Math.abs(id) % 2 is abs,
// then mod 2. A sharding expression is almost always one (an integer
// column, a modulus, perhaps an .intdiv), and evaluating it as a chain of
// int64 steps costs a fraction of walking the tree with vals. It gives
// what eval gives for an integer column value; any other value (text, a
// float, NULL) takes eval.
type intChain []intStep

// intStep is one step of an intChain: op applied to the value so far and
// k, or to k and the value so far when left (2 - id).
type intStep struct {
	op   opKind
	k    int64
	left bool
}

// intChainOf compiles n into an intChain: n must read column 0 exactly
// once, through unary minus, Math.abs and + - * / .intdiv % with an
// integer literal on one side. Anything else (.hashCode(), text, another
// column, the column twice) reports false.
func intChainOf(n *exprNode) (intChain, bool) {
	switch n.op {
	case opVar:
		return intChain{}, n.slot == 0
	case opNeg, opAbs:
		c, ok := intChainOf(n.a)
		if !ok {
			return nil, false
		}
		return append(c, intStep{op: n.op}), true
	case opAdd, opSub, opMul, opDiv, opIntDiv, opMod:
		if n.b.op == opInt {
			if c, ok := intChainOf(n.a); ok {
				return append(c, intStep{op: n.op, k: n.b.ival}), true
			}
		}
		if n.a.op == opInt {
			if c, ok := intChainOf(n.b); ok {
				return append(c, intStep{op: n.op, k: n.a.ival, left: true}), true
			}
		}
	}
	return nil, false
}

// eval applies the chain to the column value x, with eval's errors.
func (c intChain) eval(x int64) (int64, error) {
	for _, s := range c {
		switch s.op {
		case opNeg:
			x = -x
			continue
		case opAbs:
			if x < 0 {
				x = -x // MinInt64 stays negative, as in Java
			}
			continue
		}
		a, b := x, s.k
		if s.left {
			a, b = s.k, x
		}
		switch s.op {
		case opAdd:
			x = a + b
		case opSub:
			x = a - b
		case opMul:
			x = a * b
		case opDiv:
			if b == 0 {
				return 0, errDivByZero
			}
			if a%b != 0 {
				return 0, errNotInteger
			}
			x = a / b
		case opIntDiv:
			if b == 0 {
				return 0, errDivByZero
			}
			x = a / b
		case opMod:
			if b == 0 {
				return 0, errDivByZero
			}
			x = a % b
		}
	}
	return x, nil
}
