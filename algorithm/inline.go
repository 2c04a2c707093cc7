package algorithm

import (
	"fmt"
	"slices"
	"strings"
)

// inlineAlgorithm is INLINE, COMPLEX_INLINE and HINT_INLINE: a compiled
// inline expression whose text is the target name.
type inlineAlgorithm struct {
	algorithmBase
	expr       *template
	allowRange bool
	// columns is COMPLEX_INLINE's sharding-columns (lower-case), if set.
	columns []string
}

const (
	propAlgorithmExpression = "algorithm-expression"
	propAllowRange          = "allow-range-query-with-inline-sharding"
	propShardingColumns     = "sharding-columns"
)

func newInlineAlgorithm(typ string, props map[string]string) (*inlineAlgorithm, error) {
	a := &inlineAlgorithm{algorithmBase: algorithmBase{typ: typ, props: props}}
	known := []string{propAlgorithmExpression, propAllowRange}
	switch typ {
	case AlgComplexInline:
		known = append(known, propShardingColumns)
	case AlgHintInline:
		known = known[:1]
	}
	if err := checkProps(props, known...); err != nil {
		return nil, err
	}
	src := strings.TrimSpace(props[propAlgorithmExpression])
	if src == "" {
		if typ != AlgHintInline {
			return nil, propErrorf(propAlgorithmExpression, "required")
		}
		src = "${value}"
	}
	src, literal := stripParserPrefix(src)
	if literal {
		return nil, propErrorf(propAlgorithmExpression, "<LITERAL> cannot compute a target")
	}
	t, err := compileTemplate(src, exprScalar)
	if err != nil {
		return nil, propErrorf(propAlgorithmExpression, "%v", err)
	}
	a.expr = t
	if a.allowRange, err = propBool(props, propAllowRange); err != nil {
		return nil, err
	}
	if typ == AlgHintInline {
		for _, v := range t.vars {
			if v != "value" {
				return nil, propErrorf(propAlgorithmExpression, "%q reads %s; a hint expression can only read ${value}", src, v)
			}
		}
	}
	if typ == AlgComplexInline && len(t.vars) > maxComplexVars {
		return nil, propErrorf(propAlgorithmExpression, "reads %d columns; at most %d are supported", len(t.vars), maxComplexVars)
	}
	if typ == AlgComplexInline && strings.TrimSpace(props[propShardingColumns]) != "" {
		for _, c := range strings.Split(props[propShardingColumns], ",") {
			a.columns = append(a.columns, strings.ToLower(strings.TrimSpace(c)))
		}
	}
	return a, nil
}

// values evaluates the expression for each value (bound to the strategy's
// one column, or to ${value} for a hint) and selects the named target.
func (a *inlineAlgorithm) values(c *routeCtx, values []Value) error {
	var vars [1]val
	for _, v := range values {
		x, err := valOf(v)
		if err != nil {
			return c.routeError(v, err.Error())
		}
		if x.k == vNull {
			continue // NULL matches no row
		}
		vars[0] = x
		if err := a.target(c, vars[:], v); err != nil {
			return err
		}
	}
	return nil
}

// target evaluates the expression for one set of column values and selects
// the target it names, which must be in available.
func (a *inlineAlgorithm) target(c *routeCtx, vars []val, v Value) error {
	var buf [64]byte
	name, err := a.expr.appendEval(buf[:0], vars)
	if err != nil {
		return c.routeError(v, fmt.Sprintf("%s: %v", a.expr.src, err))
	}
	if !c.addName(name) {
		if c.missing == TargetOptional {
			return nil
		}
		return c.routeError(v, fmt.Sprintf("%s evaluates to %s, which is not among %s",
			a.expr.src, string(name), strings.Join(c.available, ",")))
	}
	return nil
}

func (a *inlineAlgorithm) rangeOf(c *routeCtx, _ *Range) error {
	if !a.allowRange {
		return errNotSupported("sharding algorithm %s (%s) on %s cannot route a range query: set %s: true to scan every data node",
			c.s.AlgorithmName, a.typ, columnList(c.s.Columns), propAllowRange)
	}
	c.addAll()
	return nil
}

// maxComplexVars bounds the columns one complex expression may read, so
// evaluation keeps its scratch space on the stack.
const maxComplexVars = 8

// complex evaluates COMPLEX_INLINE over the Cartesian product of the
// columns' exact values. A column without a condition means every target
// (ShardingSphere rejects that; shardflake scans, which is correct).
func (a *inlineAlgorithm) complex(c *routeCtx, conds map[string]ColumnCondition) (bool, error) {
	vars := a.expr.vars
	var lists [maxComplexVars][]Value
	for i, name := range vars {
		cond, ok := conds[name]
		switch {
		case !ok || cond.Values == nil && cond.Range == nil:
			return true, nil
		case cond.Values == nil:
			if err := a.rangeOf(c, cond.Range); err != nil {
				return false, err
			}
			return true, nil
		case len(cond.Values) == 0:
			return false, nil
		}
		lists[i] = cond.Values
	}
	var idx [maxComplexVars]int
	var vals [maxComplexVars]val
	for {
		null := false
		for i := range vars {
			x, err := valOf(lists[i][idx[i]])
			if err != nil {
				return false, c.routeError(lists[i][idx[i]], err.Error())
			}
			null = null || x.k == vNull
			vals[i] = x
		}
		if !null {
			var first Value
			if len(vars) > 0 {
				first = lists[0][idx[0]]
			}
			if err := a.target(c, vals[:len(vars)], first); err != nil {
				return false, err
			}
		}
		i := len(vars) - 1
		for ; i >= 0; i-- {
			idx[i]++
			if idx[i] < len(lists[i]) {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return false, nil
		}
	}
}

// Kind is complex for COMPLEX_INLINE, hint for HINT_INLINE, else standard.
func (a *inlineAlgorithm) Kind() StrategyKind {
	switch a.typ {
	case AlgComplexInline:
		return StrategyComplex
	case AlgHintInline:
		return StrategyHint
	}
	return StrategyStandard
}

// Domain is the integers when the expression computes with its columns;
// an expression that uses a column as text cannot be sampled.
func (a *inlineAlgorithm) Domain() (Domain, string) {
	if !a.expr.numeric() {
		return Domain{}, fmt.Sprintf("expression %s uses its column as text, not as a number", a.expr.src)
	}
	return Domain{Kind: DomainInt}, ""
}

// CheckColumns checks that the expression (and COMPLEX_INLINE's
// sharding-columns) read only the strategy's columns.
func (a *inlineAlgorithm) CheckColumns(columns []string) error {
	for _, v := range a.expr.vars {
		if !slices.Contains(columns, v) {
			return fmt.Errorf("expression %q reads %s, which is not the strategy's sharding column (%s)", a.expr.src, v, strings.Join(columns, ","))
		}
	}
	for _, c := range a.columns {
		if !slices.Contains(columns, c) {
			return fmt.Errorf("sharding-columns %s differ from the strategy's shardingColumns %s", strings.Join(a.columns, ","), strings.Join(columns, ","))
		}
	}
	return nil
}

// numeric reports whether every column the expression reads is an operand
// of arithmetic or .hashCode(), so sampling it with integers is meaningful.
func (t *template) numeric() bool {
	for _, p := range t.parts {
		if p.node != nil && !p.node.numericUse(false) {
			return false
		}
	}
	return true
}

func (n *exprNode) numericUse(inArith bool) bool {
	switch n.op {
	case opVar:
		return inArith
	case opInt, opStr:
		return true
	case opHash:
		return n.a.numericUse(true)
	case opAdd:
		text := n.a.op == opStr || n.b.op == opStr
		return n.a.numericUse(!text) && n.b.numericUse(!text)
	case opNeg, opAbs:
		return n.a.numericUse(true)
	}
	ok := true
	if n.a != nil {
		ok = ok && n.a.numericUse(true)
	}
	if n.b != nil {
		ok = ok && n.b.numericUse(true)
	}
	return ok
}

// routeValues and routeRange are the Algorithm methods (by value, see
// routeCtx) over values and rangeOf.
func (a *inlineAlgorithm) routeValues(c routeCtx, values []Value) (routeCtx, error) {
	err := a.values(&c, values)
	return c, err
}

func (a *inlineAlgorithm) routeRange(c routeCtx, r *Range) (routeCtx, error) {
	err := a.rangeOf(&c, r)
	return c, err
}

// routeComplex is the complexAlgorithm method (by value) over complex.
func (a *inlineAlgorithm) routeComplex(c routeCtx, conds map[string]ColumnCondition) (routeCtx, bool, error) {
	all, err := a.complex(&c, conds)
	return c, all, err
}
