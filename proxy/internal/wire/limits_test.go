package wire

import (
	"errors"
	"net"
	"os"
	"sync/atomic"
	"testing"
	"time"
)

// TestBudgetRefusesAndReleases shares a 3 MiB budget between two
// connections: the second payload that does not fit is refused, and a
// long payload's buffer is given back once the next packet is read.
func TestBudgetRefusesAndReleases(t *testing.T) {
	budget := NewBudget(3 << 20)
	conns := make([]*Conn, 2)
	for i := range conns {
		a, b := net.Pipe()
		t.Cleanup(func() { a.Close(); b.Close() })
		w := NewConn(a)
		go func() {
			w.WritePacket(make([]byte, 2<<20))
			w.WritePacket([]byte{1})
			w.Flush()
		}()
		conns[i] = NewConn(b)
		conns[i].SetBudget(budget)
	}
	if p, err := conns[0].ReadPacket(); err != nil || len(p) != 2<<20 {
		t.Fatalf("first: %d bytes, %v", len(p), err)
	}
	if used := budget.Used(); used < 2<<20 {
		t.Fatalf("budget used %d while a 2 MiB payload is held", used)
	}
	if _, err := conns[1].ReadPacket(); !errors.Is(err, ErrBudget) {
		t.Fatalf("second: %v, want ErrBudget", err)
	}
	conns[1].ReleaseBudget()
	if p, err := conns[0].ReadPacket(); err != nil || len(p) != 1 {
		t.Fatalf("after it: %q, %v", p, err)
	}
	if used := budget.Used(); used != 0 {
		t.Errorf("budget used %d after both were given back", used)
	}
}

// TestReadTimeouts: a peer that sends nothing is cut after the idle
// timeout, one that stalls inside a packet after the read timeout, and a
// packet read in time leaves no deadline behind.
func TestReadTimeouts(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	r := NewConn(b)
	r.SetReadTimeouts(100*time.Millisecond, time.Hour)
	start := time.Now()
	if _, err := r.ReadPacket(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("idle: %v, want a deadline error", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("idle: cut after %s", took)
	}

	a2, b2 := net.Pipe()
	defer a2.Close()
	defer b2.Close()
	r = NewConn(b2)
	r.SetReadTimeouts(time.Hour, 100*time.Millisecond)
	go a2.Write(append(header(3, 0), 1, 2, 3))
	if p, err := r.ReadPacket(); err != nil || len(p) != 3 {
		t.Fatalf("in time: %q, %v", p, err)
	}
	// No deadline is left for a read of the connection elsewhere
	// (Watch) that ends well after the timeout.
	go func() {
		time.Sleep(300 * time.Millisecond)
		a2.Write([]byte{9})
	}()
	var one [1]byte
	if _, err := r.NetConn().Read(one[:]); err != nil {
		t.Fatalf("a read after ReadPacket: %v", err)
	}
	go a2.Write(append(header(100, 1), 1, 2, 3))
	start = time.Now()
	if _, err := r.ReadPacket(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("stalled: %v, want a deadline error", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("stalled: cut after %s", took)
	}
}

// TestIdleDeadlineAcrossCommands: the idle deadline ReadPacket leaves set
// (it is moved only once per slack, not per command) still cuts a peer
// that goes quiet after some commands, and does not end a Watch that runs
// past it (a statement that runs longer than the idle timeout).
func TestIdleDeadlineAcrossCommands(t *testing.T) {
	const idle = 150 * time.Millisecond
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	r := NewConn(b)
	r.SetReadTimeouts(idle, time.Hour)
	for i := range 3 {
		r.ResetSeq()
		go a.Write(append(header(1, 0), byte(i)))
		if p, err := r.ReadPacket(); err != nil || len(p) != 1 || p[0] != byte(i) {
			t.Fatalf("command %d: %q, %v", i, p, err)
		}
	}
	// A statement runs for twice the idle timeout while the client is
	// watched: the watch must not read the deadline as the client gone.
	var gone atomic.Bool
	stop := r.Watch(func() { gone.Store(true) })
	time.Sleep(2 * idle)
	stop()
	if gone.Load() {
		t.Fatal("the idle deadline ended the watch of a running statement")
	}
	// The next command arrives after it: read as usual.
	r.ResetSeq()
	go a.Write(append(header(1, 0), 7))
	if p, err := r.ReadPacket(); err != nil || len(p) != 1 || p[0] != 7 {
		t.Fatalf("command after the watch: %q, %v", p, err)
	}
	// Then the client goes quiet: cut after the idle timeout, never
	// before it (at most its slack later).
	r.ResetSeq()
	start := time.Now()
	if _, err := r.ReadPacket(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("idle after commands: %v, want a deadline error", err)
	}
	if took := time.Since(start); took < idle {
		t.Errorf("idle after commands: cut after %s, before the idle timeout %s", took, idle)
	}
}
