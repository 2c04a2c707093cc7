package proxy

import (
	"bytes"
	"encoding/binary"
	"net"
	"sync"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/server"

	"github.com/shardflake/shardflake/proxy/internal/wire"
)

// fakeBackend is a MySQL server that answers from memory, for benchmarks
// of the proxy's own cost: a SELECT returns one row with one CHAR(120)
// column c (sysbench's point select), anything else an OK with one
// affected row. It speaks COM_QUERY and the COM_STMT_* commands, in the
// text and binary protocols, and answers with the fewest allocations it
// can, so that a benchmark's allocations are the proxy's.
type fakeBackend struct {
	l   net.Listener
	srv *server.Server
	wg  sync.WaitGroup

	mu       sync.Mutex
	conns    map[net.Conn]bool
	prepares int // COM_STMT_PREPARE received
	executes int // COM_STMT_EXECUTE received
	queries  int // COM_QUERY received
}

// fakeRangeRows is the rows a range SELECT (one with BETWEEN) returns
// per physical table: sysbench's 100-id ranges over 8 tables. A UNION ALL
// of several routes returns that many per route.
const fakeRangeRows = 12

// fakeValue is the value of column c in every row.
var fakeValue = bytes.Repeat([]byte{'x'}, 120)

func startFakeBackend(tb testing.TB) *fakeBackend {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	// No RSA key: the proxy logs in with mysql_native_password.
	srv := server.NewServer("8.0.11", mysql.DEFAULT_COLLATION_ID, mysql.AUTH_NATIVE_PASSWORD, nil, nil)
	f := &fakeBackend{l: l, srv: srv, conns: map[net.Conn]bool{}}
	f.wg.Add(1)
	go f.accept()
	tb.Cleanup(f.close)
	return f
}

func (f *fakeBackend) addr() string { return f.l.Addr().String() }

func (f *fakeBackend) close() {
	f.l.Close()
	f.mu.Lock()
	for c := range f.conns {
		c.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
}

func (f *fakeBackend) accept() {
	defer f.wg.Done()
	for {
		nc, err := f.l.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		f.conns[nc] = true
		f.mu.Unlock()
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			defer nc.Close()
			if _, err := f.srv.NewConn(nc, "root", "", fakeHandshake{}); err != nil {
				return
			}
			f.serve(wire.NewConn(nc))
		}()
	}
}

// fakeHandshake is the server.Handler during the handshake (it accepts
// every schema, quietly); after it the fakeBackend reads commands itself.
type fakeHandshake struct{ server.EmptyHandler }

func (fakeHandshake) UseDB(string) error { return nil }

// fakeConn is one backend connection's state.
type fakeConn struct {
	wc     *wire.Conn
	stmts  map[uint32]fakeStmt
	nextID uint32
	buf    []byte
}

type fakeStmt struct {
	params int
	rows   bool
	n      int // rows of a SELECT (selectRows)
}

func (f *fakeBackend) serve(wc *wire.Conn) {
	c := &fakeConn{wc: wc, stmts: map[uint32]fakeStmt{}}
	for {
		wc.ResetSeq()
		p, err := wc.ReadPacket()
		if err != nil || len(p) == 0 {
			return
		}
		cmd, data := p[0], p[1:]
		switch cmd {
		case mysql.COM_QUIT:
			return
		case mysql.COM_QUERY:
			f.count(&f.queries)
			if isSelect(data) {
				c.writeResult(false, selectRows(data))
			} else {
				c.writeOK(0)
			}
		case mysql.COM_STMT_PREPARE:
			f.count(&f.prepares)
			c.nextID++
			st := fakeStmt{params: bytes.Count(data, []byte{'?'}), rows: isSelect(data), n: selectRows(data)}
			c.stmts[c.nextID] = st
			c.writePrepareOK(c.nextID, st)
		case mysql.COM_STMT_EXECUTE:
			f.count(&f.executes)
			id, _ := wire.StmtID(data)
			st, ok := c.stmts[id]
			switch {
			case !ok:
				c.write(wire.AppendErr(c.buf[:0], mysql.ER_UNKNOWN_STMT_HANDLER, "HY000", "Unknown prepared statement handler"))
			case st.rows:
				c.writeResult(true, st.n)
			default:
				c.writeOK(1)
			}
		case mysql.COM_STMT_CLOSE:
			if id, err := wire.StmtID(data); err == nil {
				delete(c.stmts, id)
			}
			continue // no response
		case mysql.COM_RESET_CONNECTION:
			clear(c.stmts)
			c.writeOK(0)
		default:
			c.writeOK(0)
		}
		if wc.Flush() != nil {
			return
		}
	}
}

func (f *fakeBackend) count(n *int) {
	f.mu.Lock()
	*n++
	f.mu.Unlock()
}

func isSelect(sql []byte) bool {
	sql = bytes.TrimLeft(sql, "(") // a UNION ALL of routes: (SELECT ...) UNION ALL (...)
	return len(sql) >= 6 && bytes.EqualFold(sql[:6], []byte("select"))
}

func (c *fakeConn) write(p []byte) {
	c.wc.WritePacket(p)
	c.buf = p[:0]
}

func (c *fakeConn) writeOK(affected uint64) {
	c.write(wire.AppendOK(c.buf[:0], wire.OK{AffectedRows: affected, Status: mysql.SERVER_STATUS_AUTOCOMMIT}, false))
}

func (c *fakeConn) eof() {
	c.write(wire.AppendEOF(c.buf[:0], 0, mysql.SERVER_STATUS_AUTOCOMMIT))
}

// fakeColumn is column c of sbtest1.
var fakeColumn = &mysql.Field{Schema: []byte("ds_0"), Table: []byte("sbtest1"), OrgTable: []byte("sbtest1_0"),
	Name: []byte("c"), OrgName: []byte("c"), Charset: charsetUTF8MB4, ColumnLength: 480, Type: mysql.MYSQL_TYPE_STRING, Flag: mysql.NOT_NULL_FLAG}

// selectRows is how many rows the fake returns for SELECT sql.
func selectRows(sql []byte) int {
	if !bytes.Contains(sql, []byte(" BETWEEN ")) {
		return 1
	}
	return fakeRangeRows * (bytes.Count(sql, []byte(" UNION ALL ")) + 1)
}

func (c *fakeConn) writeResult(binaryRows bool, n int) {
	c.write(wire.AppendLenEncInt(c.buf[:0], 1))
	c.write(wire.AppendColumn(c.buf[:0], fakeColumn, false))
	c.eof()
	for range n {
		if binaryRows {
			c.write(wire.AppendLenEncString(append(c.buf[:0], 0, 0), fakeValue))
		} else {
			c.write(wire.AppendLenEncString(c.buf[:0], fakeValue))
		}
	}
	c.eof()
}

func (c *fakeConn) writePrepareOK(id uint32, st fakeStmt) {
	cols := 0
	if st.rows {
		cols = 1
	}
	c.write(wire.AppendPrepareOK(c.buf[:0], id, uint16(cols), uint16(st.params), 0))
	param := &mysql.Field{Name: []byte("?"), Charset: charsetBinary, Type: mysql.MYSQL_TYPE_VAR_STRING, Flag: mysql.BINARY_FLAG}
	for range st.params {
		c.write(wire.AppendColumn(c.buf[:0], param, false))
	}
	if st.params > 0 {
		c.eof()
	}
	if cols > 0 {
		c.write(wire.AppendColumn(c.buf[:0], fakeColumn, false))
		c.eof()
	}
}

// appendExecute appends a COM_STMT_EXECUTE of statement id, as a client
// sends it: BIGINT and VARCHAR parameters, types always bound.
func appendExecute(dst []byte, id uint32, args ...any) []byte {
	dst = append(dst, mysql.COM_STMT_EXECUTE)
	dst = binary.LittleEndian.AppendUint32(dst, id)
	dst = append(dst, 0)                           // no cursor
	dst = binary.LittleEndian.AppendUint32(dst, 1) // iterations
	for range (len(args) + 7) / 8 {
		dst = append(dst, 0) // NULL bitmap
	}
	dst = append(dst, 1) // types follow
	for _, a := range args {
		if _, ok := a.(int64); ok {
			dst = append(dst, mysql.MYSQL_TYPE_LONGLONG, 0)
		} else {
			dst = append(dst, mysql.MYSQL_TYPE_VAR_STRING, 0)
		}
	}
	for _, a := range args {
		switch v := a.(type) {
		case int64:
			dst = binary.LittleEndian.AppendUint64(dst, uint64(v))
		case string:
			dst = wire.AppendLenEncString(dst, []byte(v))
		}
	}
	return dst
}
