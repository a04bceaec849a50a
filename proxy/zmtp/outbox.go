package zmtp

import (
	"sync"
	"time"

	"github.com/jupyter-guard/jupyter-guard/internal/ratelog"
)

// A bound socket's peers each get an outbox: the messages queued for them
// and a goroutine of their own that writes them. The goroutine that
// forwards a message only queues it, so a frontend that reads slowly, or
// not at all, delays nobody but itself: not the kernel's other clients, not
// the guard's notices. As with libzmq's send high-water mark, a full queue
// drops that peer's further messages, and only its.
const (
	// hwmMessages is libzmq's default ZMQ_SNDHWM.
	hwmMessages = 1000
	// hwmBytes bounds what a peer that does not read can hold of messages
	// the others have long had: the proxy shares the kernel's memory
	// limit. A message larger than this still goes to a peer whose queue
	// is empty, so big outputs reach every client that reads.
	hwmBytes = 32 << 20
	// dropReport is how often a peer's dropped messages are logged.
	dropReport = 10 * time.Second
)

type outbox struct {
	c     *conn
	name  string // for log lines: the socket and the peer
	drops *ratelog.Limiter

	mu     sync.Mutex
	queue  [][][]byte
	bytes  int
	closed bool
	wake   chan struct{} // one token: the writer has work
}

// newOutbox starts c's writer; it ends when close is called or a write
// fails (which closes c).
func newOutbox(c *conn, name string, log Logger) *outbox {
	o := &outbox{c: c, name: name, drops: ratelog.New(log, dropReport), wake: make(chan struct{}, 1)}
	go o.run()
	return o
}

// put queues frames for the peer, or drops them if its queue is full. It
// never waits on the peer.
func (o *outbox) put(frames [][]byte) {
	size := 0
	for _, f := range frames {
		size += len(f)
	}
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return
	}
	if len(o.queue) > 0 && (len(o.queue) >= hwmMessages || o.bytes+size > hwmBytes) {
		queued, bytes := len(o.queue), o.bytes
		o.mu.Unlock()
		o.drops.Printf("full", "%s: not reading; a message for it dropped, %d (%d bytes) already queued", o.name, queued, bytes)
		return
	}
	o.queue = append(o.queue, frames)
	o.bytes += size
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default: // the writer has been told already
	}
}

// close stops the writer and lets go of what was queued.
func (o *outbox) close() {
	o.mu.Lock()
	o.closed = true
	o.queue, o.bytes = nil, 0
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

func (o *outbox) run() {
	for range o.wake {
		o.mu.Lock()
		batch, closed := o.queue, o.closed
		o.queue, o.bytes = nil, 0
		o.mu.Unlock()
		if closed {
			return
		}
		for i, frames := range batch {
			if o.c.writeMsg(frames) != nil {
				// The connection is closed; its reader ends and closes us.
				clear(batch[i:])
				o.close()
				return
			}
			batch[i] = nil // written: its frames may go
		}
	}
}
