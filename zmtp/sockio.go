package zmtp

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"

	"github.com/jupyter-guard/jupyter-guard/internal/sysio"
)

// sockIO is a connection's socket: the reads under the connection's
// buffered reader, and the first writev of every write, which takes what
// the socket takes and never waits (conn.tryWriteMsg, conn.flush); both
// are made as package sysio says. What is left of a write that must wait
// goes through net.Conn.
type sockIO struct {
	rc  syscall.RawConn
	iov []syscall.Iovec // for writes, which hold conn.wmu; grown as needed
}

// newSockIO returns c's socket, or nil if c is not a socket (a pipe in
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

// Read reads what the socket has, waiting in the runtime's poller until it
// has something: the io.Reader under the connection's buffered reader.
func (s *sockIO) Read(b []byte) (n int, err error) {
	if len(b) == 0 {
		return 0, nil
	}
	var errno syscall.Errno
	rerr := s.rc.Read(func(fd uintptr) bool {
		for {
			r, e := sysio.Syscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
			switch e {
			case 0:
				n = int(r)
				return true
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // wait for the poller
			default:
				errno = e
				return true
			}
		}
	})
	switch {
	case rerr != nil:
		return 0, rerr
	case errno != 0:
		return 0, os.NewSyscallError("read", errno)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// writevOnce writes what the socket takes of vec at once, with one
// writev, and never waits: n is 0 if the socket is full.
func (s *sockIO) writevOnce(vec net.Buffers) (n int, err error) {
	iov, cnt := s.iovecs(vec)
	if cnt == 0 {
		return 0, nil
	}
	defer clear(iov[:cnt]) // let the buffers go
	var errno syscall.Errno
	werr := s.rc.Write(func(fd uintptr) bool {
		for {
			r, e := sysio.Syscall(syscall.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&iov[0])), uintptr(cnt))
			switch e {
			case 0:
				n = int(r)
			case syscall.EINTR:
				continue
			case syscall.EAGAIN: // full: n stays 0
			default:
				errno = e
			}
			return true // done, whatever it took: never wait
		}
	})
	if werr != nil {
		return 0, werr
	}
	if errno != 0 {
		return 0, os.NewSyscallError("writev", errno)
	}
	return n, nil
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
