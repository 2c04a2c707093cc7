package proxy

import (
	"context"
	"fmt"
	"slices"
	"testing"
)

// TestReloadReplansPreparedReturning: a prepared INSERT ... RETURNING and
// a prepared SELECT ... INTO @var, both prepared before a reload, are
// planned again by the new rules at their next execute and answer as
// before it (the parser never sees the RETURNING clause, which must come
// back on the new plan's routes).
func TestReloadReplansPreparedReturning(t *testing.T) {
	e := startReloadEnv(t, "rlr", true, envOptions{})
	e.createOrderTables(t)
	ctx := context.Background()
	c := e.conn(t)
	ins, err := c.PrepareContext(ctx, "INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, ?), (?, ?, ?) RETURNING order_id, status")
	if err != nil {
		t.Fatal(err)
	}
	defer ins.Close()
	into, err := c.PrepareContext(ctx, "SELECT status FROM t_order WHERE order_id = ? INTO @st")
	if err != nil {
		t.Fatal(err)
	}
	defer into.Close()
	insert := func(base int) []string {
		t.Helper()
		rows, err := ins.QueryContext(ctx, base, 1, fmt.Sprint("s", base), base+1, 2, fmt.Sprint("s", base+1))
		if err != nil {
			t.Fatalf("prepared INSERT ... RETURNING of %d: %v", base, err)
		}
		return scanStrings(t, rows, "RETURNING", ",")
	}
	if got := insert(10); !slices.Equal(got, []string{"10,s10", "11,s11"}) {
		t.Fatalf("before the reload: %q", got)
	}
	digest := e.srv.RulesDigest()
	e.write(t, e.yaml("", ""))
	execAll(t, c, "RELOAD RULES")
	if e.srv.RulesDigest() == digest {
		t.Fatal("the reload left the digest")
	}
	if got := insert(20); !slices.Equal(got, []string{"20,s20", "21,s21"}) {
		t.Fatalf("after the reload: %q", got)
	}
	if _, err := into.ExecContext(ctx, 21); err != nil {
		t.Fatalf("prepared SELECT ... INTO after the reload: %v", err)
	}
	var st string
	if err := c.QueryRowContext(ctx, "SELECT @st").Scan(&st); err != nil || st != "s21" {
		t.Fatalf("@st = %q, %v; want s21", st, err)
	}
}
