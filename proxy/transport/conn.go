package transport

import (
	"bufio"
	"net"
	"sync"
)

// bufSize is the read and write buffer of each connection: far above a
// Jupyter message's envelope and typical content, so a frame header and
// its body arrive in one read and a message leaves in one write, while a
// client with a handful of connections spends well under a megabyte on them.
const bufSize = 64 << 10

// conn is a net.Conn that reads through a bufio.Reader and writes through a
// frameWriter. zmq4 reads a conn from one goroutine and writes it under its
// socket locks, but its Close may run concurrently with both; the mutexes
// keep the buffers race-free whatever zmq4 does, and Close takes neither so
// it can always unblock a stuck Read or Write.
type conn struct {
	net.Conn

	rmu   sync.Mutex
	r     *bufio.Reader
	guard *frameGuard

	wmu sync.Mutex
	w   *frameWriter
}

func newConn(c net.Conn) *conn {
	if tc, ok := c.(*net.TCPConn); ok {
		// Go's default already, but latency is this package's whole point:
		// a flushed message must leave now, not wait for Nagle.
		_ = tc.SetNoDelay(true)
	}
	return &conn{
		Conn:  c,
		r:     bufio.NewReaderSize(c, bufSize),
		guard: newFrameGuard(),
		w:     newFrameWriter(c, bufSize),
	}
}

// Read hands zmq4 the peer's bytes once the frame guard has seen them.
func (c *conn) Read(p []byte) (int, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	n, err := c.r.Read(p)
	if gerr := c.guard.scan(p[:n]); gerr != nil {
		c.Conn.Close()
		return 0, gerr
	}
	return n, err
}

func (c *conn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.w.Write(p)
}
