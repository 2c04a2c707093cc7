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
	watchTimer    *time.Timer
	timeoutTimer  *time.Timer
	end           func()
	clientGone    func()
}

// begin makes the context of one statement, which timeout (0 for none)
// cancels unless end is called first; end must be called when the
// statement's response is written.
func (w *stmtWatch) begin(timeout time.Duration) (ctx context.Context, end func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	w.mu.Lock()
	w.cancelF = cancel
	w.start = time.Now()
	w.running = true
	if w.end == nil {
		w.end = w.finish
		w.clientGone = func() { w.cancel(errClientGone) }
		w.watchTimer = time.AfterFunc(watchDelay, w.startWatch)
		if timeout > 0 {
			w.timeout = timeout
			w.timeoutTimer = time.AfterFunc(timeout, w.timeoutFired)
		}
	} else {
		w.watchTimer.Reset(watchDelay)
		if w.timeoutTimer != nil {
			// A reload may have changed the timeout; none (0) must not
			// fire at once.
			w.timeout = timeout
			if timeout > 0 {
				w.timeoutTimer.Reset(timeout)
			}
		}
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
	}
}

// elapsed is how long the running statement has run.
func (w *stmtWatch) elapsed() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return time.Since(w.start)
}

// startWatch starts watching the client for going away, once a statement
// has run for watchDelay: quick statements never pay for it.
func (w *stmtWatch) startWatch() {
	w.mu.Lock()
	defer w.mu.Unlock()
	// Without its own reader (driven by go-mysql's command loop) the
	// session cannot watch the client.
	if w.running && w.stop == nil && w.wc != nil && !w.readingClient {
		w.stop = w.wc.Watch(w.clientGone)
	}
}

// timeoutFired cancels the statement running for longer than the
// statement timeout. A timer that fires as one statement ends and the
// next begins finds the next one too young and leaves it alone.
func (w *stmtWatch) timeoutFired() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.running && w.cancelF != nil && time.Since(w.start) >= w.timeout {
		w.cancelF(ErrStatementTimeout)
	}
}

// finish ends the statement begin began.
func (w *stmtWatch) finish() {
	w.watchTimer.Stop()
	if w.timeoutTimer != nil {
		w.timeoutTimer.Stop()
	}
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
		cancel(nil)
	}
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
