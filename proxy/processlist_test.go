package proxy

import (
	"context"
	"database/sql"
	"strings"
	"sync"
	"testing"
)

// TestShowProcessListDifferential: SHOW [FULL] PROCESSLIST shows a
// connection running a statement and an idle one as MariaDB shows its
// own: the schema in use, the command, the statement's text (its first
// 100 characters without FULL), NULL for an idle one. The proxy showed
// no schema and no statement, so the statement to KILL could not be
// found.
func TestShowProcessListDifferential(t *testing.T) {
	e := startEnv(t, envOptions{})
	got := processListOf(t, e.open(t), "sharding_db")
	want := processListOf(t, e.backends[0].Open(t, "ds_0"), "ds_0")
	for i := range got {
		got[i] = strings.ReplaceAll(got[i], "sharding_db", "ds_0")
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s\nproxy:   %q\nMariaDB: %q", []string{"the busy connection", "... without FULL", "the idle connection"}[i], got[i], want[i])
		}
	}
}

// processListOf runs a long statement on one connection of db while
// another is idle, and returns how SHOW FULL PROCESSLIST and SHOW
// PROCESSLIST show the first and SHOW PROCESSLIST the second: db,
// Command, Info.
func processListOf(t *testing.T, db *sql.DB, schema string) []string {
	t.Helper()
	ctx := context.Background()
	busy, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	idle, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	var busyID, idleID string
	if err := busy.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&busyID); err != nil {
		t.Fatal(err)
	}
	if err := idle.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&idleID); err != nil {
		t.Fatal(err)
	}
	long := "SELECT SLEEP(30) AS processlist_marker /* " + strings.Repeat("x", 120) + " */"
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { busy.ExecContext(ctx, long) })
	show := func(q, id string) string {
		rows, _ := showRows(t, db, q, []string{"Id", "db", "Command", "Info"})
		for _, r := range rows {
			if rest, ok := strings.CutPrefix(r, "Id="+id+","); ok {
				return rest
			}
		}
		return "not listed"
	}
	var full string
	waitFor(t, func() bool {
		full = show("SHOW FULL PROCESSLIST", busyID)
		return strings.Contains(full, "processlist_marker")
	})
	out := []string{full, show("SHOW PROCESSLIST", busyID), show("SHOW PROCESSLIST", idleID)}
	if _, err := idle.ExecContext(ctx, "KILL QUERY "+busyID); err != nil {
		t.Fatal(err)
	}
	return out
}
