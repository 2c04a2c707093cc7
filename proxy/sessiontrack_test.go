package proxy

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/proxy/internal/wire"
)

// TestSessionTrackSchema: a client that negotiates CLIENT_SESSION_TRACK
// (libmariadb always does; MariaDB Connector/ODBC then sends SET
// session_track_schema = ON and reads the schema in use from the OK
// packets, for SQLGetInfo(SQL_DATABASE_NAME) and its catalog functions)
// is told of each USE and COM_INIT_DB in its OK packet, as MariaDB tells
// it, and of none while session_track_schema is OFF. Before, the proxy's
// OK packets never carried session state, and the driver went on
// reporting the schema it logged in to.
func TestSessionTrackSchema(t *testing.T) {
	e := startEnv(t, envOptions{})
	refDatabase(t, e.backends[0], "track_ref")
	run := func(addr, user, password, db string) []string {
		t.Helper()
		c := trackingConn(t, addr, user, password, db)
		var out []string
		report := func(what string, r *mysql.Result) {
			schema := "-"
			if r.SessionTracking != nil {
				schema = strings.ReplaceAll(r.SessionTracking.Schema, db, "DB")
			}
			out = append(out, fmt.Sprintf("%s: changed=%t schema=%s", strings.ReplaceAll(what, db, "DB"),
				r.Status&mysql.SERVER_SESSION_STATE_CHANGED != 0, schema))
		}
		for _, q := range []string{
			"SELECT 1",
			"USE information_schema",
			"USE " + db,
			"USE " + db,
			"SET session_track_schema = OFF",
			"USE information_schema",
			"SET session_track_schema = ON",
			"USE " + db,
		} {
			r, err := c.Execute(q)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			report(q, r)
		}
		// COM_INIT_DB, as mysql_select_db and SQL_ATTR_CURRENT_CATALOG send it.
		for _, name := range []string{"information_schema", db} {
			r, err := c.UseDBWithResult(name)
			if err != nil {
				t.Fatalf("COM_INIT_DB %s: %v", name, err)
			}
			report("COM_INIT_DB "+name, r)
		}
		return out
	}
	want := run(e.backends[0].Addr(), "root", "", "track_ref")
	referencePrinted(t, "MariaDB", want, "USE information_schema: changed=true schema=information_schema")
	sameSteps(t, run(e.addr, "app", "app-secret", "sharding_db"), want)
}

// TestSessionTrackAutocommit: SET autocommit reports the variable's new
// value to a client that tracks it (MariaDB's default
// session_track_system_variables holds autocommit; MariaDB
// Connector/ODBC sets 'autocommit,tx_isolation' and keeps its
// SQL_ATTR_AUTOCOMMIT from what it is told), each time it is set, and
// not once the list leaves it out. Before, the proxy reported nothing.
func TestSessionTrackAutocommit(t *testing.T) {
	sameSessionState(t, []string{
		"SET autocommit = 0",
		"SET autocommit = 0",
		"SET autocommit = ON",
		"SET session_track_system_variables = 'autocommit,tx_isolation'",
		"SET @@session.autocommit = 0, @x = 1",
		"COMMIT",
		"SET session_track_system_variables = 'tx_isolation'",
		"SET autocommit = 1",
		"SET session_track_system_variables = 'time_zone, AUTOCOMMIT'",
		"SET autocommit = 0",
		"SET session_track_system_variables = DEFAULT",
		"SET autocommit = 1",
	}, "SET autocommit = 0: changed=true [autocommit=OFF]")
}

// trackingConn logs in to addr with go-mysql's client, negotiating
// CLIENT_SESSION_TRACK; the connection closes when the test ends.
func trackingConn(t *testing.T, addr, user, password, db string) *client.Conn {
	t.Helper()
	c, err := client.Connect(addr, user, password, db, func(c *client.Conn) error { return c.SetCapability(mysql.CLIENT_SESSION_TRACK) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestSessionTrackCharsetAndTimeZone: MariaDB's default
// session_track_system_variables also names character_set_client,
// character_set_connection, character_set_results and time_zone, and
// libmariadb takes the client character set it escapes strings in from
// the tracked character_set_client. (MariaDB 10.11 reports none for
// SET @@time_zone = ..., the unqualified @@ form, though it sets the
// session's value as @@SESSION.time_zone does; the proxy reports both
// forms, and the steps write the qualified one.)
func TestSessionTrackCharsetAndTimeZone(t *testing.T) {
	sameSessionState(t, []string{
		"SET NAMES latin1",
		"SET NAMES latin1",
		"SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci",
		"SET CHARACTER SET utf8",
		"SET character_set_results = NULL",
		"SET character_set_client = utf8mb4, time_zone = '+01:00'",
		"SET time_zone = '+01:00'",
		"SET @@SESSION.time_zone = 'SYSTEM', autocommit = 0",
		"SET time_zone = 'SYSTEM'",
		"SET time_zone = 'SYSTEM'",
		"SET @@session.time_zone = '+4:00', autocommit = 1",
		"SET time_zone = '+05:00', autocommit = 1",
		"SET autocommit = 1, time_zone = '+06:00'",
		"SET character_set_results = binary, character_set_connection = latin1",
		"SET collation_connection = utf8mb4_bin",
		"SET sql_mode = ''",
		"SET session_track_system_variables = 'time_zone'",
		"SET NAMES latin1, time_zone = '-02:00'",
		"SET session_track_system_variables = '*'",
		"SET sql_mode = 'ANSI_QUOTES', max_statement_time = 5, @u = 1",
		"SET sql_mode = DEFAULT, max_statement_time = DEFAULT",
		"SET session_track_system_variables = DEFAULT",
		"SET NAMES DEFAULT",
	}, "SET NAMES latin1: changed=true [character_set_client=latin1 character_set_connection=latin1 character_set_results=latin1]",
		"SET time_zone = '+01:00': changed=true [time_zone=+01:00]")
}

// sameSessionState runs queries in turn on MariaDB and through the
// proxy, each on a connection that tracks session state, and compares
// per statement whether the state changed and the OK packet's session
// state entries, byte for byte (okState); MariaDB's lines must include
// ref. A MySQL error prints its code. {db} in a query or an entry is the schema the connection logged
// in to.
func sameSessionState(t *testing.T, queries []string, ref ...string) {
	t.Helper()
	e := startEnv(t, envOptions{})
	refDatabase(t, e.backends[0], "track_ref")
	run := func(addr, user, password, db string) []string {
		t.Helper()
		c := trackingConn(t, addr, user, password, db)
		var out []string
		for _, q := range queries {
			changed, entries, err := okState(c, strings.ReplaceAll(q, "{db}", db))
			var myErr *mysql.MyError
			if errors.As(err, &myErr) {
				out = append(out, fmt.Sprintf("%s: error %d", q, myErr.Code))
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			for i := range entries {
				entries[i] = strings.ReplaceAll(entries[i], db, "{db}")
			}
			out = append(out, fmt.Sprintf("%s: changed=%t %v", q, changed, entries))
		}
		return out
	}
	want := run(e.backends[0].Addr(), "root", "", "track_ref")
	referencePrinted(t, "MariaDB", want, ref...)
	sameSteps(t, run(e.addr, "app", "app-secret", "sharding_db"), want)
}

// TestSessionTrackStateChange: with session_track_state_change ON, the
// OK of a statement that changed the session's state says so
// (SESSION_TRACK_STATE_CHANGE, after the variables and the schema), as
// MariaDB's does: any SET but SET TRANSACTION (the next transaction
// only), a USE, PREPARE and DEALLOCATE PREPARE, CREATE and DROP
// TEMPORARY TABLE; not BEGIN, COMMIT or ROLLBACK; not the SET that turns
// it off. Before, the proxy never said so.
func TestSessionTrackStateChange(t *testing.T) {
	sameSessionState(t, []string{
		"SET @x = 1",
		"SET session_track_state_change = ON",
		"SET @x = 1",
		"SET @x = 1",
		"SET time_zone = '+01:00'",
		"SET sql_mode = '', @y = 2",
		"SET autocommit = 1",
		"SET NAMES utf8mb4",
		"SET TRANSACTION ISOLATION LEVEL READ COMMITTED",
		"SET TRANSACTION READ ONLY",
		"SET TRANSACTION READ WRITE",
		"SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
		"SET SESSION TRANSACTION READ WRITE",
		"BEGIN",
		"SET @x = 2",
		"COMMIT",
		"START TRANSACTION",
		"ROLLBACK",
		"PREPARE s FROM 'SELECT 1'",
		"DEALLOCATE PREPARE s",
		"CREATE TEMPORARY TABLE tt (a INT)",
		"CREATE TEMPORARY TABLE tt (a INT)",
		"SET TRANSACTION READ WRITE",
		"DROP TEMPORARY TABLE tt",
		"SET @z = 1, time_zone = 'nowhere'",
		"SET TRANSACTION READ WRITE",
		"SET session_track_system_variables = '*'",
		"SET SESSION TRANSACTION READ ONLY",
		"SET SESSION TRANSACTION READ WRITE",
		"USE information_schema",
		"USE {db}",
		"USE {db}",
		"SET session_track_schema = OFF",
		"USE information_schema",
		"SET session_track_schema = ON",
		"USE {db}",
		"SET session_track_state_change = OFF",
		"SET @x = 3",
		"SET session_track_state_change = 1",
		"SET session_track_state_change = DEFAULT",
		"SET @x = 4",
	}, "SET @x = 1: changed=true [state-changed 1]",
		"USE {db}: changed=true [schema {db} state-changed 1]",
		"SET session_track_state_change = OFF: changed=true [session_track_state_change=OFF]",
		"SET TRANSACTION READ ONLY: changed=false []",
		"CREATE TEMPORARY TABLE tt (a INT): error 1050")
}

// okState runs q, a statement that answers with an OK packet, on c and
// reads the packet's session state as it came: whether
// SERVER_SESSION_STATE_CHANGED is set, and its entries, sorted (MariaDB
// writes the variables in the order of its hash). Each entry prints as
// "NAME=VALUE" (a system variable), "schema NAME", "state-changed DATA"
// when its bytes are exactly that form's, else as its type and its bytes.
func okState(c *client.Conn, q string) (bool, []string, error) {
	c.ResetSequence()
	if err := c.WritePacket(append([]byte{0, 0, 0, 0, mysql.COM_QUERY}, q...)); err != nil {
		return false, nil, err
	}
	p, err := c.ReadPacket()
	if err != nil {
		return false, nil, err
	}
	switch {
	case wire.IsErr(p):
		return false, nil, c.HandleErrorPacket(p)
	case !wire.IsOK(p):
		return false, nil, fmt.Errorf("not an OK packet: % x", p)
	}
	ok, err := wire.ParseOK(p, true)
	if err != nil {
		return false, nil, err
	}
	changed := ok.Status&mysql.SERVER_SESSION_STATE_CHANGED != 0
	if !changed {
		return false, nil, nil
	}
	// The state follows the header and the length-encoded info.
	pos := 1
	for range 2 {
		_, _, n, _ := wire.ReadLenEncInt(p[pos:])
		pos += n
	}
	pos += 4
	_, _, n, err := wire.ReadLenEncString(p[pos:])
	if err != nil {
		return changed, nil, err
	}
	state, _, _, err := wire.ReadLenEncString(p[pos+n:])
	if err != nil {
		return changed, nil, err
	}
	var entries []string
	for len(state) > 0 {
		typ := state[0]
		data, _, n, err := wire.ReadLenEncString(state[1:])
		if err != nil {
			return changed, nil, fmt.Errorf("session state % x: %v", state, err)
		}
		state = state[1+n:]
		entries = append(entries, stateEntry(typ, data))
	}
	slices.Sort(entries)
	return changed, entries, nil
}

// stateEntry prints one session state entry (okState).
func stateEntry(typ byte, data []byte) string {
	var fields [][]byte
	for rest := data; len(rest) > 0; {
		s, _, n, err := wire.ReadLenEncString(rest)
		if err != nil {
			fields = nil
			break
		}
		fields, rest = append(fields, s), rest[n:]
	}
	var b []byte
	for _, f := range fields {
		b = wire.AppendLenEncString(b, f)
	}
	canonical := string(b) == string(data)
	switch {
	case typ == 0 && canonical && len(fields) == 2:
		return fmt.Sprintf("%s=%s", fields[0], fields[1])
	case typ == 1 && canonical && len(fields) == 1:
		return fmt.Sprintf("schema %s", fields[0])
	case typ == 2 && string(data) == "1":
		return "state-changed 1"
	}
	return fmt.Sprintf("type %d %q", typ, data)
}

// TestSessionTrackTransactionCharacteristics: SET SESSION TRANSACTION
// ISOLATION LEVEL and READ ONLY / READ WRITE report tx_isolation and
// tx_read_only to a client that tracks them, as SET tx_isolation and SET
// tx_read_only do; SET TRANSACTION (the next transaction only) reports
// nothing. A boolean's value is ON or OFF, as SHOW VARIABLES shows it;
// before, the proxy reported what SELECT @@tx_read_only says, 1 or 0.
func TestSessionTrackTransactionCharacteristics(t *testing.T) {
	sameSessionState(t, []string{
		"SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
		"SET session_track_system_variables = '*'",
		"SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
		"SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE",
		"SET TRANSACTION ISOLATION LEVEL READ COMMITTED",
		"SET TRANSACTION READ ONLY",
		"SET SESSION TRANSACTION READ ONLY",
		"SET SESSION TRANSACTION READ WRITE",
		"SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY",
		"SET SESSION TRANSACTION READ WRITE, ISOLATION LEVEL READ UNCOMMITTED",
		"SET tx_isolation = 'READ-COMMITTED'",
		"SET @@session.tx_isolation = 'SERIALIZABLE', tx_read_only = 1",
		"SET tx_read_only = 0, time_zone = '+01:00'",
		"SET tx_read_only = OFF",
		"SET foreign_key_checks = 0, sql_warnings = 1, long_query_time = 2",
		"SET foreign_key_checks = DEFAULT, sql_warnings = DEFAULT, long_query_time = DEFAULT",
		"SET session_track_system_variables = 'autocommit,tx_isolation'",
		"SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ",
		"SET SESSION TRANSACTION READ ONLY",
		"SET tx_isolation = 'READ-COMMITTED', tx_read_only = 0",
		"SET session_track_system_variables = 'tx_read_only'",
		"SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED, READ ONLY",
		"SET SESSION TRANSACTION READ WRITE",
	}, "SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE: changed=true [tx_isolation=SERIALIZABLE]",
		"SET SESSION TRANSACTION READ ONLY: changed=true [tx_read_only=ON]")
}

// TestSessionTrackTransactionInfoRefused: the proxy cannot report
// MariaDB's transaction state (it spans the data sources a transaction
// touched), so turning session_track_transaction_info on gets 1235 and
// the session goes on; turning it off is accepted. Before, the SET went
// to the data source and the OKs then never carried what was asked for.
func TestSessionTrackTransactionInfoRefused(t *testing.T) {
	e := startEnv(t, envOptions{})
	c := trackingConn(t, e.addr, "app", "app-secret", "sharding_db")
	for _, q := range []string{
		"SET session_track_transaction_info = STATE",
		"SET SESSION session_track_transaction_info = 'CHARACTERISTICS'",
		"SET @@session.session_track_transaction_info = 1",
		"SET @mode = 'state'",
		"SET session_track_transaction_info = @mode",
	} {
		if strings.HasPrefix(q, "SET @mode") {
			if _, err := c.Execute(q); err != nil {
				t.Fatal(err)
			}
			continue
		}
		_, err := c.Execute(q)
		var myErr *mysql.MyError
		if !errors.As(err, &myErr) || myErr.Code != mysql.ER_NOT_SUPPORTED_YET || !strings.Contains(myErr.Message, "session_track_transaction_info") {
			t.Errorf("%s: got %v, want 1235 naming session_track_transaction_info", q, err)
		}
	}
	for _, q := range []string{
		"SET session_track_transaction_info = OFF",
		"SET session_track_transaction_info = 'off'",
		"SET session_track_transaction_info = 0",
		"SET session_track_transaction_info = DEFAULT",
	} {
		if _, err := c.Execute(q); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
	// A value MariaDB refuses is the data source's to refuse.
	var myErr *mysql.MyError
	if _, err := c.Execute("SET session_track_transaction_info = @nothing"); !errors.As(err, &myErr) || myErr.Code != mysql.ER_WRONG_VALUE_FOR_VAR {
		t.Errorf("SET session_track_transaction_info = @nothing (NULL): got %v, want MariaDB's 1231", err)
	}
	r, err := c.Execute("SELECT @@session_track_transaction_info")
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := r.GetString(0, 0); v != "OFF" {
		t.Errorf("@@session_track_transaction_info = %q, want OFF", v)
	}
}
