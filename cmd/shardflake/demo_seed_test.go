//go:build demo

package main

import (
	"database/sql"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// demoBackendLine is the banner's line for one embedded backend.
var demoBackendLine = regexp.MustCompile(`(?m)^\s+(ds_\d+)\s+(127\.0\.0\.1:\d+)\s+database (\S+)$`)

// TestDemoSeedsEveryBackend starts the demo a few times and counts the
// seeded rows on each embedded backend directly, not through the proxy:
// every order and item lands on one of them and t_dict (broadcast) on all.
// The embedded in-memory backends keep a statement's view of every table
// it read and write it back when it commits, so a statement that reads a
// table while another connection writes it undoes that write; a check
// the proxy ran on ds_0 at start while seedDemo wrote there lost every
// ds_0 row in about one run in four. It also checks that the backends'
// string columns compare as their column definitions say.
func TestDemoSeedsEveryBackend(t *testing.T) {
	for run := 0; run < 8; run++ {
		addr := freeAddr(t)
		p := start(t, "../..", "demo", "--listen", addr, "--metrics-listen", "127.0.0.1:0")
		p.waitLine(t, "Connect with:")
		backends := demoBackendLine.FindAllStringSubmatch(p.output(), -1)
		if len(backends) != 2 {
			t.Fatalf("banner names %d backends:\n%s", len(backends), p.output())
		}
		orders, items := 0, 0
		for _, b := range backends {
			db, err := sql.Open("mysql", "root@tcp("+b[2]+")/"+b[3])
			if err != nil {
				t.Fatal(err)
			}
			count := func(table string) int {
				var n int
				if err := db.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
					t.Fatalf("run %d, %s.%s: %v", run, b[1], table, err)
				}
				return n
			}
			var o, i int
			for _, table := range queryText(t, db, "SHOW TABLES") {
				switch {
				case strings.HasPrefix(table, "t_order_item_"):
					i += count(table)
				case strings.HasPrefix(table, "t_order_"):
					o += count(table)
				}
			}
			if d := count("t_dict"); d != 3 {
				t.Errorf("run %d: %s holds %d t_dict rows, want 3", run, b[1], d)
			}
			// The backends put 255 (utf8mb4_0900_ai_ci) in a utf8mb4
			// column's definition, which the merge trusts: their columns
			// must compare that way (case-insensitively), or a merged
			// ORDER BY finds rows out of its order (1235).
			var ci int
			if err := db.QueryRow("SELECT COUNT(*) FROM t_dict WHERE label = 'NEW ORDER'").Scan(&ci); err != nil || ci != 1 {
				t.Errorf("run %d: %s: t_dict.label = 'NEW ORDER' finds %d rows (%v), want 1 ('New order' under utf8mb4_0900_ai_ci)", run, b[1], ci, err)
			}
			// users 1..4 split over the two data sources by user_id % 2.
			if o != 2 || i != 4 {
				t.Errorf("run %d: %s holds %d orders and %d items, want 2 and 4", run, b[1], o, i)
			}
			orders += o
			items += i
			db.Close()
		}
		if orders != 4 || items != 8 {
			t.Errorf("run %d: %d orders, %d items on the backends, want 4 and 8", run, orders, items)
		}
		p.cmd.Process.Signal(syscall.SIGTERM)
		if code := p.waitExit(t, 15*time.Second); code != 0 {
			t.Errorf("demo exit code %d:\n%s", code, p.output())
		}
	}
}
