package proxy

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/proxy/internal/wire"
)

// TestLastPreparedStatementID: statement id 0xffffffff names the
// statement the session prepared last, as MariaDB reads it. MariaDB's
// Node.js connector (and Connector/C's mariadb_stmt_execute_direct) sends
// COM_STMT_PREPARE and its COM_STMT_EXECUTE together, before the prepare's
// answer tells it the id; through the proxy every such execute failed with
// 1243. Each step is sent through the proxy and to one MariaDB, and both
// answer alike: an execute behind a prepare, behind a second one (the
// newest is meant), behind a failed prepare (no statement), after the last
// statement is closed by that id, and a reset by it.
func TestLastPreparedStatementID(t *testing.T) {
	e := startEnv(t, envOptions{planner: toDefault})
	proxy := rawSession(t, e.addr, "app", "app-secret", "sharding_db")
	ref := rawSession(t, e.backends[0].Addr(), "root", "", "")
	got, want := lastStmtSteps(t, proxy), lastStmtSteps(t, ref)
	for _, step := range []string{"x41", "yab", "ERR 1243"} {
		if !bytes.Contains([]byte(fmt.Sprint(want)), []byte(step)) {
			t.Fatalf("MariaDB answered %q, without %s: the test's premise is wrong", want, step)
		}
	}
	sameSteps(t, got, want)
}

// lastStmtSteps sends the steps of TestLastPreparedStatementID on c, each
// prepare and the command behind it in one write, and returns what
// each answer was.
func lastStmtSteps(t *testing.T, c *wire.Conn) []string {
	t.Helper()
	var steps []string
	send := func(payloads ...[]byte) {
		t.Helper()
		for _, p := range payloads {
			c.ResetSeq()
			if err := c.WritePacket(p); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	prepare := func(sql string) []byte { return append([]byte{mysql.COM_STMT_PREPARE}, sql...) }
	execute := func(id uint32, args ...any) []byte {
		p, err := wire.AppendExecute(nil, id, args)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	last := uint32(wire.LastStmtID)

	send(prepare("SELECT CONCAT('x', ?)"), execute(last, "41"))
	first := readPrepareAnswer(t, c, &steps)
	steps = append(steps, readExecuteAnswer(t, c))

	send(prepare("SELECT CONCAT('y', ?, ?)"), execute(last, "a", "b"))
	readPrepareAnswer(t, c, &steps)
	steps = append(steps, readExecuteAnswer(t, c))

	send(prepare("SELEC ?"), execute(last, "z"))
	readPrepareAnswer(t, c, &steps)
	steps = append(steps, readExecuteAnswer(t, c))

	// The first statement is still there under its own id.
	send(execute(first, "42"))
	steps = append(steps, readExecuteAnswer(t, c))

	send(prepare("SELECT CONCAT('z', ?)"), wire.AppendStmtClose(nil, last), execute(last, "q"))
	readPrepareAnswer(t, c, &steps)
	steps = append(steps, readExecuteAnswer(t, c))

	send(prepare("SELECT CONCAT('w', ?)"), binaryLE32([]byte{mysql.COM_STMT_RESET}, last), execute(last, "v"))
	readPrepareAnswer(t, c, &steps)
	steps = append(steps, readExecuteAnswer(t, c), readExecuteAnswer(t, c))
	return steps
}

// binaryLE32 appends v little-endian to dst.
func binaryLE32(dst []byte, v uint32) []byte {
	return append(dst, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
}

// readPrepareAnswer reads a COM_STMT_PREPARE's answer, adds what it was
// to steps and returns the statement id (0 for an error).
func readPrepareAnswer(t *testing.T, c *wire.Conn, steps *[]string) uint32 {
	t.Helper()
	c.SetSeq(1) // each answer of a pipeline counts from 1
	p := readPacket(t, c)
	if wire.IsErr(p) {
		*steps = append(*steps, answerErr(p))
		return 0
	}
	ok, err := wire.ParsePrepareOK(p)
	if err != nil {
		t.Fatalf("prepare answered %q", p)
	}
	for _, n := range []int{ok.Params, ok.Columns} {
		if n > 0 {
			for range n + 1 { // the definitions and their EOF
				readPacket(t, c)
			}
		}
	}
	*steps = append(*steps, fmt.Sprintf("prepared: %d parameters, %d columns", ok.Params, ok.Columns))
	return ok.StmtID
}

// readExecuteAnswer reads the answer of a COM_STMT_EXECUTE of a statement
// of one string column (or of another command answered OK or an error)
// and returns its rows' values or the error.
func readExecuteAnswer(t *testing.T, c *wire.Conn) string {
	t.Helper()
	c.SetSeq(1)
	p := readPacket(t, c)
	switch {
	case wire.IsErr(p):
		return answerErr(p)
	case p[0] == wire.HeaderOK:
		return "OK"
	case p[0] != 1:
		t.Fatalf("an execute of one column answered %q", p)
	}
	readPacket(t, c) // the column
	readPacket(t, c) // its EOF
	var rows []string
	for {
		p := readPacket(t, c)
		if wire.IsEOF(p) {
			return fmt.Sprint("rows ", rows)
		}
		// 0x00, a null bitmap of one byte, the value as a length and bytes
		if len(p) < 3 || int(p[2]) != len(p)-3 {
			t.Fatalf("a binary row of one short string: %q", p)
		}
		rows = append(rows, string(p[3:]))
	}
}

// answerErr is an error packet's number, and its message but for a
// syntax error's (the proxy's parser words them its own way).
func answerErr(p []byte) string {
	e := wire.ParseErr(p)
	if e.Code == mysql.ER_PARSE_ERROR {
		return fmt.Sprint("ERR ", e.Code)
	}
	return fmt.Sprintf("ERR %d %s", e.Code, e.Message)
}

func readPacket(t *testing.T, c *wire.Conn) []byte {
	t.Helper()
	p, err := c.ReadPacket()
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Clone(p)
}
