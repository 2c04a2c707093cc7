package router

import (
	"fmt"
	"slices"
	"testing"
)

// TestCastParamRoutesAsLiteral: a ? cast to an integer in a condition on
// a sharding column (CAST(? AS SIGNED), CONVERT(?, UNSIGNED), INT) routes
// as the same cast of the bound value written as a literal does: to one
// data node for an integer or a string of digits, to every data node the
// other conditions allow for a value MariaDB does not cast to itself.
func TestCastParamRoutesAsLiteral(t *testing.T) {
	r, _ := newGoldenRouter(t, loadGoldenRules(t))
	nodes := func(p *Plan) []string {
		var out []string
		for _, rt := range p.Routes {
			for _, n := range rt.Nodes {
				out = append(out, n.String())
			}
		}
		return out
	}
	tests := []struct {
		give     string // the condition, %s the cast's operand
		arg      any
		literal  string
		wantOne  bool
		wantSome int // the number of data nodes when not one
	}{
		{give: "order_id = CAST(%s AS SIGNED) AND user_id = 1", arg: "5", literal: "'5'", wantOne: true},
		{give: "order_id = CAST(%s AS SIGNED) AND user_id = 1", arg: int64(5), literal: "5", wantOne: true},
		{give: "order_id = CAST(%s AS INT) AND user_id = 1", arg: "-3", literal: "'-3'", wantOne: true},
		{give: "order_id = CONVERT(%s, UNSIGNED) AND user_id = 1", arg: "+6", literal: "'+6'", wantOne: true},
		{give: "order_id = CONVERT(%s, UNSIGNED INTEGER) AND user_id = 1", arg: uint64(7), literal: "7", wantOne: true},
		{give: "user_id = 2 AND (order_id = CAST(%s AS INTEGER))", arg: "11", literal: "'11'", wantOne: true},
		{give: "CAST(%s AS SIGNED) = order_id AND user_id = 1", arg: "5", literal: "'5'", wantOne: true},
		{give: "order_id IN (CAST(%s AS SIGNED), 4) AND user_id = 1", arg: "12", literal: "'12'", wantSome: 1},
		// Values MariaDB does not cast to themselves: no narrowing by
		// order_id, user 1's data source only.
		{give: "order_id = CAST(%s AS SIGNED) AND user_id = 1", arg: "5x", literal: "'5x'", wantSome: 8},
		{give: "order_id = CAST(%s AS SIGNED) AND user_id = 1", arg: 5.5, literal: "5.5", wantSome: 8},
		{give: "order_id = CAST(%s AS SIGNED) AND user_id = 1", arg: " 5", literal: "' 5'", wantSome: 8},
		{give: "order_id = CONVERT(%s, UNSIGNED) AND user_id = 1", arg: int64(-1), literal: "-1", wantSome: 8},
	}
	for _, tt := range tests {
		q := "SELECT * FROM t_order WHERE " + tt.give
		t.Run(fmt.Sprintf("%s %v", tt.give, tt.arg), func(t *testing.T) {
			prepared, err := planFor(r, fmt.Sprintf(q, "?"), "", []any{tt.arg})
			if err != nil {
				t.Fatal(err)
			}
			literal, err := planFor(r, fmt.Sprintf(q, tt.literal), "", nil)
			if err != nil {
				t.Fatal(err)
			}
			got, want := nodes(prepared), nodes(literal)
			if !slices.Equal(got, want) {
				t.Errorf("prepared reaches %v, the literal %v", got, want)
			}
			n := tt.wantSome
			if tt.wantOne {
				n = 1
			}
			if len(got) != n {
				t.Errorf("prepared reaches %d data nodes %v, want %d", len(got), got, n)
			}
		})
	}
}
