// Package sysio chooses how the proxy makes the system calls it makes most:
// the reads and writes of its sockets (package zmtp), and the opens, reads
// and closes of the small kernel files the guard samples (packages procfile
// and proctree). Go's ordinary calls wake the runtime's monitor thread from
// its sleep at the first call after each idle spell: some 20 wake-ups of
// another thread per cell, a third of the proxy's CPU (perf, issue 31).
// Raw calls do not. But the monitor is also what hands a proxy on
// GOMAXPROCS=1 its P back while a call waits in the kernel, and these calls
// can wait there (reclaim near the cgroup's limit, a statm read behind the
// kernel's mmap lock): the guard's sampler must not wait behind one when it
// matters. So raw calls are used only while SetRaw says so, which the guard
// does while the kernel's memory has room (guard.Notifier.Room).
package sysio

import (
	"runtime"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

var raw atomic.Bool

// SetRaw turns raw system calls on or off. They start off.
func SetRaw(on bool) { raw.Store(on) }

// Syscall is syscall.Syscall or, while SetRaw is on, syscall.RawSyscall,
// without the second result, which Linux does not use.
func Syscall(trap, a1, a2, a3 uintptr) (uintptr, syscall.Errno) {
	return call6(trap, a1, a2, a3, 0)
}

// Pread is syscall.Pread, made as Syscall says.
func Pread(fd int, p []byte, offset int64) (int, error) {
	n, err := count(call6(syscall.SYS_PREAD64, uintptr(fd), bufPtr(p), uintptr(len(p)), uintptr(offset)))
	runtime.KeepAlive(p) // call6 takes its address as a uintptr
	return n, err
}

// ReadDirent is syscall.ReadDirent (getdents64), made as Syscall says.
func ReadDirent(fd int, buf []byte) (int, error) {
	n, err := count(call6(syscall.SYS_GETDENTS64, uintptr(fd), bufPtr(buf), uintptr(len(buf)), 0))
	runtime.KeepAlive(buf)
	return n, err
}

// atFDCWD is AT_FDCWD as a variable: the constant is negative, and a
// system call's arguments are uintptrs.
var atFDCWD = unix.AT_FDCWD

// Open opens path read-only and close-on-exec, made as Syscall says. The
// guard's sampler opens a kernel's children files with it at the end of a
// cell; an ordinary open there woke the monitor thread on every cell that
// followed a scan.
func Open(path string) (int, error) {
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return -1, err
	}
	fd, err := count(call6(syscall.SYS_OPENAT, uintptr(atFDCWD), uintptr(unsafe.Pointer(p)), syscall.O_RDONLY|syscall.O_CLOEXEC, 0))
	runtime.KeepAlive(p)
	return fd, err
}

// Close is syscall.Close, made as Syscall says.
func Close(fd int) error {
	_, err := count(call6(syscall.SYS_CLOSE, uintptr(fd), 0, 0, 0))
	return err
}

// call6 is the one switch between the two ways: every call above goes
// through it.
func call6(trap, a1, a2, a3, a4 uintptr) (uintptr, syscall.Errno) {
	var r uintptr
	var e syscall.Errno
	if raw.Load() {
		r, _, e = syscall.RawSyscall6(trap, a1, a2, a3, a4, 0, 0)
	} else {
		r, _, e = syscall.Syscall6(trap, a1, a2, a3, a4, 0, 0)
	}
	return r, e
}

// count turns a system call's result into Go's (n, err).
func count(r uintptr, e syscall.Errno) (int, error) {
	if e != 0 {
		return -1, e
	}
	return int(r), nil
}

func bufPtr(p []byte) uintptr {
	if len(p) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(&p[0]))
}
