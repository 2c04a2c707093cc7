package proxy

import (
	"fmt"
	"strings"
	"testing"
)

// TestTextInsertEveryByte inserts, as text INSERTs (the shape cache's
// path: the literals become arguments and are written back into the
// route's text), every byte from 0 to 127 and MySQL's backslash escapes,
// with and without NO_BACKSLASH_ESCAPES, through the proxy and on
// MariaDB itself, and compares the bytes stored (HEX).
func TestTextInsertEveryByte(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	statusRefDB(t, e, "bytes_ref")
	proxy, ref := e.conn(t), refConn(t, e, "bytes_ref")
	const rows = "SELECT order_id, user_id, HEX(status) FROM t_order ORDER BY order_id"
	// quote writes s as a string literal in the client's mode.
	quote := func(s string, noBackslash bool) string {
		var b strings.Builder
		b.WriteByte('\'')
		for i := 0; i < len(s); i++ {
			switch c := s[i]; {
			case c == '\'':
				b.WriteString("''")
			case noBackslash:
				b.WriteByte(c)
			case c == '\\':
				b.WriteString(`\\`)
			case c == 0:
				b.WriteString(`\0`)
			default:
				b.WriteByte(c)
			}
		}
		b.WriteByte('\'')
		return b.String()
	}
	id := 0
	insert := func(lit string) {
		t.Helper()
		id++
		diffStep(t, proxy, ref, fmt.Sprintf("INSERT INTO t_order (order_id, user_id, status) VALUES (%d, %d, %s)", id, id%3, lit), "")
	}
	for _, noBackslash := range []bool{false, true} {
		if noBackslash {
			diffStep(t, proxy, ref, "SET SESSION sql_mode = 'NO_BACKSLASH_ESCAPES'", "")
		}
		for from := 0; from < 128; from += 16 {
			var chunk []byte
			for c := from; c < from+16; c++ {
				chunk = append(chunk, byte(c))
			}
			insert(quote(string(chunk), noBackslash))
		}
		if noBackslash {
			insert(`'c:\dir\0\n\'`) // backslashes as they are
		} else {
			insert(`'\0\n\r\Z\t\b\\\'\"\%\_\q'`) // every escape
		}
		insert(`'it''s'`)
	}
	diffQuery(t, "text inserts", proxy, ref, rows)
	if got := queryStrings(t, proxy, "SELECT COUNT(*) FROM t_order"); len(got) != 1 || got[0] != fmt.Sprint(id) {
		t.Fatalf("rows through the proxy: %v, want %d", got, id)
	}
}
