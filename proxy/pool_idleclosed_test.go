package proxy

import (
	"context"
	"strings"
	"testing"
)

// TestPoolConnectionClosedWhileIdle: SET SESSION wait_timeout runs on a
// pooled backend connection, which goes back to the pool carrying it, and
// MariaDB closes that connection once it has sat idle that long. Another
// session handed it later (the pool checks only connections idle for
// pingAfterIdle) resets it for its own settings: that must not fail the
// other session's statement or transaction (go-sql-driver's
// TestStaleConnectionChecks sets wait_timeout = 2 next to the suite's other
// parallel tests, whose statements failed so now and then).
func TestPoolConnectionClosedWhileIdle(t *testing.T) {
	e := startEnv(t, envOptions{})
	ctx := context.Background()
	ds := e.rules.DefaultDataSource
	p := e.srv.current().pools[ds]
	direct := e.backend(t, 0)
	for _, step := range []struct{ name, begin, end string }{
		{"autocommit", "", ""},
		{"transaction", "START TRANSACTION", "COMMIT"},
	} {
		t.Run(step.name, func(t *testing.T) {
			a, b := e.conn(t), e.conn(t)
			mustExec(t, a, "SET SESSION wait_timeout = 1")
			// The connection that ran the SET, idle in the pool now.
			var id uint32
			p.mu.Lock()
			for _, bc := range p.idle {
				if strings.Contains(bc.applied, "wait_timeout") {
					id = bc.id
				}
			}
			p.mu.Unlock()
			if id == 0 {
				t.Fatal("no idle connection carries the session's wait_timeout")
			}
			waitFor(t, func() bool {
				var n int
				if err := direct.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ?", id).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n == 0
			})
			// b carries no settings: the pool hands it the newest idle
			// connection, the closed one, which it resets.
			if step.begin != "" {
				mustExec(t, b, step.begin)
			}
			if got := queryOne(t, b, "SELECT @@wait_timeout"); got != queryOne(t, direct, "SELECT @@GLOBAL.wait_timeout") {
				t.Errorf("another session's wait_timeout = %s, want the data source's default", got)
			}
			if step.end != "" {
				mustExec(t, b, step.end)
			}
		})
	}
}
