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

	"github.com/shardflake/shardflake/config"
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
// no pinned connection, no session settings beyond the baseline and the
// character set (SET of anything else makes a session ineligible until it
// resets), a single-route SELECT that
// the router classed as a plain read (router.AccessRead: no FOR UPDATE,
// no INTO, no user or system variables, no LAST_INSERT_ID(), FOUND_ROWS(),
// SLEEP() or named locks, and no call of a function that is not
// MariaDB's own, a stored function that may write: a plain read may run
// twice here), sent as COM_STMT_EXECUTE of a statement
// prepared on the shared connection (once per connection and SQL text)
// for a client's COM_STMT_EXECUTE, and for a text query where a pooled
// connection would run it so too (textprepared.go), else as text
// (COM_QUERY). The character
// set a client names in its handshake or with SET NAMES changes how
// MariaDB reads the statement and encodes the answer (a 4-byte character
// reads '?' under utf8mb3, column definitions carry the charset), so a
// pool keeps separate shared connections per character-set setting (the
// baseline utf8mb4 and at most maxMuxCharsets others, each set with SET
// NAMES at dial as on a pooled connection); a session with yet another
// one runs on pooled connections. A response that
// reports warnings is dropped and the statement runs again on a pooled
// connection of its own, so that SHOW WARNINGS can read them there; a
// shared connection that breaks sends its statements there too. A
// backend error goes to its own statement only.
//
// Head-of-line blocking: a statement on a shared connection waits for
// every command queued before it, and one slow plain read (a long scan, a
// lock wait) or a backend thread that is not scheduled would stall every
// session behind it. multiplexMaxWait bounds it. A statement does not
// join a shared connection whose oldest outstanding command has been out
// longer than that (the backend is on it since it was written or since
// the response before it was read); it takes another shared connection,
// or a pooled one when all are so. A statement already queued that has
// waited that long behind another session's command, while that command
// has been out as long, leaves: it runs on a pooled connection, and the
// response of its command on the shared connection is read and dropped
// when it comes (a plain read runs twice; nothing else can have that
// effect). A statement whose own command is the oldest never leaves: it
// is the slow one, and running it again would only double its work.
// Leaving costs a pooled connection per statement while the stall lasts,
// the cost of the switch off.
//
// Costs and limits: a response is read whole into memory before its
// session sees it (a plain read's rows; mergeMemoryBytes bounds it, and a
// longer one fails the connection over to the normal path); a statement
// whose client gives up (KILL QUERY, timeout) is answered at once, its
// backend statement runs to its end on the shared connection.

// errMuxFallback says a statement did not run multiplexed and is to run
// the normal way; nothing of it reached the client.
var errMuxFallback = errors.New("multiplex: run on a pooled connection")

// maxMuxCharsets is how many character-set settings besides the baseline
// get shared connections of their own in one pool.
const maxMuxCharsets = 3

// maxMuxQueue is how many commands a shared connection holds (written
// and queued) before a statement passes it by. One backend thread answers
// a shared connection's commands one after another, so without a bound
// every plain read of a data source would wait its turn on as many
// threads as there are shared connections however many cores the server
// has: under more sessions than that, the rest run on pooled connections,
// in parallel on the server, as with the switch off. Eight keeps the
// writes that carry several commands at once (the switch's gain) and a
// point select's wait behind others at a few of their times.
const maxMuxQueue = 8

// muxSet is a pool's shared connections.
type muxSet struct {
	pool *pool
	mu   sync.Mutex
	// conns are the shared connections by the character-set settings
	// they carry ("" for the baseline; settings.sql's text).
	conns map[string][]*muxConn
	n     int
	// closed: the pool closed; a connection dialed since is not kept.
	closed bool
	// budget bounds the bytes of one buffered response.
	budget int64
	// maxWait is server.multiplexMaxWait.
	maxWait time.Duration
	// answered counts the statements answered on the shared
	// connections.
	answered atomic.Int64
	// writes counts the writes that carried them (fewer than the
	// statements when several were written at once), commands the
	// commands queued (statements and prepares), responses the responses
	// read, and reads those of them of which nothing had arrived when the
	// reader began them (multiplex_metrics.go); left counts the
	// statements that left a stalled connection for a pooled one,
	// bypassed those that found every shared connection stalled, and
	// full those that found the others full (maxMuxQueue).
	writes, commands, responses, reads atomic.Int64
	left, bypassed, full               atomic.Int64
}

// muxConn is one shared backend connection: writes are combined by the
// sessions themselves, reads are done by its reader goroutine.
type muxConn struct {
	set *muxSet
	bc  *backendConn
	// names is the character-set settings the connection carries.
	names string
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
	// headSince is when the backend began on the oldest command in
	// queue, as far as the proxy can tell: when it was queued onto an
	// empty queue, or when the response before it was read.
	headSince time.Time

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
	// unsupported: the backend cannot prepare it (cannotPrepare).
	unsupported bool
	// textExact: its columns' binary values read back as MariaDB's text
	// (textExact), so a text query may run it; manyRows: a text query's
	// execution returned more than manyRows rows, so text queries run
	// as text from then on (textprepared.go).
	textExact bool
	manyRows  atomic.Bool
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
	// first: the command was queued onto an empty queue, so it never
	// waits behind another.
	first bool
	resp  muxResponse
}

// muxResponse is a whole response: an OK, an error, or a result set.
type muxResponse struct {
	ok   wire.OK
	prep wire.PrepareOK
	// exact: the prepared statement's columns are textExact.
	exact   bool
	err     error // a *mysql.MyError, or the connection's failure
	lost    bool  // err is the connection's failure, not the statement's
	columns [][]byte
	rows    [][]byte
	status  uint16
	warns   uint16
}

// multiplexed returns the pool's shared connections, made on first use
// with the snapshot's settings.
func (p *pool) multiplexed(s *config.Server) *muxSet {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mux == nil {
		p.mux = &muxSet{pool: p, n: max(s.MultiplexConnections, 1), budget: s.MergeMemoryBytes, maxWait: s.MultiplexMaxWait, conns: map[string][]*muxConn{}}
	}
	return p.mux
}

// pick returns the shared connection carrying character-set settings
// names with the shortest queue and no stall, dialing one while there are
// fewer than n. errMuxFallback: names would be one too many, or every
// connection is stalled (its oldest command out longer than maxWait) or
// full (maxMuxQueue commands).
func (m *muxSet) pick(ctx context.Context, names string) (*muxConn, error) {
	m.mu.Lock()
	conns, known := m.conns[names]
	others := len(m.conns)
	if _, ok := m.conns[""]; ok {
		others--
	}
	if m.closed || !known && names != "" && others >= maxMuxCharsets {
		m.mu.Unlock()
		return nil, errMuxFallback
	}
	live := conns[:0]
	for _, c := range conns {
		c.mu.Lock()
		ok := c.broken == nil
		c.mu.Unlock()
		if ok {
			live = append(live, c)
		}
	}
	conns = live
	m.conns[names] = conns
	if len(conns) < m.n {
		m.mu.Unlock()
		c, err := m.dial(ctx, names)
		if err != nil {
			return nil, err
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		conns = m.conns[names]
		switch {
		case m.closed:
			c.fail(errors.New("pool closed"))
			return nil, errMuxFallback
		case len(conns) < m.n:
			m.conns[names] = append(conns, c)
		default:
			// Other sessions dialed the n meanwhile: use one of theirs.
			c.fail(errors.New("not needed"))
			c = conns[len(conns)-1]
		}
		return c, nil
	}
	var best *muxConn
	depth := -1
	var now time.Time
	full := false
	for _, c := range conns {
		c.mu.Lock()
		d := len(c.queue)
		stalled := false
		if d > 0 {
			if now.IsZero() {
				now = time.Now()
			}
			stalled = now.Sub(c.headSince) > m.maxWait
		}
		c.mu.Unlock()
		if !stalled && d >= maxMuxQueue {
			full = true
			continue
		}
		if !stalled && (depth < 0 || d < depth) {
			best, depth = c, d
		}
	}
	m.mu.Unlock()
	if best == nil {
		if full {
			m.full.Add(1)
		} else {
			m.bypassed.Add(1)
		}
		return nil, errMuxFallback
	}
	return best, nil
}

// dial opens a shared connection carrying character-set settings names.
func (m *muxSet) dial(ctx context.Context, names string) (*muxConn, error) {
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
	if err := bc.apply(names); err != nil {
		bc.close()
		return nil, errMuxFallback
	}
	c := &muxConn{set: m, bc: bc, names: names, w: wire.RawWriter(bc.nc), noBackslash: bc.noBackslashEscapes(), columns: map[string]*mysql.Field{}, stmtGen: bc.stmtGen}
	go c.read()
	return c, nil
}

// close fails every shared connection (the pool closes).
func (m *muxSet) close() {
	m.mu.Lock()
	all := m.conns
	m.conns, m.closed = map[string][]*muxConn{}, true
	m.mu.Unlock()
	for _, conns := range all {
		for _, c := range conns {
			c.fail(errors.New("pool closed"))
		}
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
	if len(c.queue) == 0 {
		c.headSince = time.Now()
		req.first = true
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
		if len(c.queue) > 0 {
			c.headSince = time.Now()
		}
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

// await waits for req's response, a session's timer to hand (made on
// first use). false: the statement leaves the connection (see the comment
// at the top); its response will be read and dropped.
func (c *muxConn) await(ctx context.Context, req *muxRequest, timer **time.Timer) (bool, error) {
	if req.first {
		return c.awaitOwn(ctx, req)
	}
	maxWait := c.set.maxWait
	t := *timer
	if t == nil {
		t = time.NewTimer(maxWait)
		*timer = t
	} else {
		t.Reset(maxWait)
	}
	defer t.Stop()
	for {
		select {
		case <-req.done:
			return true, nil
		case <-ctx.Done():
			return false, context.Cause(ctx)
		case <-t.C:
		}
		select {
		case <-req.done:
			return true, nil
		default:
		}
		// Not answered, so still queued, unless the connection broke
		// and is answering its queue now.
		c.mu.Lock()
		own := len(c.queue) == 0 || c.queue[0] == req
		out := time.Since(c.headSince)
		c.mu.Unlock()
		switch {
		case own:
			// The slow command is this statement's own.
			return c.awaitOwn(ctx, req)
		case out > maxWait:
			c.set.left.Add(1)
			return false, nil
		}
		// The queue moves, only slowly: wait until its oldest command
		// has been out maxWait.
		t.Reset(maxWait - out)
	}
}

// awaitOwn waits for the response of req, which waits behind no other
// session's command.
func (c *muxConn) awaitOwn(ctx context.Context, req *muxRequest) (bool, error) {
	select {
	case <-req.done:
		return true, nil
	case <-ctx.Done():
		return false, context.Cause(ctx)
	}
}

// multiplexable reports whether plan may run on a shared connection (see
// the comment at the top).
func (s *Session) multiplexable(plan *router.Plan, src connSource, proto Protocol) bool {
	if !s.srv.rules.Server.Multiplex {
		return false
	}
	if plan.Kind != router.KindSelect || len(plan.Routes) != 1 || plan.Access != router.AccessRead || plan.Move != nil || plan.First != nil || plan.Returning != "" {
		return false
	}
	if _, ok := src.(poolSource); !ok {
		return false
	}
	// A pending SET TRANSACTION READ ONLY is the next statement's
	// (oneShotReadOnly): it runs on a pooled connection.
	return s.autocommit && !s.txn.active && !s.txn.readOnlyNext && !s.state.pinNext && s.state.empty() && len(s.state.pinned) == 0 && s.vars.onlyNames()
}

// runMultiplexed runs a single-route plan on a shared connection of its
// data source. errMuxFallback: run it the normal way.
func (s *Session) runMultiplexed(ctx context.Context, plan *router.Plan, proto Protocol) (result, error) {
	route := &plan.Routes[0]
	p, err := s.srv.pool(route.DataSource, s.foundRows)
	if err != nil {
		return result{}, err
	}
	m := p.multiplexed(&s.srv.rules.Server)
	start := time.Now()
	c, err := m.pick(ctx, s.vars.sql())
	if err != nil {
		return result{}, errMuxFallback
	}
	binary := proto == BinaryProtocol
	var st *muxStmt
	if binary {
		if !shortArgs(route.Args) {
			return result{}, errMuxFallback
		}
		switch st, err = c.stmt(ctx, route.SQL, &s.muxTimer); {
		case errors.Is(err, errMuxNoStmt):
			return result{}, errMuxFallback
		case err != nil:
			return result{}, err
		}
		if st.params != len(route.Args) {
			return result{}, errMuxFallback
		}
	} else if prepareText(plan, backendText) {
		// As on a pooled connection, a text query's integer arguments
		// run as a prepared statement where its rows read back as the
		// text MariaDB would send (textprepared.go); otherwise, or if
		// the backend cannot prepare it, as text.
		switch st, err = c.stmt(ctx, route.SQL, &s.muxTimer); {
		case errors.Is(err, errMuxNoStmt):
			st = nil
		case err != nil:
			return result{}, err
		case !st.textExact || st.manyRows.Load() || st.params != len(route.Args):
			st = nil
		}
	}
	var build func([]byte) ([]byte, error)
	if st != nil {
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
	answered, err := c.await(ctx, req, &s.muxTimer)
	switch {
	case err != nil:
		return result{}, err
	case !answered:
		return result{}, errMuxFallback
	}
	r := &req.resp
	if r.lost || r.warns > 0 {
		return result{}, errMuxFallback
	}
	if st != nil && staleStmt(r.err) {
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
	if st != nil && !binary && len(r.rows) > manyRows {
		st.manyRows.Store(true)
	}
	ms := &muxStream{rows: r.rows, err: r.err, binary: st != nil}
	ms.columns = make([]*mysql.Field, len(r.columns))
	for i, p := range r.columns {
		if ms.columns[i], err = c.column(p); err != nil {
			return result{}, &DataSourceError{DataSource: route.DataSource, Lost: true, Err: err}
		}
	}
	return result{rows: ms}, nil
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
