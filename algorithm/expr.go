package algorithm

import (
	"fmt"
	"strconv"
	"strings"
)

// Inline expressions are the documented subset of ShardingSphere's Groovy
// inline expressions that shardflake evaluates natively:
//
//	t_order_${order_id % 4}          text around ${...} is kept as is
//	t_order_$->{order_id % 4}        $->{...} is an alias of ${...}
//	ds_${0..1}.t_order_${0..3}       ranges (also a..<b); several ${} form a Cartesian product
//	ds_${['a','b']}                  lists of literals
//	ds_0.t_a,ds_1.t_b                top-level commas separate expressions (actualDataNodes)
//	${(user_id + 1) * 3 % 8}         integer + - * / % with the usual precedence
//	${order_id.intdiv(1000) % 4}     .intdiv(n): integer division
//	${Math.abs(code.hashCode()) % 8} Math.abs(x), x.abs(); .hashCode() with Java semantics
//
// Ranges and lists are only allowed where a list of names is expected
// (actualDataNodes, actualDataSources); sharding algorithms evaluate one
// value. "/" is Groovy's division, which yields a decimal for a
// non-integral quotient: shardflake evaluates it exactly and reports a
// non-integral quotient as an error instead of routing to a table named
// "t_3.5" (use .intdiv). Everything else (other methods, closures, ?:,
// comparisons, GString $name without braces) is a configuration error.

// exprMode says what an expression may contain.
type exprMode int

const (
	exprScalar exprMode = iota + 1 // algorithm-expression: one value per evaluation
	exprList                       // actualDataNodes: ranges and lists, no columns
)

// template is a compiled inline expression: literal text and ${} parts.
type template struct {
	src   string
	parts []tmplPart
	// vars are the lower-case column names the expression reads, in order
	// of first use; a column's value is passed at the same index.
	vars []string
}

type tmplPart struct {
	text string    // literal text, when node is nil
	node *exprNode // a ${...} part
	// chain is node compiled for an integer value of the first column,
	// when node is such a chain (intChainOf); ok reports that it is.
	chain   intChain
	chainOK bool
}

type opKind int

const (
	opInt opKind = iota + 1
	opStr
	opVar
	opAdd
	opSub
	opMul
	opDiv
	opMod
	opNeg
	opIntDiv
	opAbs
	opHash
	opRange     // a..b
	opRangeExcl // a..<b
	opList
)

// exprNode is one node of an expression tree. Trees are immutable after
// compilation and shared by concurrent evaluations.
type exprNode struct {
	op    opKind
	ival  int64
	sval  string
	slot  int
	a, b  *exprNode
	items []*exprNode // opList
}

// ExprError is an inline expression that does not compile: the expression
// and what is wrong at which byte offset.
type ExprError struct {
	Expr   string
	Offset int
	Reason string
}

// Error names the expression and the problem.
func (e *ExprError) Error() string {
	return fmt.Sprintf("inline expression %q: %s (at offset %d)", e.Expr, e.Reason, e.Offset)
}

// compileTemplate compiles one inline expression (no top-level commas).
func compileTemplate(src string, mode exprMode) (*template, error) {
	t := &template{src: src}
	i := 0
	var lit strings.Builder
	for i < len(src) {
		c := src[i]
		if c == '\\' && i+1 < len(src) && src[i+1] == '$' {
			lit.WriteByte('$')
			i += 2
			continue
		}
		if c != '$' {
			lit.WriteByte(c)
			i++
			continue
		}
		open := 0
		switch {
		case strings.HasPrefix(src[i:], "${"):
			open = 2
		case strings.HasPrefix(src[i:], "$->{"):
			open = 4
		default:
			return nil, &ExprError{src, i, "a $ must start ${...} or $->{...}"}
		}
		end, err := matchBrace(src, i+open)
		if err != nil {
			return nil, err
		}
		if lit.Len() > 0 {
			t.parts = append(t.parts, tmplPart{text: lit.String()})
			lit.Reset()
		}
		p := &exprParser{src: src, pos: i + open, end: end, mode: mode, t: t}
		n, err := p.parseTop()
		if err != nil {
			return nil, err
		}
		chain, ok := intChainOf(n)
		t.parts = append(t.parts, tmplPart{node: n, chain: chain, chainOK: ok})
		i = end + 1
	}
	if lit.Len() > 0 {
		t.parts = append(t.parts, tmplPart{text: lit.String()})
	}
	if len(t.parts) == 0 {
		return nil, &ExprError{src, 0, "empty expression"}
	}
	return t, nil
}

// matchBrace returns the index of the } closing a ${ whose body starts at
// from, skipping braces inside string literals.
func matchBrace(src string, from int) (int, error) {
	depth := 0
	for i := from; i < len(src); i++ {
		switch src[i] {
		case '\'', '"':
			q := src[i]
			j := i + 1
			for j < len(src) && src[j] != q {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(src) {
				return 0, &ExprError{src, i, "unterminated string literal"}
			}
			i = j
		case '{':
			depth++
		case '}':
			if depth == 0 {
				return i, nil
			}
			depth--
		}
	}
	return 0, &ExprError{src, from, "missing } after ${"}
}

// splitTopLevel splits a list expression on the commas outside ${...},
// trimming spaces, as ShardingSphere splits actualDataNodes.
func splitTopLevel(src string) ([]string, error) {
	var out []string
	start := 0
	for i := 0; i < len(src); i++ {
		switch {
		case src[i] == '$' && (strings.HasPrefix(src[i:], "${") || strings.HasPrefix(src[i:], "$->{")):
			open := 2
			if src[i+1] == '-' {
				open = 4
			}
			end, err := matchBrace(src, i+open)
			if err != nil {
				return nil, err
			}
			i = end
		case src[i] == ',':
			out = append(out, strings.TrimSpace(src[start:i]))
			start = i + 1
		}
	}
	out = append(out, strings.TrimSpace(src[start:]))
	for _, s := range out {
		if s == "" {
			return nil, &ExprError{src, 0, "empty item between commas"}
		}
	}
	return out, nil
}

// exprParser is a recursive-descent parser over src[pos:end].
type exprParser struct {
	src      string
	pos, end int
	mode     exprMode
	t        *template
}

func (p *exprParser) errf(format string, args ...any) error {
	return &ExprError{p.src, p.pos, fmt.Sprintf(format, args...)}
}

func (p *exprParser) skipSpace() {
	for p.pos < p.end && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t' || p.src[p.pos] == '\n' || p.src[p.pos] == '\r') {
		p.pos++
	}
}

func (p *exprParser) peek(s string) bool {
	p.skipSpace()
	return p.pos+len(s) <= p.end && p.src[p.pos:p.pos+len(s)] == s
}

func (p *exprParser) accept(s string) bool {
	if p.peek(s) {
		p.pos += len(s)
		return true
	}
	return false
}

func (p *exprParser) expect(s string) error {
	if !p.accept(s) {
		return p.errf("expected %q", s)
	}
	return nil
}

// parseTop parses the body of one ${...}: an expression, a range or a list.
func (p *exprParser) parseTop() (*exprNode, error) {
	p.skipSpace()
	if p.pos == p.end {
		return nil, p.errf("empty ${}")
	}
	var n *exprNode
	var err error
	if p.peek("[") {
		n, err = p.parseList()
	} else {
		n, err = p.parseAdditive()
		if err == nil && p.peek("..") {
			start := p.pos
			p.pos += 2
			op := opRange
			if p.accept("<") {
				op = opRangeExcl
			}
			var hi *exprNode
			hi, err = p.parseAdditive()
			n = &exprNode{op: op, a: n, b: hi}
			if err == nil && p.mode != exprList {
				p.pos = start
				err = p.errf("a range is only allowed in actualDataNodes and actualDataSources")
			}
		}
	}
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != p.end {
		return nil, p.errf("unexpected %q", p.src[p.pos:p.end])
	}
	return n, nil
}

func (p *exprParser) parseList() (*exprNode, error) {
	start := p.pos
	p.pos++ // [
	n := &exprNode{op: opList}
	for !p.accept("]") {
		if len(n.items) > 0 {
			if err := p.expect(","); err != nil {
				return nil, err
			}
		}
		item, err := p.parseAdditive()
		if err != nil {
			return nil, err
		}
		n.items = append(n.items, item)
	}
	if p.mode != exprList {
		p.pos = start
		return nil, p.errf("a list is only allowed in actualDataNodes and actualDataSources")
	}
	if len(n.items) == 0 {
		p.pos = start
		return nil, p.errf("empty list")
	}
	return n, nil
}

func (p *exprParser) parseAdditive() (*exprNode, error) {
	n, err := p.parseMultiplicative()
	if err != nil {
		return nil, err
	}
	for {
		var op opKind
		switch {
		case p.peek(".."):
			return n, nil
		case p.accept("+"):
			op = opAdd
		case p.accept("-"):
			op = opSub
		default:
			return n, nil
		}
		r, err := p.parseMultiplicative()
		if err != nil {
			return nil, err
		}
		n = &exprNode{op: op, a: n, b: r}
	}
}

func (p *exprParser) parseMultiplicative() (*exprNode, error) {
	n, err := p.parseUnary()
	if err != nil {
		return nil, err
	}
	for {
		var op opKind
		switch {
		case p.accept("*"):
			op = opMul
		case p.accept("/"):
			op = opDiv
		case p.accept("%"):
			op = opMod
		default:
			return n, nil
		}
		r, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		n = &exprNode{op: op, a: n, b: r}
	}
}

func (p *exprParser) parseUnary() (*exprNode, error) {
	if p.accept("-") {
		n, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		if n.op == opInt {
			n.ival = -n.ival
			return n, nil
		}
		return &exprNode{op: opNeg, a: n}, nil
	}
	if p.accept("+") {
		return p.parseUnary()
	}
	return p.parsePostfix()
}

func (p *exprParser) parsePostfix() (*exprNode, error) {
	n, err := p.parsePrimary()
	if err != nil {
		return nil, err
	}
	for p.peek(".") && !p.peek("..") {
		p.pos++
		p.skipSpace()
		at := p.pos
		name := p.ident()
		if err := p.expect("("); err != nil {
			return nil, err
		}
		switch name {
		case "intdiv":
			arg, err := p.parseAdditive()
			if err != nil {
				return nil, err
			}
			n = &exprNode{op: opIntDiv, a: n, b: arg}
		case "hashCode":
			n = &exprNode{op: opHash, a: n}
		case "abs":
			n = &exprNode{op: opAbs, a: n}
		default:
			p.pos = at
			return nil, p.errf("method .%s() is not in shardflake's expression subset (intdiv, hashCode, abs)", name)
		}
		if err := p.expect(")"); err != nil {
			return nil, err
		}
	}
	return n, nil
}

func (p *exprParser) ident() string {
	start := p.pos
	for p.pos < p.end {
		c := p.src[p.pos]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || p.pos > start && c >= '0' && c <= '9' {
			p.pos++
			continue
		}
		break
	}
	return p.src[start:p.pos]
}

func (p *exprParser) parsePrimary() (*exprNode, error) {
	p.skipSpace()
	if p.pos >= p.end {
		return nil, p.errf("expression ends early")
	}
	c := p.src[p.pos]
	switch {
	case c == '(':
		p.pos++
		n, err := p.parseAdditive()
		if err != nil {
			return nil, err
		}
		return n, p.expect(")")
	case c >= '0' && c <= '9':
		start := p.pos
		for p.pos < p.end && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
			p.pos++
		}
		v, err := strconv.ParseInt(p.src[start:p.pos], 10, 64)
		if err != nil {
			digits := p.src[start:p.pos]
			p.pos = start
			return nil, p.errf("integer %s out of range", digits)
		}
		if p.pos < p.end && (p.src[p.pos] == 'L' || p.src[p.pos] == 'l') {
			p.pos++
		}
		if p.pos < p.end && p.src[p.pos] == '.' && !strings.HasPrefix(p.src[p.pos:], "..") {
			return nil, p.errf("decimal numbers are not supported")
		}
		return &exprNode{op: opInt, ival: v}, nil
	case c == '\'' || c == '"':
		return p.parseString()
	case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		start := p.pos
		name := p.ident()
		if name == "Math" {
			if !p.accept(".") {
				return nil, p.errf("expected Math.abs(...)")
			}
			p.skipSpace()
			at := p.pos
			if m := p.ident(); m != "abs" {
				p.pos = at
				return nil, p.errf("Math.%s is not in shardflake's expression subset (Math.abs)", m)
			}
			if err := p.expect("("); err != nil {
				return nil, err
			}
			arg, err := p.parseAdditive()
			if err != nil {
				return nil, err
			}
			return &exprNode{op: opAbs, a: arg}, p.expect(")")
		}
		if p.mode == exprList {
			p.pos = start
			return nil, p.errf("column %s cannot be used in a list of data nodes", name)
		}
		return &exprNode{op: opVar, slot: p.t.slot(name), sval: strings.ToLower(name)}, nil
	}
	return nil, p.errf("unexpected %q", string(c))
}

func (p *exprParser) parseString() (*exprNode, error) {
	q := p.src[p.pos]
	start := p.pos
	p.pos++
	var b strings.Builder
	for p.pos < p.end && p.src[p.pos] != q {
		c := p.src[p.pos]
		if c == '$' && q == '"' {
			return nil, p.errf("interpolation inside a string literal is not supported")
		}
		if c == '\\' && p.pos+1 < p.end {
			p.pos++
			c = p.src[p.pos]
		}
		b.WriteByte(c)
		p.pos++
	}
	if p.pos >= p.end {
		p.pos = start
		return nil, p.errf("unterminated string literal")
	}
	p.pos++
	return &exprNode{op: opStr, sval: b.String()}, nil
}

// slot returns the index of a column among the template's vars, adding it.
func (t *template) slot(name string) int {
	name = strings.ToLower(name)
	for i, v := range t.vars {
		if v == name {
			return i
		}
	}
	t.vars = append(t.vars, name)
	return len(t.vars) - 1
}
