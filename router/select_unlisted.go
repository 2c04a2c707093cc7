package router

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// Clause names a clause of a SELECT in the error MariaDB gives for an
// unknown column there (1054).
type Clause int

// The clauses, in the order MariaDB resolves their names after the
// select list: the first unknown name in that order is the one its 1054
// names.
const (
	ClauseWhere Clause = iota + 1
	ClauseOrderBy
	ClauseGroupBy
	ClauseHaving
)

// String returns the clause as current MariaDB releases name it in 1054;
// older ones named it otherwise ("order clause"), which the proxy maps.
func (c Clause) String() string {
	switch c {
	case ClauseWhere:
		return "WHERE"
	case ClauseOrderBy:
		return "ORDER BY"
	case ClauseGroupBy:
		return "GROUP BY"
	case ClauseHaving:
		return "HAVING"
	}
	return "UNKNOWN"
}

// MarshalText writes the clause by name, so plans print readably.
func (c Clause) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnlistedColumn is a column name that only the hidden columns of a merge
// read, not the client's select list: a route's MariaDB resolves the
// hidden columns with the select list, so when the name is unknown it
// reports it in the select list ('SELECT'), where a single server given
// the client's statement names Clause.
type UnlistedColumn struct {
	// Name is the column as the client wrote it and MariaDB prints it,
	// qualifiers included: o.note.
	Name   string `json:"name"`
	Clause Clause `json:"clause"`
}

// finishUnlisted lists the column names that only hidden columns added
// for GROUP BY, HAVING or ORDER BY read, each with the first clause
// MariaDB would resolve it in: WHERE when WHERE names it too.
func (b *mergeBuilder) finishUnlisted(m *selectMerge) {
	if len(b.hiddenClauses) == 0 {
		return
	}
	listed := map[string]bool{}
	for _, f := range b.fields[:b.visible] {
		for _, n := range columnNames(f.Expr) {
			listed[n] = true
		}
	}
	var unlisted []UnlistedColumn
	where := map[string]bool{}
	for _, n := range columnNames(b.sel.Where) {
		where[n] = true
	}
	for _, c := range []Clause{ClauseOrderBy, ClauseGroupBy, ClauseHaving} {
		for i, hc := range b.hiddenClauses {
			if hc != c {
				continue
			}
			for _, n := range columnNames(b.fields[b.visible+i].Expr) {
				if listed[n] {
					continue
				}
				listed[n] = true
				clause := c
				if where[n] {
					clause = ClauseWhere
				}
				unlisted = append(unlisted, UnlistedColumn{Name: n, Clause: clause})
			}
		}
	}
	if len(unlisted) > 0 {
		m.merge.Unlisted = &unlisted
	}
}

// columnNames returns the column names e reads outside subqueries, as
// MariaDB prints them in an error; none for a nil e.
func columnNames(e ast.ExprNode) []string {
	if e == nil {
		return nil
	}
	var f nameFinder
	e.Accept(&f)
	out := make([]string, 0, len(f.names))
	for _, x := range f.names {
		parts := make([]string, 0, 3)
		for _, p := range []ast.CIStr{x.Name.Schema, x.Name.Table, x.Name.Name} {
			if p.O != "" {
				parts = append(parts, p.O)
			}
		}
		out = append(out, strings.Join(parts, "."))
	}
	return out
}
