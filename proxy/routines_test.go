package proxy

import (
	"database/sql"
	"slices"
	"testing"
)

// TestFunctionsAndTriggers: CREATE/DROP FUNCTION and TRIGGER, which the
// SQL parser does not read (1064 before), pass through: functions and
// triggers of unsharded tables to the default data source, triggers of a
// broadcast table to every data source, BEGIN ... END bodies and
// mysqldump's /*!50003 ... */ spelling included; a trigger on a sharded
// table gets 1235, and an application account without otherSchemas the
// 1227 MariaDB gives one without the privilege.
func TestFunctionsAndTriggers(t *testing.T) {
	e := startEnv(t, envOptions{server: authzUsers})
	createTables(t, e)
	ops, err := sql.Open("mysql", e.dsn("ops", "ops-secret", "multiStatements=true"))
	if err != nil {
		t.Fatal(err)
	}
	defer ops.Close()
	ops.SetMaxOpenConns(1)
	exec := func(q string) {
		t.Helper()
		if _, err := ops.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, q := range []string{"DROP FUNCTION IF EXISTS rt_f", "DROP TRIGGER IF EXISTS rt_t", "DROP TRIGGER IF EXISTS rt_t2", "DROP TRIGGER IF EXISTS rt_dict"} {
		exec(q)
	}
	t.Cleanup(func() {
		for _, q := range []string{"DROP FUNCTION IF EXISTS rt_f", "DROP TRIGGER IF EXISTS rt_t", "DROP TRIGGER IF EXISTS rt_t2"} {
			ops.Exec(q)
		}
	})
	exec("CREATE FUNCTION rt_f(x INT) RETURNS INT DETERMINISTIC RETURN x + 1")
	if got := queryStrings(t, ops, "SELECT rt_f(41)"); !slices.Equal(got, []string{"42"}) {
		t.Errorf("SELECT rt_f(41) = %q", got)
	}
	exec("CREATE TRIGGER rt_t BEFORE INSERT ON t_plain FOR EACH ROW BEGIN SET NEW.v = CONCAT(NEW.v, '!'); SET NEW.v = UPPER(NEW.v); END")
	exec("/*!50003 CREATE*/ /*!50017 DEFINER=CURRENT_USER*/ /*!50003 TRIGGER rt_t2 AFTER INSERT ON t_plain FOR EACH ROW SET @rt_seen = NEW.v */")
	exec("INSERT INTO t_plain (v) VALUES ('hi')")
	if got := queryStrings(t, ops, "SELECT v FROM t_plain"); !slices.Equal(got, []string{"HI!"}) {
		t.Errorf("t_plain after its trigger: %q, want HI!", got)
	}

	exec("CREATE TRIGGER rt_dict BEFORE INSERT ON t_dict FOR EACH ROW SET NEW.label = LOWER(NEW.label)")
	triggers := func(i int) []string {
		return queryStrings(t, e.backend(t, i), "SELECT TRIGGER_NAME FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() AND TRIGGER_NAME LIKE 'rt\\_%' ORDER BY 1")
	}
	if got0, got1 := triggers(0), triggers(1); !slices.Equal(got0, []string{"rt_dict", "rt_t", "rt_t2"}) || !slices.Equal(got1, []string{"rt_dict"}) {
		t.Errorf("triggers: ds_0 %q, ds_1 %q; want the broadcast table's on both, t_plain's on the default one", got0, got1)
	}
	exec("INSERT INTO t_dict VALUES ('a', 'ABC')")
	for i := range 2 {
		if got := queryStrings(t, e.backend(t, i), "SELECT label FROM t_dict"); !slices.Equal(got, []string{"abc"}) {
			t.Errorf("ds_%d t_dict: %q", i, got)
		}
	}
	exec("DROP TRIGGER rt_dict")
	if got0, got1 := triggers(0), triggers(1); !slices.Equal(got0, []string{"rt_t", "rt_t2"}) || len(got1) != 0 {
		t.Errorf("after DROP TRIGGER rt_dict: ds_0 %q, ds_1 %q", got0, got1)
	}

	if _, err := ops.Exec("CREATE TRIGGER rt_o BEFORE INSERT ON t_order FOR EACH ROW SET NEW.status = 'x'"); errCode(err) != 1235 {
		t.Errorf("a trigger on a sharded table: %v, want 1235", err)
	}
	app := e.open(t)
	for _, q := range []string{"CREATE FUNCTION rt_g() RETURNS INT RETURN 1", "CREATE TRIGGER rt_x BEFORE INSERT ON t_plain FOR EACH ROW SET NEW.v = 'x'", "DROP FUNCTION rt_f"} {
		if _, err := app.Exec(q); errCode(err) != 1227 {
			t.Errorf("%s as app: %v, want 1227", q, err)
		}
	}
	exec("DROP FUNCTION rt_f")
	if _, err := ops.Exec("SELECT rt_f(1)"); errCode(err) != 1305 {
		t.Errorf("after DROP FUNCTION: %v, want 1305", err)
	}
}
