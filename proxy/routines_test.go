package proxy

import (
	"database/sql"
	"slices"
	"strconv"
	"strings"
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

// TestCallResultSets: CALL of a procedure with several SELECTs returns
// every result set and the closing OK, as MariaDB sends them (the second
// result set was dropped), an error after a result set reaches the
// client after it, and the connection stays usable.
func TestCallResultSets(t *testing.T) {
	e := startEnv(t, envOptions{server: authzUsers})
	ops, err := sql.Open("mysql", e.dsn("ops", "ops-secret"))
	if err != nil {
		t.Fatal(err)
	}
	defer ops.Close()
	ops.SetMaxOpenConns(1)
	for _, q := range []string{
		"DROP PROCEDURE IF EXISTS rt_p", "DROP PROCEDURE IF EXISTS rt_e",
		"CREATE PROCEDURE rt_p() BEGIN SELECT 1 AS a; SELECT 2 AS b, 'x' AS c UNION ALL SELECT 3, 'y'; SELECT 4 AS d FROM DUAL WHERE 0; END",
		"CREATE PROCEDURE rt_e() BEGIN SELECT 1 AS a; SELECT * FROM rt_no_such_table; END",
	} {
		if _, err := ops.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		ops.Exec("DROP PROCEDURE IF EXISTS rt_p")
		ops.Exec("DROP PROCEDURE IF EXISTS rt_e")
	})
	rows, err := ops.Query("CALL rt_p()")
	if err != nil {
		t.Fatal(err)
	}
	var sets []string
	for {
		cols, _ := rows.Columns()
		n := 0
		for rows.Next() {
			n++
		}
		sets = append(sets, strings.Join(cols, ",")+":"+strconv.Itoa(n))
		if !rows.NextResultSet() {
			break
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if want := []string{"a:1", "b,c:2", "d:0"}; !slices.Equal(sets, want) {
		t.Errorf("result sets %q, want %q", sets, want)
	}
	rows, err = ops.Query("CALL rt_e()")
	if err == nil {
		for rows.Next() {
		}
		rows.NextResultSet()
		err = rows.Err()
		rows.Close()
	}
	if errCode(err) != 1146 {
		t.Errorf("CALL rt_e(): %v, want 1146 after the first result set", err)
	}
	// A body the SQL parser cannot read (SIGNAL) passes unchanged too.
	for _, q := range []string{"DROP PROCEDURE IF EXISTS rt_sig",
		"CREATE PROCEDURE rt_sig() BEGIN SELECT 1 AS a; SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'boom'; END"} {
		if _, err := ops.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	defer ops.Exec("DROP PROCEDURE IF EXISTS rt_sig")
	rows, err = ops.Query("CALL rt_sig()")
	if err == nil {
		for rows.Next() {
		}
		rows.NextResultSet()
		err = rows.Err()
		rows.Close()
	}
	if errCode(err) != 1644 || !strings.Contains(err.Error(), "boom") {
		t.Errorf("CALL rt_sig(): %v, want 1644 boom after the first result set", err)
	}
	if got := queryStrings(t, ops, "SELECT 7"); !slices.Equal(got, []string{"7"}) {
		t.Errorf("after the CALLs: %q", got)
	}
}

// TestTriggerQualifiedWithLogicalSchema: a trigger whose table and body
// name tables qualified with the logical schema, as
// pt-online-schema-change writes them (ON `sharding_db`.`t_plain` ...
// DELETE IGNORE FROM `sharding_db`.`_t_plain_new`), is created on the
// default data source with those names unqualified, and fires there; DROP
// TRIGGER qualified so drops it. The data source has no database
// sharding_db: the statements got its 1146 'Table 'sharding_db.t_plain'
// doesn't exist' before. A string that spells the schema stays as it is.
func TestTriggerQualifiedWithLogicalSchema(t *testing.T) {
	e := startEnv(t, envOptions{server: authzUsers})
	createTables(t, e)
	ops, err := sql.Open("mysql", e.dsn("ops", "ops-secret"))
	if err != nil {
		t.Fatal(err)
	}
	defer ops.Close()
	exec := func(q string) {
		t.Helper()
		if _, err := ops.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec("DROP TABLE IF EXISTS _t_plain_new")
	exec("CREATE TABLE _t_plain_new (id INT PRIMARY KEY, v VARCHAR(32))")
	t.Cleanup(func() {
		ops.Exec("DROP TRIGGER IF EXISTS rt_q_ins")
		ops.Exec("DROP TRIGGER IF EXISTS rt_q_del")
		ops.Exec("DROP TABLE IF EXISTS _t_plain_new")
	})
	exec("CREATE TRIGGER `rt_q_ins` AFTER INSERT ON `sharding_db`.`t_plain` FOR EACH ROW REPLACE INTO `sharding_db`.`_t_plain_new` (`id`, `v`) VALUES (NEW.`id`, CONCAT(NEW.`v`, ' sharding_db.x'))")
	exec("CREATE TRIGGER rt_q_del AFTER DELETE ON sharding_db.t_plain FOR EACH ROW BEGIN DELETE IGNORE FROM sharding_db._t_plain_new WHERE sharding_db._t_plain_new.id <=> OLD.id; END")
	exec("INSERT INTO t_plain (v) VALUES ('one'), ('two')")
	exec("DELETE FROM t_plain WHERE v = 'one'")
	if got := queryStrings(t, ops, "SELECT v FROM _t_plain_new ORDER BY id"); !slices.Equal(got, []string{"two sharding_db.x"}) {
		t.Errorf("the triggers' table: %q, want [two sharding_db.x]", got)
	}
	exec("DROP TRIGGER IF EXISTS `sharding_db`.`rt_q_ins`")
	exec("DROP TRIGGER sharding_db.rt_q_del")
	if got := queryStrings(t, e.backend(t, 0), "SELECT TRIGGER_NAME FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() AND TRIGGER_NAME LIKE 'rt\\_q\\_%'"); len(got) != 0 {
		t.Errorf("triggers left: %q", got)
	}
}
