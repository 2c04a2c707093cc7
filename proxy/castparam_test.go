package proxy

import (
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestCastParamRoutesToOneDataNode: a prepared SELECT whose sharding
// columns are compared with CAST(? AS SIGNED) (or INT, or CONVERT(?,
// UNSIGNED)) runs on the one data node the bound values name, as the
// same statement with the values as literals does, and returns the same
// rows; a value MariaDB does not cast to itself ('5x') narrows nothing
// and runs on every data node the other column allows.
func TestCastParamRoutesToOneDataNode(t *testing.T) {
	rec := &recorder{}
	e := startEnv(t, envOptions{observer: rec})
	createTables(t, e)
	db := e.open(t)
	if _, err := db.Exec("INSERT INTO t_order (order_id, user_id, status) VALUES (4, 1, 'a'), (5, 1, 'b'), (6, 1, 'c'), (7, 2, 'd'), (8, 3, 'e')"); err != nil {
		t.Fatal(err)
	}
	// run runs q and returns its rows and the data nodes its routes ran on.
	run := func(t *testing.T, q string, args ...any) (rows []string, routes int) {
		t.Helper()
		rec.mu.Lock()
		rec.statements, rec.routes = nil, nil
		rec.mu.Unlock()
		rs, err := db.Query(q, args...)
		if err != nil {
			t.Fatalf("%s %v: %v", q, args, err)
		}
		defer rs.Close()
		for rs.Next() {
			var id, user int64
			var status sql.NullString
			if err := rs.Scan(&id, &user, &status); err != nil {
				t.Fatal(err)
			}
			rows = append(rows, fmt.Sprintf("%d %d %s", id, user, status.String))
		}
		if err := rs.Err(); err != nil {
			t.Fatal(err)
		}
		rs.Close()
		rec.mu.Lock()
		defer rec.mu.Unlock()
		for _, st := range rec.statements {
			if strings.Contains(st.SQL, "CAST") || strings.Contains(st.SQL, "CONVERT") {
				routes += len(st.Routes)
			}
		}
		return rows, routes
	}
	tests := []struct {
		give       string // the condition, %v for the casts' operands
		args       []any
		literals   []any
		wantRoutes int
	}{
		{"user_id = CAST(%v AS SIGNED) AND order_id = CAST(%v AS SIGNED)", []any{"1", "5"}, []any{"'1'", "'5'"}, 1},
		{"user_id = CAST(%v AS SIGNED) AND order_id = CAST(%v AS SIGNED)", []any{1, 5}, []any{1, 5}, 1},
		{"user_id = CAST(%v AS INT) AND order_id = CONVERT(%v, UNSIGNED)", []any{"3", "8"}, []any{"'3'", "'8'"}, 1},
		{"order_id = CAST(%v AS INTEGER) AND user_id = %v", []any{"6", 1}, []any{"'6'", 1}, 1},
		{"user_id = CAST(%v AS SIGNED) AND order_id = CAST(%v AS SIGNED)", []any{"1", "5x"}, []any{"'1'", "'5x'"}, 2},
	}
	for _, tt := range tests {
		q := "SELECT order_id, user_id, status FROM t_order WHERE " + tt.give
		t.Run(fmt.Sprintf("%s %#v", tt.give, tt.args), func(t *testing.T) {
			got, routes := run(t, fmt.Sprintf(q, "?", "?"), tt.args...)
			want, literalRoutes := run(t, fmt.Sprintf(q, tt.literals...))
			if !slices.Equal(got, want) || len(want) != 1 {
				t.Errorf("prepared rows %q, literal rows %q, want one row alike", got, want)
			}
			if routes != tt.wantRoutes || literalRoutes != tt.wantRoutes {
				t.Errorf("prepared ran %d routes, literal %d, want %d", routes, literalRoutes, tt.wantRoutes)
			}
		})
	}
}
