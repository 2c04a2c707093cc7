package proxy

import (
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/proxy/internal/wire"
)

// TestMalformedExecuteAsMariaDB sends COM_STMT_EXECUTE packets written
// by hand for "SELECT ?" to MariaDB and to the proxy: an unknown
// parameter type, a value cut short, no types bound, stray bytes after
// the value. Each must get what MariaDB answers (1210 Incorrect arguments
// to mysqld_stmt_execute, or a result), never a result MariaDB refuses.
func TestMalformedExecuteAsMariaDB(t *testing.T) {
	e := startEnv(t, envOptions{})
	tests := []struct {
		name string
		tail []byte // after statement id, flags and iteration count
	}{
		{"a BIGINT", []byte{0, 1, mysql.MYSQL_TYPE_LONGLONG, 0, 7, 0, 0, 0, 0, 0, 0, 0}},
		{"unknown type 0x42", []byte{0, 1, 0x42, 0, 1, 'x'}},
		{"type 20", []byte{0, 1, 20, 0, 1, 'x'}},
		{"value cut short", []byte{0, 1, mysql.MYSQL_TYPE_LONGLONG, 0, 7, 0}},
		{"no types bound", []byte{0, 0}},
		{"types cut short", []byte{0, 1, mysql.MYSQL_TYPE_LONGLONG}},
		{"types missing", []byte{0, 1}},
		{"null bitmap missing", nil},
		{"bytes after the value", []byte{0, 1, mysql.MYSQL_TYPE_LONGLONG, 0, 7, 0, 0, 0, 0, 0, 0, 0, 9, 9}},
	}
	answer := func(addr, user, password, db string, tail []byte) string {
		c := rawSession(t, addr, user, password, db)
		c.SetDeadline(time.Now().Add(10 * time.Second))
		p := command(t, c, append([]byte{mysql.COM_STMT_PREPARE}, "SELECT ?"...))
		ok, err := wire.ParsePrepareOK(p)
		if err != nil {
			t.Fatalf("prepare on %s: %q", addr, p)
		}
		for range ok.Params + 1 + min(ok.Columns, 1)*(ok.Columns+1) {
			if _, err := c.ReadPacket(); err != nil {
				t.Fatal(err)
			}
		}
		ex := binary.LittleEndian.AppendUint32([]byte{mysql.COM_STMT_EXECUTE}, ok.StmtID)
		ex = append(ex, 0, 1, 0, 0, 0)
		p = command(t, c, append(ex, tail...))
		if wire.IsErr(p) {
			return fmt.Sprintf("error %d", wire.ParseErr(p).Code)
		}
		return "a result"
	}
	for _, tt := range tests {
		want := answer(e.backends[0].Addr(), "root", "", "ds_0", tt.tail)
		got := answer(e.addr, "app", "app-secret", "sharding_db", tt.tail)
		if got != want {
			t.Errorf("%s: the proxy answered %s, MariaDB %s", tt.name, got, want)
		}
	}
}
