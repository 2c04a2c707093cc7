package proxy

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/shardflake/shardflake/proxy/internal/wire"
)

// bigResult is a result of ~24 MB in rows of 1 MB: far more than the
// socket buffers hold, so the proxy's writes to a slow reader return
// EAGAIN part way and wait for the socket to drain.
const bigResult = "SELECT seq, REPEAT(CHAR(65 + seq % 26), 1000000) FROM seq_1_to_24"

// TestSlowReaderBigResult: a client that reads a big result slowly
// gets every byte MariaDB gives (partial raw writes resume where they
// stopped), and a client that leaves in the middle of one ends its
// session and gives its backend connection back.
func TestSlowReaderBigResult(t *testing.T) {
	e := startEnv(t, envOptions{planner: toDefault})
	ctx := context.Background()
	ref := refConn(t, e, "ds_0")
	want := map[string]string{}
	rows, err := ref.QueryContext(ctx, bigResult)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		want[k] = v
	}
	rows.Close()
	if len(want) != 24 {
		t.Fatalf("MariaDB gave %d rows", len(want))
	}

	db := e.open(t)
	rows, err = db.QueryContext(ctx, bigResult)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		if want[k] != v {
			t.Errorf("row %s: %d bytes, differs from MariaDB's %d", k, len(v), len(want[k]))
		}
		n++
		time.Sleep(10 * time.Millisecond) // a slow reader, not a wait for the server
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if n != len(want) {
		t.Errorf("proxy gave %d rows, MariaDB %d", n, len(want))
	}

	// A client that leaves after the first bytes of the result.
	p0 := e.srv.current().pools["ds_0"]
	before := e.srv.Clients()
	c := rawSession(t, e.addr, "app", "app-secret", "sharding_db")
	c.ResetSeq()
	if err := c.WritePacket(append([]byte{mysql.COM_QUERY}, bigResult...)); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	var b [64 << 10]byte
	c.NetConn().SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.NetConn().Read(b[:]); err != nil {
		t.Fatal(err)
	}
	c.NetConn().Close()
	waitFor(t, func() bool { return e.srv.Clients() <= before && p0.stats().InUse == 0 })
	var got string
	if err := db.QueryRowContext(ctx, "SELECT LENGTH(REPEAT('x', 1000000))").Scan(&got); err != nil || got != "1000000" {
		t.Fatalf("after a client left mid-result: %q, %v", got, err)
	}
}

// TestIdleAfterLongStatement: with the idle deadline left in place
// across commands, a statement that runs past waitTimeout does not get
// its session closed for idleness (the next command, sent at once or
// pipelined behind it, is answered), and a session idle after it is
// still closed after about waitTimeout.
func TestIdleAfterLongStatement(t *testing.T) {
	e := startEnv(t, envOptions{server: "waitTimeout: 400ms\nnetReadTimeout: 300ms", planner: toDefault})
	c := rawSession(t, e.addr, "app", "app-secret", "sharding_db")
	for i := range 2 {
		p := command(t, c, append([]byte{mysql.COM_QUERY}, "SELECT SLEEP(0.9)"...))
		if wire.IsErr(p) {
			t.Fatalf("SLEEP: error %d", errOf(p))
		}
		for eofs := 0; eofs < 2; { // the rest of the result
			p, err := c.ReadPacket()
			if err != nil {
				t.Fatalf("round %d: reading the result: %v", i, err)
			}
			if wire.IsEOF(p) && len(p) < 9 {
				eofs++
			}
		}
		if p := command(t, c, []byte{mysql.COM_PING}); p[0] != wire.HeaderOK {
			t.Fatalf("round %d: ping right after a statement past waitTimeout: %q", i, p)
		}
	}
	// Pipelined: the ping is in the proxy's buffer while the SLEEP runs.
	c.ResetSeq()
	c.WritePacket(append([]byte{mysql.COM_QUERY}, "SELECT SLEEP(0.9)"...))
	c.ResetSeq()
	c.WritePacket([]byte{mysql.COM_PING})
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	c.ResetSeq()
	c.SetSeq(1)
	for eofs := 0; eofs < 2; {
		p, err := c.ReadPacket()
		if err != nil {
			t.Fatalf("pipelined SLEEP: %v", err)
		}
		if wire.IsErr(p) {
			t.Fatalf("pipelined SLEEP: error %d", errOf(p))
		}
		if wire.IsEOF(p) && len(p) < 9 {
			eofs++
		}
	}
	c.SetSeq(1)
	if p, err := c.ReadPacket(); err != nil || p[0] != wire.HeaderOK {
		t.Fatalf("the ping pipelined behind a statement past waitTimeout: %q, %v", p, err)
	}
	if took := closedWithin(t, c, 10*time.Second); took > 5*time.Second {
		t.Errorf("idle after a long statement, closed after %s", took)
	}
}

// TestPipelinedBeginIsolation: the one-shot SET TRANSACTION
// ISOLATION LEVEL and START TRANSACTION READ ONLY that go out ahead of a
// transaction's first read apply to that transaction and only to it, as
// on MariaDB.
func TestPipelinedBeginIsolation(t *testing.T) {
	// The default rules: createTables through a planner that sends
	// everything to ds_0 would leave a physical t_order there.
	e := startEnv(t, envOptions{})
	createTables(t, e)
	ctx := context.Background()
	db := e.open(t)
	if _, err := db.Exec("INSERT INTO t_plain (id, v) VALUES (1, 'a')"); err != nil {
		t.Fatal(err)
	}
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ref := refConn(t, e, "ds_0")
	// SERIALIZABLE reads take shared locks: another connection's write
	// of the row read waits (1205 with a 1 s lock wait), where under
	// REPEATABLE READ it goes through.
	other := refConn(t, e, "ds_0")
	if _, err := other.ExecContext(ctx, "SET SESSION innodb_lock_wait_timeout = 1"); err != nil {
		t.Fatal(err)
	}
	lockedOut := func() string {
		_, err := other.ExecContext(ctx, "UPDATE t_plain SET v = v WHERE id = 1")
		return fmt.Sprint(errCode(err))
	}
	run := func(conn *sql.Conn) (out []string) {
		t.Helper()
		for _, q := range []string{"SET TRANSACTION ISOLATION LEVEL SERIALIZABLE", "START TRANSACTION"} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		out = append(out, queryStrings(t, conn, "SELECT v FROM t_plain WHERE id = 1")...)
		out = append(out, lockedOut())
		if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
			t.Fatal(err)
		}
		// The next transaction has the session's level again.
		if _, err := conn.ExecContext(ctx, "START TRANSACTION"); err != nil {
			t.Fatal(err)
		}
		out = append(out, queryStrings(t, conn, "SELECT v FROM t_plain WHERE id = 1")...)
		out = append(out, lockedOut())
		conn.ExecContext(ctx, "COMMIT")
		// READ ONLY: a write in it is refused with MariaDB's error.
		if _, err := conn.ExecContext(ctx, "START TRANSACTION READ ONLY"); err != nil {
			t.Fatal(err)
		}
		out = append(out, queryStrings(t, conn, "SELECT v FROM t_plain WHERE id = 1")...)
		_, err := conn.ExecContext(ctx, "UPDATE t_plain SET v = 'b' WHERE id = 1")
		out = append(out, fmt.Sprint(errCode(err)))
		conn.ExecContext(ctx, "ROLLBACK")
		out = append(out, queryStrings(t, conn, "SELECT v FROM t_plain WHERE id = 1")...)
		return out
	}
	want := run(ref)
	got := run(c)
	t.Logf("MariaDB: %q", want)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("proxy %q, MariaDB %q", got, want)
	}
}

// TestTLSClientKeepsNetConn: a client on TLS is read and written
// through the TLS connection, not the raw socket under it: statements,
// and a result larger than the socket buffers come through whole.
func TestTLSClientKeepsNetConn(t *testing.T) {
	cert, key := writeCert(t)
	e := startEnv(t, envOptions{server: fmt.Sprintf("tls: { cert: %s, key: %s }", cert, key), planner: toDefault})
	ctx := context.Background()
	// tls=skip-verify: go-sql-driver refuses a server that does not take
	// TLS (ErrNoTLS), so this session is on TLS.
	c := e.conn(t, "tls=skip-verify")
	var n int64
	if err := c.QueryRowContext(ctx, "SELECT SUM(LENGTH(x)) FROM (SELECT REPEAT('y', 1000000) AS x FROM seq_1_to_3) s").Scan(&n); err != nil || n != 3000000 {
		t.Fatalf("over TLS: %d, %v", n, err)
	}
	rows, err := c.QueryContext(ctx, bigResult)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for rows.Next() {
		var k, s string
		if err := rows.Scan(&k, &s); err != nil {
			t.Fatal(err)
		}
		total += len(s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if total != 24*1000000 {
		t.Errorf("big result over TLS: %d bytes", total)
	}
}

// TestSlowLongCommand: a command of more than 16 MB (a packet and
// its continuation) that arrives slowly, each piece well within
// netReadTimeout but the whole over waitTimeout, is read and answered
// as MariaDB answers it: the idle deadline left in place does not cut it.
func TestSlowLongCommand(t *testing.T) {
	// The command is built before the session opens: building it took
	// 100-220ms under -race on a loaded machine, more at times than the
	// 400ms waitTimeout, which then rightly closed the idle session
	// before the command began (the second piece's write: broken pipe).
	// netReadTimeout leaves a loaded machine's stalls between pieces
	// (25ms apart) room, and is still shorter than the whole.
	payload := []byte{mysql.COM_QUERY}
	payload = append(payload, "SELECT 1 AS intended #"...)
	payload = append(payload, bytes.Repeat([]byte{'-'}, 17<<20-len(payload))...)
	first := payload[:wire.MaxPayload]
	rest := payload[wire.MaxPayload:]
	raw := append([]byte{0xff, 0xff, 0xff, 0}, first...)
	raw = append(raw, byte(len(rest)), byte(len(rest)>>8), byte(len(rest)>>16), 1)
	raw = append(raw, rest...)
	const waitTimeout = 400 * time.Millisecond
	e := startEnv(t, envOptions{server: "waitTimeout: 400ms\nnetReadTimeout: 1s", planner: toDefault})
	c := rawSession(t, e.addr, "app", "app-secret", "sharding_db")
	nc := c.NetConn()
	const piece = 512 << 10
	start := time.Now()
	for off := 0; off < len(raw); off += piece {
		if _, err := nc.Write(raw[off:min(off+piece, len(raw))]); err != nil {
			t.Fatalf("after %d bytes: %v", off, err)
		}
		time.Sleep(25 * time.Millisecond) // a slow sender
	}
	took := time.Since(start)
	if took <= waitTimeout {
		t.Fatalf("the command took %v to send, within waitTimeout (%v): the idle deadline was not put to the test", took, waitTimeout)
	}
	c.SetSeq(2)
	p, err := c.ReadPacket()
	if err != nil {
		t.Fatalf("the %d-byte command sent over %s: %v", len(payload), took, err)
	}
	// MariaDB's answer to the same bytes (the shared servers keep their
	// max_allowed_packet: a refusal, or the result).
	m := rawSession(t, e.backends[0].Addr(), "root", "", "ds_0")
	_, werr := m.NetConn().Write(raw)
	m.SetSeq(2)
	want, err := m.ReadPacket()
	if err != nil {
		if werr == nil {
			t.Fatal(err)
		}
		// MariaDB refused the packet and reset the connection before it
		// had all of it (its max_allowed_packet is lower), so its error
		// packet may be lost with the reset: the proxy must refuse too.
		if !wire.IsErr(p) {
			t.Fatalf("MariaDB reset the connection on the %d-byte command (%v); the proxy answered %q", len(payload), werr, p)
		}
		return
	}
	if errOf(want) == mysql.ER_NET_PACKET_TOO_LARGE && wire.IsErr(p) && strings.Contains(wire.ParseErr(p).Message, "connection reset by peer") {
		// MariaDB refused the packet on the proxy's backend connection
		// too, and reset it while the proxy was still writing: the same
		// race as on the direct connection above, met on the other one.
		// The proxy refused the command; its refusal lost MariaDB's text.
		t.Logf("MariaDB reset the proxy's backend connection on the %d-byte command; the proxy answered %q", len(payload), p)
		return
	}
	if errOf(p) != errOf(want) || wire.IsErr(p) != wire.IsErr(want) || (!wire.IsErr(p) && p[0] != want[0]) {
		t.Fatalf("the %d-byte command: proxy %q, MariaDB %q", len(payload), p, want)
	}
	t.Logf("a %d-byte command sent over %s, answered", len(payload), took)
}
