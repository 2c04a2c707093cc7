package proxy

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
)

// TestDebugLogMasksFailingStatements: at debug level a failing statement
// is logged as its fingerprint with the error's number, and no literal
// of it (nor of the error message) reaches the log.
func TestDebugLogMasksFailingStatements(t *testing.T) {
	var logs lockedBuffer
	e := startEnv(t, envOptions{logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	createTables(t, e)
	db := e.open(t)
	if _, err := db.Exec("INSERT INTO t_order (order_id, user_id, status) VALUES (1, 1, 'hunter2')"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"INSERT INTO t_order (order_id, user_id, status) VALUES (1, 1, 'hunter2')",            // 1062 Duplicate entry '1' ...
		"SELECT * FROM t_order WHERE status = 'hunter2' AND nope = 'hunter2'",                 // 1054
		"INSERT INTO t_order (order_id, user_id, status) VALUES (2, 2, REPEAT('hunter2', 9))", // 1406 Data too long
	} {
		if _, err := db.Exec(q); err == nil {
			t.Fatalf("%s: no error", q)
		}
	}
	out := logs.String()
	if n := strings.Count(out, `msg="statement failed"`); n < 3 {
		t.Fatalf("%d failing statements logged, want 3:\n%s", n, out)
	}
	for _, secret := range []string{"hunter2", "'1'"} {
		if strings.Contains(out, secret) {
			t.Errorf("the debug log holds %s:\n%s", secret, out)
		}
	}
	for _, want := range []string{"error=1062", "error=1054", "error=1406", "fingerprint=\"insert into"} {
		if !strings.Contains(out, want) {
			t.Errorf("the debug log lacks %s:\n%s", want, out)
		}
	}
}

func TestMaskQuoted(t *testing.T) {
	tests := []struct{ give, want string }{
		{"Duplicate entry '1-x' for key 'PRIMARY'", "Duplicate entry '?' for key '?'"},
		{`Unknown column "a" in 'where clause'`, `Unknown column "?" in '?'`},
		{"no quotes", "no quotes"},
		{"unterminated 'abc", "unterminated 'abc"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := maskQuoted(tt.give); got != tt.want {
			t.Errorf("maskQuoted(%q) = %q, want %q", tt.give, got, tt.want)
		}
	}
}

// TestFailedLoginLogsAnnouncedConnID: the "login failed" line names the
// connection by the id its greeting announced (which CONNECTION_ID(),
// SHOW PROCESSLIST and KILL use), not go-mysql's own counter.
func TestFailedLoginLogsAnnouncedConnID(t *testing.T) {
	var logs lockedBuffer
	e := startEnv(t, envOptions{logger: slog.New(slog.NewTextHandler(&logs, nil))})
	var greeting []byte
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &recordConn{Conn: nc, first: &greeting}, nil
	}
	if c, err := client.ConnectWithDialer(context.Background(), "tcp", e.addr, "app", "wrong", "sharding_db", dial); err == nil {
		c.Close()
		t.Fatal("logged in with a wrong password")
	}
	// The greeting: a 4-byte header, protocol 10, the NUL-terminated
	// version, then the connection id.
	if len(greeting) < 5 {
		t.Fatalf("no greeting read: %x", greeting)
	}
	body := greeting[4:]
	nul := bytes.IndexByte(body, 0)
	if nul < 0 || len(body) < nul+5 {
		t.Fatalf("greeting too short: %x", greeting)
	}
	id := binary.LittleEndian.Uint32(body[nul+1:])
	var line string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, `msg="login failed"`) {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("no login failed line in:\n%s", logs.String())
	}
	if want := fmt.Sprintf(" conn=%d ", id); !strings.Contains(line, want) {
		t.Errorf("the greeting announced connection %d; the log says:\n%s", id, line)
	}
}

// recordConn keeps the first 64 bytes it reads (the server's greeting
// begins them).
type recordConn struct {
	net.Conn
	first *[]byte
}

func (r *recordConn) Read(p []byte) (int, error) {
	n, err := r.Conn.Read(p)
	if k := min(n, 64-len(*r.first)); k > 0 {
		*r.first = append(*r.first, p[:k]...)
	}
	return n, err
}
