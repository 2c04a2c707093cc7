package proxy

import (
	"fmt"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"
)

// TestIgnoreSpaceCapability logs in with CLIENT_IGNORE_SPACE, as
// Connector/J does, through the proxy and directly on MariaDB: MariaDB
// adds IGNORE_SPACE to the session's sql_mode (a function name may then
// be followed by a space), keeps it under a relative SET sql_mode (the
// driver's own sql_mode = concat(@@sql_mode, ',STRICT_TRANS_TABLES')), and
// drops it at COM_RESET_CONNECTION. The proxy once left it out.
func TestIgnoreSpaceCapability(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	statusRefDB(t, e, "is_ref")
	steps := func(addr, user, password, db string) []string {
		c, err := client.Connect(addr, user, password, db, func(c *client.Conn) error {
			return c.SetCapability(mysql.CLIENT_IGNORE_SPACE)
		})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var out []string
		query := func(q string) {
			r, err := c.Execute(q)
			if err != nil {
				out = append(out, fmt.Sprintf("%s: error %d", q, errCode(err)))
				return
			}
			var row []string
			for i := range r.Values {
				for j := range r.Values[i] {
					s, _ := r.GetString(i, j)
					row = append(row, s)
				}
			}
			out = append(out, fmt.Sprintf("%s: %q", q, row))
		}
		query("SELECT @@sql_mode = @@global.sql_mode, @@sql_mode")
		query("SELECT COUNT (*) FROM t_order")
		query("SET sql_mode = concat(@@sql_mode, ',STRICT_TRANS_TABLES')")
		query("SELECT @@sql_mode")
		c.ResetSequence()
		if err := c.WritePacket([]byte{0, 0, 0, 0, mysql.COM_RESET_CONNECTION}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ReadOKPacket(); err != nil {
			t.Fatalf("COM_RESET_CONNECTION: %v", err)
		}
		query("SELECT @@sql_mode = @@global.sql_mode, @@sql_mode")
		return out
	}
	want := steps(e.backends[0].Addr(), "root", "", "is_ref")
	got := steps(e.addr, "app", "app-secret", "sharding_db")
	sameSteps(t, got, want)
}
