package zmtp

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
)

// ZMTP 3 framing: a flags byte, a 1- or 8-byte big-endian size, the body.
const (
	flagMore    = 0x01
	flagLong    = 0x02
	flagCommand = 0x04
)

const (
	// bufSize is the read buffer of a dialled connection (the kernel's,
	// whose outputs can be large) and each connection's write buffer, made
	// at its first message: far above a Jupyter message's envelope and
	// typical content, so a message arrives in one read and leaves in one
	// write.
	bufSize = 64 << 10
	// inlineMax is the largest frame copied into the write buffer; a
	// larger one goes to the socket from where it is, in the same writev.
	inlineMax = 16 << 10
	// maxFrame is the largest frame a trusted peer may announce. Jupyter
	// messages are far smaller; 4 GiB leaves room for huge buffers.
	maxFrame = 4 << 30
	// Bounds for peers not trusted with memory (see conn.trusted), besides
	// their budget, as libzmq's: commands are small (READY, SUBSCRIBE),
	// identities at most 255 bytes; and a Jupyter message has a few
	// routing ids, six frames and its buffers, never thousands: 40 MiB of
	// empty frames once grew the proxy by 1.6 GiB of slice headers.
	maxCommand  = 64 << 10
	maxIdentity = 255
	maxFrames   = 1024
)

// ErrClosed is returned by writes on a connection that has failed or been
// closed.
var ErrClosed = errors.New("zmtp: connection closed")

// conn is one ZMTP connection. Reads come from one goroutine; writes may
// come from any, one whole message at a time.
type conn struct {
	net.Conn
	r    *bufio.Reader
	sock *sockIO // reads and tryWriteMsg; nil if Conn is not a socket

	// trusted peers have each frame read whole as soon as its size
	// arrives: the kernel the proxy dialled, once it has shaken hands,
	// whose 50 MB outputs would otherwise be held to a budget, and a peer
	// that dialled the proxy once it has sent a verified message (see
	// limits.go). The others are held to budget. Read and set by the
	// reading goroutine only.
	trusted bool
	budget  budget
	// curve boxes every frame once a CURVE handshake is done; nil for NULL.
	curve *curveSession

	wmu  sync.Mutex
	wbuf []byte // made at the first message: an idle peer holds none
	vec  net.Buffers
	rest net.Buffers // what tryWriteMsg could not write at once
	werr error       // the first write error: the stream is broken after it
}

// newConn wraps c with a read buffer of readBuffer bytes; until it is
// trusted, what it may hold of one message is b.
func newConn(c net.Conn, readBuffer int, b budget) *conn {
	sock := newSockIO(c)
	var src io.Reader = c
	if sock != nil {
		src = sock
	}
	return &conn{Conn: c, r: bufio.NewReaderSize(src, readBuffer), sock: sock, budget: b}
}

// budget is what an untrusted connection's current message (or command)
// may hold: free bytes of its own, the rest drawn from a pool shared with
// other connections, max in all. Frames are charged as they are announced,
// before their bytes are read, and the message's charge is given back
// when the next read begins (the handler has returned by then) or the
// connection ends.
type budget struct {
	free, max   int
	pool        *pool // nil: nothing beyond free
	held, drawn int
}

// charge adds a frame of n bytes to the message being read.
func (b *budget) charge(n uint64) error {
	if uint64(b.held)+n > uint64(b.max) {
		return fmt.Errorf("peer announced a message of %d bytes or more; a peer that has not shown the kernel's key may send %d", uint64(b.held)+n, b.max)
	}
	b.held += int(n)
	if want := b.held - b.free; want > b.drawn {
		if b.pool == nil || !b.pool.take(want-b.drawn) {
			return fmt.Errorf("peer's message of %d bytes needs %d of the %d MiB that peers which have not shown the kernel's key share, and they are in use",
				b.held, want-b.drawn, unverifiedPool>>20)
		}
		b.drawn = want
	}
	return nil
}

// uncharge removes n bytes from what is held: a command that was handled.
func (b *budget) uncharge(n int) {
	b.held -= n
	if extra := b.drawn - max(0, b.held-b.free); extra > 0 {
		b.pool.give(extra)
		b.drawn -= extra
	}
}

// settle gives back what the last message held.
func (b *budget) settle() { b.uncharge(b.held) }

// readFrame reads one frame, command or message part, out of its MESSAGE
// box under CURVE.
func (c *conn) readFrame() (flags byte, body []byte, err error) {
	flags, body, err = c.readWireFrame()
	if err != nil || c.curve == nil {
		return flags, body, err
	}
	return c.curve.open(body)
}

// readWireFrame reads one frame as it is on the wire.
func (c *conn) readWireFrame() (flags byte, body []byte, err error) {
	if flags, err = c.r.ReadByte(); err != nil {
		return 0, nil, err
	}
	var size uint64
	if flags&flagLong != 0 {
		var b [8]byte
		if _, err = io.ReadFull(c.r, b[:]); err != nil {
			return 0, nil, err
		}
		size = binary.BigEndian.Uint64(b[:])
	} else {
		b, err := c.r.ReadByte()
		if err != nil {
			return 0, nil, err
		}
		size = uint64(b)
	}
	if size > maxFrame {
		return 0, nil, fmt.Errorf("peer announced a frame of %d bytes, above the %d-byte limit", size, uint64(maxFrame))
	}
	if !c.trusted {
		// Under CURVE, after the handshake, every frame is a MESSAGE box
		// whatever it holds; the budget bounds those.
		if c.curve == nil && flags&flagCommand != 0 && size > maxCommand {
			return 0, nil, fmt.Errorf("peer announced a command of %d bytes, above the %d-byte limit", size, maxCommand)
		}
		if err := c.budget.charge(size); err != nil {
			return 0, nil, err
		}
	}
	body = make([]byte, size)
	if _, err = io.ReadFull(c.r, body); err != nil {
		return 0, nil, err
	}
	return flags, body, nil
}

// readCommand reads one frame that must be a command, and splits it into
// name and data.
func (c *conn) readCommand() (name string, data []byte, err error) {
	flags, body, err := c.readFrame()
	if err != nil {
		return "", nil, err
	}
	if flags&flagCommand == 0 {
		return "", nil, fmt.Errorf("peer sent a message where a command belongs")
	}
	return splitCommand(body)
}

func splitCommand(body []byte) (name string, data []byte, err error) {
	if len(body) == 0 || len(body) < 1+int(body[0]) {
		return "", nil, fmt.Errorf("malformed command")
	}
	return string(body[1 : 1+body[0]]), body[1+body[0]:], nil
}

// readMsg reads the next message. Commands met on the way are answered
// (PING) or ignored, except SUBSCRIBE and CANCEL, which come back as the
// subscription messages ZMTP 3.0 peers send: one frame, 1 or 0, topic.
func (c *conn) readMsg() ([][]byte, error) {
	if !c.trusted {
		c.budget.settle() // the last message is the handler's no more
	}
	var frames [][]byte
	for {
		flags, body, err := c.readFrame()
		if err != nil {
			return nil, err
		}
		if flags&flagCommand != 0 {
			name, data, err := splitCommand(body)
			if err != nil {
				return nil, err
			}
			switch name {
			case "PING":
				if len(data) >= 2 {
					if err := c.writeCommand("PONG", data[2:]); err != nil {
						return nil, err
					}
				}
			case "SUBSCRIBE", "CANCEL":
				if len(frames) == 0 {
					op := byte(0)
					if name == "SUBSCRIBE" {
						op = 1
					}
					return [][]byte{append([]byte{op}, data...)}, nil
				}
			case "ERROR":
				return nil, fmt.Errorf("peer sent ERROR: %q", errorReason(data))
			}
			if !c.trusted {
				c.budget.uncharge(len(body))
			}
			continue
		}
		frames = append(frames, body)
		if flags&flagMore == 0 {
			return frames, nil
		}
		if !c.trusted && len(frames) >= maxFrames {
			return nil, fmt.Errorf("peer sent a message of more than %d frames", maxFrames)
		}
	}
}

// writeMsg sends frames as one message, in one system call when the
// small frames fit the write buffer. It waits while the socket is full.
func (c *conn) writeMsg(frames [][]byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.finish(); err != nil {
		return err
	}
	vec, err := c.encode(frames, c.flush)
	if err != nil {
		return err
	}
	err = c.flush(vec)
	c.vec = vec[:0]
	return err
}

// A try is what tryWriteMsg did.
type try int

const (
	wroteNone try = iota // nothing: the message is still the caller's to send
	wroteAll
	wroteSome // the rest is the connection's: the next write, or finish, sends it
)

// errWouldWait stops encode where writing would have to wait.
var errWouldWait = errors.New("zmtp: the write would wait")

// tryWriteMsg writes frames if no other write is under way and the socket
// takes what it can of them at once; it never waits. The forwarding
// goroutine writes a message to a peer that keeps up this way, without
// handing it to the peer's writer: on a small machine the hand-off, a
// wake-up of another thread, costs more than the write.
func (c *conn) tryWriteMsg(frames [][]byte) try {
	if c.sock == nil || !c.wmu.TryLock() {
		return wroteNone
	}
	defer c.wmu.Unlock()
	if c.werr != nil || len(c.rest) > 0 {
		return wroteNone
	}
	// A message too big for one write buffer goes by the writer.
	vec, err := c.encode(frames, func(net.Buffers) error { return errWouldWait })
	if err != nil {
		clear(vec)
		return wroteNone
	}
	n, err := c.sock.writevOnce(vec)
	if err != nil {
		clear(vec)
		c.fail(err)
		return wroteNone
	}
	if n == 0 {
		clear(vec)
		c.vec = vec[:0]
		return wroteNone
	}
	consume(&vec, n)
	if len(vec) == 0 {
		c.vec = vec[:0]
		return wroteAll
	}
	// The rest keeps the write buffer and the list; the connection takes
	// new ones.
	c.rest = vec
	c.wbuf, c.vec = make([]byte, 0, bufSize), nil
	return wroteSome
}

// finish sends what tryWriteMsg left over, waiting for the socket. Call
// with c.wmu held.
func (c *conn) finish() error {
	if c.werr != nil {
		return c.werr
	}
	if len(c.rest) == 0 {
		return nil
	}
	err := c.flush(c.rest)
	c.rest = nil
	return err
}

// finishWrite is finish for the peer's writer.
func (c *conn) finishWrite() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.finish()
}

// encode frames frames into the write buffer and a list of what to write
// after it; flush is given what is pending each time the buffer is full,
// before encode goes on from an empty one. Call with c.wmu held.
func (c *conn) encode(frames [][]byte, flush func(net.Buffers) error) (net.Buffers, error) {
	more := byte(flagMore)
	if c.curve != nil {
		// Each frame is a MESSAGE of its own, its MORE flag in the box.
		frames, more = c.curve.sealMsg(frames), 0
	}
	if c.wbuf == nil {
		c.wbuf = make([]byte, 0, bufSize)
	}
	buf, vec, mark := c.wbuf[:0], c.vec[:0], 0
	for i, f := range frames {
		if len(buf)+9 > cap(buf) || len(f) <= inlineMax && len(buf)+9+len(f) > cap(buf) {
			// Full: send what is pending, then go on from an empty buffer.
			vec = append(vec, buf[mark:])
			if err := flush(vec); err != nil {
				return vec, err
			}
			buf, vec, mark = buf[:0], vec[:0], 0
		}
		var flags byte
		if i < len(frames)-1 {
			flags = more
		}
		buf = appendHeader(buf, flags, len(f))
		if len(f) <= inlineMax {
			buf = append(buf, f...)
			continue
		}
		vec = append(vec, buf[mark:], f)
		mark = len(buf)
	}
	return append(vec, buf[mark:]), nil
}

// writeCommand sends one command frame.
func (c *conn) writeCommand(name string, data []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.finish(); err != nil {
		return err
	}
	body := append([]byte{byte(len(name))}, name...)
	body = append(body, data...)
	flags := byte(flagCommand)
	if c.curve != nil {
		body, flags = c.curve.seal(curveCommand, body), 0
	}
	buf := appendHeader(c.wbuf[:0], flags, len(body))
	return c.flush(net.Buffers{append(buf, body...)})
}

func appendHeader(buf []byte, flags byte, size int) []byte {
	if size > 255 {
		buf = append(buf, flags|flagLong)
		return binary.BigEndian.AppendUint64(buf, uint64(size))
	}
	return append(buf, flags, byte(size))
}

// flush writes vec whole, and then clears it: the list is kept for the
// next message, and must not keep this one's frames (a 50 MB output)
// alive. What the socket takes at once goes in one writev made as package
// sysio says (a request on its way to the kernel, a heartbeat); the rest
// waits for the socket through net.Conn. After a failed write, part of a
// message may have left, so the connection is closed: its peer sees it
// end, never a torn message.
func (c *conn) flush(vec net.Buffers) error {
	defer clear(vec) // consume and WriteTo take from copies; this is the whole list
	rest := vec
	if c.sock != nil {
		n, err := c.sock.writevOnce(rest)
		if err != nil {
			return c.fail(err)
		}
		if consume(&rest, n); len(rest) == 0 {
			return nil
		}
	}
	if _, err := rest.WriteTo(c.Conn); err != nil {
		return c.fail(err)
	}
	return nil
}

// fail breaks the stream after a failed write: part of a message may have
// left, so the connection is closed and its peer sees it end, never a
// torn message.
func (c *conn) fail(err error) error {
	c.werr = fmt.Errorf("%w: %w", ErrClosed, err)
	c.Conn.Close()
	return c.werr
}
