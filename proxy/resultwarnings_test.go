package proxy

import (
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/proxy/internal/wire"
)

// TestResultWarningCount reads the warning count of the EOF that ends a
// result set, through the proxy and on MariaDB: Connector/J's
// Statement.getWarnings asks SHOW WARNINGS only when it is not 0, and the
// mariadb CLI prints "1 row in set, 1 warning" from it. The proxy once
// always sent 0 (SHOW WARNINGS had the warnings). One route, a broadcast
// table, no table, and a statement without warnings after them.
func TestResultWarningCount(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	statusRefDB(t, e, "rw_ref")
	e.backends[0].Exec(t, "rw_ref", "INSERT INTO t_order VALUES (1, 1, 'a')", "CREATE TABLE t_dict (code VARCHAR(16) PRIMARY KEY, label VARCHAR(64))", "INSERT INTO t_dict VALUES ('a', 'b')")
	db := e.open(t)
	for _, q := range []string{"INSERT INTO t_order VALUES (1, 1, 'a')", "INSERT INTO t_dict VALUES ('a', 'b')"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	queries := []string{
		"SELECT CAST('abc' AS SIGNED) FROM t_order WHERE user_id = 1 AND order_id = 1",
		"SELECT CAST('abc' AS SIGNED), CAST('x' AS SIGNED) FROM t_dict",
		"SELECT CAST('abc' AS SIGNED)",
		"SELECT status FROM t_order WHERE user_id = 1 AND order_id = 1",
		"SELECT 1",
	}
	counts := func(addr, user, password, schema string) []string {
		c := rawSession(t, addr, user, password, schema)
		c.SetDeadline(time.Now().Add(10 * time.Second))
		var out []string
		for _, q := range queries {
			p := command(t, c, append([]byte{mysql.COM_QUERY}, q...))
			if wire.IsErr(p) {
				t.Fatalf("%s on %s: error %d", q, addr, wire.ParseErr(p).Code)
			}
			eofs := 0
			for eofs < 2 {
				if p, err := c.ReadPacket(); err != nil {
					t.Fatal(err)
				} else if wire.IsEOF(p) {
					eofs++
					if eofs == 2 {
						out = append(out, fmt.Sprintf("%s: %d warnings", q, binary.LittleEndian.Uint16(p[1:])))
					}
				}
			}
		}
		return out
	}
	sameSteps(t, counts(e.addr, "app", "app-secret", "sharding_db"), counts(e.backends[0].Addr(), "root", "", "rw_ref"))
}
