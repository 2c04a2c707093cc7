//go:build demo

package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"time"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
)

// demoLockWait is how long a statement on an embedded backend waits for
// another connection's statement or transaction there to end before it
// fails with 1205, as InnoDB's innodb_lock_wait_timeout would.
const demoLockWait = 10 * time.Second

// serialBackend runs one embedded backend's statements one at a time,
// and a transaction's statements as one unit. go-mysql-server's memory
// tables copy every table a statement reads into the session and put the
// copies back when it commits, so two connections working on one table at
// once lose each other's writes: four clients inserting concurrently
// through the demo lost a quarter of their acknowledged rows. Holding the
// backend from a statement's start to its end (or, inside a transaction,
// to the transaction's end) makes each commit see every earlier one.
//
// A statement's results are gathered while it holds the backend and sent
// after it let go: the proxy reads a scatter's routes on several
// connections to one backend at once, and a route whose rows filled the
// socket would otherwise hold the backend while the next route waits for
// it.
type serialBackend struct {
	mysql.Handler
	turn chan struct{} // holds one token while a connection runs

	mu       sync.Mutex
	holder   uint32 // the connection holding the turn, if holding
	holding  bool
	journals map[uint32]*journal // open transactions, for savepoints (demo_savepoint.go)
}

func newSerialBackend(h mysql.Handler) (mysql.Handler, error) {
	return &serialBackend{Handler: h, turn: make(chan struct{}, 1), journals: map[uint32]*journal{}}, nil
}

// enter takes the backend for c unless c already holds it (an open
// transaction).
func (b *serialBackend) enter(ctx context.Context, c *mysql.Conn) error {
	b.mu.Lock()
	held := b.holding && b.holder == c.ConnectionID
	b.mu.Unlock()
	if held {
		return nil
	}
	t := time.NewTimer(demoLockWait)
	defer t.Stop()
	select {
	case b.turn <- struct{}{}:
	case <-t.C:
		return mysql.NewSQLError(mysql.ERLockWaitTimeout, "HY000", "Lock wait timeout exceeded; try restarting transaction (the demo's in-memory backend runs one transaction at a time)")
	case <-ctx.Done():
		return ctx.Err()
	}
	b.mu.Lock()
	b.holder, b.holding = c.ConnectionID, true
	b.mu.Unlock()
	return nil
}

// leave gives the backend back unless c is inside a transaction.
func (b *serialBackend) leave(c *mysql.Conn) {
	if c.StatusFlags&uint16(mysql.ServerInTransaction) != 0 {
		return
	}
	b.release(c)
}

func (b *serialBackend) release(c *mysql.Conn) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.holding && b.holder == c.ConnectionID {
		b.holding = false
		<-b.turn
	}
}

// spooled is one result a statement produced, kept until it let go of
// the backend.
type spooled struct {
	res  *sqltypes.Result
	more bool
}

// keep copies res, values included: the handler reuses its buffers after
// the callback returns.
func keep(res *sqltypes.Result) *sqltypes.Result {
	if res == nil {
		return nil
	}
	c := *res
	c.Rows = make([][]sqltypes.Value, len(res.Rows))
	for i, r := range res.Rows {
		row := make([]sqltypes.Value, len(r))
		for j, v := range r {
			if v.IsNull() {
				row[j] = v
				continue
			}
			row[j] = sqltypes.MakeTrusted(v.Type(), bytes.Clone(v.Raw()))
		}
		c.Rows[i] = row
	}
	return &c
}

// run runs one command's statement holding the backend, gathering what
// it sends to callback, and then sends it. replay runs the statement
// again for a rollback to a savepoint (record).
func (b *serialBackend) run(ctx context.Context, c *mysql.Conn, statement func(callback mysql.ResultSpoolFn) error, replay func(context.Context) error, callback mysql.ResultSpoolFn) error {
	if err := b.enter(ctx, c); err != nil {
		return err
	}
	var out []spooled
	err := statement(func(res *sqltypes.Result, more bool) error {
		out = append(out, spooled{keep(res), more})
		return nil
	})
	if err == nil {
		b.record(c, replay)
	}
	b.leave(c)
	if err != nil {
		return err
	}
	for _, r := range out {
		if err := callback(r.res, r.more); err != nil {
			return err
		}
	}
	return nil
}

func (b *serialBackend) ComQuery(ctx context.Context, c *mysql.Conn, query string, callback mysql.ResultSpoolFn) error {
	if sessionOnly(query) {
		return b.Handler.ComQuery(ctx, c, query, callback)
	}
	if verb, name, ok := parseSavepoint(query); ok {
		if err := b.savepoint(ctx, c, verb, name); err != nil {
			return err
		}
		return callback(&sqltypes.Result{}, false)
	}
	return b.run(ctx, c, func(cb mysql.ResultSpoolFn) error { return b.Handler.ComQuery(ctx, c, query, cb) }, b.replayQuery(c, query, false), callback)
}

// sessionOnly reports whether query is a SET of session variables that
// reads no table (the proxy's connection baseline, its probe's
// character_set_results): it runs without the backend, as a prepare does.
func sessionOnly(query string) bool {
	q := strings.ToUpper(strings.TrimSpace(query))
	return strings.HasPrefix(q, "SET ") && !strings.Contains(q, "SELECT") && !strings.Contains(q, "TRANSACTION")
}

func (b *serialBackend) ComMultiQuery(ctx context.Context, c *mysql.Conn, query string, callback mysql.ResultSpoolFn) (string, error) {
	first, after := firstStatement(query)
	if verb, name, ok := parseSavepoint(first); ok {
		if err := b.savepoint(ctx, c, verb, name); err != nil {
			return "", err
		}
		return after, callback(&sqltypes.Result{}, after != "")
	}
	var rest string
	err := b.run(ctx, c, func(cb mysql.ResultSpoolFn) error {
		var err error
		rest, err = b.Handler.ComMultiQuery(ctx, c, query, cb)
		return err
	}, b.replayQuery(c, query, true), callback)
	return rest, err
}

// ComPrepare runs without the backend: a prepare reads no rows and
// commits nothing, so it cannot undo another connection's writes. The
// proxy prepares a route on a connection of its own to learn its
// columns' collations before it merges rows (probe.go), also while its
// statement's transaction holds the backend on another connection; held
// there, the prepare waited for that transaction, which waited for it.
func (b *serialBackend) ComPrepare(ctx context.Context, c *mysql.Conn, query string, prepare *mysql.PrepareData) ([]*querypb.Field, error) {
	return b.Handler.ComPrepare(ctx, c, query, prepare)
}

func (b *serialBackend) ComStmtExecute(ctx context.Context, c *mysql.Conn, prepare *mysql.PrepareData, callback func(*sqltypes.Result) error) error {
	return b.run(ctx, c, func(cb mysql.ResultSpoolFn) error {
		return b.Handler.ComStmtExecute(ctx, c, prepare, func(res *sqltypes.Result) error { return cb(res, false) })
	}, b.replayExecute(c, prepare), func(res *sqltypes.Result, _ bool) error { return callback(res) })
}

func (b *serialBackend) ComResetConnection(c *mysql.Conn) error {
	err := b.Handler.ComResetConnection(c)
	b.forget(c)
	b.leave(c)
	return err
}

// ConnectionClosed ends whatever transaction c held: go-mysql-server
// drops it with the session.
func (b *serialBackend) ConnectionClosed(c *mysql.Conn) {
	b.Handler.ConnectionClosed(c)
	b.forget(c)
	b.release(c)
}
