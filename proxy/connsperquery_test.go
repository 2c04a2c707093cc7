package proxy

import (
	"fmt"
	"strings"
	"testing"
)

// TestMaxConnectionsPerQuery: a SELECT over both tables of each data
// source reads them on two backend connections per data source by
// default and on one with server.maxConnectionsPerQuery 1, as
// CONNECTION_ID() in its rows shows. An INSERT of rows for both tables
// and an UPDATE over both run on one connection per data source (one
// backend transaction there) either way (guardConns), as a trigger on
// every physical table records CONNECTION_ID(); the rows written are the
// same.
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
			for i := range 2 {
				execAll(t, e.backend(t, i), "CREATE TABLE cpq_log (conn BIGINT NOT NULL, op CHAR(1) NOT NULL)")
				for _, op := range []string{"INSERT", "UPDATE"} {
					for j := range 2 {
						execAll(t, e.backend(t, i), fmt.Sprintf("CREATE TRIGGER cpq_log_%s_%d AFTER %s ON t_order_%d FOR EACH ROW INSERT INTO cpq_log VALUES (CONNECTION_ID(), '%c')", op, j, op, j, op[0]))
					}
				}
			}
			var rows []string
			for id := 1; id <= 8; id++ {
				rows = append(rows, fmt.Sprintf("(%d, %d, 'a')", id, (id-1)/2%2+1))
			}
			for _, st := range []struct {
				sql, op, conns string
			}{
				{"INSERT INTO t_order (order_id, user_id, status) VALUES " + strings.Join(rows, ", "), "I", "1"},
				{"UPDATE t_order SET status = 'b'", "U", "1"},
			} {
				res, err := db.Exec(st.sql)
				if err != nil {
					t.Fatal(err)
				}
				if n, _ := res.RowsAffected(); n != 8 {
					t.Errorf("%s: %d rows, want 8", st.sql, n)
				}
				for i := range 2 {
					got := queryStrings(t, e.backend(t, i), "SELECT COUNT(*), COUNT(DISTINCT conn) FROM cpq_log WHERE op = '"+st.op+"'")
					if want := "4," + st.conns; len(got) != 1 || got[0] != want {
						t.Errorf("%s: ds_%d: rows logged, connections %v; want %s", st.sql, i, got, want)
					}
				}
			}
			// user_id 1 is ds_1, 2 is ds_0.
			got := queryStrings(t, db, "SELECT user_id, COUNT(DISTINCT conn) FROM (SELECT user_id, CONNECTION_ID() AS conn FROM t_order) AS r GROUP BY user_id ORDER BY user_id")
			if want := fmt.Sprintf("[1,%s 2,%s]", tt.want, tt.want); fmt.Sprint(got) != want {
				t.Errorf("a SELECT over both tables: connections by user_id %v, want %s", got, want)
			}
		})
	}
}
