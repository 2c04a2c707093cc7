package proxy

import (
	"context"
	"errors"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/proxy/internal/sqlarg"
	"github.com/shardflake/shardflake/proxy/internal/wire"
)

// The statements prepared on a shared connection (multiplex.go), for the
// clients' COM_STMT_EXECUTE: one per connection and SQL text.

// appendClose queues COM_STMT_CLOSE of statement id; it goes out with
// the next write (the server does not answer it). c.mu must be held.
func (c *muxConn) appendClose(id uint32) {
	c.pending, _ = wire.AppendPacket(c.pending, 0, func(b []byte) ([]byte, error) { return wire.AppendStmtClose(b, id), nil })
}

// errMuxNoStmt says a shared connection has no prepared statement for an
// SQL text and will not prepare one: the backend cannot prepare it, or
// answered the prepare with an error (which the normal path then reports
// as it does), or the connection holds maxBackendStmts already. A client's
// COM_STMT_EXECUTE then runs on a pooled connection, a text query as text
// on the shared connection.
var errMuxNoStmt = errors.New("multiplex: no prepared statement")

// stmt returns the statement prepared on c for sql, preparing it on
// first use. errMuxNoStmt: see there; errMuxFallback: the prepare was
// not answered in time or the connection failed, and the statement runs
// on a pooled connection.
func (c *muxConn) stmt(ctx context.Context, sql string, timer **time.Timer) (*muxStmt, error) {
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
		return nil, errMuxNoStmt
	case st != nil:
		return st, nil
	case full:
		return nil, errMuxNoStmt
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
	answered, err := c.await(ctx, req, timer)
	if !answered {
		// The statement is registered (or closed) when the response
		// comes, for the sessions after.
		go func() {
			<-req.done
			c.prepared(sql, gen, &req.resp)
		}()
		if err == nil {
			err = errMuxFallback
		}
		return nil, err
	}
	return c.prepared(sql, gen, &req.resp)
}

// prepared records the statement that a COM_STMT_PREPARE of sql under
// schema generation gen prepared, r its response.
func (c *muxConn) prepared(sql string, gen uint64, r *muxResponse) (*muxStmt, error) {
	if r.lost {
		return nil, errMuxFallback
	}
	if r.err != nil {
		if cannotPrepare(r.err) {
			c.mu.Lock()
			if c.stmts == nil {
				c.stmts = map[string]*muxStmt{}
			}
			c.stmts[sql] = &muxStmt{unsupported: true}
			c.mu.Unlock()
		}
		return nil, errMuxNoStmt
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
	st := &muxStmt{id: r.prep.StmtID, params: r.prep.Params, textExact: r.exact}
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
