package proxy

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/proxy/internal/wire"
)

// TestDateTimeParamsMatchMariaDB executes prepared statements with
// DATETIME parameters in the binary protocol, as Connector/J sends
// setTimestamp with useServerPrepStmts=true, through the proxy and on
// MariaDB: the result columns have MariaDB's types and decimals and the
// same values. The proxy once passed such a parameter on as a string, so
// SELECT ? described a VARCHAR (Connector/J's getObject returned a
// String, not a Timestamp).
func TestDateTimeParamsMatchMariaDB(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	statusRefDB(t, e, "dt_ref")
	e.backends[0].Exec(t, "dt_ref", "INSERT INTO t_order VALUES (1, 1, 'a'), (2, 1, 'b')")
	db := e.open(t)
	if _, err := db.Exec("INSERT INTO t_order VALUES (1, 1, 'a'), (2, 1, 'b')"); err != nil {
		t.Fatal(err)
	}
	half := time.Date(1999, 12, 31, 23, 59, 59, 500000000, time.UTC)
	whole := time.Date(2024, 2, 29, 13, 14, 15, 0, time.UTC)
	tests := []struct {
		sql  string
		args []any
	}{
		{"SELECT ?, ?", []any{half, whole}},
		{"SELECT ? + INTERVAL 1 DAY, DATE(?), ? > '2000-01-01'", []any{half, whole, whole}},
		{"SELECT ?, COUNT(*) FROM t_order WHERE user_id = 1", []any{half}},
		{"SELECT order_id, ? FROM t_order WHERE order_id = ? AND user_id = 1", []any{whole, int64(2)}},
	}
	answer := func(addr, user, password, schema, sql string, args []any) string {
		c := rawSession(t, addr, user, password, schema)
		c.SetDeadline(time.Now().Add(10 * time.Second))
		p := command(t, c, append([]byte{mysql.COM_STMT_PREPARE}, sql...))
		ok, err := wire.ParsePrepareOK(p)
		if err != nil {
			t.Fatalf("prepare %s on %s: %q", sql, addr, p)
		}
		skip := 0
		if ok.Params > 0 {
			skip += int(ok.Params) + 1
		}
		if ok.Columns > 0 {
			skip += int(ok.Columns) + 1
		}
		for range skip {
			if _, err := c.ReadPacket(); err != nil {
				t.Fatal(err)
			}
		}
		ex, err := wire.AppendExecute(nil, ok.StmtID, args)
		if err != nil {
			t.Fatal(err)
		}
		p = command(t, c, ex)
		if wire.IsErr(p) {
			return fmt.Sprintf("error %d", wire.ParseErr(p).Code)
		}
		n := int(p[0])
		var fields []*mysql.Field
		var out []string
		for range n {
			p, err := c.ReadPacket()
			if err != nil {
				t.Fatal(err)
			}
			f, err := wire.ParseColumn(p, false)
			if err != nil {
				t.Fatal(err)
			}
			fields = append(fields, f)
			name := string(f.Name)
			if !strings.Contains(sql, " FROM ") {
				// The proxy answers a prepared statement without tables
				// as text with its arguments written in, which name the
				// columns (README, Supported SQL and its limits).
				name = "-"
			}
			out = append(out, fmt.Sprintf("%s type %d decimals %d", name, f.Type, f.Decimal))
		}
		for {
			p, err := c.ReadPacket()
			if err != nil {
				t.Fatal(err)
			}
			if wire.IsEOF(p) {
				if len(out) > n {
					break
				}
				out = append(out, "|")
				continue
			}
			vals, _, err := wire.SplitBinaryRow(p, fields, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			var row []string
			for _, v := range vals {
				row = append(row, string(v))
			}
			out = append(out, strings.Join(row, ","))
		}
		return strings.Join(out, "; ")
	}
	for _, tt := range tests {
		want := answer(e.backends[0].Addr(), "root", "", "dt_ref", tt.sql, tt.args)
		got := answer(e.addr, "app", "app-secret", "sharding_db", tt.sql, tt.args)
		if got != want {
			t.Errorf("%s\nproxy:   %s\nMariaDB: %s", tt.sql, got, want)
		}
	}
}
