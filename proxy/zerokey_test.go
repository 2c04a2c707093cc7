package proxy

import (
	"context"
	"fmt"
	"testing"
)

// TestInsertZeroKeyIsGenerated: a 0 given for the generated key column,
// when it is AUTO_INCREMENT, gets a generated key, as MariaDB gives an
// AUTO_INCREMENT column a new value for a 0 (dbr's Record with the key column listed sends the
// struct's zero ID), in a text query and as a prepared statement's
// argument; the row lands where its key routes it. Under sql_mode
// NO_AUTO_VALUE_ON_ZERO (mysqldump's) the 0 is the key, as on MariaDB.
func TestInsertZeroKeyIsGenerated(t *testing.T) {
	e := startEnv(t, envOptions{databases: "zerokey"})
	db := e.open(t)
	for _, s := range []string{"DROP TABLE IF EXISTS t_order",
		"CREATE TABLE t_order (order_id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(16))"} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		sql  string
		args []any
		rows int
	}{
		{"literal", "INSERT INTO t_order (order_id, user_id, status) VALUES (0, 3, 'literal')", nil, 1},
		{"argument", "INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, ?)", []any{0, 2, "argument"}, 1},
		{"rows", "INSERT INTO t_order (order_id, user_id, status) VALUES (0, 1, 'rows'), (0, 2, 'rows'), (-0, 3, 'rows')", nil, 3},
		{"arguments", "INSERT INTO t_order (order_id, user_id, status) VALUES (?, 1, 'arguments'), (?, 4, 'arguments')", []any{int64(0), uint64(0)}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := db.Exec(tt.sql, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			first, err := res.LastInsertId()
			if err != nil {
				t.Fatal(err)
			}
			if first < 1<<32 {
				t.Errorf("last insert id %d, want a Snowflake key", first)
			}
			where := landed(t, e)
			for i := range int64(tt.rows) {
				key := first + i
				var user int
				if err := db.QueryRow("SELECT user_id FROM t_order WHERE order_id = ? AND status = ?", key, tt.name).Scan(&user); err != nil {
					t.Errorf("row %d by its key %d: %v", i+1, key, err)
					continue
				}
				if want := fmt.Sprintf("ds_%d.t_order_%d", user%2, key%2); where[key] != want {
					t.Errorf("key %d is on %s, want %s", key, where[key], want)
				}
			}
		})
	}
	// Without AUTO_INCREMENT MariaDB stores a 0 given for the column;
	// so does the proxy, which learns it anew after the ALTER.
	t.Run("not AUTO_INCREMENT", func(t *testing.T) {
		for _, q := range []string{
			"ALTER TABLE t_order MODIFY order_id BIGINT NOT NULL",
			"INSERT INTO t_order (order_id, user_id, status) VALUES (0, 2, 'plain')",
		} {
			if _, err := db.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		if got := landed(t, e)[0]; got != "ds_0.t_order_0" {
			t.Errorf("key 0 is on %s, want ds_0.t_order_0", got)
		}
		for _, q := range []string{"DELETE FROM t_order WHERE order_id = 0", "ALTER TABLE t_order MODIFY order_id BIGINT NOT NULL AUTO_INCREMENT"} {
			if _, err := db.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	})
	t.Run("NO_AUTO_VALUE_ON_ZERO", func(t *testing.T) {
		ctx := context.Background()
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, "SET SESSION sql_mode = CONCAT(@@SESSION.sql_mode, ',NO_AUTO_VALUE_ON_ZERO')"); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.ExecContext(ctx, "INSERT INTO t_order (order_id, user_id, status) VALUES (0, 3, 'zero')"); err != nil {
			t.Fatal(err)
		}
		var key int64
		if err := conn.QueryRowContext(ctx, "SELECT order_id FROM t_order WHERE user_id = 3 AND status = 'zero'").Scan(&key); err != nil || key != 0 {
			t.Errorf("under NO_AUTO_VALUE_ON_ZERO: key %d, %v; want 0", key, err)
		}
		if got := landed(t, e)[0]; got != "ds_1.t_order_0" {
			t.Errorf("key 0 is on %s, want ds_1.t_order_0", got)
		}
	})
}
