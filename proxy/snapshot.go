package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/proxy/internal/wire"
	"github.com/shardflake/shardflake/proxy/merge"
	"github.com/shardflake/shardflake/router"
)

// Rules snapshots.
//
// Everything the proxy derives from a rules file lives in one immutable
// snapshot: the rules, their digest, the planner built on them, the
// backend pools by data source, and the caches whose answers depend on
// the rules (plans, prepared statements' result columns, the collation
// and dialect probes, joined shapes, table columns). The Server publishes
// the current snapshot through an atomic pointer; a reload (reload.go)
// builds a complete new one and swaps it in.
//
// A session takes the current snapshot when a command starts and keeps it
// for the whole command, so a statement runs to its end on the snapshot
// it started on. While the session holds backend connections across
// commands (an open transaction, connections pinned for temporary tables
// or locks) it keeps its snapshot, and so its pools, until it lets them
// go; then its next command takes the current one.
//
// A pool shared by consecutive snapshots (the data source did not change)
// is the same object in both. A snapshot that was replaced dies when the
// last session holding it lets go, or when the reload's grace period ends;
// the pools no live snapshot uses any more are then closed.

// snapshot is one rules file made ready to serve. Its fields are set by
// newSnapshot and not changed after it is published, except the caches,
// which lock themselves.
type snapshot struct {
	srv     *Server
	rules   *config.Rules
	digest  string
	planner Planner
	merger  Merger
	// collations is the default merger's collation source (nil with a
	// configured Merger); DDL empties it.
	collations *routeProbe

	pools     map[string]*pool // by data source name
	foundRows map[string]*pool // the same with CLIENT_FOUND_ROWS, made on first use
	poolsMu   sync.Mutex
	// physicalDB are the databases of data sources; physicalTable maps
	// physical tables to their logical tables.
	physicalDB    map[string]bool
	physicalTable map[string]string

	cache    *planCache
	stmtMeta *stmtMetaCache // result columns of prepared statements
	// joins keeps the column definitions of statement shapes whose
	// routes are joined per data source (union.go).
	joins     *joinCache
	columnsMu sync.Mutex
	columns   map[string]tableShape // logical table -> its columns

	// rw is read/write splitting's groups (readwrite.go); nil without
	// !READWRITE_SPLITTING.
	rw *readwriteSplit

	// users counts the holders: the Server while the snapshot is
	// current, and each session running a command on it or keeping it
	// for a transaction. At zero the snapshot is dead.
	users atomic.Int64
	dead  atomic.Bool
	// gone is what a session still holding this snapshot hears once the
	// grace period closed its pools; nil before.
	gone atomic.Pointer[string]
}

// newSnapshot makes rules ready to serve. Pools of prev whose data source
// is unchanged are shared; the others are new and dial on first use.
func (srv *Server) newSnapshot(rules *config.Rules, digest string, prev *snapshot) (*snapshot, error) {
	sn := &snapshot{
		srv:           srv,
		rules:         rules,
		digest:        digest,
		pools:         map[string]*pool{},
		foundRows:     map[string]*pool{},
		physicalDB:    map[string]bool{},
		physicalTable: map[string]string{},
		cache:         newPlanCache(srv.planCacheSize),
		stmtMeta:      newStmtMetaCache(),
		joins:         newJoinCache(),
		columns:       map[string]tableShape{},
	}
	sn.users.Store(1)
	for _, ds := range rules.DataSources {
		// A CA or client certificate that cannot be read stops the
		// start (or the reload), rather than every statement later.
		if _, err := ds.TLSConfig(); err != nil {
			return nil, err
		}
	}
	sn.planner = srv.fixedPlanner
	if sn.planner == nil {
		rt, err := router.New(rules, srv.keys, router.WithTableColumns(sn.tableColumns), router.WithAutoIncrement(sn.autoIncrement))
		if err != nil {
			return nil, err
		}
		sn.planner = RouterPlanner(rt)
	}
	sn.merger = srv.fixedMerger
	if sn.merger == nil {
		sn.collations = newRouteProbe(sn)
		sn.merger = &merge.ResultMerger{MaxScatterRows: rules.Server.MaxScatterRows, Collations: sn.collations, Dialects: &dialectProbe{srv: sn}}
	}
	baseline := poolBaseline(rules.Server)
	for _, ds := range rules.DataSources {
		if prev != nil {
			if old, ok := prev.pools[ds.Name]; ok && reflect.DeepEqual(old.ds, ds) && old.baseline == baseline {
				sn.pools[ds.Name] = old.share()
				prev.poolsMu.Lock()
				if fp, ok := prev.foundRows[ds.Name]; ok {
					sn.foundRows[ds.Name] = fp.share()
				}
				prev.poolsMu.Unlock()
				sn.physicalDB[ds.Database] = true
				continue
			}
		}
		p := newPoolWith(ds, false, srv.log, baseline)
		p.schemaGen = &srv.schemaGen
		p.snapshots.Store(1)
		sn.pools[ds.Name] = p
		sn.physicalDB[ds.Database] = true
	}
	if prev != nil && prev.rw != nil && reflect.DeepEqual(prev.rules.ReadwriteGroups, rules.ReadwriteGroups) && poolBaseline(prev.rules.Server) == baseline {
		sn.rw = prev.rw.share()
	} else {
		sn.rw = newReadwriteSplit(rules, srv.log, baseline, &srv.schemaGen)
	}
	for _, t := range rules.Tables {
		for _, n := range t.DataNodes {
			sn.physicalTable[n.Table] = t.Name
		}
	}
	return sn, nil
}

// tryAcquire takes a hold on a snapshot that is not dead yet.
func (sn *snapshot) tryAcquire() bool {
	for {
		n := sn.users.Load()
		if n <= 0 {
			return false
		}
		if sn.users.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// release lets go of a hold; the last one kills the snapshot.
func (sn *snapshot) release() {
	if sn.users.Add(-1) == 0 {
		sn.die("")
	}
}

// die closes what no live snapshot uses any more. reason, when set, is
// the error whatever still holds one of its pools gets.
func (sn *snapshot) die(reason string) {
	if !sn.dead.CompareAndSwap(false, true) {
		return
	}
	sn.srv.live.remove(sn)
	if reason != "" {
		sn.gone.Store(&reason)
	}
	for _, p := range sn.pools {
		p.unshare(reason)
	}
	sn.poolsMu.Lock()
	for ds, p := range sn.foundRows {
		if base := sn.pools[ds]; base != nil && base.closedNow() {
			p.unshareAll(reason)
			continue
		}
		p.unshare(reason)
	}
	sn.poolsMu.Unlock()
	sn.rw.unshare()
	if reason == "" {
		sn.srv.log.Debug("rules snapshot released", "digest", sn.digest)
	} else {
		sn.srv.log.Warn("rules snapshot closed at the end of the reload grace period", "digest", sn.digest)
	}
}

// current returns the snapshot in force now, for code that runs outside
// a session's command (metrics, health, the listener). Sessions use the
// one they hold (Session.srv.snapshot).
func (srv *Server) current() *snapshot { return srv.snap.Load() }

// acquire takes a hold on the current snapshot.
func (srv *Server) acquire() *snapshot {
	for {
		sn := srv.snap.Load()
		if sn.tryAcquire() {
			return sn
		}
	}
}

// sessionServer is what a session sees as its server: the Server and the
// snapshot the session holds, whose fields and methods are reached as if
// they were the server's (s.srv.rules, s.srv.pool(ds, fr)).
type sessionServer struct {
	*Server
	*snapshot
}

// takeSnapshot is called when a command starts: a session that holds no
// snapshot takes the current one. A session whose snapshot the grace
// period closed loses its transaction and pinned connections (rolled
// back), takes the current snapshot and answers the command with why.
func (s *Session) takeSnapshot() error {
	var err error
	if s.snapHeld {
		gone := s.srv.snapshot.gone.Load()
		if gone == nil {
			return nil
		}
		s.endTransaction(false)
		for _, bc := range s.state.pinned {
			bc.broken = true
		}
		s.unpinAll()
		s.snapHeld = false
		err = &SnapshotGoneError{Reason: *gone}
	}
	s.srv.snapshot = s.srv.acquire()
	s.snapHeld = true
	return err
}

// keepsSnapshot reports whether the session holds backend connections
// beyond the command: an open transaction or pinned connections.
func (s *Session) keepsSnapshot() bool {
	return s.txn.active || len(s.txn.conns) > 0 || len(s.state.pinned) > 0
}

// leaveSnapshot is called when a command ends and when the session
// closes: a session that no longer needs its snapshot lets it go, so a
// replaced one dies when its last transaction ends.
func (s *Session) leaveSnapshot(closing bool) {
	if !s.snapHeld || (!closing && s.keepsSnapshot()) {
		return
	}
	s.snapHeld = false
	s.srv.snapshot.release()
}

// pool returns the pool of data source ds for a session; clients that
// asked for CLIENT_FOUND_ROWS get connections that count matched rows.
func (sn *snapshot) pool(ds string, foundRows bool) (*pool, error) {
	p, ok := sn.pools[ds]
	if !ok {
		return nil, &InternalError{Msg: fmt.Sprintf("route to unknown data source %q", ds)}
	}
	if !foundRows {
		return p, nil
	}
	sn.poolsMu.Lock()
	defer sn.poolsMu.Unlock()
	fp, ok := sn.foundRows[ds]
	if !ok {
		fp = newPoolWith(p.ds, true, sn.srv.log, p.baseline)
		fp.schemaGen = &sn.srv.schemaGen
		fp.snapshots.Store(1)
		sn.foundRows[ds] = fp
	}
	return fp, nil
}

// tableShape is what the snapshot knows of a logical table's columns:
// their names in table order, the ones an INSERT without a column list
// fills (INVISIBLE ones left out, as MariaDB leaves them), and which is
// AUTO_INCREMENT ("" for none).
type tableShape struct {
	all     []string
	cols    []string
	autoInc string
}

// tableColumns returns the columns a logical table's INSERT without a
// column list fills, in table order, read from its first data node once
// and cached until the next DDL; the router needs them for such an
// INSERT. nil when the table cannot be read.
func (sn *snapshot) tableColumns(table string) []string {
	return sn.shape(table).cols
}

// autoIncrement reports whether a sharded table's key column is
// AUTO_INCREMENT on its first data node (read as tableColumns reads the
// columns): the router generates a key for a 0 given to it, as MariaDB
// makes one.
func (sn *snapshot) autoIncrement(table string) bool {
	t := sn.rules.Table(table)
	auto := sn.shape(table).autoInc
	return t != nil && auto != "" && strings.EqualFold(auto, t.KeyColumn)
}

// shape reads a logical table's columns (SHOW COLUMNS of its first data
// node), once until the next DDL; the zero shape when it cannot.
func (sn *snapshot) shape(table string) tableShape {
	key := strings.ToLower(table)
	sn.columnsMu.Lock()
	shape, ok := sn.columns[key]
	sn.columnsMu.Unlock()
	if ok {
		return shape
	}
	ds, physical := sn.rules.DefaultDataSource, table
	if t := sn.rules.Table(table); t != nil && len(t.DataNodes) > 0 {
		ds, physical = t.DataNodes[0].DataSource, t.DataNodes[0].Table
	}
	p, err := sn.pool(ds, false)
	if err != nil {
		return tableShape{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.connectTimeout)
	defer cancel()
	bcs, err := p.get(ctx, 1)
	if err != nil {
		return tableShape{}
	}
	bc := bcs[0]
	defer p.put(bc)
	if err := bc.apply(""); err != nil {
		return tableShape{}
	}
	if err := bc.send(mysql.COM_QUERY, "SHOW COLUMNS FROM `"+strings.ReplaceAll(physical, "`", "``")+"`"); err != nil {
		return tableShape{}
	}
	h, err := bc.readHead()
	if err != nil || h.columns == nil {
		return tableShape{}
	}
	if len(h.columns) < 6 {
		bc.broken = true // its rows are still unread
		return tableShape{}
	}
	for {
		p, err := bc.readRow()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return tableShape{}
		}
		row, err := wire.SplitTextRow(p, len(h.columns), nil)
		if err != nil {
			bc.broken = true
			return tableShape{}
		}
		// Field, Type, Null, Key, Default, Extra.
		extra := strings.ToLower(string(row[5]))
		shape.all = append(shape.all, string(row[0]))
		if !strings.Contains(extra, "invisible") {
			shape.cols = append(shape.cols, string(row[0]))
		}
		if strings.Contains(extra, "auto_increment") {
			shape.autoInc = string(row[0])
		}
	}
	sn.columnsMu.Lock()
	sn.columns[key] = shape
	sn.columnsMu.Unlock()
	return shape
}

// forget empties the snapshot's caches (schemaChanged).
func (sn *snapshot) forget() {
	sn.columnsMu.Lock()
	sn.columns = map[string]tableShape{}
	sn.columnsMu.Unlock()
	sn.cache.clear()
	sn.stmtMeta.clear()
	if sn.collations != nil {
		sn.collations.forget()
	}
	sn.joins.forget()
}

// schemaChanged forgets what DDL may have made stale: cached plans,
// column lists and the statements prepared on backend connections.
func (srv *Server) schemaChanged() {
	srv.schemaGen.Add(1)
	srv.current().forget()
}

// graceTimer kills sn after grace unless it died before.
func (sn *snapshot) graceTimer(grace time.Duration) {
	time.AfterFunc(grace, func() {
		if !sn.dead.Load() {
			sn.die(fmt.Sprintf("the rules reload that replaced snapshot %s closed its data sources after a grace period of %s", sn.digest, grace))
		}
	})
}

// reloadCounts counts reloads by outcome, for metrics.
type reloadCounts struct {
	applied atomic.Int64
	refused atomic.Int64
}
