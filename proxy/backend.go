package proxy

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/proxy/internal/sqlarg"
	"github.com/shardflake/shardflake/proxy/internal/wire"
)

// backendCharset is what every backend connection speaks unless the client
// session asks for something else (SET NAMES ...).
const (
	backendCollation = "utf8mb4_general_ci"
	// backendBaseline is applied to every new backend connection and again
	// after COM_RESET_CONNECTION. A generous net_write_timeout lets a
	// route's rows wait while a merge reads other routes first.
	backendBaseline = "NAMES utf8mb4 COLLATE utf8mb4_general_ci, net_write_timeout = 3600"
	// killGrace is how long a cancelled statement may take to end after
	// KILL QUERY before its connection is cut.
	killGrace = 5 * time.Second
)

// backendConn is one connection to a data source. It is owned by one
// statement (or one transaction) at a time; only interrupt runs from
// another goroutine.
type backendConn struct {
	pool *pool
	wc   *wire.Conn
	nc   net.Conn
	id   uint32 // the backend's connection id, for KILL QUERY

	status   uint16 // status flags of the last response
	warnings uint16 // warnings the last response reported (warnings.go)
	created  time.Time
	lastUsed time.Time
	// applied is the session settings (SET ...) in effect on this
	// connection beyond the baseline; "" for none.
	applied string
	// ansiQuotes: the settings applied include sql_mode ANSI_QUOTES
	// (Session.carryMode), so "..." names are sent in that mode's form.
	ansiQuotes bool
	broken     bool

	// stmts are the statements prepared on this connection, by SQL text
	// (backendstmt.go); stmtClock orders their use, stmtGen is the
	// pool's schemaGen they were prepared under.
	stmts     map[string]*backendStmt
	stmtClock uint64
	stmtGen   uint64
	// columns caches parsed column definitions by their packet (column).
	columns map[string]*mysql.Field
	// extendedMetadata: the handshake asked for
	// MARIADB_CLIENT_EXTENDED_METADATA (extendedConn), so column
	// definitions carry its block (wire.ParseColumn).
	extendedMetadata bool
	// w is the watch for cancellation of the statement running (watch).
	w watchState
	// pinned: the connection belongs to one client session (see pin.go)
	// until it is unpinned; carriesState: it holds session state
	// (temporary tables, locks) that pool.put must reset.
	pinned       bool
	carriesState bool

	// deferred is what a transaction's first statement on the connection
	// must run first (SET TRANSACTION ..., START TRANSACTION, its
	// savepoints) when that statement is a read: txnSource.acquire leaves
	// it here, and the route arms it (armPrefix) so that it goes out in
	// the same write as the statement, as commands of their own whose
	// responses are read first (readPrefix). prefix is what the next
	// command writes ahead of itself, inFlight how many responses of
	// such commands come before the next one. prefixFailed: one of them
	// failed; the statement behind it ran without it and its response
	// was dropped, and the session gives the connection back
	// (Session.settleParts).
	deferred     []string
	prefix       []string
	prefixBuf    []byte
	inFlight     int
	prefixFailed bool
}

func dialBackend(ctx context.Context, p *pool) (*backendConn, error) {
	if p.tlsErr != nil {
		return nil, p.tlsErr
	}
	bc, err := dialBackendTLS(ctx, p, p.tls)
	if serverWithoutTLS(err) && p.ds.TLS.Mode == config.TLSPreferred {
		bc, err = dialBackendTLS(ctx, p, nil)
	}
	if err != nil && p.tls != nil && !serverWithoutTLS(err) {
		var tlsErr *tls.CertificateVerificationError
		if errors.As(err, &tlsErr) {
			err = fmt.Errorf("TLS (sslMode %s): %w", p.ds.TLS.Mode, err)
		}
	}
	return bc, err
}

// dialBackendTLS logs in to p's data source, over TLS when tlsConfig is
// set.
func dialBackendTLS(ctx context.Context, p *pool, tlsConfig *tls.Config) (*backendConn, error) {
	ds := p.ds
	addr := net.JoinHostPort(ds.Host, strconv.Itoa(ds.Port))
	dialer := &net.Dialer{Timeout: p.connectTimeout, KeepAlive: 30 * time.Second}
	// CLIENT_LOCAL_FILES lets a client's LOAD DATA LOCAL INFILE reach
	// the data source (loaddata.go relays the file); any other request
	// for a file is answered with none (readHead).
	flags := mysql.CLIENT_MULTI_RESULTS | mysql.CLIENT_LOCAL_FILES
	if p.foundRows {
		flags |= mysql.CLIENT_FOUND_ROWS
	}
	opts := []client.Option{func(c *client.Conn) error {
		// Results must end with EOF packets, as the proxy's clients
		// expect them, so they can be forwarded unchanged.
		c.UnsetCapability(mysql.CLIENT_DEPRECATE_EOF)
		c.UnsetCapability(mysql.CLIENT_QUERY_ATTRIBUTES)
		c.UnsetCapability(mysql.CLIENT_MULTI_STATEMENTS)
		c.UnsetCapability(mysql.CLIENT_SESSION_TRACK)
		for _, f := range []uint32{mysql.CLIENT_MULTI_RESULTS, mysql.CLIENT_FOUND_ROWS, mysql.CLIENT_LOCAL_FILES} {
			if flags&f != 0 {
				if err := c.SetCapability(f); err != nil {
					return err
				}
			}
		}
		c.ReadTimeout = p.connectTimeout
		c.WriteTimeout = p.connectTimeout
		if tlsConfig != nil {
			c.SetTLSConfig(tlsConfig.Clone())
		}
		return c.SetCollation(backendCollation)
	}}
	dctx, cancel := context.WithTimeout(ctx, p.connectTimeout)
	defer cancel()
	var ec *extendedConn
	dial := func(ctx context.Context, network, address string) (net.Conn, error) {
		nc, err := dialer.DialContext(ctx, network, address)
		if err != nil {
			return nil, err
		}
		ec = &extendedConn{Conn: nc}
		return ec, nil
	}
	gc, err := client.ConnectWithDialer(dctx, "tcp", addr, ds.User, ds.Password, ds.Database, dial, opts...)
	if err != nil {
		return nil, err
	}
	version := gc.GetServerVersion()
	p.version.Store(&version)
	nc := gc.Conn.Conn
	if nc == net.Conn(ec) {
		nc = ec.Conn
	}
	state := tlsState(0, false)
	if tc, ok := nc.(*tls.Conn); ok {
		state = tlsState(tc.ConnectionState().Version, true)
	}
	p.tlsState.Store(&state)
	// The handshake left its deadline behind; statements set their own.
	nc.SetDeadline(time.Time{})
	now := time.Now()
	bc := &backendConn{pool: p, wc: wire.NewConn(nc), nc: nc, id: gc.GetConnectionID(), created: now, lastUsed: now, stmtGen: p.schemaGen.Load(), extendedMetadata: ec.negotiated}
	nc.SetDeadline(now.Add(p.connectTimeout))
	_, err = bc.exec("SET " + p.baseline)
	nc.SetDeadline(time.Time{})
	if err != nil {
		bc.close()
		return nil, err
	}
	return bc, nil
}

func (bc *backendConn) close() {
	bc.broken = true
	bc.nc.Close()
}

// lost marks the connection broken after a read or write failed and
// returns the error a client should see.
func (bc *backendConn) lost(err error) error {
	bc.broken = true
	return &DataSourceError{DataSource: bc.pool.name, Lost: true, Err: err}
}

// send writes one command packet. SQL (COM_QUERY, COM_STMT_PREPARE) is
// the proxy's, written with backslash escapes; a backend session running
// with NO_BACKSLASH_ESCAPES gets it in its own form (status.go).
func (bc *backendConn) send(cmd byte, arg string) error {
	if cmd == mysql.COM_QUERY || cmd == mysql.COM_STMT_PREPARE {
		arg = bc.backendSQL(arg)
	}
	bc.wc.ResetSeq()
	buf := append(bc.wc.Scratch(), cmd)
	return bc.sendCommand(append(buf, arg...), nil)
}

// sendQuery writes COM_QUERY of sql with args written in as literals,
// straight into the packet.
func (bc *backendConn) sendQuery(sql string, args []any, mode sqlarg.Mode) error {
	if mode == sqlarg.NoBackslashEscapes {
		sql = sqlarg.ToNoBackslashEscapes(sql)
	} else if bc.ansiQuotes {
		sql = sqlarg.QuotedNamesFromBackslashEscapes(sql)
	}
	bc.wc.ResetSeq()
	buf, err := sqlarg.AppendInterpolated(append(bc.wc.Scratch(), mysql.COM_QUERY), sql, args, mode)
	return bc.sendCommand(buf, err)
}

// sendCommand writes one command packet built in the connection's scratch
// buffer (buildErr: building it failed, nothing is sent) and flushes it.
func (bc *backendConn) sendCommand(buf []byte, buildErr error) error {
	if buildErr != nil {
		return &InternalError{Msg: fmt.Sprintf("route to %s: %v", bc.pool.name, buildErr)}
	}
	if len(bc.prefix) > 0 {
		if err := bc.writePrefix(); err != nil {
			bc.prefixFailed = true
			return bc.lost(err)
		}
		bc.wc.ResetSeq()
	}
	err := bc.wc.WritePacket(buf)
	bc.wc.SetScratch(buf)
	if err == nil {
		err = bc.wc.Flush()
	}
	if err != nil {
		// A prefix lost with the connection never opened anything.
		bc.prefixFailed = bc.prefixFailed || bc.inFlight > 0
		return bc.lost(err)
	}
	bc.lastUsed = time.Now()
	return nil
}

// armPrefix makes the next command carry the connection's deferred
// commands ahead of itself; disarmPrefix, called once that command was
// sent or failed to be, keeps them deferred if it did not take them.
func (bc *backendConn) armPrefix() {
	if bc.deferred != nil {
		bc.prefix, bc.deferred = bc.deferred, nil
	}
}

func (bc *backendConn) disarmPrefix() {
	if bc.prefix != nil {
		bc.deferred, bc.prefix = bc.prefix, nil
	}
}

// writePrefix buffers the prefix commands, each a COM_QUERY of its own.
func (bc *backendConn) writePrefix() error {
	for _, sql := range bc.prefix {
		bc.wc.ResetSeq()
		bc.prefixBuf = append(append(bc.prefixBuf[:0], mysql.COM_QUERY), bc.backendSQL(sql)...)
		if err := bc.wc.WritePacket(bc.prefixBuf); err != nil {
			return err
		}
	}
	bc.inFlight = len(bc.prefix)
	bc.prefix = nil
	return nil
}

// readPrefix reads the responses of the prefix commands sent ahead of the
// current one. When one failed, its error is returned as if it had been
// run alone: the current command's response is read and dropped (it ran
// outside what the prefix was to set up; only reads are sent this way),
// a transaction the prefix opened is rolled back, and prefixFailed is
// set. The connection stays usable. A connection lost before the prefix
// was answered is marked prefixFailed too: the part never opened, as when
// a START TRANSACTION of its own loses the connection.
func (bc *backendConn) readPrefix() error {
	n, seq := bc.inFlight, bc.wc.Seq()
	bc.inFlight = 0
	var first error
	for range n {
		// Each prefix command was one packet: its response starts at 1.
		bc.wc.SetSeq(1)
		if _, err := bc.finish(); err != nil {
			if bc.broken {
				// Lost before the prefix was answered: nothing opened
				// that the client must hear of beyond this error.
				bc.prefixFailed = true
				return err
			}
			if first == nil {
				first = err
			}
		}
	}
	bc.wc.SetSeq(seq)
	if first == nil {
		return nil
	}
	if _, err := bc.finish(); bc.broken {
		return err
	}
	bc.prefixFailed = true
	bc.warnings = 0
	if bc.inTransaction() {
		if _, err := bc.exec("ROLLBACK"); bc.broken {
			return err
		}
	}
	return first
}

// head is the start of a response: an OK packet, or the columns of a
// result set whose rows follow.
type head struct {
	ok      wire.OK
	columns []*mysql.Field
}

// readHead reads a response up to its rows. A backend error comes back as
// *mysql.MyError with the connection still usable.
func (bc *backendConn) readHead() (head, error) {
	var h head
	p, err := bc.wc.ReadPacket()
	if err != nil {
		return h, bc.lost(err)
	}
	switch {
	case len(p) == 0:
		return h, bc.lost(wire.ErrMalformed)
	case wire.IsOK(p):
		ok, err := wire.ParseOK(p, false)
		if err != nil {
			return h, bc.lost(err)
		}
		bc.status = ok.Status
		bc.warnings = ok.Warnings
		h.ok = ok
		return h, nil
	case wire.IsErr(p):
		return h, wire.ParseErr(p)
	case wire.IsLocalInfile(p):
		// LOAD DATA LOCAL: answer with no data; the backend then fails
		// the statement and the connection stays in step.
		if err := bc.wc.WritePacket(nil); err != nil {
			return h, bc.lost(err)
		}
		if err := bc.wc.Flush(); err != nil {
			return h, bc.lost(err)
		}
		return bc.readHead()
	}
	n, _, _, ok := wire.ReadLenEncInt(p)
	if !ok || n == 0 {
		return h, bc.lost(wire.ErrMalformed)
	}
	h.columns = make([]*mysql.Field, n)
	for i := range h.columns {
		p, err := bc.wc.ReadPacket()
		if err != nil {
			return h, bc.lost(err)
		}
		if h.columns[i], err = bc.column(p); err != nil {
			return h, bc.lost(err)
		}
	}
	p, err = bc.wc.ReadPacket()
	if err != nil {
		return h, bc.lost(err)
	}
	if !wire.IsEOF(p) {
		return h, bc.lost(fmt.Errorf("%w: no EOF after column definitions", wire.ErrMalformed))
	}
	_, bc.status = wire.ParseEOF(p)
	return h, nil
}

// maxCachedColumns bounds a connection's cache of column definitions.
const maxCachedColumns = 64

// column returns column definition p parsed, from the connection's cache
// when the same definition came before: a prepared statement's columns
// come with every execute, a point query's are the same every time. The
// Field is shared and must not be modified (RowStream.Columns says so).
func (bc *backendConn) column(p []byte) (*mysql.Field, error) {
	if f, ok := bc.columns[string(p)]; ok {
		return f, nil
	}
	f, err := wire.ParseColumn(p, bc.extendedMetadata)
	if err != nil {
		return nil, err
	}
	if bc.columns == nil || len(bc.columns) >= maxCachedColumns {
		bc.columns = map[string]*mysql.Field{}
	}
	bc.columns[string(p)] = f
	return f, nil
}

// readRow reads one row packet of an open result set: the raw payload, or
// io.EOF (status updated) at the end, or the backend's error.
func (bc *backendConn) readRow() ([]byte, error) {
	p, err := bc.wc.ReadPacket()
	if err != nil {
		return nil, bc.lost(err)
	}
	if wire.IsEOF(p) {
		bc.warnings, bc.status = wire.ParseEOF(p)
		return nil, io.EOF
	}
	if wire.IsErr(p) {
		return nil, wire.ParseErr(p)
	}
	return p, nil
}

// backendSQL is the proxy's SQL in the form of the backend session's
// sql_mode: its literals under NO_BACKSLASH_ESCAPES, its "..." names under
// ANSI_QUOTES.
func (bc *backendConn) backendSQL(sql string) string {
	switch {
	case bc.noBackslashEscapes():
		return sqlarg.ToNoBackslashEscapes(sql)
	case bc.ansiQuotes:
		return sqlarg.QuotedNamesFromBackslashEscapes(sql)
	}
	return sql
}

// noBackslashEscapes reports whether the backend session runs with
// sql_mode NO_BACKSLASH_ESCAPES (its last response said so).
func (bc *backendConn) noBackslashEscapes() bool {
	return bc.status&mysql.SERVER_STATUS_NO_BACKSLASH_ESCAPED != 0
}

// inTransaction reports whether the backend says a transaction is open.
func (bc *backendConn) inTransaction() bool { return bc.status&mysql.SERVER_STATUS_IN_TRANS != 0 }

// moreResults reports whether the backend announced another result for
// the current command (CALL, or a statement returning several results).
func (bc *backendConn) moreResults() bool { return bc.status&mysql.SERVER_MORE_RESULTS_EXISTS != 0 }

// discardRows reads and drops the rest of an open result set.
func (bc *backendConn) discardRows() error {
	for {
		_, err := bc.readRow()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// exec runs a statement whose result does not matter beyond success: SET,
// BEGIN, COMMIT. Rows, and further results, are read and dropped.
func (bc *backendConn) exec(sql string) (wire.OK, error) {
	if err := bc.send(mysql.COM_QUERY, sql); err != nil {
		return wire.OK{}, err
	}
	return bc.finish()
}

// finish reads every remaining result of the current command.
func (bc *backendConn) finish() (wire.OK, error) {
	var firstErr error
	var ok wire.OK
	for {
		h, err := bc.readHead()
		if err != nil {
			if bc.broken {
				return ok, err
			}
			// A backend error ends the command.
			if firstErr == nil {
				firstErr = err
			}
			return ok, firstErr
		}
		if h.columns != nil {
			if err := bc.discardRows(); err != nil {
				return ok, err
			}
		} else {
			ok = h.ok
		}
		if !bc.moreResults() {
			return ok, firstErr
		}
	}
}

// ping checks the connection with COM_PING.
func (bc *backendConn) ping(timeout time.Duration) error {
	bc.nc.SetDeadline(time.Now().Add(timeout))
	defer bc.nc.SetDeadline(time.Time{})
	if err := bc.send(mysql.COM_PING, ""); err != nil {
		return err
	}
	_, err := bc.readHead()
	return err
}

// reset returns the connection to the baseline settings: session
// variables, user variables, temporary tables and locks of the session
// that used it before are gone.
func (bc *backendConn) reset() error {
	if err := bc.send(mysql.COM_RESET_CONNECTION, ""); err != nil {
		return err
	}
	if _, err := bc.readHead(); err != nil {
		return err
	}
	bc.applied, bc.ansiQuotes = "", false
	// The reset deallocated the connection's prepared statements.
	bc.stmts = nil
	_, err := bc.exec("SET " + bc.pool.baseline)
	return err
}

// apply makes the connection carry a session's settings ("" for none):
// nothing when they are already in effect, a SET when the connection has
// only the baseline, and a reset first when it carries another session's.
//
// A statement prepared on the connection keeps what the settings meant
// when it was prepared: MariaDB reads its literals in the character set
// of that moment (CHARSET('x'), a string's bytes) and its operators under
// that sql_mode (|| under PIPES_AS_CONCAT). So the statements go with the
// settings they were prepared under: a reset deallocates them, and a SET
// on top of the baseline closes them (the closes go out with the SET).
func (bc *backendConn) apply(settings string) error {
	if bc.applied == settings {
		return nil
	}
	if bc.applied != "" {
		if err := bc.reset(); err != nil {
			return err
		}
	}
	if settings != "" {
		bc.closeStmts()
		if _, err := bc.exec("SET " + settings); err != nil {
			return err
		}
	}
	bc.applied = settings
	return nil
}

// applyPinned makes a pinned connection carry its session's settings
// without a reset, which would drop the state it is pinned for: the
// session's settings only ever grow or change values, so applying all of
// them again on top of the old ones gives the same result.
func (bc *backendConn) applyPinned(settings string) error {
	if bc.applied == settings || settings == "" {
		return nil
	}
	// Its prepared statements were prepared under the old settings
	// (apply).
	bc.closeStmts()
	if _, err := bc.exec("SET " + settings); err != nil {
		return err
	}
	bc.applied = settings
	return nil
}

// watch makes ctx's cancellation stop the statement running on bc: KILL
// QUERY through another connection, and if the backend does not end the
// statement within killGrace, the connection is cut. Call stop once the
// statement's response has been read to its end; it waits for a KILL in
// flight, so a late KILL can never hit the connection's next statement.
// The state and functions are the connection's own (watchState), made
// once: a statement's own context (stmtCtx) registers bc with the
// session's stmtWatch, which allocates nothing; any other context pays
// for a context.AfterFunc.
func (bc *backendConn) watch(ctx context.Context) (stop func()) {
	sc, isStmt := ctx.(*stmtCtx)
	// A stmtCtx is never without Done; not asking spares its channel.
	if !isStmt && ctx.Done() == nil {
		return noWatch
	}
	w := &bc.w
	if w.stop == nil {
		w.onCancel, w.stop, w.stopStmt = bc.killWatched, bc.stopWatching, bc.stopStmtWatching
	}
	w.mu.Lock()
	w.gen++
	w.finished = false
	if w.killed == nil {
		w.killed = make(chan struct{})
	}
	w.mu.Unlock()
	if isStmt {
		w.stmt = sc.w
		sc.w.watchBackend(sc, bc)
		return w.stopStmt
	}
	w.stopAfter = context.AfterFunc(ctx, w.onCancel)
	return w.stop
}

func noWatch() {}

// watchState is what one watch at a time needs; a connection runs one
// statement at a time.
type watchState struct {
	mu       sync.Mutex
	gen      uint64 // counts watches, so a late timer spares the next one
	finished bool
	timer    *time.Timer
	// killed is closed when a cancellation's KILL is done; replaced after
	// a watch that saw one.
	killed    chan struct{}
	stopAfter func() bool
	onCancel  func()
	stop      func()
	// stmt is the statement watch bc is registered with, stopStmt the
	// stop for that case (watch).
	stmt     *stmtWatch
	stopStmt func()
}

// killWatched runs when the watched statement's context is cancelled.
func (bc *backendConn) killWatched() {
	w := &bc.w
	w.mu.Lock()
	killed, gen := w.killed, w.gen
	w.mu.Unlock()
	defer close(killed)
	bc.pool.killQuery(bc.id)
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.finished && w.gen == gen {
		w.timer = time.AfterFunc(killGrace, func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			if !w.finished && w.gen == gen {
				bc.nc.SetReadDeadline(time.Unix(1, 0))
			}
		})
	}
}

// stopWatching ends the current watch (watch's stop).
func (bc *backendConn) stopWatching() {
	if bc.w.stopAfter() {
		return
	}
	bc.waitKilled()
}

// stopStmtWatching is stopWatching for a watch registered with a
// statement's stmtWatch.
func (bc *backendConn) stopStmtWatching() {
	sw := bc.w.stmt
	bc.w.stmt = nil
	if sw.unwatchBackend(bc) {
		return
	}
	bc.waitKilled()
}

// waitKilled waits for the cancellation's KILL that has begun and ends
// the watch.
func (bc *backendConn) waitKilled() {
	w := &bc.w
	<-w.killed
	w.mu.Lock()
	w.finished = true
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	w.killed = nil
	w.mu.Unlock()
	bc.nc.SetReadDeadline(time.Time{})
}
