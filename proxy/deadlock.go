package proxy

import (
	"cmp"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/prometheus/client_golang/prometheus"
)

// Deadlocks across data sources. Each MariaDB ends a cycle of lock waits
// among its own transactions at once (1213), but a session that holds a
// row on ds_0 and waits for one on ds_1, while another holds that one and
// waits for the first's, is a cycle that passes through the proxy: no
// server sees it, and both would wait innodb_lock_wait_timeout. The
// detector sees it. Every server.deadlockDetection it looks at the
// statements running; when one has run that long, it asks the servers
// such statements are reading from for their lock waits
// (information_schema.INNODB_LOCK_WAITS with the requesting and blocking
// transactions' INNODB_TRX rows, on a connection of its own), maps each
// backend thread to the session holding that backend connection (a
// statement's or a transaction's, Session.held), and finds the cycles of
// the graph of sessions waiting for sessions. Of each cycle it ends one
// session's statement as MariaDB ends a deadlock: the one whose
// transactions modified fewest rows on the servers asked (MariaDB's
// victim is the transaction of least weight), the youngest statement
// among equals. The statement is cancelled with 1213 (stmtWatch, which
// sends KILL QUERY to what it runs), and 1213 rolls back the session's
// transaction (afterTxnStatement) or the statement's own backend
// transactions (stmtGuard), as on MariaDB. The statement hot path pays
// nothing: the detector reads what the sessions keep anyway, from its
// own goroutine.

// lockWaitsSQL lists a server's lock waits: the backend thread that
// waits, the one it waits for, and the rows each one's transaction
// modified.
const lockWaitsSQL = "SELECT r.trx_mysql_thread_id, b.trx_mysql_thread_id, r.trx_rows_modified, b.trx_rows_modified" +
	" FROM information_schema.INNODB_LOCK_WAITS w" +
	" JOIN information_schema.INNODB_TRX r ON r.trx_id = w.requesting_trx_id" +
	" JOIN information_schema.INNODB_TRX b ON b.trx_id = w.blocking_trx_id"

// deadlockFound is the error of the statement the detector ends,
// MariaDB's for a deadlock.
func deadlockFound() error {
	return &mysql.MyError{Code: mysql.ER_LOCK_DEADLOCK, State: "40001", Message: "Deadlock found when trying to get lock; try restarting transaction"}
}

// deadlockDetector is the server's detector of deadlocks across data
// sources. Its loop runs on one goroutine from the first Serve to
// Shutdown; found is read by metrics at any time.
type deadlockDetector struct {
	once  sync.Once
	stop  chan struct{}
	done  chan struct{}
	found atomic.Int64
	// unreadable are the servers whose lock waits could not be read,
	// logged once each; victims the statements cancelled that had not
	// ended at the last look, by session, with their start.
	unreadable map[string]bool
	victims    map[*Session]time.Time
	// admin are the connections of its own the loop reads lock waits on,
	// by pool, kept from one look to the next: under long lock waits it
	// looks four times a second, and a server should not see (and log,
	// with an audit plugin) a new connection each time.
	admin map[*pool]*adminLink
}

// adminLink is one of the detector's connections, with its last use.
type adminLink struct {
	c    *client.Conn
	used time.Time
}

// adminIdle is how long the detector keeps a connection it has not used:
// a pool that a reload replaced is not asked again.
const adminIdle = 30 * time.Second

// start starts the detector for srv, once.
func (d *deadlockDetector) start(srv *Server) {
	d.once.Do(func() {
		d.stop, d.done = make(chan struct{}), make(chan struct{})
		d.unreadable = map[string]bool{}
		d.victims = map[*Session]time.Time{}
		d.admin = map[*pool]*adminLink{}
		go d.loop(srv)
	})
}

// close stops the detector and waits for its loop to end.
func (d *deadlockDetector) close() {
	d.once.Do(func() {}) // never start after close
	if d.stop == nil {
		return
	}
	select {
	case <-d.stop:
	default:
		close(d.stop)
	}
	<-d.done
}

// loop looks every server.deadlockDetection, which a reload may change;
// with the detection off it looks every second whether it is still off.
func (d *deadlockDetector) loop(srv *Server) {
	defer close(d.done)
	defer d.closeAdmin(time.Time{})
	every := func() time.Duration {
		if iv := srv.current().rules.Server.DeadlockDetection; iv > 0 {
			return iv
		}
		return time.Second
	}
	t := time.NewTimer(every())
	defer t.Stop()
	for {
		select {
		case <-d.stop:
			return
		case <-t.C:
		}
		if iv := srv.current().rules.Server.DeadlockDetection; iv > 0 {
			d.check(srv, iv)
		}
		d.closeAdmin(time.Now().Add(-adminIdle))
		t.Reset(every())
	}
}

// backendThread is a backend connection as its server names it.
type backendThread struct {
	server string // host:port
	id     uint32
}

func threadOf(bc *backendConn) backendThread {
	return backendThread{server: net.JoinHostPort(bc.pool.ds.Host, strconv.Itoa(bc.pool.ds.Port)), id: bc.id}
}

// waitingStatement is a running statement of the wait-for graph.
type waitingStatement struct {
	s     *Session
	start time.Time
	// waitsFor are the statements it waits for (indexes), modified the
	// rows its transactions modified on the servers asked.
	waitsFor []int
	modified int64
}

// check builds the wait-for graph of the statements running now, when
// one has run for at least iv, and ends one statement of each cycle.
func (d *deadlockDetector) check(srv *Server, iv time.Duration) {
	var (
		stmts   []waitingStatement
		holder  = map[backendThread]int{}
		servers = map[string]*pool{}
		reading []*backendConn
	)
	now := time.Now()
	seen := map[*Session]bool{}
	for _, s := range srv.sessionList() {
		start, rd, running := s.watch.statement(reading[:0])
		reading = rd
		if !running {
			continue
		}
		if was, ok := d.victims[s]; ok && was.Equal(start) {
			// Cancelled already, ending: it waits for nothing more.
			seen[s] = true
			continue
		}
		stmts = append(stmts, waitingStatement{s: s, start: start})
		if now.Sub(start) >= iv {
			for _, bc := range reading {
				servers[threadOf(bc).server] = bc.pool
			}
		}
	}
	for s := range d.victims {
		if !seen[s] {
			delete(d.victims, s)
		}
	}
	if len(servers) == 0 {
		return
	}
	for i, st := range stmts {
		st.s.held.each(func(bc *backendConn) { holder[threadOf(bc)] = i })
	}
	modified := map[backendThread]int64{}
	for addr, p := range servers {
		waits, err := d.lockWaits(p)
		if err != nil {
			if !d.unreadable[addr] {
				d.unreadable[addr] = true
				srv.log.Warn("deadlock detection: cannot read the data source's lock waits; deadlocks across data sources through it last until a lock wait times out",
					"datasource", p.name, "err", errLine(err))
			}
			continue
		}
		for _, w := range waits {
			r, rok := holder[backendThread{addr, w.waiting}]
			b, bok := holder[backendThread{addr, w.holding}]
			if !rok || !bok || r == b {
				continue
			}
			if !slices.Contains(stmts[r].waitsFor, b) {
				stmts[r].waitsFor = append(stmts[r].waitsFor, b)
			}
			modified[backendThread{addr, w.waiting}] = w.waitingModified
			modified[backendThread{addr, w.holding}] = w.holdingModified
		}
	}
	for th, n := range modified {
		stmts[holder[th]].modified += n
	}
	ended := make([]bool, len(stmts))
	for {
		cycle := findCycle(stmts, ended)
		if cycle == nil {
			return
		}
		v := slices.MinFunc(cycle, func(a, b int) int {
			if c := cmp.Compare(stmts[a].modified, stmts[b].modified); c != 0 {
				return c
			}
			return stmts[b].start.Compare(stmts[a].start)
		})
		ended[v] = true
		victim := stmts[v]
		if !stillRunning(stmts, cycle) || !victim.s.watch.cancelStarted(victim.start, deadlockFound()) {
			// One ended while the lock waits were read, and with it the
			// cycle (its connections may serve another session now).
			continue
		}
		d.victims[victim.s] = victim.start
		d.found.Add(1)
		ids := make([]uint32, len(cycle))
		for i, c := range cycle {
			ids[i] = stmts[c].s.id
		}
		srv.log.Info("deadlock across data sources: statement ended with 1213", "conn", victim.s.id, "cycle", ids, "rows_modified", victim.modified)
	}
}

// stillRunning reports whether each statement of cycle is still the one
// its session ran when the graph was built.
func stillRunning(stmts []waitingStatement, cycle []int) bool {
	for _, i := range cycle {
		start, _, running := stmts[i].s.watch.statement(nil)
		if !running || !start.Equal(stmts[i].start) {
			return false
		}
	}
	return true
}

// findCycle returns the statements of one cycle of the wait-for graph
// among those not ended, in wait order; nil when there is none.
func findCycle(stmts []waitingStatement, ended []bool) []int {
	const (
		unvisited = iota
		onPath
		done
	)
	state := make([]int, len(stmts))
	var path []int
	var visit func(i int) []int
	visit = func(i int) []int {
		state[i] = onPath
		path = append(path, i)
		for _, j := range stmts[i].waitsFor {
			if ended[j] {
				continue
			}
			switch state[j] {
			case onPath:
				return slices.Clone(path[slices.Index(path, j):])
			case unvisited:
				if c := visit(j); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		state[i] = done
		return nil
	}
	for i := range stmts {
		if state[i] == unvisited && !ended[i] && len(stmts[i].waitsFor) > 0 {
			if c := visit(i); c != nil {
				return c
			}
		}
	}
	return nil
}

// lockWait is one row of lockWaitsSQL.
type lockWait struct {
	waiting, holding                 uint32
	waitingModified, holdingModified int64
}

// lockWaits reads the lock waits of p's server on a connection of its
// own (the pool's may all be held by the statements that wait), the one
// it read them on last time if it still answers.
func (d *deadlockDetector) lockWaits(p *pool) ([]lockWait, error) {
	if l := d.admin[p]; l != nil {
		delete(d.admin, p)
		if res, err := l.c.Execute(lockWaitsSQL); err == nil {
			l.used = time.Now()
			d.admin[p] = l
			return readLockWaits(res)
		}
		// Closed by the server (wait_timeout, a restart): a new one.
		l.c.Close()
	}
	c, err := p.adminConn()
	if err != nil {
		return nil, err
	}
	res, err := c.Execute(lockWaitsSQL)
	if err != nil {
		c.Close()
		return nil, err
	}
	d.admin[p] = &adminLink{c: c, used: time.Now()}
	return readLockWaits(res)
}

// readLockWaits reads the rows of lockWaitsSQL.
func readLockWaits(res *mysql.Result) ([]lockWait, error) {
	defer res.Close()
	waits := make([]lockWait, 0, res.RowNumber())
	for i := range res.RowNumber() {
		var vals [4]int64
		for j := range vals {
			var err error
			if vals[j], err = res.GetInt(i, j); err != nil {
				return nil, err
			}
		}
		waits = append(waits, lockWait{waiting: uint32(vals[0]), holding: uint32(vals[1]), waitingModified: vals[2], holdingModified: vals[3]})
	}
	return waits, nil
}

// closeAdmin closes the detector's connections last used before idle
// (all of them for the zero time).
func (d *deadlockDetector) closeAdmin(idle time.Time) {
	for p, l := range d.admin {
		if idle.IsZero() || l.used.Before(idle) {
			l.c.Close()
			delete(d.admin, p)
		}
	}
}

// deadlockCollector reports the deadlocks found at scrape time.
type deadlockCollector struct {
	d     *deadlockDetector
	found *prometheus.Desc
}

func newDeadlockCollector(d *deadlockDetector) *deadlockCollector {
	return &deadlockCollector{d: d, found: prometheus.NewDesc("shardflake_deadlocks_total",
		"Deadlocks across data sources the proxy found (server.deadlockDetection) and ended with 1213 for one statement of the cycle.", nil, nil)}
}

func (c *deadlockCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.found }

func (c *deadlockCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(c.found, prometheus.CounterValue, float64(c.d.found.Load()))
}
