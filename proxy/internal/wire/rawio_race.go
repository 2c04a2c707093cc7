//go:build linux && race

package wire

import "syscall"

// sysRead is syscall.Read under the race detector: its annotations order
// a socket's write before its read for the detector, which the raw
// system call (rawio_norace.go) would hide.
func sysRead(fd uintptr, b []byte) (int, syscall.Errno) {
	n, err := syscall.Read(int(fd), b)
	return max(n, 0), errnoOf(err)
}

// sysWrite is syscall.Write under the race detector (see sysRead).
func sysWrite(fd uintptr, b []byte) (int, syscall.Errno) {
	n, err := syscall.Write(int(fd), b)
	return max(n, 0), errnoOf(err)
}

func errnoOf(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	if errno, ok := err.(syscall.Errno); ok {
		return errno
	}
	return syscall.EIO
}
