package proxy

import (
	"context"
	"errors"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/proxy/internal/sqlarg"
	"github.com/shardflake/shardflake/proxy/internal/wire"
	"github.com/shardflake/shardflake/router"
)

// maxConnsPerDataSource caps the connections one statement takes from one
// data source; routes beyond it share connections (their results are
// buffered only if the merge reads them out of order). The pools' sources
// lower it to server.maxConnectionsPerQuery (connsPerQuery).
const maxConnsPerDataSource = config.DefaultMaxConnectionsPerQuery

// connsPerQuery lowers n, the connections a statement asks of one data
// source, to server.maxConnectionsPerQuery.
func (srv *Server) connsPerQuery(n int) int {
	if n > 1 {
		if max := srv.current().rules.Server.MaxConnectionsPerQuery; max > 0 && n > max {
			return max
		}
	}
	return n
}

// maxParallelLanes bounds the goroutines one statement starts.
const maxParallelLanes = 16

// result is what running a plan gives the session: an OK (writes, DDL) or
// rows.
type result struct {
	ok   wire.OK
	rows RowStream // nil for an OK
	// copies are the affected rows of each copy of a broadcast table
	// when they disagree (the copies have drifted apart); nil otherwise.
	copies []uint64
}

// connSource hands an execution its backend connections. Outside a
// transaction they come from the pools and go back when a lane is done;
// inside one the session's pinned connection is used and kept.
type connSource interface {
	// acquire returns n connections to ds (n may be lowered), with the
	// session's settings applied.
	acquire(ctx context.Context, ds string, n int) ([]*backendConn, error)
	// release gives a connection back after its last route.
	release(bc *backendConn)
}

// execution is one run of a plan.
type execution struct {
	ctx    context.Context
	plan   *router.Plan
	conns  connSource
	budget int64 // bytes left for buffering results
	obs    Observer
	// prepared: routes run as backend prepared statements (see
	// backendMode).
	prepared bool
	// textRows: the routes' rows are read as text values (by a merge,
	// or written to a text client), so a route runs prepared only when
	// its columns' binary values decode to exactly MariaDB's text
	// (backendStmt.textExact; textprepared.go).
	textRows bool
	// textClient: the rows go to a text client, so a route runs prepared
	// only while its statement returns few rows (backendStmt.manyRows).
	textClient bool
	// status hears the backends' status flags (status.go); nil when
	// nobody listens.
	status *statusSink

	lanes  []*lane
	routes []*routeRun // in plan order
	mu     sync.Mutex  // guards budget when lanes run in parallel

	// one is the lane and route of a single-route plan, the common case,
	// kept here so that running it allocates nothing more.
	one struct {
		lane  lane
		run   routeRun
		lanes [1]*lane
		runs  [1]*routeRun
	}
}

// lane is the routes that run one after the other on one connection.
type lane struct {
	ex     *execution
	bc     *backendConn
	routes []*routeRun
	next   int       // index of the next route to send
	open   *routeRun // route whose rows are being read, if any
	done   bool      // connection released
	// last is the route the connection ran last, whose warnings it holds
	// until the next route runs (collected then, or by finish).
	last *routeRun
}

// routeRun is one route's progress.
type routeRun struct {
	route  *router.Route
	lane   *lane
	ok     wire.OK
	stream *routeStream // set when the route returned rows, to &rows
	rows   routeStream
	binary bool // it ran as a backend prepared statement
	// stmt is the backend statement it ran as, when binary.
	stmt   *backendStmt
	err    error
	sent   bool
	closed bool // the consumer no longer wants the rows
}

// backendMode is how routes are sent to the data sources.
type backendMode int

const (
	// backendText sends COM_QUERY with the arguments written in.
	backendText backendMode = iota + 1
	// backendPrepared sends COM_STMT_EXECUTE of a statement prepared on
	// the connection (once per connection and SQL text), for a client's
	// own COM_STMT_EXECUTE: the backend skips parsing, and a single
	// route's binary rows go to the client as they are. The routes of a
	// plan whose rows a Merger combines run so too where their binary
	// values decode to MariaDB's text exactly (textRows): merging reads
	// text values.
	backendPrepared
)

// String returns the mode's name.
func (m backendMode) String() string {
	switch m {
	case backendText:
		return "text"
	case backendPrepared:
		return "prepared"
	}
	return "unknown"
}

// runPlan executes plan's routes as text: every lane's first statements
// run at once (in parallel when there are several lanes, inline for one),
// writes come back as one OK with affected rows summed, and rows come back
// as one RowStream (a single route's own stream, or merger's result).
func runPlan(ctx context.Context, plan *router.Plan, conns connSource, merger Merger, budget int64, obs Observer) (result, error) {
	return runPlanMode(ctx, plan, conns, merger, budget, obs, backendText, nil)
}

// runPlanMode is runPlan with the routes sent as mode says, where the plan
// allows it. With join, the routes of a SELECT that share a data source
// run as one statement where they can (union.go); the merge is still
// given plan, and the table hits the caller counts are plan's.
func runPlanMode(ctx context.Context, plan *router.Plan, conns connSource, merger Merger, budget int64, obs Observer, mode backendMode, join *joinScope) (result, error) {
	if plan.Merge != nil && plan.Merge.SetOp != nil {
		// A UNION whose branches run apart (setop.go).
		return runSetOp(ctx, plan, conns, merger, budget, obs, mode)
	}
	ex := &execution{ctx: ctx, plan: plan, conns: conns, budget: budget, obs: obs, status: sinkOf(conns)}
	ex.prepared = mode == backendPrepared && preparable(plan)
	if prepareText(plan, mode) {
		ex.prepared, ex.textRows, ex.textClient = true, true, true
	}
	if len(plan.Routes) == 0 {
		return result{ok: wire.OK{InsertID: firstKey(plan)}}, nil
	}
	if mc, ok := merger.(MergeChecker); ok && plan.Kind == router.KindSelect && len(plan.Routes) > 1 {
		if err := mc.MergeCheck(plan); err != nil {
			return result{}, err
		}
	}
	jp, cols, key, learn := joinFor(plan, join)
	if jp != nil {
		ex.plan = jp.plan
		if prepareJoined(jp.plan, mode) {
			ex.prepared, ex.textRows = true, true
		}
	} else if mode == backendPrepared && plan.Kind == router.KindSelect && len(plan.Routes) > 1 {
		// A client's prepared SELECT whose routes a merge combines, each
		// route a statement of its own: they run prepared with the
		// client's values, as a single route does, so the columns are
		// typed as MariaDB types the client's statement (CAST(? AS
		// SIGNED) a BIGINT that may be NULL, not the INT NOT NULL of the
		// literal the text would hold), where the values read back as
		// text exactly (textExact).
		ex.prepared, ex.textRows = true, true
	}
	if err := ex.assign(); err != nil {
		return result{}, err
	}
	ex.start()
	for _, r := range ex.routes {
		if r.err != nil {
			err := r.err
			if plan.Kind == router.KindDDL && len(ex.routes) > 1 {
				err = ex.ddlError()
			}
			ex.abort()
			return result{}, err
		}
	}
	if len(ex.routes) == 1 && jp == nil {
		// One route: its rows as they are, or its OK (no slice of one).
		if r := ex.routes[0]; r.stream != nil || !r.sent {
			return result{rows: r.rowStream()}, nil
		}
		ok, copies := ex.sumOK()
		return result{ok: ok, copies: copies}, nil
	}
	var streams []RowStream
	for i, r := range ex.routes {
		if r.stream != nil || !r.sent {
			rs := r.rowStream()
			if jp != nil && jp.joined[i] {
				rs = &joinedStream{RowStream: rs, cols: cols}
			}
			streams = append(streams, rs)
		}
	}
	if len(streams) == 0 {
		ok, copies := ex.sumOK()
		return result{ok: ok, copies: copies}, nil
	}
	if len(streams) == 1 && jp == nil {
		return result{rows: streams[0]}, nil
	}
	if learn && ex.routes[0].stream != nil {
		join.cache.put(key, ex.routes[0].stream.Columns())
	}
	if key != (joinKey{}) {
		// A shape whose runs return many rows runs apart (union.go).
		counted := new(atomic.Int64)
		for i, rs := range streams {
			streams[i] = &countingStream{RowStream: rs, n: counted, limit: join.cache.rowLimit, mark: func() { join.cache.markApart(key) }}
		}
	}
	rows, err := merger.Merge(ctx, plan, streams, budget)
	if err != nil {
		return result{}, err
	}
	return result{rows: rows}, nil
}

// preparable reports whether plan's routes may run as backend prepared
// statements: DML, and for a SELECT only a single route (a merge reads
// text rows). An INSERT with generated keys has them written into its SQL,
// so its SQL differs at every execution: preparing it would cost a round
// trip each time and save nothing.
func preparable(plan *router.Plan) bool {
	if plan.Keys != nil {
		return false
	}
	switch plan.Kind {
	case router.KindSelect:
		return len(plan.Routes) == 1
	case router.KindInsert, router.KindUpdate, router.KindDelete:
		return true
	}
	return false
}

func firstKey(plan *router.Plan) uint64 {
	if plan.Keys != nil && plan.Keys.Count > 0 {
		return uint64(plan.Keys.First)
	}
	return 0
}

// assign groups the routes by data source and gives each group its
// connections, taken in data-source name order so that two statements
// never wait for each other's connections.
func (ex *execution) assign() error {
	if len(ex.plan.Routes) == 1 {
		return ex.assignOne()
	}
	byDS := map[string][]*routeRun{}
	var order []string
	for i := range ex.plan.Routes {
		r := &routeRun{route: &ex.plan.Routes[i]}
		ex.routes = append(ex.routes, r)
		ds := r.route.DataSource
		if _, ok := byDS[ds]; !ok {
			order = append(order, ds)
		}
		byDS[ds] = append(byDS[ds], r)
	}
	sorted := slices.Clone(order)
	slices.Sort(sorted)
	got := map[string][]*backendConn{}
	for _, ds := range sorted {
		n := min(len(byDS[ds]), maxConnsPerDataSource)
		bcs, err := ex.conns.acquire(ex.ctx, ds, n)
		if err != nil {
			ex.obs.Route(routeEvent(ds, 0, err))
			for _, bcs := range got {
				for _, bc := range bcs {
					ex.conns.release(bc)
				}
			}
			return err
		}
		got[ds] = bcs
	}
	for _, ds := range order {
		bcs := got[ds]
		lanes := make([]*lane, len(bcs))
		for i, bc := range bcs {
			lanes[i] = &lane{ex: ex, bc: bc}
		}
		for i, r := range byDS[ds] {
			l := lanes[i%len(lanes)]
			r.lane = l
			l.routes = append(l.routes, r)
		}
		ex.lanes = append(ex.lanes, lanes...)
	}
	return nil
}

// assignOne is assign for a plan of one route.
func (ex *execution) assignOne() error {
	o := &ex.one
	o.run = routeRun{route: &ex.plan.Routes[0], lane: &o.lane}
	ds := o.run.route.DataSource
	bcs, err := ex.conns.acquire(ex.ctx, ds, 1)
	if err != nil {
		ex.obs.Route(routeEvent(ds, 0, err))
		return err
	}
	o.runs[0] = &o.run
	o.lane = lane{ex: ex, bc: bcs[0], routes: o.runs[:]}
	o.lanes[0] = &o.lane
	ex.routes, ex.lanes = o.runs[:], o.lanes[:]
	return nil
}

// start runs every lane until it reaches rows or its end. The last lane
// runs on the calling goroutine, the others on goroutines of their own
// (at most maxParallelLanes at once, the caller's included): a scatter
// over two connections starts one goroutine, a single route none.
func (ex *execution) start() {
	last := len(ex.lanes) - 1
	if last > 0 && ex.sendAll() {
		return
	}
	if last > 0 {
		var wg sync.WaitGroup
		// Only a plan with more lanes than that waits for a slot.
		var sem chan struct{}
		if last >= maxParallelLanes {
			sem = make(chan struct{}, maxParallelLanes-1)
		}
		for _, l := range ex.lanes[:last] {
			if sem != nil {
				sem <- struct{}{}
			}
			wg.Go(func() {
				if sem != nil {
					defer func() { <-sem }()
				}
				l.advance()
			})
		}
		defer wg.Wait()
	}
	ex.lanes[last].advance()
}

// sendAll is start for a SELECT whose lanes have one route each (a
// scatter, the routes of each data source joined): every route is sent
// first, then the response heads are read in turn on the calling
// goroutine. The backends work at once all the same, and the statement
// starts no goroutine and waits for none. It reports false, having done
// nothing, for other plans.
func (ex *execution) sendAll() bool {
	if ex.plan.Kind != router.KindSelect || len(ex.lanes) > maxParallelLanes {
		return false
	}
	for _, l := range ex.lanes {
		if len(l.routes) != 1 {
			return false
		}
	}
	var (
		startedAt [maxParallelLanes]time.Time
		sendErrs  [maxParallelLanes]error
	)
	started, errs := startedAt[:len(ex.lanes)], sendErrs[:len(ex.lanes)]
	for i, l := range ex.lanes {
		r := l.routes[0]
		l.next = 1
		l.last = r
		r.sent = true
		started[i] = time.Now()
		errs[i] = r.send()
	}
	for i, l := range ex.lanes {
		r := l.routes[0]
		if errs[i] != nil {
			r.complete(started[i], head{}, nil, errs[i])
			continue
		}
		h, stop, err := r.readHead()
		if r.binary && r.lostStmt(err) {
			// Prepared again, once, as runStmt does.
			h, stop, err = r.exchange()
		}
		r.complete(started[i], h, stop, err)
		if r.err == nil && l.open == nil {
			l.finish()
		}
	}
	return true
}

// abort stops everything after an error: open results are cancelled and
// connections go back.
func (ex *execution) abort() {
	var open []*routeRun
	for _, r := range ex.routes {
		if r.lane.open == r && r.stream == &r.rows && ex.ctx.Err() == nil {
			// An error of another route (a START TRANSACTION refused
			// ahead of its read, now that every lane is sent first):
			// this result is read to its end (or killed) below, so
			// that its connection stays in step; one left out of step
			// is broken, and in a transaction that loses the client.
			open = append(open, r)
			continue
		}
		// A result of a cancelled statement is drained too: the backend
		// ends it once the cancellation's KILL QUERY reaches it (Close
		// kills it again and gives up after killGrace). Left unread, its
		// connection would break, and in a transaction that loses the
		// transaction, where MariaDB keeps it after KILL QUERY.
		if r.stream != nil {
			r.stream.Close()
		}
		r.closed = true
	}
	for _, r := range open {
		r.stream.Close()
	}
	for _, l := range ex.lanes {
		l.finish()
	}
}

// sumOK combines the OK packets of a write's routes (combineOK).
func (ex *execution) sumOK() (wire.OK, []uint64) {
	var one [1]wire.OK
	oks := one[:]
	if len(ex.routes) != 1 {
		oks = make([]wire.OK, len(ex.routes))
	}
	for i, r := range ex.routes {
		oks[i] = r.ok
	}
	return combineOK(ex.plan, oks)
}

// advance sends the lane's routes in turn until one returns rows (the
// consumer reads them later) or all are done.
func (l *lane) advance() {
	for l.next < len(l.routes) && l.open == nil {
		r := l.routes[l.next]
		l.next++
		if r.closed {
			continue
		}
		r.run()
		// DDL goes on to the lane's next data nodes after one fails (it
		// cannot be rolled back; the client learns which failed).
		if r.err != nil && (l.ex.plan.Kind != router.KindDDL || l.bc.broken) {
			return
		}
	}
	if l.open == nil && l.next >= len(l.routes) {
		l.finish()
	}
}

// finish gives the lane's connection back.
func (l *lane) finish() {
	if l.done {
		return
	}
	l.done = true
	if l.open != nil && !l.bc.broken {
		// Rows left unread: the connection is not in step.
		l.bc.broken = true
	}
	if l.ex.otherCopy(l) {
		// The client changed one table and hears one copy's warnings,
		// as it hears one copy's counts (combineOK).
		l.bc.warnings = 0
	}
	l.collectWarnings(l.last)
	l.ex.conns.release(l.bc)
}

// otherCopy reports whether lane l writes a copy of a broadcast table
// other than the first data source's.
func (ex *execution) otherCopy(l *lane) bool {
	return ex.plan.Type == router.RouteBroadcast && isWrite(ex.plan.Kind) && len(ex.routes) > 1 && ex.routes[0].lane != l
}

// run sends the route's statement and reads its response up to the rows:
// as a backend prepared statement when the execution asks for it and the
// backend can prepare it, else as text with the arguments written in.
func (r *routeRun) run() {
	l := r.lane
	if l.last != nil && l.bc.warnings > 0 && !l.ex.otherCopy(l) {
		// This statement replaces the one before's warnings on the
		// connection: they are kept first.
		l.collectWarnings(l.last)
	}
	l.last = r
	r.sent = true
	start := time.Now()
	h, stop, err := r.exchange()
	r.complete(start, h, stop, err)
}

// exchange sends the route and reads its response head: as a backend
// prepared statement when the execution asks for it and the backend can
// prepare it, else as text.
func (r *routeRun) exchange() (h head, stop func(), err error) {
	if r.lane.ex.prepared {
		h, stop, err = r.runStmt()
		r.binary = err == nil
		if !errors.Is(err, errPrepareUnsupported) {
			return h, stop, err
		}
	}
	return r.runText()
}

// send sends the route without reading its response (sendAll): as
// exchange would, a backend prepared statement or text.
func (r *routeRun) send() error {
	if r.lane.ex.prepared {
		err := r.sendStmt()
		r.binary = err == nil
		if !errors.Is(err, errPrepareUnsupported) {
			return err
		}
	}
	return r.sendText()
}

// complete records the response head h of the route sent at start (or
// the error of sending it or reading h): an OK, or rows the consumer
// reads from the lane's connection next.
func (r *routeRun) complete(start time.Time, h head, stop func(), err error) {
	l := r.lane
	ctx := l.ex.ctx
	l.ex.obs.Route(routeEvent(r.route.DataSource, time.Since(start), err))
	if err != nil {
		r.err = clientRowError(err, r.route.Rows)
		return
	}
	l.ex.status.add(l.bc.status)
	if h.columns == nil {
		if l.bc.moreResults() {
			if _, err := l.bc.finish(); err != nil {
				stop()
				r.err = cancelled(ctx, err)
				return
			}
		}
		stop()
		if ctx.Err() != nil {
			// The backend finished anyway (MariaDB's SLEEP returns 1
			// when killed); the client asked to stop and hears so.
			r.err = context.Cause(ctx)
			return
		}
		r.ok = h.ok
		return
	}
	r.rows = routeStream{run: r, columns: h.columns, stopWatch: stop, binary: r.binary}
	r.stream = &r.rows
	l.open = r
}

// runText sends the route as COM_QUERY and reads its response head; stop
// ends the watch for cancellation once the response is read.
func (r *routeRun) runText() (h head, stop func(), err error) {
	if err := r.sendText(); err != nil {
		return h, nil, err
	}
	return r.readHead()
}

// sendText sends the route as COM_QUERY with its arguments written in.
func (r *routeRun) sendText() (err error) {
	bc := r.lane.bc
	bc.armPrefix()
	if r.route.Args == nil {
		err = bc.send(mysql.COM_QUERY, r.route.SQL)
	} else {
		mode := sqlarg.Backslash
		if bc.status&mysql.SERVER_STATUS_NO_BACKSLASH_ESCAPED != 0 {
			mode = sqlarg.NoBackslashEscapes
		}
		err = bc.sendQuery(r.route.SQL, r.route.Args, mode)
	}
	bc.disarmPrefix()
	return err
}

// runStmt runs the route as COM_STMT_EXECUTE of the statement prepared on
// the connection for its SQL (prepared now on first use). A statement the
// backend lost or wants prepared again is prepared again, once.
func (r *routeRun) runStmt() (h head, stop func(), err error) {
	for attempt := 0; ; attempt++ {
		if err := r.sendStmt(); err != nil {
			return h, nil, err
		}
		h, stop, err = r.readHead()
		if attempt == 0 && r.lostStmt(err) {
			continue
		}
		return h, stop, err
	}
}

// lostStmt reports whether err, the answer to the route's backend
// statement, says the backend lost it or wants it prepared again, on a
// connection still usable; the statement is then forgotten, so that the
// next send prepares it anew.
func (r *routeRun) lostStmt(err error) bool {
	bc := r.lane.bc
	if err == nil || !staleStmt(err) || bc.broken {
		return false
	}
	bc.forgetStmt(r.route.SQL)
	return true
}

// sendStmt sends the route as COM_STMT_EXECUTE of the statement
// prepared on the connection for its SQL (prepared now on first use);
// errPrepareUnsupported when it must run as text instead.
func (r *routeRun) sendStmt() error {
	bc := r.lane.bc
	ex := r.lane.ex
	st, err := bc.stmt(ex.ctx, r.route.SQL)
	if err != nil {
		var my *mysql.MyError
		if errors.As(err, &my) {
			// The backend refused to prepare the statement: it runs as
			// text, which may succeed (more than 65,535 placeholders, as
			// a joined route repeats each one per table) or answers the
			// statement's own error in its own words (a syntax error
			// quotes the SQL, which has ? where the client wrote a
			// literal).
			return errPrepareUnsupported
		}
		return err
	}
	if ex.textRows && !st.textExact || ex.textClient && st.manyRows {
		return errPrepareUnsupported
	}
	r.stmt = st
	bc.armPrefix()
	err = bc.sendExecute(st, r.route.Args, r.route.ArgTypes)
	bc.disarmPrefix()
	return err
}

// readHead reads the response head of the command just sent, watching
// for the statement's cancellation.
func (r *routeRun) readHead() (head, func(), error) {
	ctx := r.lane.ex.ctx
	bc := r.lane.bc
	stop := bc.watch(ctx)
	if bc.inFlight > 0 {
		// The transaction's START TRANSACTION went out with the route.
		if err := bc.readPrefix(); err != nil {
			stop()
			return head{}, nil, cancelled(ctx, err)
		}
	}
	h, err := bc.readHead()
	if err != nil {
		stop()
		return h, nil, cancelled(ctx, err)
	}
	return h, stop, nil
}

// cancelled replaces a backend's "interrupted" error with the reason the
// statement was cancelled (KILL QUERY, timeout, client gone).
func cancelled(ctx context.Context, err error) error {
	if ctx.Err() == nil {
		return err
	}
	var my *mysql.MyError
	if errors.As(err, &my) && (my.Code == mysql.ER_QUERY_INTERRUPTED || my.Code == 1969) {
		return context.Cause(ctx)
	}
	var dse *DataSourceError
	if errors.As(err, &dse) {
		return context.Cause(ctx)
	}
	return err
}

// rowStream returns the route's rows as a RowStream: its open result, or
// a stream that sends the route when it is first read.
func (r *routeRun) rowStream() RowStream {
	if r.stream != nil {
		return r.stream
	}
	return &lazyStream{run: r}
}

// reserve takes n bytes of the statement's buffering budget.
func (ex *execution) reserve(n int64) error {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.budget < n {
		return &NotSupportedError{What: "results this large when several routes share one connection (raise the data source's maxPoolSize or mergeMemoryBytes)"}
	}
	ex.budget -= n
	return nil
}

// routeStream reads one route's rows from its connection.
type routeStream struct {
	run       *routeRun
	columns   []*mysql.Field
	stopWatch func()
	// binary: the rows are in the binary protocol (a backend prepared
	// statement's); Next decodes them into buf.
	binary bool
	// decoded counts the binary rows decoded.
	decoded int
	buf     []byte
	row     Row
	eof     bool
	err     error
	// buffered holds the rest of the rows once they had to be read ahead
	// (a later route on the same connection was wanted first).
	buffered []Row
	inBuffer bool
}

func (s *routeStream) Columns() []*mysql.Field { return s.columns }

// rawProtocol is the protocol of the packets nextRaw returns.
func (s *routeStream) rawProtocol() Protocol {
	if s.binary {
		return BinaryProtocol
	}
	return TextProtocol
}

// nextRaw returns the next row packet's payload unchanged, for forwarding
// a single route's rows without decoding them.
func (s *routeStream) nextRaw() ([]byte, error) {
	if s.err != nil {
		return nil, s.err
	}
	if s.eof {
		return nil, io.EOF
	}
	bc := s.run.lane.bc
	p, err := bc.readRow()
	if err != nil {
		s.end(err)
		if s.eof {
			return nil, io.EOF
		}
		return nil, s.err
	}
	return p, nil
}

func (s *routeStream) Next() (Row, error) {
	if s.inBuffer {
		if len(s.buffered) == 0 {
			return nil, io.EOF
		}
		row := s.buffered[0]
		s.buffered = s.buffered[1:]
		return row, nil
	}
	p, err := s.nextRaw()
	if err != nil {
		return nil, err
	}
	row, err := s.split(p, s.row)
	if err != nil {
		s.run.lane.bc.broken = true
		s.end(&DataSourceError{DataSource: s.run.route.DataSource, Lost: true, Err: err})
		return nil, s.err
	}
	s.row = row
	return row, nil
}

// split decodes a row packet into text-protocol values, reusing dst.
func (s *routeStream) split(p []byte, dst Row) (Row, error) {
	if !s.binary {
		return wire.SplitTextRow(p, len(s.columns), dst)
	}
	if s.decoded++; s.decoded == manyRows+1 && s.run.lane.ex.textClient {
		// Too many rows to decode for a text client every time: the
		// statement runs as text on this connection from now on.
		s.run.stmt.manyRows = true
	}
	row, buf, err := wire.SplitBinaryRow(p, s.columns, dst, s.buf)
	s.buf = buf
	return row, err
}

// end records how the rows ended and lets the lane go on.
func (s *routeStream) end(err error) {
	l := s.run.lane
	if errors.Is(err, io.EOF) && l.ex.ctx.Err() != nil {
		err = context.Cause(l.ex.ctx)
	}
	if errors.Is(err, io.EOF) {
		s.eof = true
		l.ex.status.add(l.bc.status)
		if l.bc.moreResults() {
			if _, ferr := l.bc.finish(); ferr != nil {
				s.err = ferr
			}
		}
	} else {
		s.err = cancelled(l.ex.ctx, err)
	}
	s.stopWatch()
	l.open = nil
	if l.bc.broken {
		l.finish()
		return
	}
	l.advanceIfWanted()
}

// bufferRest reads the remaining rows into memory so the connection can
// run the lane's next route.
func (s *routeStream) bufferRest() error {
	for {
		p, err := s.nextRaw()
		if errors.Is(err, io.EOF) {
			s.inBuffer = true
			return nil
		}
		if err != nil {
			return err
		}
		if err := s.run.lane.ex.reserve(int64(len(p)) + 64); err != nil {
			s.Close()
			return err
		}
		row, err := s.split(p, nil)
		if err != nil {
			s.run.lane.bc.broken = true
			s.end(&DataSourceError{DataSource: s.run.route.DataSource, Lost: true, Err: err})
			return s.err
		}
		s.buffered = append(s.buffered, Row(row).Clone())
	}
}

// Close stops reading: rows left on the connection are drained, or the
// backend query is killed when many are left.
func (s *routeStream) Close() error {
	if s.run.closed {
		return nil
	}
	s.run.closed = true
	s.buffered = nil
	if s.eof || s.err != nil {
		return nil
	}
	l := s.run.lane
	// A short rest is cheaper to read than to kill.
	for range 256 {
		if _, err := s.nextRaw(); err != nil {
			return nil
		}
	}
	// KILL QUERY returns once the backend has flagged the statement, so
	// it cannot hit whatever runs on this connection next.
	l.bc.pool.killQuery(l.bc.id)
	l.bc.nc.SetReadDeadline(time.Now().Add(killGrace))
	defer l.bc.nc.SetReadDeadline(time.Time{})
	for {
		if _, err := s.nextRaw(); err != nil {
			return nil
		}
	}
}

// advanceIfWanted runs the lane's next route if someone will read it, or
// gives the connection back when none is left.
func (l *lane) advanceIfWanted() {
	for l.next < len(l.routes) && l.routes[l.next].closed {
		l.next++
	}
	if l.next >= len(l.routes) {
		l.finish()
	}
	// Otherwise the next route is sent when its lazyStream is first read.
}

// lazyStream is a route that waits behind another route on the same
// connection; reading it first buffers what is ahead of it.
type lazyStream struct {
	run *routeRun
	s   *routeStream
	err error
}

func (z *lazyStream) open() error {
	if z.s != nil || z.err != nil {
		return z.err
	}
	r := z.run
	l := r.lane
	for !r.sent {
		if l.done {
			z.err = &DataSourceError{DataSource: r.route.DataSource, Lost: true, Err: errors.New("connection lost before the route ran")}
			return z.err
		}
		if l.open != nil {
			if err := l.open.stream.bufferRest(); err != nil {
				z.err = err
				return err
			}
		}
		// Send the routes in order up to this one; earlier ones that
		// nobody will read are skipped.
		for l.next < len(l.routes) && l.open == nil && !r.sent {
			next := l.routes[l.next]
			l.next++
			if next.closed {
				continue
			}
			next.run()
			if next.err != nil {
				z.err = next.err
				return z.err
			}
		}
	}
	if r.stream == nil {
		// The route answered with an OK instead of rows.
		z.s = &routeStream{run: r, eof: true, stopWatch: func() {}}
		return nil
	}
	z.s = r.stream
	return nil
}

func (z *lazyStream) Columns() []*mysql.Field {
	if z.open() != nil || z.s.columns == nil {
		return nil
	}
	return z.s.columns
}

func (z *lazyStream) Next() (Row, error) {
	if err := z.open(); err != nil {
		return nil, err
	}
	return z.s.Next()
}

func (z *lazyStream) Close() error {
	if z.s != nil {
		return z.s.Close()
	}
	z.run.closed = true
	l := z.run.lane
	if !l.done && l.open == nil {
		l.advanceIfWanted()
	}
	return nil
}
