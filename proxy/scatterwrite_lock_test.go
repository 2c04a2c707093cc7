package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestConcurrentWritesOneDataSource: two sessions run the same UPDATE (then
// DELETE) at once in autocommit mode, over rows of one data source that
// lie in both of its physical tables, through the proxy and on one
// MariaDB holding the same rows. MariaDB runs the two one after the
// other: both UPDATEs change every row, one DELETE removes them all and
// the other none. The proxy ran each physical table's part on a
// connection (a transaction) of its own: each statement could take one
// table's rows first, then wait for the other's on the same server,
// which saw no deadlock (the cycle goes through the proxy's commit of
// both parts), until innodb_lock_wait_timeout failed both with 1205.
func TestConcurrentWritesOneDataSource(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	statusRefDB(t, e, "conc_write_ref")
	ctx := context.Background()
	// user_id even is ds_0; order_id of both parities fills t_order_0
	// and t_order_1 there.
	const rows = 2000
	values := make([]string, 0, rows)
	users := make([]string, 0, rows/4)
	for i := 1; i <= rows; i++ {
		values = append(values, fmt.Sprintf("(%d, %d, 'new')", i, 2*(i%(rows/4))))
	}
	for u := 0; u < rows/4; u++ {
		users = append(users, fmt.Sprint(2*u))
	}
	insert := "INSERT INTO t_order (order_id, user_id, status) VALUES " + strings.Join(values, ", ")
	where := " WHERE user_id IN (" + strings.Join(users, ", ") + ")"
	type side struct {
		name string
		a, b *sql.Conn
	}
	sides := []side{
		{"proxy", e.conn(t), e.conn(t)},
		{"MariaDB", refConn(t, e, "conc_write_ref"), refConn(t, e, "conc_write_ref")},
	}
	for _, sd := range sides {
		if _, err := sd.a.ExecContext(ctx, insert); err != nil {
			t.Fatalf("%s: %v", sd.name, err)
		}
		for _, c := range []*sql.Conn{sd.a, sd.b} {
			// A deadlock no server sees ends here, not after 50 s.
			if _, err := c.ExecContext(ctx, "SET innodb_lock_wait_timeout = 2"); err != nil {
				t.Fatal(err)
			}
		}
	}
	// both runs one statement on each of a side's sessions at once and
	// answers each one's rows affected or error number, sorted.
	both := func(sd side, qa, qb string) string {
		var wg sync.WaitGroup
		start := make(chan struct{})
		out := make([]string, 2)
		for i, c := range []*sql.Conn{sd.a, sd.b} {
			q := qa
			if i == 1 {
				q = qb
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				res, err := c.ExecContext(ctx, q)
				if err != nil {
					out[i] = fmt.Sprintf("error %d", errCode(err))
					return
				}
				n, _ := res.RowsAffected()
				out[i] = fmt.Sprint(n)
			}()
		}
		close(start)
		wg.Wait()
		if out[0] > out[1] {
			out[0], out[1] = out[1], out[0]
		}
		return strings.Join(out, ", ")
	}
	steps := make([][2]string, 0, 9)
	for round := range 8 {
		steps = append(steps, [2]string{
			fmt.Sprintf("UPDATE t_order SET status = 'a%d'", round) + where,
			fmt.Sprintf("UPDATE t_order SET status = 'b%d'", round) + where,
		})
	}
	steps = append(steps, [2]string{"DELETE FROM t_order" + where, "DELETE FROM t_order" + where})
	for _, st := range steps {
		got, want := both(sides[0], st[0], st[1]), both(sides[1], st[0], st[1])
		if got != want {
			t.Errorf("%s and %s at once: proxy %s, MariaDB %s", st[0][:40], st[1][:40], got, want)
		}
	}
	for i, sd := range sides {
		if got := queryStrings(t, sd.a, "SELECT COUNT(*) FROM t_order"); fmt.Sprint(got) != "[0]" {
			t.Errorf("%s: %v rows left, want 0", sides[i].name, got)
		}
	}
}
