package proxy

import (
	"context"
	"database/sql"
	"maps"
	"slices"
	"testing"
)

// orderStatuses returns order_id -> status of every t_order row the
// backends hold, committed, read directly.
func orderStatuses(t *testing.T, e *testEnv) map[int64]string {
	t.Helper()
	out := map[int64]string{}
	for i := range e.backends {
		for _, table := range []string{"t_order_0", "t_order_1"} {
			rows, err := e.backend(t, i).Query("SELECT order_id, COALESCE(status, 'NULL') FROM " + table)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var id int64
				var st string
				if err := rows.Scan(&id, &st); err != nil {
					t.Fatal(err)
				}
				out[id] = st
			}
			rows.Close()
		}
	}
	return out
}

// TestMultiRouteWritesAreAtomic: a write split over several data nodes
// that fails on one of them leaves nothing behind, as MariaDB's statement
// atomicity promises; inside a transaction it undoes only itself.
func TestMultiRouteWritesAreAtomic(t *testing.T) {
	e := startEnv(t, envOptions{})
	ctx := context.Background()
	// Orders 1 (user 0) and 2 (user 1) exist; order_id % 2 picks the
	// table, user_id % 2 the data source. A trigger makes ds_1.t_order_0
	// refuse updates and deletes, so statements over every data node
	// fail there after the other data nodes ran them.
	setup := func(t *testing.T) {
		t.Helper()
		createTables(t, e)
		if _, err := e.open(t).Exec("INSERT INTO t_order (order_id, user_id, status) VALUES (1, 0, 'one'), (2, 1, 'two'), (3, 0, 'three'), (4, 1, 'four')"); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{
			"CREATE TRIGGER no_update BEFORE UPDATE ON t_order_0 FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'ds_1.t_order_0 refuses updates'",
			"CREATE TRIGGER no_delete BEFORE DELETE ON t_order_0 FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'ds_1.t_order_0 refuses deletes'",
		} {
			if _, err := e.backend(t, 1).Exec(q); err != nil {
				t.Fatal(err)
			}
		}
	}
	before := map[int64]string{1: "one", 2: "two", 3: "three", 4: "four"}

	tests := []struct {
		name     string
		give     []string // run in order on one connection; the last fails
		wantCode uint16
		want     map[int64]string // committed afterwards
	}{
		{
			name:     "autocommit INSERT with a duplicate on one data node",
			give:     []string{"INSERT INTO t_order (order_id, user_id, status) VALUES (10, 0, 'new'), (11, 1, 'new'), (1, 0, 'dup'), (13, 1, 'new')"},
			wantCode: 1062,
			want:     before,
		},
		{
			name:     "autocommit UPDATE refused by one data node",
			give:     []string{"UPDATE t_order SET status = 'changed'"},
			wantCode: 1644,
			want:     before,
		},
		{
			name:     "autocommit DELETE refused by one data node",
			give:     []string{"DELETE FROM t_order WHERE status IS NOT NULL"},
			wantCode: 1644,
			want:     before,
		},
		{
			name: "in a transaction the failed statement undoes only itself",
			give: []string{
				"BEGIN",
				"INSERT INTO t_order (order_id, user_id, status) VALUES (20, 0, 'kept')",
				"UPDATE t_order SET status = 'kept too' WHERE order_id = 1",
				"INSERT INTO t_order (order_id, user_id, status) VALUES (21, 1, 'gone'), (22, 0, 'gone'), (2, 1, 'dup')",
				"UPDATE t_order SET status = 'gone'",
				"INSERT INTO t_order (order_id, user_id, status) VALUES (23, 1, 'after'), (24, 0, 'after')",
				"COMMIT",
			},
			want: map[int64]string{1: "kept too", 2: "two", 3: "three", 4: "four", 20: "kept", 23: "after", 24: "after"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			setup(t)
			c := e.conn(t)
			var lastErr error
			for _, q := range tt.give {
				_, err := c.ExecContext(ctx, q)
				if err != nil {
					lastErr = err
					t.Logf("%s: %v", q, err)
				}
			}
			if tt.wantCode != 0 && errCode(lastErr) != tt.wantCode {
				t.Errorf("got error %v, want %d", lastErr, tt.wantCode)
			}
			if got := orderStatuses(t, e); !maps.Equal(got, tt.want) {
				t.Errorf("committed rows:\n got %v\nwant %v", got, tt.want)
			}
			// Nothing is left open or pinned on the backends.
			waitFor(t, func() bool {
				for _, st := range e.srv.PoolStats() {
					if st.InUse != 0 {
						return false
					}
				}
				return true
			})
		})
	}

	t.Run("statement errors inside a transaction keep it usable", func(t *testing.T) {
		setup(t)
		c := e.conn(t)
		mustExec(t, c, "BEGIN")
		mustExec(t, c, "INSERT INTO t_order (order_id, user_id, status) VALUES (30, 0, 'a'), (31, 1, 'a')")
		_, err := c.ExecContext(ctx, "UPDATE t_order SET status = 'b'")
		if errCode(err) != 1644 {
			t.Fatalf("got %v, want 1644", err)
		}
		// The transaction still sees its own rows, unchanged by the
		// failed UPDATE.
		got := queryStrings(t, c, "SELECT status FROM t_order WHERE order_id IN (30, 31) ORDER BY order_id")
		if !slices.Equal(got, []string{"a", "a"}) {
			t.Errorf("inside the transaction: %q, want [a a]", got)
		}
		mustExec(t, c, "ROLLBACK")
		if got := orderStatuses(t, e); !maps.Equal(got, before) {
			t.Errorf("after ROLLBACK: %v", got)
		}
	})
}

func mustExec(t *testing.T, c *sql.Conn, q string, args ...any) {
	t.Helper()
	if _, err := c.ExecContext(context.Background(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}
