package proxy

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/shardflake/shardflake/proxy/internal/wire"
	"github.com/shardflake/shardflake/router"
)

func TestCombineOK(t *testing.T) {
	broadcast := &router.Plan{Kind: router.KindUpdate, Type: router.RouteBroadcast}
	tests := []struct {
		name       string
		plan       *router.Plan
		give       []wire.OK
		want       wire.OK
		wantCopies []uint64
	}{
		{
			name: "one route passes through",
			plan: &router.Plan{Kind: router.KindUpdate, Type: router.RouteSingle},
			give: []wire.OK{{AffectedRows: 2, Warnings: 1, Info: "Rows matched: 3  Changed: 2  Warnings: 1"}},
			want: wire.OK{AffectedRows: 2, Warnings: 1, Info: "Rows matched: 3  Changed: 2  Warnings: 1"},
		},
		{
			name: "UPDATE over data nodes sums rows matched and changed",
			plan: &router.Plan{Kind: router.KindUpdate, Type: router.RouteAll},
			give: []wire.OK{
				{AffectedRows: 2, Info: "Rows matched: 3  Changed: 2  Warnings: 0"},
				{AffectedRows: 0, Info: "Rows matched: 1  Changed: 0  Warnings: 0"},
				{AffectedRows: 1, Warnings: 1, Info: "Rows matched: 1  Changed: 1  Warnings: 1"},
			},
			want: wire.OK{AffectedRows: 3, Warnings: 1, Info: "Rows matched: 5  Changed: 3  Warnings: 1"},
		},
		{
			name: "multi-row INSERT split into single rows and a batch",
			plan: &router.Plan{Kind: router.KindInsert, Type: router.RouteMulti, Keys: &router.GeneratedKeys{Column: "id", First: 100, Count: 4}},
			give: []wire.OK{
				{AffectedRows: 1},
				{AffectedRows: 3, Info: "Records: 3  Duplicates: 0  Warnings: 0"},
			},
			want: wire.OK{AffectedRows: 4, InsertID: 100, Info: "Records: 4  Duplicates: 0  Warnings: 0"},
		},
		{
			name: "INSERT IGNORE that skipped a row on one data node",
			plan: &router.Plan{Kind: router.KindInsert, Type: router.RouteMulti, Duplicates: router.DuplicatesSkipped},
			give: []wire.OK{{AffectedRows: 0, Warnings: 1}, {AffectedRows: 1}},
			want: wire.OK{AffectedRows: 1, Warnings: 1, Info: "Records: 2  Duplicates: 1  Warnings: 1"},
		},
		{
			// MariaDB counts the row ON DUPLICATE KEY UPDATE changed, not
			// the one it left as it was.
			name: "ON DUPLICATE KEY UPDATE: single rows inserted, updated, unchanged",
			plan: &router.Plan{Kind: router.KindInsert, Type: router.RouteMulti, Duplicates: router.DuplicatesUpdated},
			give: []wire.OK{{AffectedRows: 1}, {AffectedRows: 2}, {AffectedRows: 0}},
			want: wire.OK{AffectedRows: 3, Info: "Records: 3  Duplicates: 1  Warnings: 0"},
		},
		{
			// With IGNORE, it counts records less the rows copied: the
			// unchanged one.
			name: "INSERT IGNORE ... ON DUPLICATE KEY UPDATE: single rows inserted, updated, unchanged",
			plan: &router.Plan{Kind: router.KindInsert, Type: router.RouteMulti, Duplicates: router.DuplicatesSkippedOrUpdated},
			give: []wire.OK{{AffectedRows: 1}, {AffectedRows: 2}, {AffectedRows: 0}},
			want: wire.OK{AffectedRows: 3, Info: "Records: 3  Duplicates: 1  Warnings: 0"},
		},
		{
			name: "REPLACE of a row in the way of two",
			plan: &router.Plan{Kind: router.KindInsert, Type: router.RouteMulti, Duplicates: router.DuplicatesReplaced},
			give: []wire.OK{{AffectedRows: 3}, {AffectedRows: 1}},
			want: wire.OK{AffectedRows: 4, Info: "Records: 2  Duplicates: 2  Warnings: 0"},
		},
		{
			name: "INSERT ... SELECT over data nodes",
			plan: &router.Plan{Kind: router.KindInsert, Type: router.RouteAll},
			give: []wire.OK{
				{AffectedRows: 5, Info: "Records: 5  Duplicates: 0  Warnings: 0"},
				{AffectedRows: 2, Info: "Records: 2  Duplicates: 0  Warnings: 0"},
			},
			want: wire.OK{AffectedRows: 7, Info: "Records: 7  Duplicates: 0  Warnings: 0"},
		},
		{
			name: "DELETE has no info",
			plan: &router.Plan{Kind: router.KindDelete, Type: router.RouteAll},
			give: []wire.OK{{AffectedRows: 2}, {AffectedRows: 3}},
			want: wire.OK{AffectedRows: 5},
		},
		{
			name: "info strings of different forms are dropped",
			plan: &router.Plan{Kind: router.KindUpdate, Type: router.RouteAll},
			give: []wire.OK{{AffectedRows: 1, Info: "Rows matched: 1  Changed: 1  Warnings: 0"}, {AffectedRows: 1, Info: "something else"}},
			want: wire.OK{AffectedRows: 2},
		},
		{
			name: "broadcast write reports one copy",
			plan: broadcast,
			give: []wire.OK{
				{AffectedRows: 1, Info: "Rows matched: 1  Changed: 1  Warnings: 0"},
				{AffectedRows: 1, Info: "Rows matched: 1  Changed: 1  Warnings: 0"},
				{AffectedRows: 1, Info: "Rows matched: 1  Changed: 1  Warnings: 0"},
			},
			want: wire.OK{AffectedRows: 1, Info: "Rows matched: 1  Changed: 1  Warnings: 0"},
		},
		{
			name: "broadcast copies that disagree are reported",
			plan: broadcast,
			give: []wire.OK{
				{AffectedRows: 1, Info: "Rows matched: 1  Changed: 1  Warnings: 0"},
				{AffectedRows: 0, Info: "Rows matched: 0  Changed: 0  Warnings: 0"},
			},
			want:       wire.OK{AffectedRows: 1, Info: "Rows matched: 1  Changed: 1  Warnings: 0"},
			wantCopies: []uint64{1, 0},
		},
		{
			name: "broadcast DDL is not a write",
			plan: &router.Plan{Kind: router.KindDDL, Type: router.RouteBroadcast},
			give: []wire.OK{{}, {}},
			want: wire.OK{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, copies := combineOK(tt.plan, tt.give)
			if got != tt.want || !slices.Equal(copies, tt.wantCopies) {
				t.Errorf("got %+v %v, want %+v %v", got, copies, tt.want, tt.wantCopies)
			}
		})
	}
}

// TestWriteCountsAsOneServer: what a client learns from a write's OK
// packet is what one MariaDB holding the logical tables would say.
func TestWriteCountsAsOneServer(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	ctx := context.Background()
	c := e.conn(t)
	mustExec(t, c, "INSERT INTO t_dict (code, label) VALUES ('a', 'x'), ('b', 'y')")
	mustExec(t, c, "INSERT INTO t_order (order_id, user_id, status) VALUES (1, 0, 'a'), (2, 1, 'a'), (3, 0, 'b'), (4, 1, 'b')")

	res, err := c.ExecContext(ctx, "UPDATE t_dict SET label = 'zz' WHERE code = 'a'")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Errorf("UPDATE of one broadcast row: %d rows affected, want 1 (one per logical row, not per copy)", n)
	}
	res, err = c.ExecContext(ctx, "DELETE FROM t_dict WHERE code IN ('a', 'b')")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 2 {
		t.Errorf("DELETE of two broadcast rows: %d rows affected, want 2", n)
	}

	// The mariadb client prints the info string of the OK packet.
	for _, tt := range []struct{ give, want string }{
		{"UPDATE t_order SET status = 'c' WHERE status = 'a'", "Rows matched: 2  Changed: 2  Warnings: 0"},
		{"UPDATE t_order SET status = 'c'", "Rows matched: 4  Changed: 2  Warnings: 0"},
		{"INSERT INTO t_order (order_id, user_id, status) VALUES (5, 0, 'd'), (6, 1, 'd'), (7, 0, 'd')", "Records: 3  Duplicates: 0  Warnings: 0"},
		{"INSERT IGNORE INTO t_order (order_id, user_id, status) VALUES (5, 0, 'e'), (8, 1, 'e')", "Records: 2  Duplicates: 1  Warnings: 1"},
		// One row on each of two data nodes: 5 as it was, 8 changed. MariaDB
		// counts the changed one.
		{"INSERT INTO t_order (order_id, user_id, status) VALUES (5, 0, 'd'), (8, 1, 'f') ON DUPLICATE KEY UPDATE status = VALUES(status)", "Records: 2  Duplicates: 1  Warnings: 0"},
	} {
		out, err := mariadbCLI(t, e, tt.give, "-vvv")
		if err != nil {
			t.Fatalf("%s: %v\n%s", tt.give, err, out)
		}
		if !strings.Contains(out, tt.want) {
			t.Errorf("%s: the client printed\n%s\nwant %q", tt.give, out, tt.want)
		}
	}
}
