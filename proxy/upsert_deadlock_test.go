package proxy

import (
	"fmt"
	"sync"
	"testing"
)

// TestUpsertsOnOneDataSourceWaitInTurn: two sessions upsert the same two
// rows of one data source, which live in its two physical tables, each
// naming them in the other's order, again and again at once. On one
// MariaDB each statement is one transaction: the second waits for the
// first, or the server sees the cycle and answers 1213 at once. Through
// the proxy each physical table's part ran on a connection of its own, a
// transaction of its own: one statement held t_order_0's row and waited
// for t_order_1's, the other the reverse, a cycle that passes through
// the proxy and that the server cannot see, so both waited for
// innodb_lock_wait_timeout and one got 1205. An INSERT that may meet
// rows already there (ON DUPLICATE KEY UPDATE, REPLACE, IGNORE) now runs
// its routes on one data source one after the other on one connection,
// as an UPDATE does.
func TestUpsertsOnOneDataSourceWaitInTurn(t *testing.T) {
	// The bound makes the old behaviour fail in seconds, not in 50.
	e := startEnv(t, envOptions{server: "lockWaitTimeout: 2s", pooled: true})
	createTables(t, e)
	setup := e.conn(t)
	// Both rows on ds_0 (user_id 0): order 1 in t_order_1, order 2 in
	// t_order_0.
	mustExec(t, setup, "INSERT INTO t_order (order_id, user_id, status) VALUES (1, 0, 'a'), (2, 0, 'a')")
	for _, form := range []struct{ name, sql string }{
		{"on duplicate key update", "INSERT INTO t_order (order_id, user_id, status) VALUES (%d, 0, 's%d'), (%d, 0, 's%d') ON DUPLICATE KEY UPDATE status = VALUES(status)"},
		{"replace", "REPLACE INTO t_order (order_id, user_id, status) VALUES (%d, 0, 's%d'), (%d, 0, 's%d')"},
		{"insert", "INSERT INTO t_order (order_id, user_id, status) VALUES (%d, 0, 's%d'), (%d, 0, 's%d')"},
	} {
		t.Run(form.name, func(t *testing.T) {
			var wg sync.WaitGroup
			var mu sync.Mutex
			codes := map[uint16]int{}
			for s := range 2 {
				conn := e.conn(t)
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 40 {
						first, second := 1, 2
						if form.name == "insert" {
							// New rows, the same two for both sessions.
							first, second = 10+2*i, 11+2*i
						}
						if s == 1 {
							first, second = second, first
						}
						_, err := conn.ExecContext(t.Context(), fmt.Sprintf(form.sql, first, i, second, i))
						mu.Lock()
						codes[errCode(err)]++
						mu.Unlock()
						if err != nil && errCode(err) != 1213 && (form.name != "insert" || errCode(err) != 1062) {
							t.Errorf("session %d, round %d: %v (one MariaDB answers or says 1213)", s, i, err)
							return
						}
					}
				}()
			}
			wg.Wait()
			t.Logf("answers by error code: %v", codes)
			want := "[2,2]"
			if form.name == "insert" {
				want = "[82,82]" // each new pair once, from one session
			}
			if got := queryStrings(t, setup, "SELECT COUNT(*), COUNT(DISTINCT order_id) FROM t_order"); fmt.Sprint(got) != want {
				t.Errorf("rows, distinct keys after the statements: %v, want %s", got, want)
			}
		})
	}
}
