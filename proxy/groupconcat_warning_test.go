package proxy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
)

// TestGroupConcatCutWarning: a GROUP_CONCAT the merge cuts at
// group_concat_max_len ends its statement with MariaDB's warning 1260,
// one per cut group and GROUP_CONCAT, as the reference holding all the
// rows gives it: the result's EOF counts it, SHOW WARNINGS lists it
// (Warning, 1260, "Row N was cut by GROUP_CONCAT()") and @@warning_count
// agrees, over the text and the binary protocol; the next statement
// starts afresh. N is MariaDB's count of the values that GROUP_CONCAT
// joined in the statement when it cut; the merge counts so in its order
// of groups, here MariaDB's. One data node's own cut is its warning,
// passed through once. The proxy cut silently before, and passed the
// data nodes' cuts of their finer groups through.
func TestGroupConcatCutWarning(t *testing.T) {
	e := diffEnvironment(t)
	e.setBoth(t, "group_concat_max_len", "7")
	defer e.setBoth(t, "group_concat_max_len", "DEFAULT")
	for _, q := range []string{
		"SELECT GROUP_CONCAT(order_id ORDER BY order_id) FROM t_order",
		"SELECT GROUP_CONCAT(DISTINCT qty ORDER BY qty DESC SEPARATOR '') FROM t_order",
		// Groups streamed in the group key's order, as MariaDB reads them.
		"SELECT user_id, GROUP_CONCAT(order_id ORDER BY order_id DESC) FROM t_order GROUP BY user_id ORDER BY user_id",
		// Two per group; the data nodes' own GROUP_CONCAT columns, which
		// the merge replaces, cut values of their finer groups too.
		"SELECT user_id, GROUP_CONCAT(DISTINCT HEX(status) ORDER BY HEX(status)), GROUP_CONCAT(qty ORDER BY qty) FROM t_order GROUP BY user_id",
		// Nothing cut: no warning.
		"SELECT GROUP_CONCAT(DISTINCT user_id ORDER BY user_id) FROM t_order WHERE user_id IN (1, 2, 3)",
		// One data node: its own cut and warning, once.
		"SELECT GROUP_CONCAT(REPEAT('x', 10)) FROM t_order WHERE user_id = 1 AND order_id = 8",
	} {
		for _, prepared := range []bool{false, true} {
			eof, got, count := e.cutWarnings(t, e.proxyRaw, q, prepared)
			_, want, wantCount := e.cutWarnings(t, e.refRaw, q, prepared)
			if got != want || count != wantCount || int64(eof) != wantCount {
				t.Errorf("%s (prepared %v):\nproxy     %s @@warning_count %d, the result's EOF %d\nreference %s @@warning_count %d", q, prepared, got, count, eof, want, wantCount)
			}
		}
	}
}

// cutWarnings runs q on c (prepared: COM_STMT_PREPARE and EXECUTE) and
// returns what the client sees of its warnings: the count of the EOF
// that ends the result, SHOW WARNINGS (and SHOW WARNINGS after a
// statement without warnings), and @@warning_count. The count is read
// only through the proxy: MariaDB ends go-mysql's results with an OK
// (CLIENT_DEPRECATE_EOF), whose warning count go-mysql does not read; the
// mariadb CLI shows that it is @@warning_count.
func (e *diffEnv) cutWarnings(t *testing.T, c *client.Conn, q string, prepared bool) (eof uint16, show string, warningCount int64) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if prepared {
		st, err := c.Prepare(q)
		if err != nil {
			t.Fatalf("prepare %s: %v", q, err)
		}
		r, err := st.Execute()
		if err != nil {
			t.Fatalf("execute %s: %v", q, err)
		}
		eof = r.Warnings
		r.Close()
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	} else {
		r, err := c.Execute(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		eof = r.Warnings
		r.Close()
	}
	var b strings.Builder
	list := func() {
		r, err := c.Execute("SHOW WARNINGS")
		if err != nil {
			t.Fatalf("SHOW WARNINGS after %s: %v", q, err)
		}
		defer r.Close()
		for i := range r.RowNumber() {
			level, _ := r.GetString(i, 0)
			code, _ := r.GetInt(i, 1)
			msg, _ := r.GetString(i, 2)
			fmt.Fprintf(&b, " %s %d %q;", level, code, msg)
		}
	}
	list()
	r, err := c.Execute("SELECT @@warning_count")
	if err != nil {
		t.Fatal(err)
	}
	warningCount, _ = r.GetInt(0, 0)
	r.Close()
	b.WriteString(" then")
	if r, err = c.Execute("SELECT COUNT(*) FROM t_order"); err != nil {
		t.Fatal(err)
	}
	r.Close()
	list()
	return eof, b.String(), warningCount
}
