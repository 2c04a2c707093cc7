package proxy

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/shardflake/shardflake/proxy/internal/wire"
)

// watchDelay is how long a statement runs before the session starts
// watching for the client going away; quick statements never pay for it.
const watchDelay = 50 * time.Millisecond

// errClientGone cancels the statement of a client that disconnected.
var errClientGone = fmt.Errorf("%w: the client disconnected", ErrQueryInterrupted)

// stmtWatch is what cancels a session's running statement: KILL QUERY,
// the statement timeout and the client going away. Its timers and
// functions are made once, so a statement costs only its context. begin,
// the end function it returns and readClient are called by the session's
// goroutine; cancel by any (KILL, shutdown, the timers).
type stmtWatch struct {
	// wc is the client's connection, watched for its going away; nil for
	// a session that go-mysql's command loop drives.
	wc *wire.Conn

	mu      sync.Mutex
	cancelF context.CancelCauseFunc // the running statement's
	running bool
	start   time.Time
	timeout time.Duration // the running statement's (server.statementTimeout)
	stop    func()        // ends the watch on wc
	// readingClient: the statement reads the client connection itself
	// (LOAD DATA LOCAL's file), so the watch must not.
	readingClient bool
	// The timers are armed lazily: a statement arms one only when it is
	// not pending already, and a statement's end leaves it pending. When
	// it fires it looks at the statement running then, and arms itself
	// again for what that one has left. So a stream of quick statements
	// resets no timer per statement (a Reset can wake an idle thread of
	// the Go scheduler), only one per watchDelay.
	watchTimer   *time.Timer
	timeoutTimer *time.Timer
	watchArmed   bool      // watchTimer is pending
	timeoutArmed bool      // timeoutTimer is pending
	timeoutAt    time.Time // when the pending timeoutTimer fires
	end          func()
	clientGone   func()
	// backends are the backend connections reading a response for the
	// running statement (backendConn.watch with its stmtCtx): cancelling
	// the statement kills what they run. The statement's context is
	// cancelled only under mu, so a connection is either here before the
	// cancellation (and killed by it) or sees the context done.
	backends []*backendConn
}

// stmtCtx is the context of one statement that stmtWatch began. It is its
// cancel context (Done, Err, context.Cause as usual) that also names the
// watch, so that a backend read for the statement registers with the
// watch (watchBackend) rather than paying for a context.AfterFunc each
// time; and it carries the statement's diagnostics (withDiagnostics).
type stmtCtx struct {
	context.Context
	w    *stmtWatch
	diag *diagnostics
}

// Value returns the statement's diagnostics for diagnosticsKey, and
// otherwise what the cancel context holds.
func (c *stmtCtx) Value(key any) any {
	if _, ok := key.(diagnosticsKey); ok && c.diag != nil {
		return c.diag
	}
	return c.Context.Value(key)
}

// begin makes the context of one statement, which timeout (0 for none)
// cancels unless end is called first; end must be called when the
// statement's response is written.
func (w *stmtWatch) begin(timeout time.Duration) (ctx context.Context, end func()) {
	cctx, cancel := context.WithCancelCause(context.Background())
	ctx = &stmtCtx{Context: cctx, w: w}
	w.mu.Lock()
	w.cancelF = cancel
	w.start = time.Now()
	w.running = true
	w.timeout = timeout
	if w.end == nil {
		w.end = w.finish
		w.clientGone = func() { w.cancel(errClientGone) }
		w.watchTimer = time.AfterFunc(watchDelay, w.startWatch)
		w.watchArmed = true
	} else if !w.watchArmed {
		w.watchTimer.Reset(watchDelay)
		w.watchArmed = true
	}
	if timeout > 0 {
		// A pending timer that fires later than this statement's
		// timeout (a reload shortened it) is brought forward.
		at := w.start.Add(timeout)
		switch {
		case w.timeoutTimer == nil:
			w.timeoutTimer = time.AfterFunc(timeout, w.timeoutFired)
		case !w.timeoutArmed || at.Before(w.timeoutAt):
			w.timeoutTimer.Reset(timeout)
		default:
			at = w.timeoutAt
		}
		w.timeoutArmed, w.timeoutAt = true, at
	}
	w.mu.Unlock()
	return ctx, w.end
}

// cancel cancels the running statement, if any.
func (w *stmtWatch) cancel(cause error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cancelF != nil {
		w.cancelF(cause)
		w.killBackendsLocked()
	}
}

// cancelStarted cancels the running statement with cause if it is the
// one that began at start (statement), reporting whether it did.
func (w *stmtWatch) cancelStarted(start time.Time, cause error) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.running || w.cancelF == nil || !w.start.Equal(start) {
		return false
	}
	w.cancelF(cause)
	w.killBackendsLocked()
	return true
}

// statement reports when the running statement began, appending to
// reading the backend connections it is reading a response from;
// running is false between statements.
func (w *stmtWatch) statement(reading []*backendConn) (start time.Time, _ []*backendConn, running bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.running || w.cancelF == nil {
		return start, reading, false
	}
	return w.start, append(reading, w.backends...), true
}

// killBackendsLocked kills the statement on the backend connections it
// is reading, each on a goroutine of its own (what context.AfterFunc
// would do), once the statement's context is cancelled.
func (w *stmtWatch) killBackendsLocked() {
	for _, bc := range w.backends {
		go bc.killWatched()
	}
	clear(w.backends)
	w.backends = w.backends[:0]
}

// watchBackend has the statement's cancellation kill what bc runs; a
// statement already cancelled (or over: ctx is one of an earlier one)
// kills it at once.
func (w *stmtWatch) watchBackend(ctx context.Context, bc *backendConn) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ctx.Err() != nil {
		go bc.killWatched()
		return
	}
	w.backends = append(w.backends, bc)
}

// unwatchBackend ends watchBackend; false means the cancellation has
// already taken bc (its kill is under way).
func (w *stmtWatch) unwatchBackend(bc *backendConn) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, x := range w.backends {
		if x == bc {
			last := len(w.backends) - 1
			w.backends[i] = w.backends[last]
			w.backends[last] = nil
			w.backends = w.backends[:last]
			return true
		}
	}
	return false
}

// elapsed is how long the running statement has run.
func (w *stmtWatch) elapsed() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return time.Since(w.start)
}

// startWatch starts watching the client for going away, once a statement
// has run for watchDelay: quick statements never pay for it. The timer
// fired for whichever statement runs now: one younger than watchDelay has
// it armed again for the rest of its delay; between statements it rests
// until the next one begins.
func (w *stmtWatch) startWatch() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.watchArmed = false
	if !w.running {
		return
	}
	if left := watchDelay - time.Since(w.start); left > 0 {
		w.watchTimer.Reset(left)
		w.watchArmed = true
		return
	}
	// Without its own reader (driven by go-mysql's command loop) the
	// session cannot watch the client.
	if w.stop == nil && w.wc != nil && !w.readingClient {
		w.stop = w.wc.Watch(w.clientGone)
	}
}

// timeoutFired cancels the statement running for longer than the
// statement timeout. It fired for whichever statement runs now: one
// that has time left has the timer armed again for it.
func (w *stmtWatch) timeoutFired() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.timeoutArmed = false
	if !w.running || w.cancelF == nil || w.timeout <= 0 {
		return
	}
	if left := w.timeout - time.Since(w.start); left > 0 {
		w.timeoutTimer.Reset(left)
		w.timeoutArmed, w.timeoutAt = true, time.Now().Add(left)
		return
	}
	w.cancelF(ErrStatementTimeout)
	w.killBackendsLocked()
}

// finish ends the statement begin began.
//
// The timers stay armed (see stmtWatch): when they fire they find no
// statement, or the next one, and look at that.
func (w *stmtWatch) finish() {
	w.mu.Lock()
	w.running = false
	stop, cancel := w.stop, w.cancelF
	w.stop, w.cancelF = nil, nil
	w.mu.Unlock()
	if stop != nil {
		// It waits for the watching read to end, so a client that
		// leaves later cannot cancel the next statement.
		stop()
	}
	if cancel != nil {
		w.mu.Lock()
		cancel(nil)
		w.killBackendsLocked()
		w.mu.Unlock()
	}
}

// release stops the timers of a session that ends, so that a pending
// one does not keep the session for the rest of its delay.
func (w *stmtWatch) release() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.watchTimer != nil {
		w.watchTimer.Stop()
	}
	if w.timeoutTimer != nil {
		w.timeoutTimer.Stop()
	}
	w.watchArmed, w.timeoutArmed = false, false
}

// readClient keeps the watch off the client connection while the
// statement itself reads it (the watch would take the client's packets);
// done lets the watch start again.
func (w *stmtWatch) readClient() (done func()) {
	w.mu.Lock()
	w.readingClient = true
	stop := w.stop
	w.stop = nil
	w.mu.Unlock()
	if stop != nil {
		stop()
	}
	return func() {
		w.mu.Lock()
		w.readingClient = false
		w.mu.Unlock()
	}
}
