package zmtp

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// sockIO reads and writes a connection's socket with raw system calls.
// Go's own socket I/O enters each call as one that may block, and the
// first such call after the process was idle wakes the runtime's monitor
// thread, which then polls every 20 µs until the process is idle again:
// for each Jupyter message a futex wake-up and a handful of sleeps on
// another CPU, which on a small VM cost more than forwarding the message.
// A call on a non-blocking socket never blocks, so it needs none of that.
// Waiting for the socket, and deadlines, stay the runtime's netpoller's
// (syscall.RawConn).
type sockIO struct {
	rc  syscall.RawConn
	iov []syscall.Iovec // for writes, which hold conn.wmu; grown as needed
}

// newSockIO returns raw I/O for c, or nil if c is not a socket (a pipe in
// tests).
func newSockIO(c net.Conn) *sockIO {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return &sockIO{rc: rc}
}

// Read reads what the socket has, waiting until it has something.
func (s *sockIO) Read(p []byte) (n int, err error) {
	if len(p) == 0 {
		return 0, nil
	}
	var errno syscall.Errno
	werr := s.rc.Read(func(fd uintptr) bool {
		for {
			r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			if e == syscall.EINTR {
				continue
			}
			n, errno = int(r), e
			return e != syscall.EAGAIN
		}
	})
	switch {
	case werr != nil:
		return 0, werr
	case errno != 0:
		return 0, os.NewSyscallError("read", errno)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// writev writes vec whole, waiting while the socket is full. It consumes
// vec as net.Buffers.WriteTo does.
func (s *sockIO) writev(vec *net.Buffers) error {
	var errno syscall.Errno
	werr := s.rc.Write(func(fd uintptr) bool {
		for len(*vec) > 0 {
			var n int
			if n, errno = s.sysWritev(fd, *vec); errno == syscall.EAGAIN {
				errno = 0
				return false // wait until the socket takes more
			}
			if errno != 0 {
				return true
			}
			consume(vec, n)
		}
		return true
	})
	if werr != nil {
		return werr
	}
	if errno != 0 {
		return os.NewSyscallError("writev", errno)
	}
	return nil
}

// writevOnce writes what the socket takes of vec at once, with one
// system call, and never waits: n is 0 if the socket is full.
func (s *sockIO) writevOnce(vec net.Buffers) (n int, err error) {
	var errno syscall.Errno
	werr := s.rc.Write(func(fd uintptr) bool {
		if n, errno = s.sysWritev(fd, vec); errno == syscall.EAGAIN {
			errno = 0
		}
		return true
	})
	if werr != nil {
		return 0, werr
	}
	if errno != 0 {
		return 0, os.NewSyscallError("writev", errno)
	}
	return n, nil
}

// sysWritev is one writev(2) of as much of vec as one call takes.
func (s *sockIO) sysWritev(fd uintptr, vec net.Buffers) (int, syscall.Errno) {
	iov, cnt := s.iovecs(vec)
	if cnt == 0 {
		return 0, 0
	}
	defer clear(iov[:cnt]) // let the buffers go
	for {
		r, _, e := syscall.RawSyscall(syscall.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&iov[0])), uintptr(cnt))
		if e == 0 {
			return int(r), 0
		}
		if e != syscall.EINTR {
			return 0, e
		}
	}
}

// iovecs points s.iov at vec's non-empty buffers, as many as fit in
// one call; it returns them and how many it set.
func (s *sockIO) iovecs(vec net.Buffers) ([]syscall.Iovec, int) {
	if want := min(len(vec), maxIovecs); cap(s.iov) < want {
		s.iov = make([]syscall.Iovec, want)
	}
	iov, cnt := s.iov[:cap(s.iov)], 0
	for _, b := range vec {
		if cnt == len(iov) {
			break
		}
		if len(b) == 0 {
			continue
		}
		iov[cnt] = syscall.Iovec{Base: &b[0]}
		iov[cnt].SetLen(len(b))
		cnt++
	}
	return iov, cnt
}

// consume drops the first n bytes of vec.
func consume(vec *net.Buffers, n int) {
	for len(*vec) > 0 && n >= len((*vec)[0]) {
		n -= len((*vec)[0])
		*vec = (*vec)[1:]
	}
	if n > 0 {
		(*vec)[0] = (*vec)[0][n:]
	}
}

// maxIovecs is Linux's IOV_MAX.
const maxIovecs = 1024
