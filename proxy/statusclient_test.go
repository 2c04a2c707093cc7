package proxy

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/proxy/internal/wire"
)

// statusClient is a MySQL client that speaks the protocol by hand, to see
// what drivers see and database/sql hides: the status flags of the
// greeting and of every OK and EOF packet.
type statusClient struct {
	t  *testing.T
	wc *wire.Conn
	// greeting is the status flags of the server's greeting, login
	// those of the OK that ended the login.
	greeting, login uint16
}

// statusClientFlags are the capabilities a statusClient asks for: EOF packets
// (no CLIENT_DEPRECATE_EOF), multi-statements and multi-results.
const statusClientFlags = mysql.CLIENT_LONG_PASSWORD | mysql.CLIENT_PROTOCOL_41 | mysql.CLIENT_SECURE_CONNECTION |
	mysql.CLIENT_PLUGIN_AUTH | mysql.CLIENT_TRANSACTIONS |
	mysql.CLIENT_MULTI_STATEMENTS | mysql.CLIENT_MULTI_RESULTS | mysql.CLIENT_PS_MULTI_RESULTS

// dialStatus logs in to addr as user into db with mysql_native_password.
func dialStatus(t *testing.T, addr, user, password, db string, extraFlags uint32) *statusClient {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	c := &statusClient{t: t, wc: wire.NewConn(nc)}
	p := c.read()
	// protocol version, server version NUL, connection id, salt part 1,
	// filler, capabilities (low), collation, status.
	if len(p) < 1 || p[0] != 10 {
		t.Fatalf("greeting: %q", p)
	}
	pos := 1 + bytes.IndexByte(p[1:], 0) + 1 + 4
	salt := append([]byte(nil), p[pos:pos+8]...)
	pos += 8 + 1 + 2 + 1
	c.greeting = binary.LittleEndian.Uint16(p[pos:])
	pos += 2 + 2 + 1 + 10
	end := pos + bytes.IndexByte(p[pos:], 0)
	salt = append(salt, p[pos:end]...)
	var resp []byte
	flags := statusClientFlags | extraFlags
	if db != "" {
		flags |= mysql.CLIENT_CONNECT_WITH_DB
	}
	resp = binary.LittleEndian.AppendUint32(resp, flags)
	resp = binary.LittleEndian.AppendUint32(resp, 1<<24)
	resp = append(resp, charsetUTF8MB4)
	resp = append(resp, make([]byte, 23)...)
	resp = append(append(resp, user...), 0)
	auth := nativeScramble(salt, password)
	resp = append(append(resp, byte(len(auth))), auth...)
	if db != "" {
		resp = append(append(resp, db...), 0)
	}
	resp = append(append(resp, mysql.AUTH_NATIVE_PASSWORD...), 0)
	c.write(resp)
	for {
		p := c.read()
		switch p[0] {
		case wire.HeaderOK:
			ok, err := wire.ParseOK(p, false)
			if err != nil {
				t.Fatal(err)
			}
			c.login = ok.Status
			nc.SetDeadline(time.Time{})
			return c
		case wire.HeaderErr:
			t.Fatalf("login to %s: %v", addr, wire.ParseErr(p))
		case wire.HeaderEOF: // auth switch: plugin name NUL, new salt
			rest := p[1:]
			plugin := string(rest[:bytes.IndexByte(rest, 0)])
			if plugin != mysql.AUTH_NATIVE_PASSWORD {
				t.Fatalf("login to %s: auth switch to %s", addr, plugin)
			}
			salt = bytes.TrimRight(rest[len(plugin)+1:], "\x00")
			c.write(nativeScramble(salt, password))
		default:
			t.Fatalf("login to %s: unexpected packet %q", addr, p)
		}
	}
}

func nativeScramble(salt []byte, password string) []byte {
	if password == "" {
		return nil
	}
	return mysql.CalcNativePassword(salt, []byte(password))
}

func (c *statusClient) read() []byte {
	c.t.Helper()
	p, err := c.wc.ReadPacket()
	if err != nil {
		c.t.Fatal(err)
	}
	return append([]byte(nil), p...)
}

func (c *statusClient) write(p []byte) {
	c.t.Helper()
	if err := c.wc.WritePacket(p); err != nil {
		c.t.Fatal(err)
	}
	if err := c.wc.Flush(); err != nil {
		c.t.Fatal(err)
	}
}

// command sends one command packet.
func (c *statusClient) command(cmd byte, data []byte) {
	c.t.Helper()
	c.wc.ResetSeq()
	c.write(append([]byte{cmd}, data...))
}

// statusResponse is what a command's response said: the status flags of
// each OK and EOF packet in order ("ok" or "eof" and the flags), and the
// error that ended it, if any.
type statusResponse struct {
	statuses []string
	err      *mysql.MyError
}

// query runs COM_QUERY and reads every result of it.
func (c *statusClient) query(sql string) statusResponse {
	c.t.Helper()
	c.command(mysql.COM_QUERY, []byte(sql))
	return c.results()
}

// results reads results until one says no more follow.
func (c *statusClient) results() statusResponse {
	c.t.Helper()
	var r statusResponse
	for {
		p := c.read()
		var status uint16
		switch p[0] {
		case wire.HeaderOK:
			ok, err := wire.ParseOK(p, false)
			if err != nil {
				c.t.Fatal(err)
			}
			status = ok.Status
			r.statuses = append(r.statuses, "ok "+statusNames(status))
		case wire.HeaderErr:
			r.err = wire.ParseErr(p)
			return r
		default:
			n, _, _, _ := wire.ReadLenEncInt(p)
			for range n {
				c.read()
			}
			status = c.eof(&r)
			for {
				p := c.read()
				if wire.IsErr(p) {
					r.err = wire.ParseErr(p)
					return r
				}
				if wire.IsEOF(p) {
					_, status = wire.ParseEOF(p)
					r.statuses = append(r.statuses, "eof "+statusNames(status))
					break
				}
			}
		}
		if status&mysql.SERVER_MORE_RESULTS_EXISTS == 0 {
			return r
		}
	}
}

// eof reads an EOF packet and records its status.
func (c *statusClient) eof(r *statusResponse) uint16 {
	c.t.Helper()
	p := c.read()
	if !wire.IsEOF(p) {
		c.t.Fatalf("want an EOF packet, got %q", p)
	}
	_, status := wire.ParseEOF(p)
	r.statuses = append(r.statuses, "eof "+statusNames(status))
	return status
}

// prepare runs COM_STMT_PREPARE and returns the statement id.
func (c *statusClient) prepare(sql string) (uint32, statusResponse) {
	c.t.Helper()
	c.command(mysql.COM_STMT_PREPARE, []byte(sql))
	var r statusResponse
	p := c.read()
	if wire.IsErr(p) {
		r.err = wire.ParseErr(p)
		return 0, r
	}
	id := binary.LittleEndian.Uint32(p[1:])
	cols, params := binary.LittleEndian.Uint16(p[5:]), binary.LittleEndian.Uint16(p[7:])
	for _, n := range []uint16{params, cols} {
		if n == 0 {
			continue
		}
		for range n {
			c.read()
		}
		c.eof(&r)
	}
	return id, r
}

// execute runs COM_STMT_EXECUTE of a statement without parameters.
func (c *statusClient) execute(id uint32) statusResponse {
	c.t.Helper()
	data := binary.LittleEndian.AppendUint32(nil, id)
	data = append(data, 0)                           // no cursor
	data = binary.LittleEndian.AppendUint32(data, 1) // iteration count
	c.command(mysql.COM_STMT_EXECUTE, data)
	return c.results()
}

// statusNames lists the flags of a status word the tests compare.
func statusNames(st uint16) string {
	names := []struct {
		flag uint16
		name string
	}{
		{mysql.SERVER_STATUS_IN_TRANS, "IN_TRANS"},
		{mysql.SERVER_STATUS_AUTOCOMMIT, "AUTOCOMMIT"},
		{mysql.SERVER_MORE_RESULTS_EXISTS, "MORE_RESULTS"},
		{mysql.SERVER_STATUS_NO_GOOD_INDEX_USED, "NO_GOOD_INDEX_USED"},
		{mysql.SERVER_STATUS_NO_INDEX_USED, "NO_INDEX_USED"},
		{mysql.SERVER_STATUS_CURSOR_EXISTS, "CURSOR_EXISTS"},
		{mysql.SERVER_STATUS_LAST_ROW_SEND, "LAST_ROW_SENT"},
		{mysql.SERVER_STATUS_DB_DROPPED, "DB_DROPPED"},
		{mysql.SERVER_STATUS_NO_BACKSLASH_ESCAPED, "NO_BACKSLASH_ESCAPES"},
		{mysql.SERVER_STATUS_METADATA_CHANGED, "METADATA_CHANGED"},
		{mysql.SERVER_PS_OUT_PARAMS, "PS_OUT_PARAMS"},
		{0x2000, "IN_TRANS_READONLY"},
	}
	out := ""
	for _, n := range names {
		if st&n.flag != 0 {
			if out != "" {
				out += "|"
			}
			out += n.name
		}
	}
	if out == "" {
		return fmt.Sprintf("0x%04x", st)
	}
	return out
}
