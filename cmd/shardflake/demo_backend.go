package main

import (
	"context"
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
type serialBackend struct {
	mysql.Handler
	turn chan struct{} // holds one token while a connection runs

	mu      sync.Mutex
	holder  uint32 // the connection holding the turn, if holding
	holding bool
}

func newSerialBackend(h mysql.Handler) (mysql.Handler, error) {
	return &serialBackend{Handler: h, turn: make(chan struct{}, 1)}, nil
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

func (b *serialBackend) ComQuery(ctx context.Context, c *mysql.Conn, query string, callback mysql.ResultSpoolFn) error {
	if err := b.enter(ctx, c); err != nil {
		return err
	}
	defer b.leave(c)
	return b.Handler.ComQuery(ctx, c, query, callback)
}

func (b *serialBackend) ComMultiQuery(ctx context.Context, c *mysql.Conn, query string, callback mysql.ResultSpoolFn) (string, error) {
	if err := b.enter(ctx, c); err != nil {
		return "", err
	}
	defer b.leave(c)
	return b.Handler.ComMultiQuery(ctx, c, query, callback)
}

func (b *serialBackend) ComPrepare(ctx context.Context, c *mysql.Conn, query string, prepare *mysql.PrepareData) ([]*querypb.Field, error) {
	if err := b.enter(ctx, c); err != nil {
		return nil, err
	}
	defer b.leave(c)
	return b.Handler.ComPrepare(ctx, c, query, prepare)
}

func (b *serialBackend) ComStmtExecute(ctx context.Context, c *mysql.Conn, prepare *mysql.PrepareData, callback func(*sqltypes.Result) error) error {
	if err := b.enter(ctx, c); err != nil {
		return err
	}
	defer b.leave(c)
	return b.Handler.ComStmtExecute(ctx, c, prepare, callback)
}

func (b *serialBackend) ComResetConnection(c *mysql.Conn) error {
	err := b.Handler.ComResetConnection(c)
	b.leave(c)
	return err
}

// ConnectionClosed ends whatever transaction c held: go-mysql-server
// drops it with the session.
func (b *serialBackend) ConnectionClosed(c *mysql.Conn) {
	b.Handler.ConnectionClosed(c)
	b.release(c)
}
