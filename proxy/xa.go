package proxy

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/shardflake/shardflake/config"
)

// Atomic commits across data sources (server.transactionMode: xa).
//
// A transaction's first data source (the coordinator) runs a plain
// backend transaction, exactly as in local mode, so a transaction that
// stays on one data source costs nothing extra. Every further data source
// it touches joins as an XA branch, XA START 'gtrid','bqual',xaFormatID.
// COMMIT then
//
//  1. ends the XA branches and prepares those that wrote (XA END, XA
//     PREPARE, in parallel); a branch that only read commits one phase;
//  2. writes the commit decision, a row of shardflake_xa_decisions, inside
//     the coordinator's own transaction and COMMITs it: that one local
//     commit makes the coordinator's writes and the decision durable
//     together, and is the point of no return;
//  3. commits the prepared branches (XA COMMIT, in parallel); the decision
//     is deleted by recovery's next pass, batched.
//
// A failure before 2 rolls everything back and the client gets the
// error. A failure after 2 answers OK with a warning: recovery (xa_recover.go)
// commits the branches left prepared. Recovery rolls back a prepared
// branch whose transaction has no decision by inserting a 'rollback' row
// first: the decision's primary key makes the owner's commit and
// recovery's rollback mutually exclusive, whatever the timing.
//
// When at most one data source wrote, the writer commits one phase and
// no decision is written.

// xaFormatID is the formatID of shardflake's XA branches ("SF").
const xaFormatID = 0x5346

// xaDecisions is the decision table's name on each data source that
// coordinates a transaction.
const xaDecisions = "shardflake_xa_decisions"

const xaDecisionsDDL = "CREATE TABLE IF NOT EXISTS " + xaDecisions + ` (
  gtrid VARBINARY(64) NOT NULL PRIMARY KEY,
  decision ENUM('commit','rollback') NOT NULL,
  created TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)
) ENGINE=InnoDB COMMENT='shardflake XA commit decisions'`

// Failpoints: SHARDFLAKE_FAILPOINT names a step of the XA commit at which
// the proxy process kills itself with SIGKILL (tests of recovery).
const (
	failAfterPrepareOne = "after-prepare-one"
	failAfterPrepareAll = "after-prepare-all"
	failAfterDecision   = "after-decision"
	failAfterFirstXA    = "after-first-commit"
	// failLocalAfterFirst: in local mode, after the first data source of
	// several committed (shows what xa prevents).
	failLocalAfterFirst = "local-after-first-commit"
)

// xaCoordinator is a server's XA state: its owner id, the transactions
// in flight, the decision tables known to exist and the counters.
type xaCoordinator struct {
	srv       *Server
	next      atomic.Uint64
	failpoint string

	mu sync.Mutex
	// owner names this process in its gtrids (ownerID): the node's
	// xaNodeLen hex digits, a hash of host and listen address that a
	// restart on the same address keeps, then incarnation, random per
	// process start.
	owner, incarnation string
	inflight           map[string]bool // gtrids this process is committing or running
	tables             map[string]bool // data sources whose decision table exists

	rec *xaRecovery
	// afterDecision, when set, runs once a decision is durable (tests).
	afterDecision func()

	onePhase, twoPhase, rollbacks, pending atomic.Int64
	failHits                               atomic.Int64
}

// xaNodeLen is the length of the node part of an owner id.
const xaNodeLen = 6

func newXACoordinator(srv *Server) *xaCoordinator {
	b := make([]byte, 6)
	rand.Read(b)
	// Until the server listens, the node part is random too.
	x := &xaCoordinator{srv: srv, owner: hex.EncodeToString(b), incarnation: hex.EncodeToString(b[3:]),
		failpoint: os.Getenv("SHARDFLAKE_FAILPOINT"), inflight: map[string]bool{}, tables: map[string]bool{}}
	x.rec = newXARecovery(x)
	return x
}

// setNode names the node by the address the server listens on: a
// proxy restarted on the same host and address recognises the branches
// of its previous incarnation as its own, gone with that process.
func (x *xaCoordinator) setNode(listen string) {
	host, _ := os.Hostname()
	sum := sha256.Sum256([]byte(host + "\x00" + listen))
	x.mu.Lock()
	defer x.mu.Unlock()
	x.owner = hex.EncodeToString(sum[:])[:xaNodeLen] + x.incarnation
}

// ownerID is the owner part of this process's gtrids.
func (x *xaCoordinator) ownerID() string {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.owner
}

// previousIncarnation reports whether owner is an earlier process of
// this node: same host and listen address, another start.
func (x *xaCoordinator) previousIncarnation(owner string) bool {
	own := x.ownerID()
	return len(owner) == len(own) && owner != own && owner[:xaNodeLen] == own[:xaNodeLen]
}

// fail kills the process at the named step when SHARDFLAKE_FAILPOINT
// names it: "step" kills the first time, "step:n" the n-th time.
func (x *xaCoordinator) fail(step string) {
	name, nth, _ := strings.Cut(x.failpoint, ":")
	if name != step {
		return
	}
	n, err := strconv.ParseInt(nth, 10, 64)
	if err != nil {
		n = 1
	}
	if x.failHits.Add(1) == n {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
}

// newGtrid returns a gtrid unique across the fleet:
// sf.<owner>.<counter>.<coordinator data source>.
func (x *xaCoordinator) newGtrid(coord string) (string, error) {
	x.mu.Lock()
	g := "sf." + x.owner + "." + strconv.FormatUint(x.next.Add(1), 36) + "." + coord
	if len(g) > 64 {
		x.mu.Unlock()
		return "", &NotSupportedError{What: "transactionMode xa with data source " + coord + " as coordinator (its name is too long for an XA transaction id: keep data source names under 40 bytes)"}
	}
	x.inflight[g] = true
	x.mu.Unlock()
	x.rec.used.Store(true)
	return g, nil
}

func (x *xaCoordinator) done(gtrid string) {
	x.mu.Lock()
	delete(x.inflight, gtrid)
	x.mu.Unlock()
}

func (x *xaCoordinator) isInflight(gtrid string) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.inflight[gtrid]
}

// parseGtrid splits one of shardflake's gtrids into its owner and
// coordinator data source.
func parseGtrid(g string) (owner, coord string, ok bool) {
	parts := strings.SplitN(g, ".", 4)
	if len(parts) != 4 || parts[0] != "sf" {
		return "", "", false
	}
	return parts[1], parts[3], true
}

// ensureTable creates the decision table on the coordinator's data
// source once per process, on a connection of its own (DDL would commit a
// transaction). p is the data source's pool in the transaction's own
// snapshot: a reload may have removed the data source from the rules in
// force since the transaction began.
func (x *xaCoordinator) ensureTable(ctx context.Context, p *pool) error {
	ds := p.name
	x.mu.Lock()
	ok := x.tables[ds]
	x.mu.Unlock()
	if ok {
		return nil
	}
	bcs, err := p.get(ctx, 1)
	if err != nil {
		return err
	}
	_, err = bcs[0].exec(xaDecisionsDDL)
	p.put(bcs...)
	if err != nil {
		return err
	}
	x.mu.Lock()
	x.tables[ds] = true
	x.mu.Unlock()
	x.rec.wake()
	return nil
}

// xid is an XA transaction id as XA statements write it.
func xid(gtrid, bqual string) string {
	return sqlString(gtrid) + "," + sqlString(bqual) + "," + strconv.Itoa(xaFormatID)
}

// sqlString quotes s as a MariaDB string literal.
func sqlString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\x00", `\0`)
	return "'" + r.Replace(s) + "'"
}

// xaBranch is one XA branch of a transaction.
type xaBranch struct {
	bc       *backendConn
	bqual    string
	wrote    bool
	prepared bool
}

// xaTxn is a transaction with XA branches: the coordinator's plain
// transaction and the branches.
type xaTxn struct {
	gtrid      string
	coord      *backendConn
	coordWrote bool
	branches   []*xaBranch
}

// XAPendingWarning is the OK's info when a transaction's decision is
// durable but a branch could not be committed yet: recovery commits it.
const XAPendingWarning = "XA transaction %s committed; %d branch(es) still pending, recovery completes them"

// XAInDoubtError: the coordinator's COMMIT (the decision) failed with no
// answer, so whether the transaction committed is unknown until recovery
// resolves it by the decision table.
type XAInDoubtError struct {
	Gtrid string
	Err   error
}

func (e *XAInDoubtError) Error() string {
	return fmt.Sprintf("the commit of XA transaction %s is in doubt (the decision's data source did not answer: %v); recovery commits or rolls back every branch by the decision table (SHOW XA TRANSACTIONS)", e.Gtrid, e.Err)
}

func (e *XAInDoubtError) Unwrap() error { return e.Err }

// parallel runs fn for every branch at once.
func (t *xaTxn) parallel(fn func(b *xaBranch) error) []error {
	errs := make([]error, len(t.branches))
	if len(t.branches) == 1 {
		errs[0] = fn(t.branches[0])
		return errs
	}
	var wg sync.WaitGroup
	for i, b := range t.branches {
		wg.Go(func() { errs[i] = fn(b) })
	}
	wg.Wait()
	return errs
}

// xaCode is the MySQL error number of err, 0 if none.
func xaCode(err error) uint16 {
	var my *mysql.MyError
	if errors.As(err, &my) {
		return my.Code
	}
	return 0
}

// rollback ends every branch and the coordinator without committing.
func (x *xaCoordinator) rollback(t *xaTxn) {
	defer x.done(t.gtrid)
	x.rollbacks.Add(1)
	t.parallel(func(b *xaBranch) error {
		if b.bc.broken {
			if b.prepared {
				x.rec.wake() // recovery rolls it back
			}
			return nil // a closed connection rolls an unprepared branch back
		}
		id := xid(t.gtrid, b.bqual)
		if !b.prepared {
			b.bc.exec("XA END " + id)
		}
		if _, err := b.bc.exec("XA ROLLBACK " + id); err != nil && xaCode(err) != mysql.ER_XAER_NOTA {
			b.bc.broken = true
			x.srv.log.Warn("XA ROLLBACK failed; recovery rolls the branch back", "gtrid", t.gtrid, "datasource", b.bc.pool.name, "err", errLine(err))
			x.rec.wake()
		}
		return nil
	})
	if t.coord != nil && !t.coord.broken {
		if _, err := t.coord.exec("ROLLBACK"); err != nil {
			t.coord.broken = true
		}
	}
}

// commit runs the commit protocol; info is the OK's warning text when a
// branch is left pending.
func (x *xaCoordinator) commit(ctx context.Context, t *xaTxn) (info string, err error) {
	if t.writers() <= 1 {
		return "", x.commitOnePhase(t)
	}
	if err := x.ensureTable(ctx, t.coord.pool); err != nil {
		x.rollback(t)
		return "", err
	}
	insertErr, err := x.prepare(t)
	if err != nil {
		return "", err
	}
	x.fail(failAfterPrepareAll)
	if err := x.decide(t, insertErr); err != nil {
		return "", err
	}
	x.fail(failAfterDecision)
	if h := x.afterDecision; h != nil {
		h()
	}
	defer x.done(t.gtrid)
	return x.commitPrepared(t), nil
}

// writers counts the parts of t that wrote: the coordinator's own
// transaction and each branch.
func (t *xaTxn) writers() int {
	writers := 0
	if t.coordWrote {
		writers++
	}
	for _, b := range t.branches {
		if b.wrote {
			writers++
		}
	}
	return writers
}

// prepare is phase one: prepare the writers, commit the readers. The
// decision row is written into the coordinator's transaction meanwhile:
// it counts only once that transaction commits, after every prepare;
// insertErr is that INSERT's error. err is a writer's failure to prepare,
// after which t is rolled back.
func (x *xaCoordinator) prepare(t *xaTxn) (insertErr, err error) {
	inserted := make(chan error, 1)
	go func() {
		_, err := t.coord.exec("INSERT INTO " + xaDecisions + " (gtrid, decision) VALUES (" + sqlString(t.gtrid) + ", 'commit')")
		inserted <- err
	}()
	var prepared atomic.Int32
	errs := t.parallel(func(b *xaBranch) error {
		id := xid(t.gtrid, b.bqual)
		if _, err := b.bc.exec("XA END " + id); err != nil {
			return err
		}
		if !b.wrote {
			if _, err := b.bc.exec("XA COMMIT " + id + " ONE PHASE"); err != nil {
				b.bc.broken = true
				return err
			}
			return nil
		}
		if _, err := b.bc.exec("XA PREPARE " + id); err != nil {
			return err
		}
		b.prepared = true
		if prepared.Add(1) == 1 {
			x.fail(failAfterPrepareOne)
		}
		return nil
	})
	insertErr = <-inserted
	for i, e := range errs {
		if e != nil && t.branches[i].wrote {
			x.rollback(t)
			return insertErr, &CommitError{DataSource: t.branches[i].bc.pool.name, Err: e}
		}
	}
	return insertErr, nil
}

// decide makes the commit decision durable with the coordinator's own
// writes by committing its transaction (insertErr is the decision row's
// INSERT error). When the coordinator does not answer, the outcome is in
// doubt and the prepared branches are left to recovery.
func (x *xaCoordinator) decide(t *xaTxn, insertErr error) error {
	if err := insertErr; err != nil {
		x.rollback(t)
		if xaCode(err) == mysql.ER_DUP_ENTRY {
			err = fmt.Errorf("XA transaction %s was rolled back by recovery before its commit decision: %w", t.gtrid, err)
		}
		return &CommitError{DataSource: t.coord.pool.name, Err: err}
	}
	if _, err := t.coord.exec("COMMIT"); err != nil {
		if xaCode(err) != 0 && !t.coord.broken {
			// The server answered: it did not commit.
			x.rollback(t)
			return &CommitError{DataSource: t.coord.pool.name, Err: err}
		}
		t.coord.broken = true
		// A connection holding a prepared branch can start nothing
		// else: closing it leaves the branch to recovery.
		for _, b := range t.branches {
			if b.prepared {
				b.bc.broken = true
			}
		}
		x.done(t.gtrid)
		x.rec.wake()
		return &XAInDoubtError{Gtrid: t.gtrid, Err: err}
	}
	return nil
}

// commitPrepared is phase two, after the decision: XA COMMIT every
// prepared branch. A branch that fails is left to recovery, and the
// returned info (the OK's warning text) counts them; empty when none.
func (x *xaCoordinator) commitPrepared(t *xaTxn) (info string) {
	var committed atomic.Int32
	errs := t.parallel(func(b *xaBranch) error {
		if !b.prepared {
			return nil
		}
		if _, err := b.bc.exec("XA COMMIT " + xid(t.gtrid, b.bqual)); err != nil && xaCode(err) != mysql.ER_XAER_NOTA {
			b.bc.broken = true
			return err
		}
		if committed.Add(1) == 1 {
			x.fail(failAfterFirstXA)
		}
		return nil
	})
	x.twoPhase.Add(1)
	pending := 0
	for i, e := range errs {
		if e != nil {
			pending++
			x.srv.log.Warn("XA COMMIT failed after the commit decision; recovery commits the branch", "gtrid", t.gtrid, "datasource", t.branches[i].bc.pool.name, "err", errLine(e))
		}
	}
	if pending > 0 {
		x.pending.Add(int64(pending))
		x.rec.wake()
		return fmt.Sprintf(XAPendingWarning, t.gtrid, pending)
	}
	// The decision is no longer needed: recovery deletes it in its next
	// pass, batched, off the client's path.
	x.rec.forget(t.coord.pool.name, t.gtrid)
	return ""
}

// commitOnePhase commits a transaction where at most one data source
// wrote: each part commits on its own (XA COMMIT ... ONE PHASE).
func (x *xaCoordinator) commitOnePhase(t *xaTxn) error {
	defer x.done(t.gtrid)
	x.onePhase.Add(1)
	var coordErr error
	if t.coord != nil {
		if _, err := t.coord.exec("COMMIT"); err != nil {
			t.coord.broken = true
			coordErr = &CommitError{DataSource: t.coord.pool.name, Err: err}
		}
	}
	errs := t.parallel(func(b *xaBranch) error {
		id := xid(t.gtrid, b.bqual)
		if _, err := b.bc.exec("XA END " + id); err != nil {
			b.bc.broken = true
			return err
		}
		if _, err := b.bc.exec("XA COMMIT " + id + " ONE PHASE"); err != nil {
			b.bc.broken = true
			return err
		}
		return nil
	})
	for i, e := range errs {
		if e != nil && t.branches[i].wrote {
			return &CommitError{DataSource: t.branches[i].bc.pool.name, Err: e}
		}
	}
	return coordErr
}

// xaMode reports whether the session's transactions commit with XA.
func (s *Session) xaMode() bool { return s.txnMode == config.TransactionXA }

// isTransactionModeVar reports whether SET name sets the session's
// transaction mode: shardflake_transaction_mode, or ShardingSphere's
// transaction_type.
func isTransactionModeVar(name string) bool {
	return name == "shardflake_transaction_mode" || name == "transaction_type"
}

// transactionModeValue reads SET shardflake_transaction_mode's value:
// 'XA', 'LOCAL' (any case), or DEFAULT for server.transactionMode.
func (s *Session) transactionModeValue(e ast.ExprNode) (config.TransactionMode, error) {
	v, err := restoreExpr(e)
	if err != nil {
		return 0, err
	}
	v = strings.Trim(v, "'`\"")
	if strings.EqualFold(v, "default") {
		return s.srv.rules.Server.TransactionMode, nil
	}
	mode, ok := config.ParseTransactionMode(v)
	if !ok {
		return 0, mysql.NewDefaultError(mysql.ER_WRONG_VALUE_FOR_VAR, "shardflake_transaction_mode", v)
	}
	return mode, nil
}
