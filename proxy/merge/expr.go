package merge

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/proxy/internal/sqlvalue"
	"github.com/shardflake/shardflake/proxy/rows"
	"github.com/shardflake/shardflake/router"
)

// vkind is the kind of an evaluated value.
type vkind int

const (
	vNull     vkind = iota + 1
	vInt            // i
	vUint           // u
	vDecimal        // d
	vFloat          // f
	vString         // s, compared by coll (nil: the connection's default)
	vTemporal       // s: a DATE/DATETIME/TIMESTAMP/TIME value's text
)

// value is one evaluated SQL value.
type value struct {
	k    vkind
	i    int64
	u    uint64
	d    sqlvalue.Decimal
	f    float64
	s    []byte
	coll *sqlvalue.Collation
	time bool // vTemporal: a TIME (not a date)
}

var nullValue = value{k: vNull}

func intValue(b bool) value {
	if b {
		return value{k: vInt, i: 1}
	}
	return value{k: vInt}
}

// cexpr is a router.Expr with its columns resolved and its type derived
// as MariaDB derives an item's: the kind of its non-NULL values and its
// decimals, which decide how a comparison rounds a DECIMAL and what
// IFNULL and COALESCE convert their value to.
type cexpr struct {
	dialect *Dialect
	op      router.ExprOp
	col     int
	typ     sqlvalue.Type
	lit     value
	args    []*cexpr
	kind    vkind // vNull: the expression is always NULL
	// dec is the decimals of a DECIMAL or DOUBLE result
	// (sqlvalue.NotFixedDecimals: a DOUBLE printed with all its digits).
	dec int
	// places is ROUND's constant number of decimal places.
	places int64
	// enum: an ENUM or SET value, whose number is its member's position,
	// which the merge does not know.
	enum bool
	// small: an integer of a type narrower than BIGINT (an INT column, a
	// literal that fits 32 bits), which ROUND to tens keeps an integer;
	// ROUND turns a BIGINT into a DECIMAL (that cannot overflow).
	small bool
	// lazy: MariaDB reads the right operand only when the left one is
	// not NULL (arithmetic computed as DECIMALs), so an error there does
	// not happen.
	lazy bool
	// double: an ExprAvg whose parent wants a DOUBLE, which MariaDB
	// computes as SUM and COUNT converted to DOUBLE and divided, not as
	// the DECIMAL quotient converted.
	double bool
}

// maxScale is MariaDB's DECIMAL_MAX_SCALE: no item has more decimals.
const maxScale = 38

// arity is how many arguments each operator takes: exactly n for n >= 0,
// at least -n for n < 0.
func arity(op router.ExprOp) int {
	switch op {
	case router.ExprColumn, router.ExprValue, router.ExprDecimal:
		return 0
	case router.ExprNot, router.ExprIsNull, router.ExprIsTrue, router.ExprIsFalse, router.ExprNeg, router.ExprAbs:
		return 1
	case router.ExprAvg:
		return 2
	case router.ExprIn:
		return -2
	case router.ExprCoalesce, router.ExprRound:
		return -1
	case router.ExprBetween:
		return 3
	}
	return 2
}

// knownOp reports an operator this merge evaluates.
func knownOp(op router.ExprOp) bool {
	return op >= router.ExprColumn && op <= router.ExprAvg
}

// compileExpr resolves e against the pipeline's columns and derives the
// type of every node; what stands for "HAVING" or a computed column's
// name in messages.
func (p *pipeline) compileExpr(e *router.Expr, what string) (*cexpr, error) {
	if e == nil {
		return nil, &InternalError{Msg: "nil expression in " + what}
	}
	c := &cexpr{op: e.Op, dialect: &p.dialect}
	switch n := arity(e.Op); {
	case !knownOp(e.Op):
		return nil, &NotSupportedError{What: fmt.Sprintf("the operator %s in %s across data nodes", e.Op, what)}
	case n >= 0 && len(e.Args) != n, n < 0 && len(e.Args) < -n, e.Op == router.ExprRound && len(e.Args) > 2:
		return nil, &InternalError{Msg: fmt.Sprintf("%s with %d arguments in %s", e.Op, len(e.Args), what)}
	}
	switch e.Op {
	case router.ExprColumn:
		col, err := p.column(e.Column)
		if err != nil {
			return nil, err
		}
		c.col, c.typ = col, p.types[col]
		if err := c.typ.EqualError(); err != nil {
			return nil, notMergeable(what, p.fields[col], err)
		}
		if err := noPluginValue(c.typ); err != nil {
			return nil, notMergeable(what, p.fields[col], err)
		}
	case router.ExprValue:
		v, err := literal(e.Value)
		if err != nil {
			return nil, err
		}
		c.lit = v
	case router.ExprDecimal:
		s, ok := e.Value.(string)
		d, err := sqlvalue.ParseDecimal([]byte(s))
		if !ok || err != nil {
			return nil, &InternalError{Msg: fmt.Sprintf("decimal literal %v in %s", e.Value, what)}
		}
		c.lit = value{k: vDecimal, d: d}
	}
	for _, a := range e.Args {
		ca, err := p.compileExpr(a, what)
		if err != nil {
			return nil, err
		}
		c.args = append(c.args, ca)
	}
	if err := c.derive(p, what); err != nil {
		return nil, err
	}
	return c, nil
}

// derive sets c's kind and decimals from its arguments' with MariaDB's
// rules, and refuses what the merge cannot compute exactly.
func (c *cexpr) derive(p *pipeline, what string) error {
	a := func(i int) *cexpr { return c.args[i] }
	switch c.op {
	case router.ExprColumn:
		c.kind, c.dec, c.enum = classKind(c.typ), int(p.fields[c.col].Decimal), c.typ.Enum
		switch p.fields[c.col].Type {
		case mysql.MYSQL_TYPE_TINY, mysql.MYSQL_TYPE_SHORT, mysql.MYSQL_TYPE_INT24, mysql.MYSQL_TYPE_LONG, mysql.MYSQL_TYPE_YEAR:
			c.small = true
		}
	case router.ExprValue:
		c.kind, c.dec = c.lit.k, 0
		if c.kind == vFloat || c.kind == vString {
			c.dec = sqlvalue.NotFixedDecimals
		}
		c.small = c.kind == vInt && c.lit.i >= math.MinInt32 && c.lit.i <= math.MaxInt32
	case router.ExprDecimal:
		c.kind, c.dec = vDecimal, c.lit.d.Scale()
	case router.ExprPlus, router.ExprMinus, router.ExprMul, router.ExprDiv, router.ExprIntDiv, router.ExprMod:
		for _, x := range c.args {
			if x.kind == vTemporal {
				return &NotSupportedError{What: fmt.Sprintf("arithmetic on a date or time value in %s across data nodes", what)}
			}
		}
		if err := c.noEnum(what); err != nil {
			return err
		}
		c.kind, c.dec = arithmeticType(c.op, a(0), a(1))
		intArgs := isIntKind(a(0).kind) && isIntKind(a(1).kind)
		c.lazy = c.kind == vDecimal || c.op == router.ExprIntDiv && !intArgs
		if c.kind == vFloat {
			return c.wantDouble(p, what)
		}
	case router.ExprAvg:
		c.kind, c.dec = arithmeticType(router.ExprDiv, a(0), a(1))
	case router.ExprNeg, router.ExprAbs:
		if err := c.noEnum(what); err != nil {
			return err
		}
		switch k := a(0).kind; k {
		case vTemporal:
			return &NotSupportedError{What: fmt.Sprintf("%s of a date or time value in %s across data nodes", c.op, what)}
		case vString:
			c.kind, c.dec = vFloat, sqlvalue.NotFixedDecimals
		case vUint:
			c.kind, c.dec = vInt, 0
			if c.op == router.ExprAbs {
				c.kind = vUint
			}
		default:
			c.kind, c.dec = k, a(0).dec
		}
	case router.ExprRound:
		if err := c.noEnum(what); err != nil {
			return err
		}
		return c.deriveRound(what)
	case router.ExprIfNull, router.ExprCoalesce:
		if err := c.deriveChoice(what); err != nil {
			return err
		}
		for _, x := range c.args {
			c.enum = c.enum || x.enum
		}
		if c.kind == vFloat {
			return c.wantDouble(p, what)
		}
	case router.ExprEQ, router.ExprNE, router.ExprLT, router.ExprLE, router.ExprGT, router.ExprGE, router.ExprNullSafeEQ, router.ExprBetween, router.ExprIn:
		c.kind, c.dec = vInt, 0
		numbers := false
		for _, x := range c.args {
			numbers = numbers || isNumberKind(x.kind)
		}
		if numbers {
			if err := c.noEnum(what); err != nil {
				return err
			}
		}
		for _, x := range c.args {
			if x.kind == vFloat || x.kind == vString {
				// Compared as DOUBLEs.
				return c.wantDouble(p, what)
			}
		}
	case router.ExprIsNull:
		c.kind, c.dec = vInt, 0
	default: // logic: the arguments' truth
		c.kind, c.dec = vInt, 0
		return c.noEnum(what)
	}
	return nil
}

// noPluginValue refuses a value of MariaDB's INET4, INET6 or UUID type
// (or one that may be, sqlvalue.Type.Unnamed) in an expression: MariaDB
// converts what it meets there to the type, which the merge's string
// values do not do.
func noPluginValue(t sqlvalue.Type) error {
	switch {
	case t.Class == sqlvalue.ClassInet4 || t.Class == sqlvalue.ClassInet6 || t.Class == sqlvalue.ClassUUID:
		return fmt.Errorf("a value of type %s in an expression, which MariaDB computes with as that type", t.Class)
	case t.Unnamed:
		return t.MinMaxError()
	}
	return nil
}

// noEnum refuses an ENUM or SET argument where MariaDB reads its number.
func (c *cexpr) noEnum(what string) error {
	for _, x := range c.args {
		if x.enum {
			return &NotSupportedError{What: fmt.Sprintf("an ENUM or SET value as a number in %s across data nodes: its number is its member's position in the column's definition", what)}
		}
	}
	return nil
}

func isNumberKind(k vkind) bool { return k == vInt || k == vUint || k == vDecimal || k == vFloat }

func isIntKind(k vkind) bool { return k == vInt || k == vUint || k == vNull }

// wantDouble marks the AVGs among c's arguments, whose values c reads as
// DOUBLEs. Over all rows MariaDB divides SUM by COUNT as DOUBLEs; under
// GROUP BY it may instead convert the DECIMAL quotient (when it groups in
// a temporary table, whose AVG field gives that), as its plan goes: the
// merge refuses the DECIMAL AVG then.
func (c *cexpr) wantDouble(p *pipeline, what string) error {
	for _, x := range c.args {
		if x.op != router.ExprAvg {
			continue
		}
		if p.grouped && x.kind == vDecimal {
			return &NotSupportedError{What: fmt.Sprintf("an AVG of exact numbers used as a DOUBLE under GROUP BY in %s across data nodes: MariaDB computes it as SUM / COUNT in DOUBLE or as the DECIMAL average converted, depending on its plan", what)}
		}
		x.double = true
	}
	return nil
}

// classKind is the kind of a column's non-NULL values.
func classKind(t sqlvalue.Type) vkind {
	switch t.Class {
	case sqlvalue.ClassInt:
		if t.Unsigned {
			return vUint
		}
		return vInt
	case sqlvalue.ClassDecimal:
		return vDecimal
	case sqlvalue.ClassFloat:
		return vFloat
	case sqlvalue.ClassDate, sqlvalue.ClassTime:
		return vTemporal
	case sqlvalue.ClassNull:
		return vNull
	}
	return vString
}

// arithmeticType is the type of a op b: DOUBLE when a DOUBLE or a string
// is involved, BIGINT for DIV, DECIMAL when a DECIMAL is or for /, BIGINT
// (UNSIGNED as MariaDB's rules say) otherwise. A DECIMAL's decimals are
// the larger operand's for + - %, their sum for *, the dividend's plus
// div_precision_increment for /.
func arithmeticType(op router.ExprOp, a, b *cexpr) (vkind, int) {
	ka, kb := a.kind, b.kind
	if op == router.ExprIntDiv {
		if ka == vUint || kb == vUint {
			return vUint, 0
		}
		return vInt, 0
	}
	var dec int
	switch op {
	case router.ExprMul:
		dec = a.dec + b.dec
	case router.ExprDiv:
		dec = a.dec + sqlvalue.DivPrecisionIncrement
	default:
		dec = max(a.dec, b.dec)
	}
	switch {
	case ka == vFloat || kb == vFloat || ka == vString || kb == vString:
		if a.dec >= sqlvalue.NotFixedDecimals || b.dec >= sqlvalue.NotFixedDecimals || dec >= sqlvalue.NotFixedDecimals {
			return vFloat, sqlvalue.NotFixedDecimals
		}
		return vFloat, dec
	case ka == vDecimal || kb == vDecimal || op == router.ExprDiv:
		return vDecimal, min(dec, maxScale)
	case op == router.ExprMod && ka == vUint, op != router.ExprMod && (ka == vUint || kb == vUint):
		return vUint, 0
	}
	return vInt, 0
}

// deriveRound checks that ROUND's places are a constant integer and
// derives its type: the argument's, with the places as decimals.
func (c *cexpr) deriveRound(what string) error {
	if len(c.args) == 2 {
		pl := c.args[1]
		if hasColumn(pl) {
			return &NotSupportedError{What: fmt.Sprintf("ROUND with places that are not a constant in %s across data nodes", what)}
		}
		v, err := pl.eval(nil)
		if err != nil {
			return err
		}
		switch v.k {
		case vInt:
			c.places = v.i
		case vUint:
			c.places = int64(min(v.u, 1<<31))
		case vNull:
			c.kind = vNull
			return nil
		default:
			return &NotSupportedError{What: fmt.Sprintf("ROUND with places that are not an integer in %s across data nodes", what)}
		}
	}
	switch k := c.args[0].kind; k {
	case vTemporal:
		return &NotSupportedError{What: fmt.Sprintf("ROUND of a date or time value in %s across data nodes", what)}
	case vInt, vUint, vNull:
		c.kind, c.dec, c.small = k, 0, c.args[0].small
		if c.places < 0 && !c.small && k != vNull {
			c.kind = vDecimal
		}
	case vDecimal:
		c.kind, c.dec = vDecimal, int(min(max(c.places, 0), maxScale))
	default:
		c.kind, c.dec = vFloat, int(min(max(c.places, 0), sqlvalue.NotFixedDecimals))
	}
	return nil
}

// deriveChoice derives the type of IFNULL and COALESCE from their
// arguments': DOUBLE, DECIMAL or BIGINT for numbers, a string when a
// string is among them, a date or time when all are.
func (c *cexpr) deriveChoice(what string) error {
	var numbers, strs, temporals, floats, decimals, unsigned, signed int
	for _, x := range c.args {
		switch x.kind {
		case vInt:
			numbers++
			signed++
		case vUint:
			numbers++
			unsigned++
		case vDecimal:
			numbers++
			decimals++
		case vFloat:
			numbers++
			floats++
		case vString:
			strs++
		case vTemporal:
			temporals++
		}
		c.dec = max(c.dec, x.dec)
	}
	switch {
	case strs > 0:
		c.kind, c.dec = vString, sqlvalue.NotFixedDecimals
	case temporals > 0 && numbers > 0:
		return &NotSupportedError{What: fmt.Sprintf("%s of a date or time value and a number in %s across data nodes", c.op, what)}
	case temporals > 0:
		c.kind = vTemporal
	case floats > 0:
		c.kind = vFloat
	case decimals > 0:
		c.kind, c.dec = vDecimal, min(c.dec, maxScale)
	case unsigned > 0 && signed == 0:
		c.kind, c.dec = vUint, 0
	case unsigned > 0:
		// Signed and unsigned integers together are a DECIMAL in
		// MariaDB (IFNULL(MAX(u), -1) is DECIMAL(20,0) for a BIGINT
		// UNSIGNED u, DECIMAL(10,0) for an INT UNSIGNED one), so
		// arithmetic over the choice does not overflow BIGINT.
		c.kind, c.dec = vDecimal, 0
	case numbers > 0:
		c.kind, c.dec = vInt, 0
		c.small = true
		for _, x := range c.args {
			c.small = c.small && (x.small || x.kind == vNull)
		}
	default:
		c.kind, c.dec = vNull, 0
	}
	return nil
}

// hasColumn reports a column leaf in c.
func hasColumn(c *cexpr) bool {
	if c.op == router.ExprColumn {
		return true
	}
	for _, a := range c.args {
		if hasColumn(a) {
			return true
		}
	}
	return false
}

// literal converts a bound value of the plan.
func literal(v any) (value, error) {
	switch x := v.(type) {
	case nil:
		return nullValue, nil
	case int64:
		return value{k: vInt, i: x}, nil
	case int:
		return value{k: vInt, i: int64(x)}, nil
	case uint64:
		return value{k: vUint, u: x}, nil
	case float64:
		return value{k: vFloat, f: x}, nil
	case float32:
		return value{k: vFloat, f: float64(x)}, nil
	case bool:
		return intValue(x), nil
	case string:
		return value{k: vString, s: []byte(x)}, nil
	case []byte:
		return value{k: vString, s: x}, nil
	case time.Time:
		return value{k: vString, s: []byte(x.Format("2006-01-02 15:04:05.999999"))}, nil
	}
	return value{}, &InternalError{Msg: fmt.Sprintf("expression literal of type %T", v)}
}

// columnValue reads a row's value as its column's type.
func columnValue(v []byte, t *sqlvalue.Type) value {
	if v == nil {
		return nullValue
	}
	switch t.Class {
	case sqlvalue.ClassInt:
		if t.Unsigned {
			if u, err := strconv.ParseUint(string(v), 10, 64); err == nil {
				return value{k: vUint, u: u}
			}
		} else if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return value{k: vInt, i: i}
		}
	case sqlvalue.ClassDecimal:
		if d, err := sqlvalue.ParseDecimal(v); err == nil {
			return value{k: vDecimal, d: d}
		}
	case sqlvalue.ClassFloat:
		f, _ := sqlvalue.ParseDouble(v)
		return value{k: vFloat, f: f}
	case sqlvalue.ClassDate:
		return value{k: vTemporal, s: v}
	case sqlvalue.ClassTime:
		return value{k: vTemporal, s: v, time: true}
	case sqlvalue.ClassNull:
		return nullValue
	}
	return value{k: vString, s: v, coll: t.Collation}
}

// eval evaluates c over row (nil for a constant expression).
func (c *cexpr) eval(row rows.Row) (value, error) {
	switch c.op {
	case router.ExprColumn:
		return columnValue(row[c.col], &c.typ), nil
	case router.ExprValue, router.ExprDecimal:
		return c.lit, nil
	case router.ExprAnd, router.ExprOr, router.ExprXor:
		return c.logic(row)
	case router.ExprIfNull, router.ExprCoalesce:
		// The first non-NULL argument; the later ones are not evaluated.
		for _, a := range c.args {
			v, err := a.eval(row)
			if err != nil || v.k != vNull {
				return convertTo(v, c.kind, a.dec), err
			}
		}
		return nullValue, nil
	}
	args := make([]value, len(c.args))
	for i, a := range c.args {
		v, err := a.eval(row)
		if err != nil {
			return value{}, err
		}
		if v.k == vNull && c.lazy {
			return nullValue, nil
		}
		args[i] = v
	}
	switch c.op {
	case router.ExprNot:
		switch truth(args[0]) {
		case triUnknown:
			return nullValue, nil
		case triTrue:
			return intValue(false), nil
		}
		return intValue(true), nil
	case router.ExprIsNull:
		return intValue(args[0].k == vNull), nil
	case router.ExprIsTrue:
		return intValue(truth(args[0]) == triTrue), nil
	case router.ExprIsFalse:
		return intValue(truth(args[0]) == triFalse), nil
	case router.ExprNullSafeEQ:
		if args[0].k == vNull || args[1].k == vNull {
			return intValue(args[0].k == args[1].k), nil
		}
		return intValue(c.compare(args[0], args[1]) == 0), nil
	case router.ExprEQ, router.ExprNE, router.ExprLT, router.ExprLE, router.ExprGT, router.ExprGE:
		if args[0].k == vNull || args[1].k == vNull {
			return nullValue, nil
		}
		r := c.compare(args[0], args[1])
		switch c.op {
		case router.ExprEQ:
			return intValue(r == 0), nil
		case router.ExprNE:
			return intValue(r != 0), nil
		case router.ExprLT:
			return intValue(r < 0), nil
		case router.ExprLE:
			return intValue(r <= 0), nil
		case router.ExprGT:
			return intValue(r > 0), nil
		}
		return intValue(r >= 0), nil
	case router.ExprBetween:
		// Unlike =, BETWEEN compares DECIMALs unrounded.
		ge, le := nullValue, nullValue
		if args[0].k != vNull && args[1].k != vNull {
			ge = intValue(compareValues(args[0], args[1]) >= 0)
		}
		if args[0].k != vNull && args[2].k != vNull {
			le = intValue(compareValues(args[0], args[2]) <= 0)
		}
		return and(truth(ge), truth(le)), nil
	case router.ExprIn:
		if args[0].k == vNull {
			return nullValue, nil
		}
		sawNull := false
		for _, v := range args[1:] {
			if v.k == vNull {
				sawNull = true
				continue
			}
			if compareValues(args[0], v) == 0 {
				return intValue(true), nil
			}
		}
		if sawNull {
			return nullValue, nil
		}
		return intValue(false), nil
	case router.ExprNeg:
		return negate(args[0])
	case router.ExprAbs:
		return absolute(args[0])
	case router.ExprRound:
		if c.kind == vNull {
			return nullValue, nil
		}
		return round(args[0], c.places, c.kind == vDecimal)
	case router.ExprAvg:
		if c.double && args[0].k != vNull && args[1].k != vNull {
			if n := toFloat(args[1]); n != 0 {
				return value{k: vFloat, f: toFloat(args[0]) / n}, nil
			}
			return nullValue, nil
		}
		return c.arithmetic(router.ExprDiv, args[0], args[1])
	}
	return c.arithmetic(c.op, args[0], args[1])
}

// compare compares the non-NULL values of c's two arguments as =, <, ...
// do: when they compare as DECIMALs, MariaDB first rounds each to its
// item's decimals (so 5/3 = 1.6667 holds although 5/3 is 1.666666666
// inside).
func (c *cexpr) compare(a, b value) int {
	if isExact(a) && isExact(b) && (a.k == vDecimal || b.k == vDecimal) {
		a, b = roundDecimal(a, c.args[0].dec), roundDecimal(b, c.args[1].dec)
	}
	return compareValues(a, b)
}

func isExact(v value) bool { return v.k == vInt || v.k == vUint || v.k == vDecimal }

// roundDecimal rounds a DECIMAL value half up to dec places when it has
// more.
func roundDecimal(v value, dec int) value {
	if v.k == vDecimal && dec < v.d.Scale() {
		return value{k: vDecimal, d: v.d.Round(dec)}
	}
	return v
}

// and is AND of two truth values.
func and(l, r tri) value {
	switch {
	case l == triFalse || r == triFalse:
		return intValue(false)
	case l == triUnknown || r == triUnknown:
		return nullValue
	}
	return intValue(true)
}

// logic evaluates AND, OR and XOR with SQL's three-valued logic; AND and
// OR skip the right side when the left decides.
func (c *cexpr) logic(row rows.Row) (value, error) {
	l, err := c.args[0].eval(row)
	if err != nil {
		return value{}, err
	}
	lt := truth(l)
	switch {
	case c.op == router.ExprAnd && lt == triFalse:
		return intValue(false), nil
	case c.op == router.ExprOr && lt == triTrue:
		return intValue(true), nil
	}
	r, err := c.args[1].eval(row)
	if err != nil {
		return value{}, err
	}
	rt := truth(r)
	switch c.op {
	case router.ExprAnd:
		switch {
		case rt == triFalse:
			return intValue(false), nil
		case lt == triUnknown || rt == triUnknown:
			return nullValue, nil
		}
		return intValue(true), nil
	case router.ExprOr:
		switch {
		case rt == triTrue:
			return intValue(true), nil
		case lt == triUnknown || rt == triUnknown:
			return nullValue, nil
		}
		return intValue(false), nil
	}
	if lt == triUnknown || rt == triUnknown {
		return nullValue, nil
	}
	return intValue(lt != rt), nil
}
