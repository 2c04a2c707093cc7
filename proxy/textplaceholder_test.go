package proxy

import (
	"context"
	"fmt"
	"testing"
)

// TestTextQueryPlaceholderIsSyntaxError sends text queries (COM_QUERY)
// with a ? placeholder, as ActiveRecord's exec_query with binds does when
// prepared statements are off, through the proxy and to MariaDB: a ?
// outside quotes is no value in a text query, and MariaDB answers its
// syntax error 1064 near the ?, for routed statements as for others, and
// again when the same text comes back. A ? in quotes is a character.
func TestTextQueryPlaceholderIsSyntaxError(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	statusRefDB(t, e, "ph_ref")
	e.backends[0].Exec(t, "ph_ref", "CREATE TABLE t_dict (code VARCHAR(16) PRIMARY KEY, label VARCHAR(64))")
	proxy := e.conn(t)
	direct, err := e.backends[0].Open(t, "ph_ref").Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	ctx := context.Background()
	answer := func(err error) string {
		if me := mysqlErr(err); me != nil {
			return fmt.Sprintf("%d (%s) %s", me.Number, me.SQLState, me.Message)
		}
		if err != nil {
			return err.Error()
		}
		return "ok"
	}
	for _, give := range []string{
		"SELECT COUNT(*) FROM t_order WHERE user_id = ?",
		"SELECT order_id FROM t_order\nWHERE user_id = 1\n  AND order_id IN (?, 2)",
		"SELECT order_id FROM t_order WHERE status = '?' AND order_id = ? -- ?",
		"UPDATE t_order SET status = ? WHERE order_id = 1",
		"INSERT INTO t_order (order_id, user_id, status) VALUES (?, 1, 'x')",
		"DELETE FROM t_dict WHERE code = ?",
		"SELECT label FROM t_dict WHERE code = ?",
	} {
		t.Run(give, func(t *testing.T) {
			_, err := direct.ExecContext(ctx, give)
			want := answer(err)
			if want == "ok" {
				t.Fatalf("MariaDB ran %q: the reference is not what this test assumes", give)
			}
			for range 2 {
				_, err := proxy.ExecContext(ctx, give)
				got := answer(err)
				if got != want {
					t.Errorf("through the proxy: %s\n       on MariaDB: %s", got, want)
				}
			}
		})
	}
}
