package wire

import (
	"io"
	"net"
)

// RawWriter returns a writer of nc's socket that writes as Conn does
// (rawIO: without the scheduler's syscall state), or nc itself when nc is
// not a plain socket. It is for a caller that writes nc's bytes itself
// while a Conn reads it (the multiplexer's shared connections); one
// write at a time.
func RawWriter(nc net.Conn) io.Writer {
	if r := newRawIO(nc); r != nil {
		return r
	}
	return nc
}
