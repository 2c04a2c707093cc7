//go:build linux && !race

package wire

import (
	"syscall"
	"unsafe"
)

// sysRead is read(2) without entering the scheduler's syscall state
// (rawIO); b is not empty.
func sysRead(fd uintptr, b []byte) (int, syscall.Errno) {
	n, _, errno := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	return int(n), errno
}

// sysWrite is write(2) as sysRead is read(2).
func sysWrite(fd uintptr, b []byte) (int, syscall.Errno) {
	n, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	return int(n), errno
}
