package proxy

import (
	"bytes"
	"database/sql"
	"net"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// routineUsers are an application account and one that may create
// stored routines and triggers.
const routineUsers = `users:
  - {user: app, password: app-secret}
  - {user: ops, password: ops-secret, otherSchemas: true}`

// routineTestDDL makes a procedure, a function and a trigger on the unsharded
// table t_plain.
var routineTestDDL = []string{
	"CREATE PROCEDURE rt_count(IN lim INT) BEGIN SELECT COUNT(*) FROM t_plain WHERE id < lim; END",
	"CREATE FUNCTION rt_twice(x INT) RETURNS INT DETERMINISTIC RETURN x * 2",
	"CREATE TRIGGER rt_upper BEFORE INSERT ON t_plain FOR EACH ROW SET NEW.v = UPPER(NEW.v)",
}

// TestRoutineMetadataDifferential: the logical schema's stored routines
// and triggers (on the default data source) are described as one MariaDB
// describes its own to an application account: SHOW PROCEDURE/FUNCTION
// STATUS with mysqldump's WHERE Db = '...' (they listed the data source's
// database, or every database's routines), SHOW PACKAGE [BODY] STATUS
// (mysqldump --routines asks it; it was 1064), information_schema.ROUTINES
// and PARAMETERS (JDBC's getProcedures and getProcedureColumns; they
// were 1142) and TRIGGERS (mysqldump finds a
// table's triggers there; it answered none), SHOW TRIGGERS FROM the
// schema (1049), SHOW CREATE TRIGGER and SHOW CREATE FUNCTION (1064).
func TestRoutineMetadataDifferential(t *testing.T) {
	e, ref := routineEnv(t, "rtm", "rtmref")
	app := e.open(t)
	// Times of creation differ, and so may the definer's host.
	status := []string{"Db", "Name", "Type", "Security_type", "Comment", "character_set_client", "collation_connection", "Database Collation"}
	tests := []struct {
		query string // {db}: the schema's name
		cols  []string
	}{
		{"SHOW PROCEDURE STATUS WHERE Db = '{db}'", status},
		{"SHOW FUNCTION STATUS WHERE Db = '{db}' AND Name LIKE 'rt%'", status},
		{"SHOW FUNCTION STATUS WHERE Db = '{db}' AND Name = 'nosuch'", status},
		{"SHOW PACKAGE STATUS WHERE Db = '{db}'", status},
		{"SHOW PACKAGE BODY STATUS WHERE Db = '{db}'", status},
		{"SELECT ROUTINE_SCHEMA, ROUTINE_NAME, ROUTINE_TYPE, DATA_TYPE, ROUTINE_DEFINITION FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE() ORDER BY ROUTINE_NAME", nil},
		{"SELECT SPECIFIC_SCHEMA, SPECIFIC_NAME, PARAMETER_NAME, PARAMETER_MODE, DATA_TYPE FROM information_schema.PARAMETERS WHERE SPECIFIC_SCHEMA = DATABASE() ORDER BY SPECIFIC_NAME, ORDINAL_POSITION", nil},
		{"SELECT TRIGGER_SCHEMA, TRIGGER_NAME, EVENT_MANIPULATION, EVENT_OBJECT_SCHEMA, EVENT_OBJECT_TABLE, ACTION_STATEMENT FROM information_schema.TRIGGERS WHERE EVENT_OBJECT_SCHEMA = DATABASE() AND EVENT_OBJECT_TABLE = 't_plain'", nil},
		{"SHOW TRIGGERS FROM {db}", []string{"Trigger", "Event", "Table", "Statement", "Timing"}},
		{"SHOW TRIGGERS FROM {db} LIKE 't\\_pl%'", []string{"Trigger", "Event", "Table", "Statement", "Timing"}},
		{"SHOW CREATE TRIGGER rt_upper", []string{"Trigger", "sql_mode", "character_set_client"}},
		{"SHOW CREATE TRIGGER {db}.rt_upper", []string{"Trigger", "sql_mode", "character_set_client"}},
		{"SHOW CREATE FUNCTION rt_twice", []string{"Function", "sql_mode", "character_set_client"}},
		{"SHOW CREATE FUNCTION {db}.rt_twice", []string{"Function", "sql_mode", "character_set_client"}},
	}
	for _, tt := range tests {
		got, gotCols := showRows(t, app, strings.ReplaceAll(tt.query, "{db}", "sharding_db"), tt.cols)
		want, wantCols := showRows(t, ref, strings.ReplaceAll(tt.query, "{db}", "rtmref"), tt.cols)
		for i := range got {
			got[i] = strings.ReplaceAll(got[i], "sharding_db", "rtmref")
		}
		if !slices.Equal(got, want) || !slices.Equal(gotCols, wantCols) {
			t.Errorf("%s\nproxy:     %q %q\nreference: %q %q", tt.query, gotCols, got, wantCols, want)
		}
	}
	// Without a Db condition: the logical schema's routines only, not
	// the data sources' other databases'.
	if got, _ := showRows(t, app, "SHOW PROCEDURE STATUS LIKE 'rt%'", []string{"Db", "Name"}); !slices.Equal(got, []string{"Db=sharding_db,Name=rt_count"}) {
		t.Errorf("SHOW PROCEDURE STATUS LIKE 'rt%%': %q, want the logical schema's rt_count only", got)
	}
	if _, err := app.Exec("SHOW CREATE TRIGGER nosuch"); errCode(err) != 1360 {
		t.Errorf("SHOW CREATE TRIGGER of no trigger: %v, want 1360 as MariaDB", err)
	}
}

// TestMysqldumpRoutinesRoundTrip: mysqldump --routines (and its default
// --triggers) through the proxy writes the logical schema's procedures,
// functions and triggers as a dump of one MariaDB holding them does (it
// failed on SHOW PACKAGE STATUS; without --routines it left the triggers
// out), and the dump restored through a second proxy brings them back.
func TestMysqldumpRoutinesRoundTrip(t *testing.T) {
	dump := mariadbtest.RequireBinary(t, "mysqldump")
	client := mariadbtest.RequireBinary(t, "mariadb")
	src, _ := routineEnv(t, "rtdsrc", "rtdref")
	run := func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command(dump, append([]string{"--no-defaults", "--protocol=tcp", "--skip-ssl", "--routines", "--skip-dump-date"}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || stderr.Len() > 0 {
			t.Fatalf("mysqldump %q: %v\n%s", args, err, stderr.String())
		}
		return out
	}
	host, port, _ := net.SplitHostPort(src.addr)
	out := run("-h", host, "-P", port, "-uapp", "-papp-secret", "sharding_db")
	direct := run("-h", src.backends[0].Host(), "-P", strconv.Itoa(src.backends[0].Port()), "-uroot", "rtdref", "t_plain")
	routines := regexp.MustCompile(`(?m)^.*\b(PROCEDURE|FUNCTION|TRIGGER)\b.*$`)
	got, want := routines.FindAllString(string(out), -1), routines.FindAllString(string(direct), -1)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) || len(want) != 5 { // each routine's DROP and CREATE, the trigger
		t.Errorf("the dump's routines and triggers:\nproxy:  %q\ndirect: %q", got, want)
	}

	dst := startEnv(t, envOptions{databases: "rtddst", server: routineUsers})
	host, port, _ = net.SplitHostPort(dst.addr)
	restore := exec.Command(client, "--no-defaults", "-h"+host, "-P"+port, "-uops", "-pops-secret", "sharding_db")
	restore.Stdin = bytes.NewReader(out)
	if msg, err := restore.CombinedOutput(); err != nil {
		t.Fatalf("restore: %v\n%s", err, msg)
	}
	app := dst.open(t)
	if got := queryStrings(t, app, "SELECT ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = 'sharding_db' ORDER BY 1"); !slices.Equal(got, []string{"rt_count", "rt_twice"}) {
		t.Errorf("restored routines: %q", got)
	}
	if _, err := app.Exec("INSERT INTO t_plain (v) VALUES ('low')"); err != nil {
		t.Fatal(err)
	}
	if got := queryStrings(t, openAs(t, dst, "ops", "ops-secret"), "SELECT v, rt_twice(21) FROM t_plain WHERE v = 'low'"); !slices.Equal(got, []string{"LOW,42"}) {
		t.Errorf("restored trigger and function: %q, want LOW,42", got)
	}
}

// openAs connects to the proxy as user.
func openAs(t *testing.T, e *testEnv, user, password string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", e.dsn(user, password))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// routineEnv starts a proxy over databases prefix, creates
// routineTestDDL's routines and triggers through it (as ops) and in a
// reference database ref on the first server holding the same t_plain,
// and returns the proxy's environment and ref.
func routineEnv(t *testing.T, prefix, ref string) (*testEnv, *sql.DB) {
	t.Helper()
	e := startEnv(t, envOptions{databases: prefix, server: routineUsers})
	createTables(t, e)
	ops := openAs(t, e, "ops", "ops-secret")
	e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS "+ref, "CREATE DATABASE "+ref)
	refDB := e.backends[0].Open(t, ref)
	if _, err := refDB.Exec("CREATE TABLE t_plain (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(32))"); err != nil {
		t.Fatal(err)
	}
	for _, q := range routineTestDDL {
		if _, err := ops.Exec(q); err != nil {
			t.Fatalf("proxy: %s: %v", q, err)
		}
		if _, err := refDB.Exec(q); err != nil {
			t.Fatalf("reference: %s: %v", q, err)
		}
	}
	return e, refDB
}
