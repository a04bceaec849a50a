package transport

import (
	"encoding/binary"
	"io"
	"net"
)

// ZMTP 3 framing (rfc.zeromq.org/spec/23): a 64-byte greeting, then frames
// of one flags byte, a 1- or 8-byte big-endian size and the body.
const (
	greetingLen = 64
	flagMore    = 0x01
	flagLong    = 0x02
)

// What the writer is in the middle of.
const (
	inGreeting = iota
	inFlags
	inSize
	inBody
)

// frameWriter sits between zmq4 and the socket. zmq4 writes each frame as
// a header Write and a body Write; frameWriter follows the ZMTP framing of
// those bytes and hands them to the socket once per complete message, so a
// message costs one syscall instead of two per frame.
//
// The greeting and every command are complete "messages" too, so the
// handshake never waits on a buffer. Bodies that do not fit in the buffer
// go straight to the socket in the same writev as what is buffered, so
// memory stays at the buffer's fixed capacity and large outputs are never
// copied.
//
// frameWriter is not safe for concurrent use; conn serialises it.
type frameWriter struct {
	dst  io.Writer
	buf  []byte      // pending bytes; its capacity never grows
	vec  [2][]byte   // buf and a large body, for one writev
	bufs net.Buffers // vec as WriteTo consumes it
	err  error       // first write error: the stream is broken after it

	state int
	need  uint64  // bytes left in the greeting, size field or body
	flags byte    // flags of the frame being written
	size  [8]byte // size field as it arrives
	sizeN int     // length of the size field (1 or 8)
}

func newFrameWriter(dst io.Writer, size int) *frameWriter {
	return &frameWriter{
		dst:   dst,
		buf:   make([]byte, 0, size),
		state: inGreeting,
		need:  greetingLen,
	}
}

// Write accepts any split of the byte stream. It returns how many bytes of
// p it took and, once the connection has failed, the error that broke it;
// that error is returned again by every later Write.
func (w *frameWriter) Write(p []byte) (int, error) {
	n := 0
	for n < len(p) && w.err == nil {
		k := 1 // flags and size bytes are taken one at a time
		if w.state == inGreeting || w.state == inBody {
			k = int(min(uint64(len(p)-n), w.need))
		}
		seg := p[n : n+k]
		if w.put(seg); w.err != nil {
			break
		}
		n += k
		w.advance(seg)
	}
	return n, w.err
}

// advance moves the parser past seg, which put has taken.
func (w *frameWriter) advance(seg []byte) {
	switch w.state {
	case inGreeting, inBody:
		w.need -= uint64(len(seg))
		if w.need == 0 {
			w.endPart()
		}
	case inFlags:
		w.flags = seg[0]
		w.sizeN = 1
		if w.flags&flagLong != 0 {
			w.sizeN = 8
		}
		w.need = uint64(w.sizeN)
		w.state = inSize
	case inSize:
		w.size[w.sizeN-int(w.need)] = seg[0]
		w.need--
		if w.need == 0 {
			w.startBody()
		}
	}
}

// startBody runs once a frame's size is known.
func (w *frameWriter) startBody() {
	if w.sizeN == 1 {
		w.need = uint64(w.size[0])
	} else {
		w.need = binary.BigEndian.Uint64(w.size[:])
	}
	w.state = inBody
	if w.need == 0 {
		w.endPart()
	}
}

// endPart runs when the greeting or a frame body is complete: the greeting
// and the last frame of a message must reach the peer now. A command is a
// single frame without MORE, so it counts as the last frame of a message.
func (w *frameWriter) endPart() {
	flush := w.state == inGreeting || w.flags&flagMore == 0
	w.state = inFlags
	if flush {
		w.flush()
	}
}

// put buffers b, or, when b does not fit, writes the buffer and b together
// in one writev without copying b.
func (w *frameWriter) put(b []byte) {
	if len(w.buf)+len(b) <= cap(w.buf) {
		w.buf = append(w.buf, b...)
		return
	}
	var err error
	if len(w.buf) == 0 {
		_, err = w.dst.Write(b)
	} else {
		// vec and bufs live in w so the writev allocates nothing; vec is
		// cleared after so w does not keep the caller's body alive.
		w.vec = [2][]byte{w.buf, b}
		w.bufs = w.vec[:]
		_, err = w.bufs.WriteTo(w.dst)
		w.vec = [2][]byte{}
	}
	w.buf = w.buf[:0]
	w.fail(err)
}

func (w *frameWriter) flush() {
	if len(w.buf) == 0 {
		return
	}
	_, err := w.dst.Write(w.buf)
	w.buf = w.buf[:0]
	w.fail(err)
}

// fail keeps the socket's own error (a *net.OpError naming the
// connection) so zmq4 classifies it exactly as it would without us.
func (w *frameWriter) fail(err error) {
	if err != nil {
		w.err = err
	}
}
