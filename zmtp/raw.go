package zmtp

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"time"
)

// RawConn is a connection to a bound socket for test peers that send what
// this package's own sockets never would: a frame announced far larger
// than what follows, a message whose last frame never comes, thousands of
// connections that shake hands and say nothing. It shakes hands as the
// package does, then writes what it is given. Only tests use it
// (proxy/proxytest), so that they attack the proxy with the project's one
// ZMTP implementation.
type RawConn struct{ c *conn }

// DialRaw connects to the socket bound at ep as a socket of sockType
// ("DEALER", "SUB", "REQ") with identity (none if empty), and shakes
// hands, within timeout.
func DialRaw(ep, sockType string, identity []byte, timeout time.Duration, opts ...Option) (*RawConn, error) {
	o, network, addr, err := dialTarget(ep, opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	// A small read buffer: a test may hold thousands of these. Trusted as
	// a dialled connection is: what the socket under test sends is the
	// test's to judge.
	c, err := dialOnce(ctx, network, addr, sockType, identity, o.curve, acceptedReadBuffer)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", sockType, ep, err)
	}
	return &RawConn{c: c}, nil
}

// Conn is the connection, for deadlines and raw bytes: what is written on
// it goes to the socket as it is.
func (r *RawConn) Conn() net.Conn { return r.c.Conn }

// FrameHeader is the header of a frame of size bytes, with MORE if more:
// what a peer writes before the body, which it may then never send.
func FrameHeader(more bool, size uint64) []byte {
	var flags byte
	if more {
		flags = flagMore
	}
	if size > 255 {
		return binary.BigEndian.AppendUint64([]byte{flags | flagLong}, size)
	}
	return []byte{flags, byte(size)}
}

// WriteMsg sends frames as one message.
func (r *RawConn) WriteMsg(frames [][]byte) error { return r.c.writeMsg(frames) }

// ReadMsg reads the next message.
func (r *RawConn) ReadMsg() ([][]byte, error) { return r.c.readMsg() }

// Close closes the connection.
func (r *RawConn) Close() error { return r.c.Close() }
