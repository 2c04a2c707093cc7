package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/proxy/internal/sqlarg"
	"github.com/shardflake/shardflake/proxy/internal/wire"
	"github.com/shardflake/shardflake/router"
)

// Multiplexing (server.multiplex: on).
//
// A plain read that no session state can change the answer of runs on one
// of a few backend connections per data source that every session shares,
// instead of a pooled connection of its own. Sessions append their
// commands to a shared connection's queue; whoever finds no write in
// progress writes everything queued in one write, so that under load
// several sessions' commands reach MariaDB in one segment. MariaDB reads
// the commands of a connection one at a time and answers them in order,
// so one reader per connection reads the responses in the order the
// commands were queued and hands each, complete, to its session.
//
// Eligible (multiplexable): outside a transaction and LOCK TABLES, with
// no pinned connection, no session settings beyond the baseline (SET
// makes a session ineligible until it resets), a single-route SELECT that
// the router classed as a plain read (router.AccessRead: no FOR UPDATE,
// no INTO, no user or system variables, no LAST_INSERT_ID(), FOUND_ROWS(),
// SLEEP() or named locks), sent as text (COM_QUERY) or, for a client's
// COM_STMT_EXECUTE, as COM_STMT_EXECUTE of a statement prepared on the
// shared connection (once per connection and SQL text). A response that
// reports warnings is dropped and the statement runs again on a pooled
// connection of its own, so that SHOW WARNINGS can read them there; a
// shared connection that breaks sends its statements there too. A
// backend error goes to its own statement only.
//
// Costs and limits: a response is read whole into memory before its
// session sees it (a plain read's rows; mergeMemoryBytes bounds it, and a
// longer one fails the connection over to the normal path); a statement
// whose client gives up (KILL QUERY, timeout) is answered at once, its
// backend statement runs to its end on the shared connection.

// errMuxFallback says a statement did not run multiplexed and is to run
// the normal way; nothing of it reached the client.
var errMuxFallback = errors.New("multiplex: run on a pooled connection")

// muxSet is a pool's shared connections.
type muxSet struct {
	pool  *pool
	mu    sync.Mutex
	conns []*muxConn
	n     int
	// closed: the pool closed; a connection dialed since is not kept.
	closed bool
	// budget bounds the bytes of one buffered response.
	budget int64
	// answered counts the statements answered on the shared
	// connections.
	answered atomic.Int64
	// writes counts the writes that carried them (fewer than the
	// statements when several were written at once), commands the
	// commands queued (statements and prepares), responses the responses
	// read, and reads those of them of which nothing had arrived when the
	// reader began them (multiplex_metrics.go).
	writes, commands, responses, reads atomic.Int64
}

// muxConn is one shared backend connection: writes are combined by the
// sessions themselves, reads are done by its reader goroutine.
type muxConn struct {
	set *muxSet
	bc  *backendConn
	// w writes bc's socket (wire.RawWriter): the commands are framed
	// already, and bc.wc's own writer is not used.
	w io.Writer
	// noBackslash: the connection's sql_mode has NO_BACKSLASH_ESCAPES
	// (the baseline's); fixed, since only baseline sessions use it.
	noBackslash bool

	mu      sync.Mutex
	pending []byte // commands queued and not written yet
	spare   []byte
	writing bool
	queue   []*muxRequest // commands written or queued, oldest first
	broken  error

	// stmts are the statements prepared on the connection, by SQL
	// text; stmtGen is the pool's schemaGen they were prepared under.
	stmts   map[string]*muxStmt
	stmtGen uint64

	colMu   sync.Mutex
	columns map[string]*mysql.Field
}

// muxStmt is a statement prepared on a shared connection.
type muxStmt struct {
	id     uint32
	params int
	// unsupported: the backend cannot prepare it (1295).
	unsupported bool
}

// muxCommand is what a queued command's response looks like.
type muxCommand int

const (
	// muxStatement is COM_QUERY or COM_STMT_EXECUTE: an OK, an error or
	// a result set.
	muxStatement muxCommand = iota + 1
	// muxPrepare is COM_STMT_PREPARE.
	muxPrepare
)

// muxRequest is one statement's command and, once done is closed, its
// response.
type muxRequest struct {
	done chan struct{}
	cmd  muxCommand
	resp muxResponse
}

// muxResponse is a whole response: an OK, an error, or a result set.
type muxResponse struct {
	ok      wire.OK
	prep    wire.PrepareOK
	err     error // a *mysql.MyError, or the connection's failure
	lost    bool  // err is the connection's failure, not the statement's
	columns [][]byte
	rows    [][]byte
	status  uint16
	warns   uint16
}

// multiplexed returns the pool's shared connections, made on first use.
func (p *pool) multiplexed(n int, budget int64) *muxSet {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mux == nil {
		p.mux = &muxSet{pool: p, n: max(n, 1), budget: budget}
	}
	return p.mux
}

// pick returns the shared connection with the shortest queue, dialing one
// while there are fewer than n.
func (m *muxSet) pick(ctx context.Context) (*muxConn, error) {
	m.mu.Lock()
	live := m.conns[:0]
	for _, c := range m.conns {
		c.mu.Lock()
		ok := c.broken == nil
		c.mu.Unlock()
		if ok {
			live = append(live, c)
		}
	}
	m.conns = live
	if len(m.conns) < m.n {
		m.mu.Unlock()
		c, err := m.dial(ctx)
		if err != nil {
			return nil, err
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		switch {
		case m.closed:
			c.fail(errors.New("pool closed"))
			return nil, errMuxFallback
		case len(m.conns) < m.n:
			m.conns = append(m.conns, c)
		default:
			// Other sessions dialed the n meanwhile: use one of theirs.
			c.fail(errors.New("not needed"))
			c = m.conns[len(m.conns)-1]
		}
		return c, nil
	}
	best, depth := m.conns[0], -1
	for _, c := range m.conns {
		c.mu.Lock()
		d := len(c.queue)
		c.mu.Unlock()
		if depth < 0 || d < depth {
			best, depth = c, d
		}
	}
	m.mu.Unlock()
	return best, nil
}

func (m *muxSet) dial(ctx context.Context) (*muxConn, error) {
	p := m.pool
	p.mu.Lock()
	err := p.unavailable()
	p.mu.Unlock()
	if err != nil {
		return nil, err
	}
	// A failure marks the data source down, as for the pool's own.
	bc, err := p.dial(ctx)
	if err != nil {
		return nil, err
	}
	c := &muxConn{set: m, bc: bc, w: wire.RawWriter(bc.nc), noBackslash: bc.noBackslashEscapes(), columns: map[string]*mysql.Field{}, stmtGen: bc.stmtGen}
	go c.read()
	return c, nil
}

// close fails every shared connection (the pool closes).
func (m *muxSet) close() {
	m.mu.Lock()
	conns := m.conns
	m.conns, m.closed = nil, true
	m.mu.Unlock()
	for _, c := range conns {
		c.fail(errors.New("pool closed"))
	}
}

// submit queues a command (the payload appended by build) and returns its
// request, whose done channel closes when its response has been read.
func (c *muxConn) submit(cmd muxCommand, build func([]byte) ([]byte, error)) (*muxRequest, error) {
	req := &muxRequest{done: make(chan struct{}), cmd: cmd}
	c.mu.Lock()
	if c.broken != nil {
		c.mu.Unlock()
		return nil, errMuxFallback
	}
	buf, err := wire.AppendPacket(c.pending, 0, build)
	c.pending = buf
	if err != nil {
		c.mu.Unlock()
		if errors.Is(err, wire.ErrOverOnePacket) {
			return nil, errMuxFallback
		}
		return nil, err
	}
	c.queue = append(c.queue, req)
	c.set.commands.Add(1)
	if c.writing {
		// The session writing now takes this command along.
		c.mu.Unlock()
		return req, nil
	}
	c.writing = true
	for len(c.pending) > 0 && c.broken == nil {
		out := c.pending
		c.pending = c.spare[:0]
		c.mu.Unlock()
		_, err := c.w.Write(out)
		c.set.writes.Add(1)
		c.mu.Lock()
		c.spare = out[:0]
		if err != nil {
			c.mu.Unlock()
			c.fail(err)
			c.mu.Lock()
		}
	}
	c.writing = false
	c.mu.Unlock()
	return req, nil
}

// fail breaks the connection (closing it ends the reader's read): every
// statement waiting on it runs again on a pooled connection.
func (c *muxConn) fail(err error) {
	c.mu.Lock()
	if c.broken == nil {
		c.broken = err
		c.bc.close()
	}
	c.mu.Unlock()
}

// read is the connection's reader: it reads the responses in the order
// the commands were queued and hands each to its request. It waits for
// the next response in the read itself, with the queue empty or not: the
// command is queued before it is written, so the response finds it, and
// no session has to wake the reader (a goroutine wake-up per statement
// whenever the queue was empty, the common case at 8 clients). A
// connection that breaks, or that the server closes while idle, ends the
// read.
func (c *muxConn) read() {
	wc := c.bc.wc
	for {
		if !wc.Buffered() {
			c.set.reads.Add(1)
		}
		wc.SetSeq(1)
		p, err := wc.ReadPacket()
		if err != nil {
			c.fail(err)
			c.drain()
			return
		}
		c.mu.Lock()
		if len(c.queue) == 0 || c.queue[0] == nil {
			c.mu.Unlock()
			c.fail(fmt.Errorf("%w: a response to no command", wire.ErrMalformed))
			c.drain()
			return
		}
		req := c.queue[0]
		c.mu.Unlock()
		c.set.responses.Add(1)
		var resp muxResponse
		if req.cmd == muxPrepare {
			resp, err = c.readPrepare(p)
		} else {
			resp, err = c.readResponse(p)
		}
		if err != nil {
			c.fail(err)
			c.drain()
			return
		}
		c.mu.Lock()
		c.queue[0] = nil
		c.queue = c.queue[1:]
		c.mu.Unlock()
		req.resp = resp
		close(req.done)
	}
}

// drain answers every statement queued on a broken connection: each runs
// again on a pooled connection.
func (c *muxConn) drain() {
	c.mu.Lock()
	queue := c.queue
	c.queue = nil
	err := c.broken
	c.mu.Unlock()
	for _, r := range queue {
		r.resp = muxResponse{err: err, lost: true}
		close(r.done)
	}
}

// readResponse reads one whole response. An error return is the
// connection's failure (it is out of step); a backend error is in the
// response.
func (c *muxConn) readResponse(p []byte) (muxResponse, error) {
	var r muxResponse
	var err error
	wc := c.bc.wc
	switch {
	case len(p) == 0:
		return r, wire.ErrMalformed
	case wire.IsOK(p):
		ok, err := wire.ParseOK(p, false)
		if err != nil {
			return r, err
		}
		r.ok, r.status, r.warns = ok, ok.Status, ok.Warnings
		return r, c.single(r.status)
	case wire.IsErr(p):
		r.err = wire.ParseErr(p)
		return r, nil
	case wire.IsLocalInfile(p):
		return r, errors.New("multiplex: LOCAL INFILE request")
	}
	n, _, _, ok := wire.ReadLenEncInt(p)
	if !ok || n == 0 {
		return r, wire.ErrMalformed
	}
	var size int64
	keep := func(p []byte) ([]byte, error) {
		size += int64(len(p)) + 32
		if size > c.set.budget {
			return nil, fmt.Errorf("multiplex: a response over %d bytes", c.set.budget)
		}
		return append([]byte(nil), p...), nil
	}
	r.columns = make([][]byte, n)
	for i := range r.columns {
		p, err := wc.ReadPacket()
		if err != nil {
			return r, err
		}
		if r.columns[i], err = keep(p); err != nil {
			return r, err
		}
	}
	if p, err = wc.ReadPacket(); err != nil {
		return r, err
	}
	if !wire.IsEOF(p) {
		return r, fmt.Errorf("%w: no EOF after column definitions", wire.ErrMalformed)
	}
	for {
		p, err := wc.ReadPacket()
		if err != nil {
			return r, err
		}
		if wire.IsEOF(p) {
			r.warns, r.status = wire.ParseEOF(p)
			return r, c.single(r.status)
		}
		if wire.IsErr(p) {
			// An error after the column definitions (at a later row):
			// the session sends the rows before it, then the error,
			// as MariaDB sent them.
			r.err = wire.ParseErr(p)
			return r, nil
		}
		row, err := keep(p)
		if err != nil {
			return r, err
		}
		r.rows = append(r.rows, row)
	}
}

// readPrepare reads a COM_STMT_PREPARE response; the definitions of
// parameters and columns are skipped (the execute's response has the
// columns).
func (c *muxConn) readPrepare(p []byte) (muxResponse, error) {
	var r muxResponse
	var err error
	wc := c.bc.wc
	if wire.IsErr(p) {
		r.err = wire.ParseErr(p)
		return r, nil
	}
	if r.prep, err = wire.ParsePrepareOK(p); err != nil {
		return r, err
	}
	n := 0
	if r.prep.Params > 0 {
		n += r.prep.Params + 1
	}
	if r.prep.Columns > 0 {
		n += r.prep.Columns + 1
	}
	for range n {
		if _, err := wc.ReadPacket(); err != nil {
			return r, err
		}
	}
	return r, nil
}

// appendClose queues COM_STMT_CLOSE of statement id; it goes out with
// the next write (the server does not answer it). c.mu must be held.
func (c *muxConn) appendClose(id uint32) {
	c.pending, _ = wire.AppendPacket(c.pending, 0, func(b []byte) ([]byte, error) { return wire.AppendStmtClose(b, id), nil })
}

// stmt returns the statement prepared on c for sql, preparing it on
// first use. errMuxFallback: the statement runs on a pooled connection
// (the backend cannot prepare it, or would answer the prepare with an
// error, which the normal path then reports as it does).
func (c *muxConn) stmt(ctx context.Context, sql string) (*muxStmt, error) {
	gen := c.set.pool.schemaGen.Load()
	c.mu.Lock()
	if gen != c.stmtGen {
		// DDL through the proxy: the tables may have changed.
		for _, st := range c.stmts {
			if !st.unsupported {
				c.appendClose(st.id)
			}
		}
		c.stmts, c.stmtGen = nil, gen
	}
	st, full := c.stmts[sql], len(c.stmts) >= maxBackendStmts
	c.mu.Unlock()
	switch {
	case st != nil && st.unsupported:
		return nil, errMuxFallback
	case st != nil:
		return st, nil
	case full:
		return nil, errMuxFallback
	}
	text := sql
	if c.noBackslash {
		text = sqlarg.ToNoBackslashEscapes(sql)
	}
	req, err := c.submit(muxPrepare, func(buf []byte) ([]byte, error) {
		return append(append(buf, mysql.COM_STMT_PREPARE), text...), nil
	})
	if err != nil {
		return nil, err
	}
	select {
	case <-req.done:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	r := &req.resp
	if r.lost {
		return nil, errMuxFallback
	}
	var my *mysql.MyError
	if r.err != nil {
		if errors.As(r.err, &my) && my.Code == mysql.ER_UNSUPPORTED_PS {
			c.mu.Lock()
			if c.stmts == nil {
				c.stmts = map[string]*muxStmt{}
			}
			c.stmts[sql] = &muxStmt{unsupported: true}
			c.mu.Unlock()
		}
		return nil, errMuxFallback
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stmtGen != gen {
		c.appendClose(r.prep.StmtID)
		return nil, errMuxFallback
	}
	if old := c.stmts[sql]; old != nil {
		// Another session prepared it meanwhile.
		c.appendClose(r.prep.StmtID)
		return old, nil
	}
	if c.stmts == nil {
		c.stmts = map[string]*muxStmt{}
	}
	st = &muxStmt{id: r.prep.StmtID, params: r.prep.Params}
	c.stmts[sql] = st
	return st, nil
}

// forget drops sql's statement after the backend said it no longer knows
// it.
func (c *muxConn) forget(sql string) {
	c.mu.Lock()
	if st := c.stmts[sql]; st != nil {
		delete(c.stmts, sql)
		c.appendClose(st.id)
	}
	c.mu.Unlock()
}

// shortArgs reports whether every argument fits COM_STMT_EXECUTE itself
// (longer ones go as COM_STMT_SEND_LONG_DATA, on a pooled connection).
func shortArgs(args []any) bool {
	for _, a := range args {
		switch x := a.(type) {
		case string:
			if len(x) > longDataChunk {
				return false
			}
		case []byte:
			if len(x) > longDataChunk {
				return false
			}
		}
	}
	return true
}

// single checks that a response is the command's last: a plain SELECT
// has one result.
func (c *muxConn) single(status uint16) error {
	if status&mysql.SERVER_MORE_RESULTS_EXISTS != 0 {
		return errors.New("multiplex: a command with several results")
	}
	return nil
}

// column parses a column definition, from the connection's cache when
// the same definition came before.
func (c *muxConn) column(p []byte) (*mysql.Field, error) {
	c.colMu.Lock()
	f, ok := c.columns[string(p)]
	c.colMu.Unlock()
	if ok {
		return f, nil
	}
	f, err := wire.ParseColumn(p, c.bc.extendedMetadata)
	if err != nil {
		return nil, err
	}
	c.colMu.Lock()
	if len(c.columns) >= maxCachedColumns {
		c.columns = map[string]*mysql.Field{}
	}
	c.columns[string(p)] = f
	c.colMu.Unlock()
	return f, nil
}

// multiplexable reports whether plan may run on a shared connection (see
// the comment at the top).
func (s *Session) multiplexable(plan *router.Plan, src connSource, proto Protocol) bool {
	if !s.srv.rules.Server.Multiplex {
		return false
	}
	if plan.Kind != router.KindSelect || len(plan.Routes) != 1 || plan.Access != router.AccessRead || plan.Move != nil || plan.Returning != "" {
		return false
	}
	if _, ok := src.(poolSource); !ok {
		return false
	}
	// A pending SET TRANSACTION READ ONLY is the next statement's
	// (oneShotReadOnly): it runs on a pooled connection.
	return s.autocommit && !s.txn.active && !s.txn.readOnlyNext && !s.state.pinNext && s.state.empty() && len(s.state.pinned) == 0 && s.vars.sql() == ""
}

// runMultiplexed runs a single-route plan on a shared connection of its
// data source. errMuxFallback: run it the normal way.
func (s *Session) runMultiplexed(ctx context.Context, plan *router.Plan, proto Protocol) (result, error) {
	route := &plan.Routes[0]
	p, err := s.srv.pool(route.DataSource, s.foundRows)
	if err != nil {
		return result{}, err
	}
	m := p.multiplexed(s.srv.rules.Server.MultiplexConnections, s.srv.rules.Server.MergeMemoryBytes)
	start := time.Now()
	c, err := m.pick(ctx)
	if err != nil {
		return result{}, errMuxFallback
	}
	binary := proto == BinaryProtocol
	var build func([]byte) ([]byte, error)
	if binary {
		if !shortArgs(route.Args) {
			return result{}, errMuxFallback
		}
		st, err := c.stmt(ctx, route.SQL)
		if err != nil {
			return result{}, err
		}
		if st.params != len(route.Args) {
			return result{}, errMuxFallback
		}
		build = func(buf []byte) ([]byte, error) { return wire.AppendExecuteAs(buf, st.id, route.Args, route.ArgTypes) }
	} else {
		build = textCommand(route, c.noBackslash)
	}
	req, err := c.submit(muxStatement, build)
	if err != nil {
		if errors.Is(err, errMuxFallback) {
			return result{}, err
		}
		return result{}, &InternalError{Msg: fmt.Sprintf("route to %s: %v", route.DataSource, err)}
	}
	select {
	case <-req.done:
	case <-ctx.Done():
		return result{}, context.Cause(ctx)
	}
	r := &req.resp
	if r.lost || r.warns > 0 {
		return result{}, errMuxFallback
	}
	if binary && staleStmt(r.err) {
		c.forget(route.SQL)
		return result{}, errMuxFallback
	}
	s.srv.obs.Route(routeEvent(route.DataSource, time.Since(start), r.err))
	m.answered.Add(1)
	if r.err != nil && r.columns == nil {
		return result{}, r.err
	}
	s.backendStatus.add(r.status)
	if r.columns == nil {
		return result{ok: r.ok}, nil
	}
	st := &muxStream{rows: r.rows, err: r.err, binary: binary}
	st.columns = make([]*mysql.Field, len(r.columns))
	for i, p := range r.columns {
		if st.columns[i], err = c.column(p); err != nil {
			return result{}, &DataSourceError{DataSource: route.DataSource, Lost: true, Err: err}
		}
	}
	return result{rows: st}, nil
}

// textCommand builds route's COM_QUERY with its arguments written in.
func textCommand(route *router.Route, noBackslash bool) func([]byte) ([]byte, error) {
	mode := sqlarg.Backslash
	if noBackslash {
		mode = sqlarg.NoBackslashEscapes
	}
	return func(buf []byte) ([]byte, error) {
		buf = append(buf, mysql.COM_QUERY)
		sql := route.SQL
		if mode == sqlarg.NoBackslashEscapes {
			sql = sqlarg.ToNoBackslashEscapes(sql)
		}
		if route.Args == nil {
			return append(buf, sql...), nil
		}
		return sqlarg.AppendInterpolated(buf, sql, route.Args, mode)
	}
}

// muxStream is a multiplexed statement's rows, read whole already.
type muxStream struct {
	columns []*mysql.Field
	rows    [][]byte
	err     error // the backend's error after the rows, if any
	binary  bool  // the rows are in the binary protocol
	next    int
	row     Row
	buf     []byte
}

func (m *muxStream) Columns() []*mysql.Field { return m.columns }

func (m *muxStream) nextRaw() ([]byte, error) {
	if m.next >= len(m.rows) {
		if m.err != nil {
			return nil, m.err
		}
		return nil, io.EOF
	}
	p := m.rows[m.next]
	m.next++
	return p, nil
}

func (m *muxStream) rawProtocol() Protocol {
	if m.binary {
		return BinaryProtocol
	}
	return TextProtocol
}

func (m *muxStream) Next() (Row, error) {
	p, err := m.nextRaw()
	if err != nil {
		return nil, err
	}
	var row Row
	if m.binary {
		row, m.buf, err = wire.SplitBinaryRow(p, m.columns, m.row, m.buf)
	} else {
		row, err = wire.SplitTextRow(p, len(m.columns), m.row)
	}
	if err != nil {
		return nil, err
	}
	m.row = row
	return row, nil
}

func (m *muxStream) Close() error {
	m.rows = nil
	return nil
}
