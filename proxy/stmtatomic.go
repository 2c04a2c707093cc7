package proxy

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/router"
)

// stmtSavepoint is the backend savepoint a multi-route write inside a
// transaction rolls back to when it fails. Clients cannot make a
// savepoint of that name through the proxy (savepoint.go).
const stmtSavepoint = "shardflake_stmt"

// needsGuard reports whether a statement must be made atomic by the
// proxy: a write (INSERT, REPLACE, UPDATE, DELETE) with several routes.
// MariaDB makes each statement atomic on its own server; a write split
// into several backend statements is atomic only if the proxy makes it
// so. A single route costs nothing extra.
func needsGuard(plan *router.Plan) bool {
	switch plan.Kind {
	case router.KindInsert, router.KindUpdate, router.KindDelete:
		return len(plan.Routes) > 1
	}
	return false
}

// stmtGuard makes one multi-route write all-or-nothing, as MySQL makes a
// statement. It is the statement's connSource: begin takes every
// connection the execution will ask for up front and, on all of them at
// once,
//
//   - in autocommit mode: START TRANSACTION; finish then COMMITs all of
//     them when every route succeeded and ROLLBACKs all when any failed;
//   - inside a transaction: SAVEPOINT; finish ROLLBACKs TO it on every
//     connection when a route failed, so the failed statement undoes only
//     itself and the transaction goes on, as in MySQL.
//
// The commits of several data sources are still separate: if a COMMIT
// itself fails (the server went away between the statement and its
// commit), the data sources committed before stay committed and the error
// names them. A statement error (1062, 1406, a trigger's SIGNAL) leaves
// nothing behind.
type stmtGuard struct {
	s     *Session
	inner connSource
	inTxn bool

	byDS  map[string][]*backendConn
	conns []*backendConn // every connection taken, in data-source order
	// xa: in transactionMode xa, an autocommit statement over several
	// data sources commits with XA: conns[0] coordinates, the others
	// are XA branches (xa.go).
	xa *xaTxn
}

func newStmtGuard(s *Session, inner connSource, inTxn bool) *stmtGuard {
	return &stmtGuard{s: s, inner: inner, inTxn: inTxn, byDS: map[string][]*backendConn{}}
}

// atomically runs run as one all-or-nothing write: on a stmtGuard over
// src that takes the connections plan needs before run and ends their
// transactions (or savepoints) with run's error after it.
func (s *Session) atomically(ctx context.Context, plan *router.Plan, src connSource, inTxn bool, run func(conns connSource) (result, error)) (result, error) {
	guard := newStmtGuard(s, src, inTxn)
	var res result
	err := guard.begin(ctx, plan)
	if err == nil {
		res, err = run(guard)
	}
	return res, guard.finish(err)
}

// begin takes the connections plan's execution will use (one per data
// source, guardConns, in data-source name order) and starts the
// statement's transaction or savepoint on each. On error the caller
// still calls finish.
func (g *stmtGuard) begin(ctx context.Context, plan *router.Plan) error {
	order := make([]string, 0, len(plan.Routes))
	for _, r := range plan.Routes {
		order = append(order, r.DataSource)
	}
	slices.Sort(order)
	order = slices.Compact(order)
	for _, ds := range order {
		bcs, err := g.inner.acquire(ctx, ds, guardConns)
		if err != nil {
			return err
		}
		g.byDS[ds] = bcs
		for _, bc := range bcs {
			if !slices.Contains(g.conns, bc) {
				g.conns = append(g.conns, bc)
			}
		}
	}
	sql := "START TRANSACTION"
	if g.inTxn {
		sql = "SAVEPOINT " + stmtSavepoint
	}
	if !g.inTxn && len(order) > 1 && g.s.xaMode() && len(g.s.state.tableLocks) == 0 {
		if err := g.s.srv.xa.ensureTable(ctx, g.conns[0].pool); err != nil {
			return err
		}
		gtrid, err := g.s.srv.xa.newGtrid(g.conns[0].pool.name)
		if err != nil {
			return err
		}
		g.xa = &xaTxn{gtrid: gtrid, coord: g.conns[0], coordWrote: true}
		for i, bc := range g.conns[1:] {
			g.xa.branches = append(g.xa.branches, &xaBranch{bc: bc, bqual: bc.pool.name + "." + strconv.Itoa(i+1), wrote: true})
		}
	}
	errs := make([]error, len(g.conns))
	g.eachIndexed(func(i int, bc *backendConn) {
		if g.xa != nil && i > 0 {
			_, errs[i] = bc.exec("XA START " + xid(g.xa.gtrid, g.xa.branches[i-1].bqual))
			return
		}
		_, errs[i] = bc.exec(g.beginSQL(bc, sql))
	})
	return errors.Join(errs...)
}

// A multi-route write takes one connection from each data source it
// writes on: its routes there run one after the other in one backend
// transaction, as inside a client's transaction (and as ShardingSphere's
// default of one connection per query, and Vitess's one per shard, run
// them). On a connection per physical table each route would be a
// transaction of its own, holding its row locks until the proxy commits
// them all: two statements over the same rows in the other order (two
// jobs updating one table, two workers upserting or inserting the same
// keys) could each hold a data node's rows the other waits for, on one
// server that sees no deadlock (the cycle passes through the proxy),
// until innodb_lock_wait_timeout failed both with 1205 after 50 s,
// where one MariaDB runs them one after the other. On one connection
// the second waits for the first, or the server sees the cycle and
// answers 1213 at once. LOAD DATA keeps its lanes (loaddata_lanes.go).
const guardConns = 1

// acquire hands out the connections begin took.
func (g *stmtGuard) acquire(ctx context.Context, ds string, n int) ([]*backendConn, error) {
	bcs, ok := g.byDS[ds]
	if !ok {
		return nil, &InternalError{Msg: "statement guard: no connection taken for data source " + ds}
	}
	return bcs, nil
}

// release keeps the connection: finish ends its transaction first.
func (g *stmtGuard) release(*backendConn) {}

// finish ends the statement's backend transactions (or savepoints) and
// gives the connections back; err is the statement's error, and the
// result is the error the client should see.
func (g *stmtGuard) finish(err error) error {
	defer func() {
		g.endLocked()
		for _, bc := range g.conns {
			g.inner.release(bc)
		}
	}()
	if g.inTxn {
		if err != nil {
			g.rollbackToSavepoint(err)
		}
		return err
	}
	if g.xa != nil {
		if err != nil {
			g.s.srv.xa.rollback(g.xa)
			return err
		}
		info, err := g.s.srv.xa.commit(context.Background(), g.xa)
		if info != "" {
			g.s.log.Warn(info)
		}
		return err
	}
	if err != nil {
		g.each(func(bc *backendConn) {
			if bc.broken {
				return // closing it rolls it back
			}
			if _, rerr := bc.exec("ROLLBACK"); rerr != nil {
				bc.broken = true
				g.s.log.Warn("rollback of a failed statement failed", "datasource", bc.pool.name, "err", errLine(rerr))
			}
		})
		return err
	}
	return g.commit()
}

// commit commits every connection at once. If one fails, the others
// have committed or will: the error names those that did.
func (g *stmtGuard) commit() error {
	errs := make([]error, len(g.conns))
	g.eachIndexed(func(i int, bc *backendConn) {
		if _, err := bc.exec("COMMIT"); err != nil {
			errs[i] = err
			if !bc.broken {
				// A connection whose COMMIT failed is in no known state.
				bc.broken = true
			}
		}
	})
	var failed string
	var cause error
	var committed []string
	for i, bc := range g.conns {
		switch {
		case errs[i] != nil && cause == nil:
			failed, cause = bc.pool.name, errs[i]
		case errs[i] == nil && !slices.Contains(committed, bc.pool.name):
			committed = append(committed, bc.pool.name)
		}
	}
	if cause == nil {
		return nil
	}
	committed = slices.DeleteFunc(committed, func(ds string) bool { return ds == failed })
	g.s.log.Error("a multi-route statement committed on some data sources only", "failed", failed, "committed", committed, "err", errLine(cause))
	return &CommitError{DataSource: failed, Committed: committed, Err: cause}
}

// rollbackToSavepoint undoes a failed statement inside a transaction on
// every connection it reached. A connection where that fails is marked
// broken: the session then rolls the whole transaction back (see
// afterTxnStatement), which is also what a deadlock does.
func (g *stmtGuard) rollbackToSavepoint(cause error) {
	var my *mysql.MyError
	if errors.As(cause, &my) && my.Code == mysql.ER_LOCK_DEADLOCK {
		return // the backend rolled its transaction back; the session ends it
	}
	g.each(func(bc *backendConn) {
		if bc.broken {
			return
		}
		if _, err := bc.exec("ROLLBACK TO SAVEPOINT " + stmtSavepoint); err != nil {
			bc.broken = true
			g.s.log.Warn("cannot undo a failed statement; rolling the transaction back", "datasource", bc.pool.name, "err", errLine(err))
		}
	})
}

// each runs fn on every connection, in parallel when there are several
// (each is a round trip).
func (g *stmtGuard) each(fn func(bc *backendConn)) {
	g.eachIndexed(func(_ int, bc *backendConn) { fn(bc) })
}

func (g *stmtGuard) eachIndexed(fn func(i int, bc *backendConn)) {
	if len(g.conns) == 1 {
		fn(0, g.conns[0])
		return
	}
	var wg sync.WaitGroup
	for i, bc := range g.conns {
		wg.Go(func() { fn(i, bc) })
	}
	wg.Wait()
}
