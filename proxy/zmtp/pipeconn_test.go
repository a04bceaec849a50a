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

// readerConn is a conn that reads b and writes to w (io.Discard if nil).
func readerConn(b []byte, w io.Writer) *conn {
	if w == nil {
		w = io.Discard
	}
	pc := &pipeConn{w: w}
	pc.r.Reset(b)
	return newConn(pc)
}

// refill has c, made by readerConn, read b from the start. The fuzz
// targets reuse their conns: allocating and clearing a new one's 128 KiB
// of buffers would be most of the cost of each run.
func refill(c *conn, b []byte) *conn {
	pc := c.Conn.(*pipeConn)
	pc.r.Reset(b)
	c.r.Reset(pc)
	return c
}
