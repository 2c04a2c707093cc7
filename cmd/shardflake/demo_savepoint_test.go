//go:build demo

package main

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// checkDemoTransactions runs writes over several tables inside client
// transactions on the demo: the proxy sets a savepoint on each
// connection such a write reaches, which the embedded backends answer
// themselves (demo_savepoint.go). Before, each such write failed with
// 1105 "savepoints are not supported in memory sessions".
func checkDemoTransactions(t *testing.T, db *sql.DB) {
	ctx := context.Background()
	sum := func(q interface {
		QueryRowContext(context.Context, string, ...any) *sql.Row
	}) int {
		var n int
		if err := q.QueryRowContext(ctx, "SELECT SUM(quantity) FROM t_order_item").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := sum(db)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "UPDATE t_order_item SET quantity = quantity + 10"); err != nil {
		t.Fatalf("an UPDATE of every table in a transaction: %v", err)
	}
	if got := sum(tx); got != before+80 {
		t.Errorf("inside the transaction SUM(quantity) = %d, want %d", got, before+80)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if got := sum(db); got != before {
		t.Errorf("after ROLLBACK SUM(quantity) = %d, want %d", got, before)
	}

	// A write that fails on one data node undoes only itself; a
	// client's savepoint undoes what followed it, a prepared INSERT
	// before it stays.
	if _, err := db.Exec("INSERT INTO t_order (order_id, user_id, status) VALUES (900, 1, 'taken')"); err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	run := func(q string, args ...any) error {
		_, err := conn.ExecContext(ctx, q, args...)
		return err
	}
	for _, q := range []string{"BEGIN", "INSERT INTO t_order (order_id, user_id, status) VALUES (901, 2, 'tx')"} {
		if err := run(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	err = run("INSERT INTO t_order (order_id, user_id, status) VALUES (902, 3, 'tx'), (903, 0, 'tx'), (900, 1, 'tx'), (904, 2, 'tx')")
	if my := (*mysql.MySQLError)(nil); !errors.As(err, &my) || my.Number != 1062 {
		t.Fatalf("a duplicate key among four rows: %v, want 1062", err)
	}
	if err := run("INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, ?)", 905, 3, "tx"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"SAVEPOINT before_delete", "DELETE FROM t_order WHERE status = 'tx'", "ROLLBACK TO SAVEPOINT before_delete", "COMMIT"} {
		if err := run(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	rows, err := db.Query("SELECT order_id FROM t_order WHERE status = 'tx' ORDER BY order_id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []int
	for rows.Next() {
		var id int
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		got = append(got, id)
	}
	if len(got) != 2 || got[0] != 901 || got[1] != 905 {
		t.Errorf("committed rows %v, want [901 905]: the failed INSERT left nothing, the DELETE was rolled back to the savepoint", got)
	}
}
