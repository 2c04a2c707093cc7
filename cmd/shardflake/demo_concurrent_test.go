//go:build demo

package main

import (
	"database/sql"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestDemoConcurrentWritesKeepEveryRow writes through the demo from several
// clients at once, autocommit and in transactions, with reads of the same
// table in between, and counts the rows: the embedded backends put back
// a statement's (or transaction's) copy of each table it read when it
// commits, so without serialBackend concurrent writers lost about a
// quarter of their acknowledged INSERTs.
func TestDemoConcurrentWritesKeepEveryRow(t *testing.T) {
	addr := freeAddr(t)
	p := start(t, "../..", "demo", "--listen", addr, "--metrics-listen", "127.0.0.1:0")
	p.waitLine(t, "Connect with:")
	db, err := sql.Open("mysql", "app:app-secret@tcp("+addr+")/sharding_db")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	count := func() int {
		var n int
		if err := db.QueryRow("SELECT COUNT(*) FROM t_order").Scan(&n); err != nil {
			t.Error(err)
		}
		return n
	}
	before := count()
	const clients, each = 4, 25
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				user := c*1000 + i
				if c%2 == 1 && i%10 == 0 {
					// Five rows of one user (one data node) in a transaction.
					tx, err := db.Begin()
					if err != nil {
						t.Error(err)
						return
					}
					for range 5 {
						if _, err := tx.Exec("INSERT INTO t_order (user_id, status) VALUES (?, 'txn')", user); err != nil {
							t.Error(err)
							tx.Rollback()
							return
						}
					}
					if err := tx.Commit(); err != nil {
						t.Error(err)
						return
					}
					continue
				}
				if _, err := db.Exec("INSERT INTO t_order (user_id, status) VALUES (?, 'new')", user); err != nil {
					t.Error(err)
					return
				}
				if i%5 == 0 {
					count()
				}
			}
		}()
	}
	wg.Wait()
	// Clients 1 and 3 replace every tenth single-row INSERT by a
	// transaction of 5 rows.
	txns := (each + 9) / 10
	want := clients*each + 2*txns*(5-1)
	if got := count() - before; got != want {
		t.Errorf("%d rows added by %d acknowledged INSERTs", got, want)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.waitExit(t, 15*time.Second); code != 0 {
		t.Errorf("demo exit code %d:\n%s", code, p.output())
	}
}

// TestDemoScatterOfLargeRows reads a scatter whose routes on one backend
// each hold more rows than a socket buffers: the proxy reads the routes
// on several connections to that backend at once, which the backend's
// one-statement-at-a-time turn must not turn into a wait.
func TestDemoScatterOfLargeRows(t *testing.T) {
	addr := freeAddr(t)
	p := start(t, "../..", "demo", "--listen", addr, "--metrics-listen", "127.0.0.1:0")
	p.waitLine(t, "Connect with:")
	db, err := sql.Open("mysql", "app:app-secret@tcp("+addr+")/sharding_db?maxAllowedPacket=0")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("ALTER TABLE t_order ADD COLUMN note LONGTEXT"); err != nil {
		t.Fatal(err)
	}
	note := strings.Repeat("x", 64<<10)
	const rows = 1024 // 64 MiB for user 1: 16 MiB on each of one data source's tables
	for i := range rows {
		if _, err := db.Exec("INSERT INTO t_order (order_id, user_id, status, note) VALUES (?, 1, 'big', ?)", 1_000_000+i, note); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	r, err := db.Query("SELECT order_id, note FROM t_order WHERE user_id = 1 AND status = 'big' ORDER BY order_id")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for r.Next() {
		var id int64
		var s string
		if err := r.Scan(&id, &s); err != nil {
			t.Fatal(err)
		}
		if id != int64(1_000_000+n) || len(s) != len(note) {
			var c int
			db.QueryRow("SELECT COUNT(*) FROM t_order WHERE order_id = ?", 1_000_000+n).Scan(&c)
			var all int
			db.QueryRow("SELECT COUNT(*) FROM t_order WHERE status = 'big'").Scan(&all)
			t.Fatalf("row %d: order_id %d, note of %d bytes (order_id %d: %d rows; %d rows in all)", n, id, len(s), 1_000_000+n, c, all)
		}
		n++
	}
	if err := r.Err(); err != nil {
		t.Fatalf("after %d rows (%s): %v", n, time.Since(start), err)
	}
	if n != rows {
		t.Errorf("%d rows, want %d", n, rows)
	}
	t.Logf("%d rows of 64 KiB merged from one backend's routes in %s", n, time.Since(start).Round(time.Millisecond))
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.waitExit(t, 15*time.Second)
}
