package zmtp

import (
	"bytes"
	"io"
	"net"
	"time"
)

// pipeConn is a net.Conn that reads a fixed stream and writes to w, so
// conn's parsing can be fed bytes without a socket.
type pipeConn struct {
	r bytes.Reader
	w io.Writer
}

func (p *pipeConn) Read(b []byte) (int, error)       { return p.r.Read(b) }
func (p *pipeConn) Write(b []byte) (int, error)      { return p.w.Write(b) }
func (p *pipeConn) Close() error                     { return nil }
func (p *pipeConn) LocalAddr() net.Addr              { return &net.UnixAddr{Name: "pipe", Net: "unix"} }
func (p *pipeConn) RemoteAddr() net.Addr             { return &net.UnixAddr{Name: "pipe", Net: "unix"} }
func (p *pipeConn) SetDeadline(time.Time) error      { return nil }
func (p *pipeConn) SetReadDeadline(time.Time) error  { return nil }
func (p *pipeConn) SetWriteDeadline(time.Time) error { return nil }

// readerConn is a conn that reads b and writes to w (io.Discard if nil),
// as a Router's accepted connection is before it is trusted, with a pool
// of its own.
func readerConn(b []byte, w io.Writer) *conn {
	p := &pool{}
	p.free.Store(unverifiedPool)
	return pipeConnOf(b, w, acceptedReadBuffer, budget{free: freeBytes, max: maxUnverified, pool: p})
}

// trustedConn is readerConn as the kernel's connection is once it has
// shaken hands.
func trustedConn(b []byte, w io.Writer) *conn {
	c := pipeConnOf(b, w, bufSize, budget{})
	c.trusted = true
	return c
}

func pipeConnOf(b []byte, w io.Writer, readBuffer int, bud budget) *conn {
	if w == nil {
		w = io.Discard
	}
	pc := &pipeConn{w: w}
	pc.r.Reset(b)
	return newConn(pc, readBuffer, bud)
}

// refill has c, made by readerConn, read b from the start. The fuzz
// targets reuse their conns: allocating and clearing a new one's 128 KiB
// of buffers would be most of the cost of each run.
func refill(c *conn, b []byte) *conn {
	pc := c.Conn.(*pipeConn)
	pc.r.Reset(b)
	c.r.Reset(pc)
	c.budget.settle() // what the last run's error left charged
	return c
}
