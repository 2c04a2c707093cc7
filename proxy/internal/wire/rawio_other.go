//go:build !linux

package wire

import "net"

// rawIO is Linux's (rawio_linux.go); elsewhere sockets are read and
// written as net.Conn does.
type rawIO struct{ net.Conn }

func newRawIO(net.Conn) *rawIO { return nil }
