//go:build demo

package main

import (
	"database/sql"
	"net"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// TestDemo runs the demo binary the way the README says (from the
// repository root, on rules.example.yaml) and talks to it with the mariadb
// client and go-sql-driver.
func TestDemo(t *testing.T) {
	addr := freeAddr(t)
	p := start(t, "../..", "demo", "--listen", addr)
	p.waitLine(t, "Connect with:")
	p.waitLine(t, "mariadb -h127.0.0.1 -P")

	db, err := sql.Open("mysql", "app:app-secret@tcp("+addr+")/sharding_db")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var orders, items, dict int
	for q, n := range map[string]*int{
		"SELECT order_id FROM t_order":     &orders,
		"SELECT item_id FROM t_order_item": &items,
		"SELECT code FROM t_dict":          &dict,
	} {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		for rows.Next() {
			*n++
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		rows.Close()
	}
	if orders != 4 || items != 8 || dict != 3 {
		t.Errorf("demo rows: %d orders, %d items, %d dict entries; want 4, 8, 3", orders, items, dict)
	}
	res, err := db.Exec("INSERT INTO t_order (user_id, status) VALUES (?, ?)", 42, "new")
	if err != nil {
		t.Fatal(err)
	}
	id, _ := res.LastInsertId()
	var status string
	if err := db.QueryRow("SELECT status FROM t_order WHERE user_id = ? AND order_id = ?", 42, id).Scan(&status); err != nil || status != "new" {
		t.Errorf("the inserted order: %q, %v", status, err)
	}

	// The embedded backends type SUM and AVG as DOUBLE with 0 decimals,
	// which says nothing about the scale (MariaDB says 31 for that): the
	// merged averages keep their fractions.
	for _, tt := range []struct{ give, want string }{
		{"SELECT AVG(user_id) FROM t_order WHERE user_id IN (1, 2)", "1.5"},
		{"SELECT AVG(quantity * 1.5) FROM t_order_item", "3.75"},
		{"SELECT SUM(quantity * 1.5) FROM t_order_item WHERE user_id IN (1, 2)", "9"},
		{"SELECT AVG(quantity) FROM t_order_item WHERE user_id IN (1, 2)", "1.5"},
	} {
		var got string
		if err := db.QueryRow(tt.give).Scan(&got); err != nil || got != tt.want {
			t.Errorf("%s = %q (%v), want %s", tt.give, got, err, tt.want)
		}
	}

	checkDemoStringMerges(t, db)

	// Writes over several tables of a data source: each data source's
	// part is one backend transaction (the embedded backend runs one at
	// a time; one per table waited for each other and failed with 1205).
	for _, tt := range []struct {
		give string
		want int64
	}{
		{"UPDATE t_order SET status = 'seen' WHERE status = 'new'", -1},
		{"UPDATE t_order SET status = 'first' ORDER BY order_id LIMIT 2", 2},
		{"UPDATE t_order_item SET quantity = quantity + 1", 8},
		{"DELETE FROM t_order WHERE status = 'seen' ORDER BY order_id", -1},
	} {
		res, err := db.Exec(tt.give)
		if err != nil {
			t.Fatalf("%s: %v", tt.give, err)
		}
		if n, _ := res.RowsAffected(); tt.want >= 0 && n != tt.want {
			t.Errorf("%s: %d rows, want %d", tt.give, n, tt.want)
		}
	}
	checkDemoTransactions(t, db)
	if _, err := db.Exec("INSERT INTO t_order (user_id, status) VALUES (?, ?)", 42, "new"); err != nil {
		t.Fatal(err)
	}

	bin := mariadbtest.RequireBinary(t, "mariadb")
	host, port, _ := net.SplitHostPort(addr)
	out, err := exec.Command(bin, "--no-defaults", "-h"+host, "-P"+port, "-uapp", "-papp-secret", "sharding_db", "--batch", "--skip-column-names",
		"-e", "SHOW TABLES; SELECT status FROM t_order WHERE user_id = 42; SELECT label FROM t_dict WHERE code = 'paid'").CombinedOutput()
	if err != nil {
		t.Fatalf("mariadb: %v\n%s", err, out)
	}
	if got, want := string(out), "t_dict\nt_order\nt_order_item\nnew\nPaid\n"; got != want {
		t.Errorf("mariadb printed:\n%s\nwant:\n%s", got, want)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.waitExit(t, 15*time.Second); code != 0 {
		t.Errorf("demo exit code %d:\n%s", code, p.output())
	}
	if !strings.Contains(p.output(), "stopped") {
		t.Errorf("demo log:\n%s", p.output())
	}
}
