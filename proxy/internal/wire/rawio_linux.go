package wire

import (
	"io"
	"net"
	"os"
	"syscall"
)

// rawIO reads and writes a socket with raw system calls, inside
// syscall.RawConn's Read and Write, which still wait for readiness in the
// netpoller (and honour deadlines and Close). A raw call does not enter
// the scheduler's syscall state: a non-blocking socket read or write
// returns in microseconds, and entering that state per call made the Go
// scheduler hand the goroutine's P to another thread whenever a call
// outlasted a sysmon tick (a loopback write wakes the peer), which cost
// each statement futex wake-ups, thread switches and a busier sysmon.
// Reads and writes may run at once on different goroutines (each keeps
// its own state); one of each at a time. Under the race detector the
// calls are syscall.Read and Write (rawio_race.go), whose annotations
// tell the detector that what one goroutine wrote to a socket happened
// before another read it; only the system call differs.
type rawIO struct {
	rc      syscall.RawConn
	network string

	rbuf   []byte
	rn     int
	rerr   error
	readF  func(fd uintptr) bool
	wbuf   []byte
	wn     int
	werr   error
	writeF func(fd uintptr) bool
}

// newRawIO returns nc's rawIO, or nil when nc is not a plain socket (TLS).
func newRawIO(nc net.Conn) *rawIO {
	if w, ok := nc.(interface{ SocketConn() net.Conn }); ok {
		if inner := w.SocketConn(); inner != nil {
			nc = inner
		}
	}
	var network string
	switch nc.(type) {
	case *net.TCPConn:
		network = "tcp"
	case *net.UnixConn:
		network = "unix"
	default:
		return nil
	}
	rc, err := nc.(syscall.Conn).SyscallConn()
	if err != nil {
		return nil
	}
	r := &rawIO{rc: rc, network: network}
	r.readF = r.readFD
	r.writeF = r.writeFD
	return r
}

func (r *rawIO) readFD(fd uintptr) bool {
	for {
		n, errno := sysRead(fd, r.rbuf)
		switch errno {
		case 0:
			r.rn = n
			if n == 0 {
				r.rerr = io.EOF
			}
			return true
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		r.rerr = &net.OpError{Op: "read", Net: r.network, Err: os.NewSyscallError("read", errno)}
		return true
	}
}

func (r *rawIO) writeFD(fd uintptr) bool {
	for len(r.wbuf) > 0 {
		n, errno := sysWrite(fd, r.wbuf)
		switch errno {
		case 0:
			if n == 0 {
				// As poll.FD.Write: a socket that takes nothing.
				r.werr = io.ErrUnexpectedEOF
				return true
			}
			r.wn += n
			r.wbuf = r.wbuf[n:]
			continue
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		r.werr = &net.OpError{Op: "write", Net: r.network, Err: os.NewSyscallError("write", errno)}
		return true
	}
	return true
}

// Read reads what the socket has, waiting for some if it has none.
func (r *rawIO) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	r.rbuf, r.rn, r.rerr = b, 0, nil
	err := r.rc.Read(r.readF)
	n := r.rn
	if err == nil {
		err = r.rerr
	}
	r.rbuf, r.rerr = nil, nil
	return n, err
}

// Write writes all of b.
func (r *rawIO) Write(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	r.wbuf, r.wn, r.werr = b, 0, nil
	err := r.rc.Write(r.writeF)
	n := r.wn
	if err == nil {
		err = r.werr
	}
	r.wbuf, r.werr = nil, nil
	return n, err
}
