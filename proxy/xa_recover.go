package proxy

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	gomysql "github.com/go-sql-driver/mysql"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/proxy/keygen"
)

// XA recovery. Prepared XA branches survive the proxy that made them
// (MariaDB keeps them across a disconnect and a restart, with their row
// locks), so every proxy looks for shardflake's branches (xaFormatID)
// with XA RECOVER on every data source, at start and every
// xaRecoverEvery, and resolves each by its transaction's decision on the
// coordinator data source named in the gtrid:
//
//   - a 'commit' decision: XA COMMIT;
//   - no decision: the owner is gone (the branch is not in flight in this
//     process, and another process's branch has been prepared for at least
//     xaOrphanGrace): recovery inserts a 'rollback' decision, which the
//     owner's own commit decision can then never follow (primary key),
//     and rolls the branch back.
//
// Decisions whose branches are all gone are deleted; 'rollback' ones
// after an hour (an owner that stalled that long finds its decision taken).

// xaRecoverEvery is the period of the recovery scan.
const xaRecoverEvery = time.Second

// xaOrphanGrace is how long a prepared branch of another process must
// wait before recovery rolls back its undecided transaction: longer than
// any owner takes between XA PREPARE and its decision. A branch of this
// node's previous incarnation does not wait.
const xaOrphanGrace = 2 * time.Second

// xaInDoubt is one prepared branch found by XA RECOVER.
type xaInDoubt struct {
	ds, gtrid, bqual, owner, coord string
	seen                           time.Time
}

type xaRecovery struct {
	x    *xaCoordinator
	wake func()
	kick chan struct{}
	stop chan struct{}
	once sync.Once
	used atomic.Bool // run the periodic scan
	// grace is xaOrphanGrace (tests lengthen it), in nanoseconds.
	grace atomic.Int64

	mu        sync.Mutex
	dbs       map[string]*sql.DB
	firstSeen map[string]time.Time
	last      []xaInDoubt
	passes    int
	// done are decisions whose branches all committed, by coordinator:
	// deleted in the next pass.
	done  map[string][]string
	nDone int

	committed, rolledBack atomic.Int64
}

func newXARecovery(x *xaCoordinator) *xaRecovery {
	r := &xaRecovery{x: x, kick: make(chan struct{}, 1), stop: make(chan struct{}),
		dbs: map[string]*sql.DB{}, firstSeen: map[string]time.Time{}}
	r.grace.Store(int64(xaOrphanGrace))
	r.wake = func() {
		r.used.Store(true)
		select {
		case r.kick <- struct{}{}:
		default:
		}
	}
	return r
}

// start runs the recovery loop until close; the server starts it when it
// serves, on listen (which names the node, setNode). The scan runs when
// transactionMode is xa or once a session used it.
func (r *xaRecovery) start(listen string) {
	r.once.Do(func() {
		r.x.setNode(listen)
		if r.x.srv.current().rules.Server.TransactionMode == config.TransactionXA {
			r.used.Store(true)
		}
		go r.loop()
	})
}

func (r *xaRecovery) close() {
	r.once.Do(func() {}) // never start after close
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	r.deleteForgotten(ctx) // best effort: cleanDecisions gets the rest
	cancel()
	select {
	case <-r.stop:
	default:
		close(r.stop)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, db := range r.dbs {
		db.Close()
	}
	r.dbs = map[string]*sql.DB{}
}

func (r *xaRecovery) loop() {
	t := time.NewTicker(xaRecoverEvery)
	defer t.Stop()
	for {
		if r.used.Load() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			r.pass(ctx)
			cancel()
		}
		select {
		case <-r.stop:
			return
		case <-t.C:
		case <-r.kick:
		}
	}
}

// db is a database/sql handle on data source ds, opened on first use
// with the data source's credentials and TLS settings.
func (r *xaRecovery) db(ds string) (*sql.DB, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	select {
	case <-r.stop:
		return nil, errors.New("shutting down")
	default:
	}
	if db := r.dbs[ds]; db != nil {
		return db, nil
	}
	def := r.x.srv.dataSource(ds)
	if def == nil {
		return nil, fmt.Errorf("no data source %s in the rules", ds)
	}
	// With the pools' TLS settings: a data source that requires TLS
	// refuses plain logins, and its branches would stay prepared.
	db, _, err := keygen.OpenDataSource(*def, keygen.DBOptions{Timeout: 10 * time.Second, Conns: 2})
	if err != nil {
		return nil, err
	}
	r.dbs[ds] = db
	return db, nil
}

// scan lists shardflake's prepared branches on every data source; ok is
// false when a data source could not be asked. XA RECOVER lists all of a
// server's branches, whatever the database: a branch seen through
// several data sources on one server is listed once, on the data source
// its bqual names when that is one of them.
func (r *xaRecovery) scan(ctx context.Context) (found []xaInDoubt, ok bool) {
	ok = true
	now := time.Now()
	seen := map[string]int{} // server and xid -> index in found
	for _, def := range r.x.srv.dataSources() {
		db, err := r.db(def.Name)
		if err != nil {
			ok = false
			continue
		}
		rows, err := db.QueryContext(ctx, "XA RECOVER")
		if err != nil {
			ok = false
			r.x.srv.log.Debug("XA RECOVER failed", "datasource", def.Name, "err", errLine(err))
			continue
		}
		server := net.JoinHostPort(def.Host, strconv.Itoa(def.Port))
		for rows.Next() {
			var format int64
			var gl, bl int
			var data []byte
			if rows.Scan(&format, &gl, &bl, &data) != nil || format != xaFormatID || gl+bl > len(data) {
				continue
			}
			e := xaInDoubt{ds: def.Name, gtrid: string(data[:gl]), bqual: string(data[gl : gl+bl])}
			var parsed bool
			if e.owner, e.coord, parsed = parseGtrid(e.gtrid); !parsed {
				continue
			}
			key := server + "\x00" + e.gtrid + "\x00" + e.bqual
			if i, dup := seen[key]; dup {
				if e.bqual == def.Name || strings.HasPrefix(e.bqual, def.Name+".") {
					found[i].ds = def.Name
				}
				continue
			}
			seen[key] = len(found)
			r.mu.Lock()
			if r.firstSeen[key].IsZero() {
				r.firstSeen[key] = now
			}
			e.seen = r.firstSeen[key]
			r.mu.Unlock()
			found = append(found, e)
		}
		if rows.Err() != nil {
			ok = false
		}
		rows.Close()
	}
	if ok {
		r.mu.Lock()
		for k := range r.firstSeen {
			if _, still := seen[k]; !still {
				delete(r.firstSeen, k)
			}
		}
		r.mu.Unlock()
	}
	return found, ok
}

// maxForgotten bounds the decisions waiting to be deleted; beyond it
// cleanDecisions deletes them later.
const maxForgotten = 100000

// forget queues gtrid's decision on coord for deletion.
func (r *xaRecovery) forget(coord, gtrid string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.nDone >= maxForgotten {
		return
	}
	if r.done == nil {
		r.done = map[string][]string{}
	}
	r.done[coord] = append(r.done[coord], gtrid)
	r.nDone++
}

// deleteForgotten deletes the queued decisions, 500 per statement; those
// of a data source that fails stay queued.
func (r *xaRecovery) deleteForgotten(ctx context.Context) {
	r.mu.Lock()
	done := r.done
	r.done, r.nDone = nil, 0
	r.mu.Unlock()
	for coord, gtrids := range done {
		db, err := r.db(coord)
		for len(gtrids) > 0 && err == nil {
			n := min(len(gtrids), 500)
			quoted := make([]string, n)
			for i, g := range gtrids[:n] {
				quoted[i] = sqlString(g)
			}
			if _, err = db.ExecContext(ctx, "DELETE FROM "+xaDecisions+" WHERE decision = 'commit' AND gtrid IN ("+strings.Join(quoted, ",")+")"); err == nil {
				gtrids = gtrids[n:]
			}
		}
		for _, g := range gtrids {
			r.forget(coord, g)
		}
	}
}

// pass resolves every in-doubt branch that can be resolved.
func (r *xaRecovery) pass(ctx context.Context) {
	r.deleteForgotten(ctx)
	found, ok := r.scan(ctx)
	var left []xaInDoubt
	for _, e := range found {
		if !r.resolve(ctx, e) {
			left = append(left, e)
		}
	}
	r.mu.Lock()
	r.last = left
	r.passes++
	clean := ok && r.passes%30 == 1
	r.mu.Unlock()
	if clean {
		r.cleanDecisions(ctx, found)
	}
}

// orphaned reports whether e's owner is gone: this process does not run
// it, it is this node's previous incarnation (a restart on the same host
// and address), or another process's branch waited out the grace period.
// Misjudging a live owner costs that transaction a rollback, never
// atomicity: the rollback decision comes first (decideRollback).
func (r *xaRecovery) orphaned(e xaInDoubt) bool {
	if e.owner == r.x.ownerID() {
		return !r.x.isInflight(e.gtrid)
	}
	if r.x.previousIncarnation(e.owner) {
		return true
	}
	return time.Since(e.seen) >= time.Duration(r.grace.Load())
}

// resolve commits or rolls back e by its decision; false when it is left
// for later.
func (r *xaRecovery) resolve(ctx context.Context, e xaInDoubt) bool {
	decision, err := r.decision(ctx, e.coord, e.gtrid)
	if err != nil {
		r.x.srv.log.Warn("XA recovery cannot read the decision", "gtrid", e.gtrid, "coordinator", e.coord, "err", errLine(err))
		return false
	}
	if decision == "" {
		if !r.orphaned(e) {
			return false
		}
		if decision, err = r.decideRollback(ctx, e.coord, e.gtrid); err != nil {
			r.x.srv.log.Warn("XA recovery cannot record a rollback decision", "gtrid", e.gtrid, "coordinator", e.coord, "err", errLine(err))
			return false
		}
	}
	db, err := r.db(e.ds)
	if err != nil {
		return false
	}
	verb := "XA ROLLBACK "
	if decision == "commit" {
		verb = "XA COMMIT "
	}
	if _, err := db.ExecContext(ctx, verb+xid(e.gtrid, e.bqual)); err != nil && sqlCode(err) != mysql.ER_XAER_NOTA {
		r.x.srv.log.Warn("XA recovery failed", "statement", strings.TrimSpace(verb), "gtrid", e.gtrid, "datasource", e.ds, "err", errLine(err))
		return false
	}
	if decision == "commit" {
		r.committed.Add(1)
	} else {
		r.rolledBack.Add(1)
	}
	r.x.srv.log.Info("XA branch recovered", "action", decision, "gtrid", e.gtrid, "datasource", e.ds)
	return true
}

// sqlCode is the MySQL error number of a go-sql-driver error.
func sqlCode(err error) uint16 {
	var me *gomysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// decision reads gtrid's decision on its coordinator, "" for none.
func (r *xaRecovery) decision(ctx context.Context, coord, gtrid string) (string, error) {
	db, err := r.db(coord)
	if err != nil {
		return "", err
	}
	var d string
	err = db.QueryRowContext(ctx, "SELECT decision FROM "+xaDecisions+" WHERE gtrid = ?", gtrid).Scan(&d)
	switch {
	case errors.Is(err, sql.ErrNoRows), sqlCode(err) == mysql.ER_NO_SUCH_TABLE:
		return "", nil
	case err != nil:
		return "", err
	}
	return d, nil
}

// decideRollback records a rollback decision for gtrid unless the owner
// decided first; it returns the decision that holds.
func (r *xaRecovery) decideRollback(ctx context.Context, coord, gtrid string) (string, error) {
	db, err := r.db(coord)
	if err != nil {
		return "", err
	}
	if _, err := db.ExecContext(ctx, xaDecisionsDDL); err != nil {
		return "", err
	}
	_, err = db.ExecContext(ctx, "INSERT INTO "+xaDecisions+" (gtrid, decision) VALUES (?, 'rollback')", gtrid)
	if sqlCode(err) == mysql.ER_DUP_ENTRY {
		return r.decision(ctx, coord, gtrid)
	}
	if err != nil {
		return "", err
	}
	return "rollback", nil
}

// cleanDecisions deletes commit decisions whose branches are all gone
// and rollback decisions older than an hour, on every data source that
// has the table.
func (r *xaRecovery) cleanDecisions(ctx context.Context, found []xaInDoubt) {
	keep := []string{"''"}
	for _, e := range found {
		keep = append(keep, sqlString(e.gtrid))
	}
	q := "DELETE FROM " + xaDecisions + " WHERE (decision = 'commit' AND created < NOW(6) - INTERVAL 60 SECOND AND gtrid NOT IN (" +
		strings.Join(keep, ",") + ")) OR (decision = 'rollback' AND created < NOW(6) - INTERVAL 1 HOUR)"
	for _, def := range r.x.srv.dataSources() {
		if db, err := r.db(def.Name); err == nil {
			db.ExecContext(ctx, q)
		}
	}
}

// xaTransactions answers SHOW XA TRANSACTIONS: the in-doubt branches on
// every data source now, with their decision.
func (srv sessionServer) xaTransactions(ctx context.Context) ([]*mysql.Field, []Row, error) {
	r := srv.xa.rec
	found, _ := r.scan(ctx)
	cols := stringColumns("gtrid", "bqual", "data_source", "coordinator", "owner", "state", "decision", "in_doubt_seconds")
	var rows []Row
	for _, e := range found {
		d, err := r.decision(ctx, e.coord, e.gtrid)
		if err != nil {
			d = "unknown: " + errLine(err)
		}
		state := "prepared"
		if e.owner == srv.xa.ownerID() && srv.xa.isInflight(e.gtrid) {
			state = "prepared (committing)"
		}
		if d == "" {
			d = "none"
		}
		age := strconv.FormatFloat(time.Since(e.seen).Seconds(), 'f', 1, 64)
		rows = append(rows, Row{[]byte(e.gtrid), []byte(e.bqual), []byte(e.ds), []byte(e.coord), []byte(e.owner), []byte(state), []byte(d), []byte(age)})
	}
	return cols, rows, nil
}

// xaCollector reports the XA counters at scrape time.
type xaCollector struct {
	x                                            *xaCoordinator
	commits, rollbacks, recovered, doubt, oldest *prometheus.Desc
}

func newXACollector(x *xaCoordinator) *xaCollector {
	return &xaCollector{x: x,
		commits:   prometheus.NewDesc("shardflake_xa_commits_total", "Transactions over several data sources committed in transactionMode xa, by phase: one (at most one data source wrote) or two (XA PREPARE, decision, XA COMMIT).", []string{"phase"}, nil),
		rollbacks: prometheus.NewDesc("shardflake_xa_rollbacks_total", "Transactions with XA branches rolled back (ROLLBACK, a failed prepare or decision, a client gone).", nil, nil),
		recovered: prometheus.NewDesc("shardflake_xa_recovered_branches_total", "Prepared XA branches resolved by recovery, by action (commit, rollback).", []string{"action"}, nil),
		doubt:     prometheus.NewDesc("shardflake_xa_in_doubt_branches", "Prepared XA branches recovery's last scan left unresolved (their row locks are held).", nil, nil),
		oldest:    prometheus.NewDesc("shardflake_xa_in_doubt_oldest_seconds", "How long the oldest unresolved prepared branch has been seen, 0 for none.", nil, nil),
	}
}

func (c *xaCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.commits, c.rollbacks, c.recovered, c.doubt, c.oldest} {
		ch <- d
	}
}

func (c *xaCollector) Collect(ch chan<- prometheus.Metric) {
	x, r := c.x, c.x.rec
	ch <- prometheus.MustNewConstMetric(c.commits, prometheus.CounterValue, float64(x.onePhase.Load()), "one")
	ch <- prometheus.MustNewConstMetric(c.commits, prometheus.CounterValue, float64(x.twoPhase.Load()), "two")
	ch <- prometheus.MustNewConstMetric(c.rollbacks, prometheus.CounterValue, float64(x.rollbacks.Load()))
	ch <- prometheus.MustNewConstMetric(c.recovered, prometheus.CounterValue, float64(r.committed.Load()), "commit")
	ch <- prometheus.MustNewConstMetric(c.recovered, prometheus.CounterValue, float64(r.rolledBack.Load()), "rollback")
	r.mu.Lock()
	n, oldest := len(r.last), 0.0
	for _, e := range r.last {
		oldest = max(oldest, time.Since(e.seen).Seconds())
	}
	r.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(c.doubt, prometheus.GaugeValue, float64(n))
	ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, oldest)
}
