package proxy

import (
	"fmt"
	"testing"

	tidbmysql "github.com/pingcap/tidb/pkg/parser/mysql"
)

func TestPlanCacheEvictsLeastRecentlyUsed(t *testing.T) {
	c := newPlanCache(2)
	plan := func(s string) PreparedPlan { return directPlan{sql: s} }
	key := func(db string, mode tidbmysql.SQLMode, sql string) []byte {
		return append(appendPlanKey(nil, db, mode, 0), sql...)
	}
	c.put(key("db", 0, "a"), plan("a"))
	c.put(key("db", 0, "b"), plan("b"))
	if c.get(key("db", 0, "a")) == nil { // a is now the most recently used
		t.Fatal("a missing")
	}
	c.put(key("db", 0, "c"), plan("c"))
	if c.get(key("db", 0, "b")) != nil {
		t.Error("b survived although least recently used")
	}
	for _, k := range []string{"a", "c"} {
		if got := c.get(key("db", 0, k)); got == nil || got.(directPlan).sql != k {
			t.Errorf("%s: got %v", k, got)
		}
	}
	if c.get(key("other", 0, "a")) != nil {
		t.Error("plans of another schema are shared")
	}
	if c.get(key("db", tidbmysql.ModePipesAsConcat, "a")) != nil {
		t.Error("plans of another sql_mode are shared")
	}
	if c.len() != 2 {
		t.Errorf("len %d, want 2", c.len())
	}
	c.clear()
	if c.len() != 0 || c.get(key("db", 0, "a")) != nil {
		t.Error("clear kept plans")
	}
}

func TestPlanCacheIsUsedAndClearedByDDL(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	db := e.open(t)
	for i := range 3 {
		if _, err := db.Exec("INSERT INTO t_order (order_id, user_id) VALUES (" + fmt.Sprint(i) + ", 1)"); err != nil {
			t.Fatal(err)
		}
	}
	before := e.srv.current().cache.len()
	for range 5 {
		queryStrings(t, db, "SELECT status FROM t_order WHERE user_id = 1 AND order_id = 2")
	}
	if got := e.srv.current().cache.len(); got != before+1 {
		t.Errorf("5 runs of one query added %d plans, want 1", got-before)
	}
	if _, err := db.Exec("ALTER TABLE t_order ADD COLUMN note VARCHAR(10)"); err != nil {
		t.Fatal(err)
	}
	if got := e.srv.current().cache.len(); got != 0 {
		t.Errorf("%d plans cached after DDL", got)
	}
}
