package proxy

import (
	"fmt"
	"testing"
)

// TestMaxConnectionsPerQuery: an UPDATE over both tables of each data
// source runs on two backend connections per data source by default and
// on one with server.maxConnectionsPerQuery 1 (one backend transaction
// there), as a trigger on every physical table records CONNECTION_ID();
// the rows changed are the same.
func TestMaxConnectionsPerQuery(t *testing.T) {
	for _, tt := range []struct {
		server string
		want   string // distinct connections per data source
	}{
		{"", "2"},
		{"  maxConnectionsPerQuery: 1\n", "1"},
	} {
		t.Run(fmt.Sprintf("want %s", tt.want), func(t *testing.T) {
			e := startEnv(t, envOptions{server: tt.server, databases: "cpq", pooled: true})
			createTables(t, e)
			db := e.open(t)
			for id := 1; id <= 8; id++ {
				if _, err := db.Exec("INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, 'a')", id, (id-1)/2%2+1); err != nil {
					t.Fatal(err)
				}
			}
			for i := range 2 {
				execAll(t, e.backend(t, i), "CREATE TABLE cpq_log (conn BIGINT NOT NULL)",
					"CREATE TRIGGER cpq_log_0 AFTER UPDATE ON t_order_0 FOR EACH ROW INSERT INTO cpq_log VALUES (CONNECTION_ID())",
					"CREATE TRIGGER cpq_log_1 AFTER UPDATE ON t_order_1 FOR EACH ROW INSERT INTO cpq_log VALUES (CONNECTION_ID())")
			}
			res, err := db.Exec("UPDATE t_order SET status = 'b'")
			if err != nil {
				t.Fatal(err)
			}
			if n, _ := res.RowsAffected(); n != 8 {
				t.Errorf("%d rows changed, want 8", n)
			}
			for i := range 2 {
				got := queryStrings(t, e.backend(t, i), "SELECT COUNT(*), COUNT(DISTINCT conn) FROM cpq_log")
				if want := "4," + tt.want; len(got) != 1 || got[0] != want {
					t.Errorf("ds_%d: rows logged, connections %v; want %s", i, got, want)
				}
			}
		})
	}
}
