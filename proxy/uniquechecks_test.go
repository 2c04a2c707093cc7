package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"testing"
)

// TestUniqueChecksSession: SET unique_checks is the session's, as on
// MariaDB: @@unique_checks, SHOW VARIABLES, a user variable saved from it
// (mysqldump's SET @OLD_UNIQUE_CHECKS=@@UNIQUE_CHECKS), DEFAULT, SET
// STATEMENT, and 1231 for a value MariaDB refuses, the session going on.
func TestUniqueChecksSession(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	statusRefDB(t, e, "uniq_ref")
	proxy, ref := e.conn(t), refConn(t, e, "uniq_ref")
	const vars = "SELECT @@unique_checks, @@SESSION.unique_checks, @@global.unique_checks, @saved, IF(@@unique_checks, 'on', 'off'), @@unique_checks + @@foreign_key_checks"
	const show = "SHOW SESSION VARIABLES WHERE Variable_name IN ('unique_checks', 'foreign_key_checks')"
	for _, st := range []string{
		"SET @saved = @@unique_checks, unique_checks = 0",
		"SET @saved = @@unique_checks",
		"SET foreign_key_checks = 0",
		"SELECT COUNT(*) FROM t_order",
		"SET unique_checks = @saved",
		"SET unique_checks = 'OFF'",
		"SET unique_checks = 2",
		"SET unique_checks = 'maybe'",
		"SET unique_checks = NULL",
		"SET STATEMENT unique_checks = 1 FOR SELECT COUNT(*) FROM t_order",
		"SET STATEMENT unique_checks = 7 FOR SELECT COUNT(*) FROM t_order",
		"SET unique_checks = DEFAULT",
		"SET SESSION unique_checks = FALSE",
		"SET @@unique_checks = ON",
	} {
		diffStep(t, proxy, ref, st, vars)
		diffQuery(t, st, proxy, ref, show)
	}
}

// TestUniqueChecksOffLoadAcrossDataSources: two sessions load an empty
// sharded table in transactions with unique_checks and
// foreign_key_checks off (as myloader's threads do), each writing first
// to one data source and then to the other, in opposite orders. On
// MariaDB those settings make a transaction's first INSERT into an empty
// table lock the whole table until it ends: the two transactions would
// each wait for the other's table on the other server, which neither
// server sees as a deadlock, until innodb_lock_wait_timeout (1205). The
// proxy keeps the data sources' unique checks on: both load, both commit.
func TestUniqueChecksOffLoadAcrossDataSources(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	ctx := context.Background()
	a, b := e.conn(t), e.conn(t)
	for _, c := range []*sql.Conn{a, b} {
		for _, q := range []string{"SET unique_checks = 0, foreign_key_checks = 0, innodb_lock_wait_timeout = 3", "START TRANSACTION"} {
			if _, err := c.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	// user_id 0 is ds_0, 1 is ds_1; order_id 10.. even, all t_order_0.
	insert := func(c *sql.Conn, orderID, userID int) error {
		_, err := c.ExecContext(ctx, fmt.Sprintf("INSERT INTO t_order (order_id, user_id, status) VALUES (%d, %d, 'new')", orderID, userID))
		return err
	}
	if err := insert(a, 10, 0); err != nil {
		t.Fatal(err)
	}
	if err := insert(b, 20, 1); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Add(2)
	go func() { defer wg.Done(); errs[0] = insert(a, 12, 1) }()
	go func() { defer wg.Done(); errs[1] = insert(b, 22, 0) }()
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("session %d's INSERT on the other data source: %v", i, err)
		}
	}
	for _, c := range []*sql.Conn{a, b} {
		if _, err := c.ExecContext(ctx, "COMMIT"); err != nil {
			t.Errorf("COMMIT: %v", err)
		}
	}
	got := queryStrings(t, e.open(t), "SELECT CONCAT(order_id, ':', user_id) FROM t_order ORDER BY order_id")
	if want := []string{"10:0", "12:1", "20:1", "22:0"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("t_order holds %q, want %q", got, want)
	}
	for i := range e.backends {
		var v string
		if err := e.backend(t, i).QueryRow("SELECT COUNT(*) FROM t_order_0").Scan(&v); err != nil || v != "2" {
			t.Errorf("ds_%d.t_order_0: %s rows (%v), want 2", i, v, err)
		}
	}
	// The sessions still read their own setting.
	if got := queryStrings(t, a, "SELECT @@unique_checks"); fmt.Sprint(got) != "[0]" {
		t.Errorf("@@unique_checks after the load: %q, want 0", got)
	}
}
