package wire

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// tcpPair is a connected loopback TCP pair.
func tcpPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := l.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	if server == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// passthrough wraps a socket as the proxy's login connection does once
// the login is done.
type passthrough struct{ net.Conn }

func (p passthrough) SocketConn() net.Conn { return p.Conn }

// TestRawIO: a Conn on a TCP socket (or on a wrapper that names its
// socket) reads and writes with raw system calls, and behaves as
// net.Conn does: packets larger than the socket buffers go through
// whole, deadlines end reads with os.ErrDeadlineExceeded, Close ends a
// waiting read with net.ErrClosed, and the peer leaving is io.EOF.
func TestRawIO(t *testing.T) {
	a, b := tcpPair(t)
	ca, cb := NewConn(passthrough{a}), NewConn(b)
	for _, c := range []*Conn{ca, cb} {
		if _, ok := c.src.r.(*rawIO); !ok {
			t.Fatalf("reader %T, want *rawIO", c.src.r)
		}
	}
	// 8 MiB: more than the loopback socket buffers hold, so writes meet
	// EAGAIN and wait for the peer to read.
	big := bytes.Repeat([]byte("0123456789abcdef"), 8<<16)
	done := make(chan error, 1)
	go func() {
		if err := ca.WritePacket(big); err != nil {
			done <- err
			return
		}
		done <- ca.Flush()
	}()
	p, err := cb.ReadPacket()
	if err != nil || !bytes.Equal(p, big) {
		t.Fatalf("read %d bytes, %v; want %d bytes", len(p), err, len(big))
	}
	if err := <-done; err != nil {
		t.Fatalf("write: %v", err)
	}

	cb.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := cb.ReadPacket(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("past the deadline: %v, want os.ErrDeadlineExceeded", err)
	}
	cb.SetReadDeadline(time.Time{})

	go func() {
		time.Sleep(50 * time.Millisecond)
		a.Close()
	}()
	if _, err := cb.ReadPacket(); !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("after the peer closed: %v, want EOF", err)
	}
	_, d := tcpPair(t)
	cd := NewConn(d)
	go func() {
		time.Sleep(50 * time.Millisecond)
		d.Close()
	}()
	if _, err := cd.ReadPacket(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("after Close: %v, want net.ErrClosed", err)
	}
	if err := cd.WritePacket([]byte{1}); err == nil {
		if err := cd.Flush(); err == nil {
			t.Fatal("a write after Close succeeded")
		}
	}
}
