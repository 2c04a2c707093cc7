package proxy

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/internal/sqllex"
	"github.com/shardflake/shardflake/router"
)

// txnState is a session's transaction. A transaction pins one backend
// connection per data source it touches, starting a backend transaction
// there on first touch (in the same write as the first statement when
// that is a read); COMMIT commits each data source in turn (those that
// only read together with the one before them, commitParts). That is
// not atomic across data sources (as ShardingSphere's LOCAL transactions):
// if a later commit fails, the earlier ones stay committed, and the error
// says which. server.multiSourceTransactions: reject refuses statements
// that would make one transaction write to a second data source.
type txnState struct {
	active  bool
	conns   map[string]*backendConn
	order   []string        // data sources in the order they joined
	written map[string]bool // data sources the transaction wrote to
	// begin is the statement that starts each backend's part, e.g.
	// "START TRANSACTION READ ONLY".
	begin string
	// isolation is a one-shot SET TRANSACTION ISOLATION LEVEL for the
	// next transaction, "" for none.
	isolation string
	// readOnlyNext is a one-shot SET TRANSACTION READ ONLY (true) or
	// READ WRITE for the next transaction, kept like isolation.
	readOnlyNext bool
	// savepoints are the transaction's savepoint names in the order
	// they were set (savepoint.go).
	savepoints []string
	// xa: the transaction commits its data sources with XA (the
	// session's transactionMode when it began); gtrid is its XA id once
	// a second data source joined as an XA branch (xa.go).
	xa    bool
	gtrid string
}

// inTransaction reports whether the next statement runs inside a
// transaction (BEGIN, or autocommit=0).
func (s *Session) inTransaction() bool { return s.txn.active || !s.autocommit }

// beginTransaction starts a transaction; one that is open is committed
// first, as MySQL does. sql is the statement's text, which alone tells
// WITH CONSISTENT SNAPSHOT (the parser reads it as a plain START
// TRANSACTION).
func (s *Session) beginTransaction(ctx context.Context, st *ast.BeginStmt, sql string) error {
	if s.txn.active {
		if err := s.endTransaction(true); err != nil {
			return err
		}
	}
	// BEGIN releases LOCK TABLES locks, as in MariaDB.
	if len(s.state.tableLocks) > 0 {
		if err := s.unlockTables(); err != nil {
			return err
		}
	}
	begin := beginSQL(st)
	if begin == beginPlain && consistentSnapshot(sql, s.lexMode()) {
		begin = beginSnapshot
	}
	s.startTxn(begin)
	if begin == beginSnapshot && !s.txn.xa {
		return s.openSnapshots(ctx)
	}
	return nil
}

// openSnapshots opens a transaction begun WITH CONSISTENT SNAPSHOT on
// every data source at once, so that each data source's snapshot is
// taken at the statement, as MariaDB takes it, and not at the first read
// there. mydumper starts its threads' transactions so while it holds its
// locks (--lock-all-tables), and mysqldump --single-transaction before
// it reads: what they read afterwards is as of then on every data source.
// In xa mode the data sources after the first join with XA START, which
// takes no snapshot: each is taken at the first read there, as before.
func (s *Session) openSnapshots(ctx context.Context) error {
	for _, ds := range s.srv.rules.DataSourceNames() {
		if _, err := (txnSource{s: s, now: true}).acquire(ctx, ds, 1); err != nil {
			s.endTransaction(false)
			return err
		}
	}
	return nil
}

// consistentSnapshot reports whether sql is START TRANSACTION WITH
// CONSISTENT SNAPSHOT, in any case and with the clause in an executable
// comment (/*!40108 WITH CONSISTENT SNAPSHOT */, mydumper's spelling).
func consistentSnapshot(sql string, mode sqllex.Mode) bool {
	if len(sql) < len(beginSnapshot) {
		// BEGIN, START TRANSACTION: most transactions, not lexed.
		return false
	}
	toks, ok := statementTokens(sql, mode)
	want := []string{"START", "TRANSACTION", "WITH", "CONSISTENT", "SNAPSHOT"}
	if !ok || len(toks) != len(want) {
		return false
	}
	for i, w := range want {
		if !toks[i].word || toks[i].text != w {
			return false
		}
	}
	return true
}

func (s *Session) startTxn(begin string) {
	iso, ro := s.txn.isolation, s.txn.readOnlyNext
	if ro {
		begin = beginReadOnly
	}
	s.txn = txnState{active: true, conns: map[string]*backendConn{}, written: map[string]bool{}, begin: begin, isolation: iso, readOnlyNext: ro}
	// A read-only transaction writes nothing: its parts commit alone.
	s.txn.xa = s.xaMode() && begin != beginReadOnly
}

// readOnly reports whether the transaction is START TRANSACTION READ ONLY.
func (t *txnState) readOnly() bool { return t.begin == beginReadOnly }

const (
	beginReadOnly = "START TRANSACTION READ ONLY"
	beginPlain    = "START TRANSACTION"
	beginSnapshot = "START TRANSACTION WITH CONSISTENT SNAPSHOT"
)

// openPlain and openReadOnly are openSQL's answers when the transaction
// has no isolation level to set and no savepoints.
var (
	openPlain    = []string{beginPlain}
	openReadOnly = []string{beginReadOnly}
)

func beginSQL(st *ast.BeginStmt) string {
	if st == nil {
		return beginPlain
	}
	// TiDB's own options (pessimistic, AS OF) mean nothing to MySQL.
	if st.ReadOnly {
		return beginReadOnly
	}
	return beginPlain
}

// endTransaction commits (commit) or rolls back the open transaction on
// every data source it touched, in the order they joined, and gives the
// connections back. On a failed commit the data sources not yet
// committed are rolled back and the error names what did commit.
func (s *Session) endTransaction(commit bool) error {
	s.settleParts()
	t := s.txn
	s.txn = txnState{isolation: t.isolation, readOnlyNext: t.readOnlyNext}
	if !t.active {
		return nil
	}
	s.txn.isolation, s.txn.readOnlyNext = "", false
	var err error
	// done: the first done parts (in t.order) were sent COMMIT.
	done := 0
	switch {
	case t.gtrid != "":
		err = s.endXA(t, commit)
	case commit:
		done, err = s.commitParts(t)
	default:
		s.rollbackParts(t)
	}
	for i, ds := range t.order {
		bc := t.conns[ds]
		if t.gtrid == "" && commit && i >= done && !bc.broken {
			// After a failed commit, the parts not yet committed.
			if _, rerr := bc.exec("ROLLBACK"); rerr != nil {
				s.log.Warn("rollback failed", "datasource", ds, "err", errLine(rerr))
				bc.broken = true
			}
		}
		if s.state.tableLocks[ds] && !bc.broken {
			if _, err := bc.exec("SET autocommit = 1"); err != nil {
				bc.broken = true
			}
		}
		if s.held.remove(bc) {
			bc.pool.put(bc)
		}
	}
	if commit && err == nil {
		s.readwriteCommitted(t.written)
	}
	return err
}

// commitParts commits a transaction's parts without XA in the order they
// joined, stopping at the first failure (CommitError names the parts
// committed before it): done is how many were sent COMMIT. Parts that
// only read commit in the same round trip as the part before them (their
// COMMITs go out together and the answers are read in order), or together
// when they come first: whether such a part commits or rolls back after
// another's failure changes no data, so the outcome and the error are
// those of committing one after the other. A part that wrote starts a
// round trip of its own: it commits only once those before it did.
func (s *Session) commitParts(t txnState) (done int, err error) {
	var committed []string
	for done < len(t.order) {
		end := done + 1
		for end < len(t.order) && !t.written[t.order[end]] {
			end++
		}
		wave := t.order[done:end]
		var small [4]error
		errs := small[:0]
		if len(wave) > len(small) {
			errs = make([]error, 0, len(wave))
		}
		errs = commitWave(t, wave, errs)
		done = end
		for i, ds := range wave {
			if errs[i] != nil {
				return done, &CommitError{DataSource: ds, Committed: committed, Err: errs[i]}
			}
			committed = append(committed, ds)
		}
		if len(t.order) > 1 && len(committed) == len(wave) {
			s.srv.xa.fail(failLocalAfterFirst)
		}
	}
	return done, nil
}

// commitWave sends COMMIT to each part of wave, then reads the answers in
// turn; it appends part i's failure (or nil) to errs as errs[i].
func commitWave(t txnState, wave []string, errs []error) []error {
	errs = errs[:len(wave)]
	if len(wave) == 1 {
		_, errs[0] = t.conns[wave[0]].exec("COMMIT")
		return errs
	}
	for i, ds := range wave {
		errs[i] = t.conns[ds].send(mysql.COM_QUERY, "COMMIT")
	}
	for i, ds := range wave {
		if errs[i] == nil {
			_, errs[i] = t.conns[ds].finish()
		}
	}
	return errs
}

// rollbackParts rolls back every part of a transaction without XA whose
// connection is not broken, the ROLLBACKs sent together and the answers
// read in turn; a part whose rollback fails is marked broken (its
// connection is closed, which rolls it back).
func (s *Session) rollbackParts(t txnState) {
	var sent []string
	for _, ds := range t.order {
		bc := t.conns[ds]
		if bc.broken {
			continue
		}
		if err := bc.send(mysql.COM_QUERY, "ROLLBACK"); err != nil {
			s.log.Warn("rollback failed", "datasource", ds, "err", errLine(err))
			continue
		}
		sent = append(sent, ds)
	}
	for _, ds := range sent {
		bc := t.conns[ds]
		if _, err := bc.finish(); err != nil {
			s.log.Warn("rollback failed", "datasource", ds, "err", errLine(err))
			bc.broken = true
		}
	}
}

// implicitCommit commits an open transaction before a statement that
// MySQL runs outside one (DDL, SET autocommit=1, BEGIN).
func (s *Session) implicitCommit() error {
	if !s.txn.active {
		return nil
	}
	return s.endTransaction(true)
}

// checkMultiSource applies multiSourceTransactions: reject to a write
// that reaches data sources dss inside a transaction.
func (s *Session) checkMultiSource(plan *router.Plan) error {
	if s.srv.rules.Server.MultiSourceTransactions != config.MultiSourceReject || plan.Kind == router.KindSelect {
		return nil
	}
	var first string
	for ds := range s.txn.written {
		first = ds
	}
	for _, r := range plan.Routes {
		if first == "" {
			first = r.DataSource
			continue
		}
		if r.DataSource != first {
			return &MultiSourceError{InUse: first, Wanted: r.DataSource}
		}
	}
	return nil
}

// afterTxnStatement ends a transaction that can no longer go on: a
// pinned connection broke, or a backend rolled its part back (deadlock).
//
// A deadlock is MySQL's: the client is told 1213 and knows the
// transaction is gone. A broken backend connection lost that data
// source's part of the transaction, so the others are rolled back too,
// and the client connection ends after this statement's error, as with
// one MySQL whose connection drops: a client that went on and sent COMMIT
// would otherwise be told OK for writes that no longer exist.
func (s *Session) afterTxnStatement(err error) {
	s.settleParts()
	var my *mysql.MyError
	deadlock := errors.As(err, &my) && my.Code == mysql.ER_LOCK_DEADLOCK
	broken := false
	for _, bc := range s.txn.conns {
		broken = broken || bc.broken
	}
	if deadlock || broken {
		s.log.Info("transaction rolled back", "err", errLine(err), "closing_client", broken && !deadlock)
		s.endTransaction(false)
		if broken && !deadlock {
			s.quit = true
		}
	}
}

// txnSource gives a statement inside a transaction its data sources'
// pinned connections, starting the backend transaction on first touch.
type txnSource struct {
	s     *Session
	write bool
	// now opens the backend transaction before acquire returns, also
	// for a read (openSnapshots).
	now bool
}

func (t txnSource) acquire(ctx context.Context, ds string, n int) ([]*backendConn, error) {
	s := t.s
	if bc, ok := s.txn.conns[ds]; ok {
		if t.write && bc.deferred != nil {
			// Opened for a read of this statement that never ran: a
			// write runs after its opening, not beside it.
			open := bc.deferred
			bc.deferred = nil
			for _, sql := range open {
				if _, err := bc.exec(sql); err != nil {
					bc.prefixFailed = true
					if bc.inTransaction() {
						bc.exec("ROLLBACK")
					}
					return nil, err
				}
			}
		}
		if t.write {
			s.txn.written[ds] = true
		}
		if s.state.pinNext && !bc.pinned {
			s.pin(bc)
		}
		return []*backendConn{bc}, nil
	}
	bcs, err := poolSource{s}.acquire(ctx, ds, 1)
	if err != nil {
		return nil, err
	}
	bc := bcs[0]
	if !t.write && !t.now && !s.txn.xa && !s.state.tableLocks[ds] {
		// A read: what opens the transaction here goes out in the same
		// write as the statement, and its answers are read before the
		// statement's (readPrefix). A refusal reaches the client as if
		// it had run alone, and afterTxnStatement gives the connection
		// back (settleParts). A write never runs that way: should the
		// START TRANSACTION fail, it would have run under autocommit.
		bc.deferred = s.openSQL(nil)
		s.txn.conns[ds] = bc
		s.txn.order = append(s.txn.order, ds)
		return bcs, nil
	}
	if s.txn.isolation != "" {
		if _, err := bc.exec("SET TRANSACTION ISOLATION LEVEL " + s.txn.isolation); err != nil {
			poolSource{s}.release(bc)
			return nil, err
		}
	}
	// START TRANSACTION would release the connection's LOCK TABLES
	// locks: under them (autocommit=0) the transaction is the backend's
	// own autocommit=0 one, as on one server (lock.go).
	begin := s.txn.begin
	if s.state.tableLocks[ds] {
		begin = "SET autocommit = 0"
	} else if s.txn.xa && len(s.txn.order) > 0 {
		// A second data source: the transaction becomes an XA one,
		// coordinated by the first data source's plain transaction.
		if s.txn.gtrid == "" {
			coord := s.txn.order[0]
			cp, err := s.srv.pool(coord, false)
			if err == nil {
				err = s.srv.xa.ensureTable(ctx, cp)
			}
			if err != nil {
				poolSource{s}.release(bc)
				return nil, err
			}
			g, err := s.srv.xa.newGtrid(coord)
			if err != nil {
				poolSource{s}.release(bc)
				return nil, err
			}
			s.txn.gtrid = g
		}
		begin = "XA START " + xid(s.txn.gtrid, ds)
	}
	if _, err := bc.exec(begin); err != nil {
		poolSource{s}.release(bc)
		return nil, err
	}
	if err := s.joinSavepoints(bc); err != nil {
		if strings.HasPrefix(begin, "XA ") {
			bc.exec("XA END " + xid(s.txn.gtrid, ds))
			bc.exec("XA ROLLBACK " + xid(s.txn.gtrid, ds))
		} else {
			bc.exec("ROLLBACK")
		}
		poolSource{s}.release(bc)
		return nil, err
	}
	s.txn.conns[ds] = bc
	s.txn.order = append(s.txn.order, ds)
	if t.write {
		s.txn.written[ds] = true
	}
	return bcs, nil
}

// openSQL appends to dst what opens a transaction's part on a data source
// outside XA and LOCK TABLES: the one-shot isolation level, START
// TRANSACTION, the transaction's savepoints.
func (s *Session) openSQL(dst []string) []string {
	if dst == nil && s.txn.isolation == "" && len(s.txn.savepoints) == 0 {
		// The common case, shared (nothing changes the slices).
		if s.txn.begin == beginReadOnly {
			return openReadOnly
		}
		if s.txn.begin == beginPlain {
			return openPlain
		}
	}
	if s.txn.isolation != "" {
		dst = append(dst, "SET TRANSACTION ISOLATION LEVEL "+s.txn.isolation)
	}
	dst = append(dst, s.txn.begin)
	for _, name := range s.txn.savepoints {
		dst = append(dst, "SAVEPOINT "+quoteSavepoint(name))
	}
	return dst
}

// settleParts gives back the connections of the parts whose opening did
// not run: the backend refused it (it went out ahead of a read, whose
// answer was dropped), or the statement that was to carry it was never
// sent. Each is then as if it had never joined, as when the opening is a
// round trip of its own and fails.
func (s *Session) settleParts() {
	for i := 0; i < len(s.txn.order); i++ {
		ds := s.txn.order[i]
		bc := s.txn.conns[ds]
		if !bc.prefixFailed && bc.deferred == nil && bc.prefix == nil {
			continue
		}
		bc.prefixFailed, bc.deferred, bc.prefix = false, nil, nil
		delete(s.txn.conns, ds)
		delete(s.txn.written, ds)
		s.txn.order = slices.Delete(s.txn.order, i, i+1)
		i--
		poolSource{s}.release(bc)
	}
}

// release keeps pinned connections: the transaction gives them back.
func (txnSource) release(*backendConn) {}

// poolSource gives a statement outside a transaction pooled connections
// carrying the session's settings.
type poolSource struct{ s *Session }

func (ps poolSource) acquire(ctx context.Context, ds string, n int) ([]*backendConn, error) {
	s := ps.s
	want := s.vars.sql()
	if bc := s.pinnedConn(ds); bc != nil {
		// The session's state is on this one connection.
		if err := bc.applyPinned(want); err != nil {
			return nil, err
		}
		s.carryMode(bc)
		return []*backendConn{bc}, nil
	}
	p, err := s.srv.pool(ds, s.foundRows)
	if err != nil {
		return nil, err
	}
	if s.state.pinNext {
		n = 1
	}
	n = s.srv.connsPerQuery(n)
	bcs, err := p.get(ctx, n)
	if err != nil {
		return nil, err
	}
	for i, bc := range bcs {
		err := bc.apply(want)
		if err != nil && bc.broken {
			// Closed by the backend while idle in the pool (the reset
			// or SET was the first thing sent): nothing of the
			// statement went out, a new connection runs it.
			bcs[i] = nil
			if bc, err = p.redial(ctx, bc); err == nil {
				bcs[i] = bc
				err = bc.apply(want)
			}
		}
		if err != nil {
			p.put(bcs...)
			return nil, err
		}
		s.carryMode(bc)
		if err := s.oneShotReadOnly(bc); err != nil {
			p.put(bcs...)
			return nil, err
		}
	}
	for _, bc := range bcs {
		s.held.add(bc)
	}
	if s.state.pinNext {
		s.pin(bcs[0])
	}
	return bcs, nil
}

func (ps poolSource) release(bc *backendConn) {
	if bc.pinned {
		return // the session keeps it
	}
	if ps.s.held.remove(bc) {
		bc.pool.put(bc)
	}
}

// endXA commits or rolls back a transaction that has XA branches: the
// first data source is the coordinator, every other one a branch.
func (s *Session) endXA(t txnState, commit bool) error {
	x := &xaTxn{gtrid: t.gtrid, coord: t.conns[t.order[0]], coordWrote: t.written[t.order[0]]}
	for _, ds := range t.order[1:] {
		x.branches = append(x.branches, &xaBranch{bc: t.conns[ds], bqual: ds, wrote: t.written[ds]})
	}
	if !commit {
		s.srv.xa.rollback(x)
		return nil
	}
	info, err := s.srv.xa.commit(context.Background(), x)
	s.commitInfo = info
	return err
}
