package config

import (
	"fmt"
	"strings"
)

// Algorithm type names shardflake implements.
const (
	AlgInline        = "INLINE"
	AlgComplexInline = "COMPLEX_INLINE"
	AlgHintInline    = "HINT_INLINE"
	AlgMod           = "MOD"
	AlgHashMod       = "HASH_MOD"
	AlgBoundaryRange = "BOUNDARY_RANGE"
	AlgVolumeRange   = "VOLUME_RANGE"
	AlgInterval      = "INTERVAL"
	AlgAutoInterval  = "AUTO_INTERVAL"
)

// propError is a bad or missing algorithm prop; the loader adds the line.
type propError struct {
	Prop   string // the prop's key; "" for the algorithm as a whole
	Reason string
}

func (e *propError) Error() string {
	if e.Prop == "" {
		return e.Reason
	}
	return e.Prop + ": " + e.Reason
}

func propErrorf(prop, format string, args ...any) error {
	return &propError{Prop: prop, Reason: fmt.Sprintf(format, args...)}
}

// algorithmBase holds what every algorithm keeps: its type and props.
type algorithmBase struct {
	typ   string
	props map[string]string
}

// Type returns the ShardingSphere type name.
func (a *algorithmBase) Type() string { return a.typ }

// Props returns the props as written; the map must not be modified.
func (a *algorithmBase) Props() map[string]string { return a.props }

// checkProps reports a prop the algorithm does not know.
func checkProps(props map[string]string, known ...string) error {
	for k := range props {
		found := false
		for _, kn := range known {
			if k == kn {
				found = true
				break
			}
		}
		if !found {
			return propErrorf(k, "unknown prop (known: %s)", strings.Join(known, ", "))
		}
	}
	return nil
}

func propBool(props map[string]string, key string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(props[key])) {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	}
	return false, propErrorf(key, "want true or false, got %q", props[key])
}

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
	name, err := a.expr.appendEval(c.buf[:0], vars)
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

func (a *inlineAlgorithm) rangeOf(c *routeCtx) error {
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
			if err := a.rangeOf(c); err != nil {
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
