package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/shardflake/shardflake/proxy/internal/wire"
)

// Reading a shared connection's responses (see multiplex.go).
//
// There is no reader goroutine: the session of the oldest unanswered
// command reads. submit makes a command's session the reader when nobody
// reads (the queue was empty); the reader reads the responses in order
// until its own is in, signals each other session whose response it read,
// and then makes the session of the next command the reader, waking it
// (that session was to be woken for its response anyway). A statement
// whose command finds the connection idle is read by its own session, as
// on a pooled connection: no goroutine hand-off.
//
// A session that gives up (KILL QUERY, a timeout) leaves at once. If it
// was only waiting, its response is read and dropped by whoever reads. If
// it was reading, its context's cancellation sets a read deadline in the
// past; the read stops at a packet boundary (wire.Conn consumes nothing of
// a packet it fails to read), the response read so far stays on the
// connection (parse), and a goroutine of the connection's own (orphan)
// goes on reading where it stopped, until the next command's session is
// there to take over. A read that stops inside a packet longer than the
// read buffer cannot resume: the connection fails, and the statements
// queued on it run again on pooled connections.

// muxParse is the response being read, one packet at a time, so that
// another reader can go on where one stopped.
type muxParse struct {
	req   *muxRequest
	resp  muxResponse
	phase muxPhase
	left  int   // packets left of the phase (columns, prepare definitions)
	size  int64 // bytes kept, against the budget
}

// muxPhase is what the next packet of a response is.
type muxPhase int

const (
	phaseFirst   muxPhase = iota // OK, error, column count, PREPARE OK
	phaseColumns                 // column definitions
	phaseColEOF                  // the EOF after them
	phaseRows                    // rows, then EOF or error
	phaseSkip                    // a PREPARE's definitions, skipped
)

// await waits for req's response, reading the connection's responses
// while its session is the reader. An error is ctx's: the session gave up
// and left the response to be dropped.
func (c *muxConn) await(ctx context.Context, req *muxRequest) (*muxResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for !req.finished {
		if c.reader == req {
			if !c.readFor(ctx, req) {
				return nil, context.Cause(ctx)
			}
			continue
		}
		c.mu.Unlock()
		select {
		case <-req.wake:
		case <-ctx.Done():
		}
		c.mu.Lock()
		if !req.finished && ctx.Err() != nil {
			req.gone = true
			if c.reader == req {
				// Woken to read, gone instead.
				c.passRole()
			}
			return nil, context.Cause(ctx)
		}
	}
	return &req.resp, nil
}

// readFor reads responses as the reader for req (nil: the orphan
// goroutine) until req's is in (for the orphan: until the response being
// read is in and the next command's session is there), then passes the
// role on. It returns false if req's session gave up meanwhile and left
// the role to the orphan. c.mu is held on entry and on return.
func (c *muxConn) readFor(ctx context.Context, req *muxRequest) bool {
	if req != nil {
		// A cancellation that runs after the turn ends finds another
		// reader (or none) and does nothing.
		if sc, ok := ctx.(*stmtCtx); ok {
			sc.w.watchMux(ctx, c, req)
			defer sc.w.unwatchMux()
		} else if ctx.Done() != nil {
			defer context.AfterFunc(ctx, func() { c.interrupt(req) })()
		}
	}
	defer func() {
		if c.interrupted {
			c.interrupted = false
			c.bc.nc.SetReadDeadline(time.Time{})
		}
	}()
	for {
		switch {
		case c.broken != nil:
			// fail finished every request.
			c.reader, c.orphan = nil, false
			return req == nil || req.finished
		case req != nil && req.finished:
			c.passRole()
			return true
		case req == nil && !c.parsing && (len(c.queue) == 0 || !c.queue[0].gone):
			c.passRole()
			return true
		case req != nil && ctx.Err() != nil:
			// The session gave up while reading: the orphan goes on.
			req.gone = true
			c.reader, c.orphan = nil, true
			go c.orphanRead()
			return false
		}
		if !c.parsing {
			c.parse = muxParse{req: c.queue[0]}
			c.parsing = true
		}
		ps := &c.parse
		c.mu.Unlock()
		done, err := c.advance(ps)
		c.mu.Lock()
		if c.broken != nil {
			continue
		}
		if err != nil {
			var ne net.Error
			if c.interrupted && errors.As(err, &ne) && ne.Timeout() && !c.bc.wc.MidPacket() {
				// Stopped at a packet boundary for a session that gave
				// up: the next reader goes on from there.
				c.interrupted = false
				c.bc.nc.SetReadDeadline(time.Time{})
				continue
			}
			c.failLocked(err)
			continue
		}
		if !done {
			continue
		}
		r := ps.req
		c.queue[0] = nil
		c.queue = c.queue[1:]
		r.resp, r.finished = ps.resp, true
		c.parse, c.parsing = muxParse{}, false
		if r != req && !r.gone {
			signal(r)
		}
	}
}

// interrupt stops req's session reading c (its statement was cancelled):
// a read deadline in the past ends the read under way.
func (c *muxConn) interrupt(req *muxRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reader == req && !c.interrupted && c.broken == nil {
		c.interrupted = true
		c.bc.nc.SetReadDeadline(time.Unix(1, 0))
	}
}

// passRole ends the current reader's turn: the session of the next
// command reads, or the orphan goroutine when that session has left or a
// response is half read. c.mu is held.
func (c *muxConn) passRole() {
	c.reader, c.orphan = nil, false
	if c.broken != nil || len(c.queue) == 0 {
		return
	}
	if next := c.queue[0]; !c.parsing && !next.gone {
		c.reader = next
		signal(next)
		return
	}
	c.orphan = true
	go c.orphanRead()
}

// orphanRead reads for sessions that left: the response being read, and
// those of commands whose sessions have left, until a waiting session's
// command is next.
func (c *muxConn) orphanRead() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.readFor(context.Background(), nil)
}

func signal(r *muxRequest) {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// fail breaks the connection: every statement waiting on it runs again on
// a pooled connection.
func (c *muxConn) fail(err error) {
	c.mu.Lock()
	c.failLocked(err)
	c.mu.Unlock()
}

// failLocked is fail with c.mu held.
func (c *muxConn) failLocked(err error) {
	if c.broken != nil {
		return
	}
	c.broken = err
	c.bc.close()
	for _, r := range c.queue {
		r.resp, r.finished = muxResponse{err: err, lost: true}, true
		signal(r)
	}
	c.queue = nil
	// A reader may be in advance now: it finds broken when it returns;
	// parse is its until then.
	c.parsing = false
}

// advance reads the next packet of ps's response; done: the response is
// complete. An error return is the connection's failure (it is out of
// step) or a read deadline; a backend error is in the response.
func (c *muxConn) advance(ps *muxParse) (done bool, err error) {
	wc := c.bc.wc
	if ps.phase == phaseFirst {
		wc.SetSeq(1)
	}
	p, err := wc.ReadPacket()
	if err != nil {
		return false, err
	}
	r := &ps.resp
	switch ps.phase {
	case phaseFirst:
		if ps.req.cmd == muxPrepare {
			if wire.IsErr(p) {
				r.err = wire.ParseErr(p)
				return true, nil
			}
			if r.prep, err = wire.ParsePrepareOK(p); err != nil {
				return false, err
			}
			// The definitions are skipped: the execute's response has
			// the columns.
			if r.prep.Params > 0 {
				ps.left += r.prep.Params + 1
			}
			if r.prep.Columns > 0 {
				ps.left += r.prep.Columns + 1
			}
			ps.phase = phaseSkip
			return ps.left == 0, nil
		}
		switch {
		case len(p) == 0:
			return false, wire.ErrMalformed
		case wire.IsOK(p):
			ok, err := wire.ParseOK(p, false)
			if err != nil {
				return false, err
			}
			r.ok, r.status, r.warns = ok, ok.Status, ok.Warnings
			return true, c.single(r.status)
		case wire.IsErr(p):
			r.err = wire.ParseErr(p)
			return true, nil
		case wire.IsLocalInfile(p):
			return false, errors.New("multiplex: LOCAL INFILE request")
		}
		n, _, _, ok := wire.ReadLenEncInt(p)
		if !ok || n == 0 {
			return false, wire.ErrMalformed
		}
		r.columns = make([][]byte, 0, n)
		ps.phase, ps.left = phaseColumns, int(n)
		return false, nil
	case phaseSkip:
		ps.left--
		return ps.left == 0, nil
	case phaseColumns:
		col, err := c.keep(ps, p)
		if err != nil {
			return false, err
		}
		r.columns = append(r.columns, col)
		if ps.left--; ps.left == 0 {
			ps.phase = phaseColEOF
		}
		return false, nil
	case phaseColEOF:
		if !wire.IsEOF(p) {
			return false, fmt.Errorf("%w: no EOF after column definitions", wire.ErrMalformed)
		}
		ps.phase = phaseRows
		return false, nil
	}
	// phaseRows
	switch {
	case wire.IsEOF(p):
		r.warns, r.status = wire.ParseEOF(p)
		return true, c.single(r.status)
	case wire.IsErr(p):
		r.err = wire.ParseErr(p)
		r.rows = nil
		return true, nil
	}
	row, err := c.keep(ps, p)
	if err != nil {
		return false, err
	}
	r.rows = append(r.rows, row)
	return false, nil
}

// keep copies a packet of a response, within the budget of one response.
func (c *muxConn) keep(ps *muxParse, p []byte) ([]byte, error) {
	ps.size += int64(len(p)) + 32
	if ps.size > c.set.budget {
		return nil, fmt.Errorf("multiplex: a response over %d bytes", c.set.budget)
	}
	return append([]byte(nil), p...), nil
}
