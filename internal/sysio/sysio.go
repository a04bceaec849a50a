// Package sysio chooses how the proxy makes the system calls it makes most:
// the reads and writes of its sockets (package zmtp) and the reads of the
// small kernel files the guard samples (package procfile). Go's ordinary
// calls wake the runtime's monitor thread from its sleep at the first call
// after each idle spell: some 20 wake-ups of another thread per cell, a
// third of the proxy's CPU (perf, issue 31). Raw calls do not. But the
// monitor is also what hands a proxy on GOMAXPROCS=1 its P back while a
// call waits in the kernel, and these calls can wait there (reclaim near
// the cgroup's limit, a statm read behind the kernel's mmap lock): the
// guard's sampler must not wait behind one when it matters. So raw calls
// are used only while SetRaw says so, which the guard does while the
// kernel's memory has room (guard.Notifier.Room).
package sysio

import (
	"sync/atomic"
	"syscall"
	"unsafe"
)

var raw atomic.Bool

// SetRaw turns raw system calls on or off. They start off.
func SetRaw(on bool) { raw.Store(on) }

// Syscall is syscall.Syscall or, while SetRaw is on, syscall.RawSyscall.
func Syscall(trap, a1, a2, a3 uintptr) (r1, r2 uintptr, err syscall.Errno) {
	if raw.Load() {
		return syscall.RawSyscall(trap, a1, a2, a3)
	}
	return syscall.Syscall(trap, a1, a2, a3)
}

// Pread is syscall.Pread, made as Syscall says.
func Pread(fd int, p []byte, offset int64) (int, error) {
	var ptr unsafe.Pointer
	if len(p) > 0 {
		ptr = unsafe.Pointer(&p[0])
	}
	var r uintptr
	var e syscall.Errno
	if raw.Load() {
		r, _, e = syscall.RawSyscall6(syscall.SYS_PREAD64, uintptr(fd), uintptr(ptr), uintptr(len(p)), uintptr(offset), 0, 0)
	} else {
		r, _, e = syscall.Syscall6(syscall.SYS_PREAD64, uintptr(fd), uintptr(ptr), uintptr(len(p)), uintptr(offset), 0, 0)
	}
	if e != 0 {
		return int(r), e
	}
	return int(r), nil
}
