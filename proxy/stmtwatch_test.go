package proxy

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestStmtWatchTimeoutAfterQuickStatements: the statement timeout's timer
// stays armed across statements (it is not reset per statement), yet
// every statement gets its whole timeout, counted from its own start,
// and a reload that shortens the timeout applies to the next statement.
func TestStmtWatchTimeoutAfterQuickStatements(t *testing.T) {
	const timeout = 200 * time.Millisecond
	var w stmtWatch
	defer w.release()
	// Quick statements, one after the other, for longer than the
	// timeout: none is cancelled, although the timer fires among them.
	deadline := time.Now().Add(2 * timeout)
	for time.Now().Before(deadline) {
		ctx, end := w.begin(timeout)
		if ctx.Err() != nil {
			t.Fatalf("a quick statement was cancelled: %v", context.Cause(ctx))
		}
		time.Sleep(time.Millisecond)
		end()
	}
	// A slow one is cancelled by the timeout, not before it.
	start := time.Now()
	ctx, end := w.begin(timeout)
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the statement timeout did not cancel a slow statement")
	}
	took := time.Since(start)
	end()
	if !errors.Is(context.Cause(ctx), ErrStatementTimeout) {
		t.Errorf("cancelled by %v, want the statement timeout", context.Cause(ctx))
	}
	if took < timeout {
		t.Errorf("cancelled after %s, before its timeout %s", took, timeout)
	}
	// A long timeout's timer is pending; the next statement has a short
	// one (a reload): it is not kept waiting for the long one.
	_, end = w.begin(time.Hour)
	end()
	start = time.Now()
	ctx, end = w.begin(50 * time.Millisecond)
	defer end()
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("a shortened timeout did not cancel the statement")
	}
	if took := time.Since(start); took < 50*time.Millisecond {
		t.Errorf("cancelled after %s, before its timeout", took)
	}
}
