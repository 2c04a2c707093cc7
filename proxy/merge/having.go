package merge

import (
	"fmt"
	"strconv"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/proxy/internal/sqlvalue"
	"github.com/shardflake/shardflake/proxy/rows"
	"github.com/shardflake/shardflake/router"
)

// havingFilter keeps the rows for which the HAVING condition is true (not
// false, not NULL).
type havingFilter struct {
	src  stage
	cond *cexpr
}

func (h *havingFilter) Next() (rows.Row, error) {
	for {
		row, err := h.src.Next()
		if err != nil {
			return nil, err
		}
		v, err := h.cond.eval(row)
		if err != nil {
			return nil, err
		}
		if truth(v) == triTrue {
			return row, nil
		}
	}
}

// computeStage replaces the values of computed columns (expressions over
// aggregates) in each grouped row, as a stage or (src nil) applied to the
// rows leaving the merge. It writes into the row it is given: the
// grouping stage's, which that stage rebuilds for every group, or one the
// in-memory sort or DISTINCT holds.
type computeStage struct {
	src   stage
	cols  []computedColumn
	vals  []value
	spans [][2]int
	buf   []byte
}

// computedColumn is one resolved router.Computed.
type computedColumn struct {
	col  int
	expr *cexpr
	typ  sqlvalue.Type
	name string
}

// newCompute compiles the computed columns. Each column's definition, as
// the routes returned it, is what the client sees; the merge refuses an
// expression whose value it would have to convert to another kind of
// type than it computes (say a number into a DATETIME).
func (p *pipeline) newCompute(src stage, cs []router.Computed) (*computeStage, error) {
	st := &computeStage{src: src, vals: make([]value, len(cs)), spans: make([][2]int, len(cs))}
	for _, c := range cs {
		col, err := p.column(c.Column)
		if err != nil {
			return nil, err
		}
		name := "the column `" + string(p.fields[col].Name) + "`"
		x, err := p.compileExpr(c.Expr, name)
		if err != nil {
			return nil, err
		}
		t := p.types[col]
		if !convertible(x.kind, t) || x.kind == vTemporal && !p.sameTemporal(x, p.fields[col]) {
			return nil, &NotSupportedError{What: fmt.Sprintf("%s across data nodes: the merge computes %s values and the column is %s", name, x.kind, t.Class)}
		}
		st.cols = append(st.cols, computedColumn{col: col, expr: x, typ: t, name: name})
	}
	return st, nil
}

// sameTemporal reports whether every date or time column x reads has the
// type of f: the merge returns their text as it is, where MariaDB would
// convert a DATE to a DATETIME.
func (p *pipeline) sameTemporal(x *cexpr, f *mysql.Field) bool {
	if x.op == router.ExprColumn && x.kind == vTemporal {
		g := p.fields[x.col]
		return g.Type == f.Type && g.Decimal == f.Decimal
	}
	for _, a := range x.args {
		if !p.sameTemporal(a, f) {
			return false
		}
	}
	return true
}

// String names a kind of value, for messages.
func (k vkind) String() string {
	switch k {
	case vNull:
		return "NULL"
	case vInt, vUint:
		return "integer"
	case vDecimal:
		return "decimal"
	case vFloat:
		return "float"
	case vString:
		return "string"
	case vTemporal:
		return "date or time"
	}
	return "unknown"
}

// convertible reports whether values of kind k print as MariaDB prints
// them in a column of type t.
func convertible(k vkind, t sqlvalue.Type) bool {
	switch t.Class {
	case sqlvalue.ClassNull:
		return k == vNull
	case sqlvalue.ClassInt, sqlvalue.ClassDecimal:
		return k == vNull || k == vInt || k == vUint || k == vDecimal
	case sqlvalue.ClassFloat:
		return k != vTemporal
	case sqlvalue.ClassString:
		return true
	case sqlvalue.ClassDate, sqlvalue.ClassTime:
		return k == vNull || k == vTemporal
	}
	return false
}

func (c *computeStage) Next() (rows.Row, error) {
	row, err := c.src.Next()
	if err != nil {
		return nil, err
	}
	return row, c.apply(row)
}

// apply writes the computed columns into row.
func (c *computeStage) apply(row rows.Row) error {
	var err error
	// Every expression reads the row before any column changes.
	for i := range c.cols {
		if c.vals[i], err = c.cols[i].expr.eval(row); err != nil {
			return err
		}
	}
	c.buf = c.buf[:0]
	for i := range c.cols {
		start := len(c.buf)
		var null bool
		if c.buf, null, err = appendAs(c.buf, c.vals[i], &c.cols[i]); err != nil {
			return err
		}
		c.spans[i] = [2]int{start, len(c.buf)}
		if null {
			c.spans[i] = [2]int{-1, -1}
		}
	}
	for i, cc := range c.cols {
		sp := c.spans[i]
		if sp[0] < 0 {
			row[cc.col] = nil
			continue
		}
		v := c.buf[sp[0]:sp[1]:sp[1]]
		if v == nil {
			v = []byte{}
		}
		row[cc.col] = v
	}
	return nil
}

// appendAs appends v as MariaDB prints a value of the column's type:
// integers in full, a DECIMAL rounded half up to the column's decimals, a
// DOUBLE with the column's decimals or all its digits.
func appendAs(dst []byte, v value, cc *computedColumn) ([]byte, bool, error) {
	if v.k == vNull {
		return dst, true, nil
	}
	switch t := &cc.typ; t.Class {
	case sqlvalue.ClassInt:
		switch v.k {
		case vInt:
			return strconv.AppendInt(dst, v.i, 10), false, nil
		case vUint:
			return strconv.AppendUint(dst, v.u, 10), false, nil
		case vDecimal:
			return v.d.Append(dst, 0), false, nil
		}
	case sqlvalue.ClassDecimal:
		if isExact(v) {
			d := toDecimal(v)
			return d.Append(dst, t.Decimals), false, nil
		}
	case sqlvalue.ClassFloat:
		return sqlvalue.AppendDouble(dst, signedZero(toFloat(v), cc.expr.dialect != nil && cc.expr.dialect.NegativeZero), t.Decimals), false, nil
	case sqlvalue.ClassString, sqlvalue.ClassDate, sqlvalue.ClassTime:
		s := convertTo(v, vString, cc.expr.dec)
		if s.k == vString {
			return append(dst, s.s...), false, nil
		}
	}
	return dst, false, mysql.NewError(mysql.ER_UNKNOWN_ERROR, fmt.Sprintf("%s: a %s value for a %s column", cc.name, v.k, cc.typ.Class))
}
