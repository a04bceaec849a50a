package zmtp

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/jupyter-guard/jupyter-guard/internal/ratelog"
)

// A bound socket's peers each get an outbox: the messages queued for them
// and a goroutine of their own that writes them. The goroutine that
// forwards a message writes it itself only when nothing is queued and the
// peer's socket takes it without waiting (most messages, and a hand-off to
// another thread saved); otherwise it only queues it. So a frontend that
// reads slowly, or not at all, delays nobody but itself: not the kernel's
// other clients, not the guard's notices. As with libzmq's send high-water
// mark, a full queue drops that peer's further messages, and only its.
const (
	// hwmMessages is libzmq's default ZMQ_SNDHWM: a peer's queue holds
	// this many messages at most, whatever their size, as in libzmq.
	hwmMessages = 1000
	// hwmBytes bounds what a stalled peer (stallTime) holds of messages
	// the others have long had: the proxy shares the kernel's memory
	// limit. It never applies to a peer that is taking its messages: a
	// client reading a 50 MB output must still get the idle after it.
	hwmBytes  = 64 << 20
	stallTime = 5 * time.Second
)

type outbox struct {
	c    *conn
	name string // for log lines: the socket and the peer
	// lines is the socket's: the peers of one socket that do not read
	// share a line now and then.
	lines *ratelog.Limiter

	mu     sync.Mutex
	queue  [][][]byte
	bytes  int
	closed bool
	wake   chan struct{} // one token: the writer has work
	// active: the writer has messages in hand, or the rest of one that
	// put began (owing), and later messages must queue behind them.
	active, owing bool
	// writer: the writer's goroutine has started, at the first message
	// that had to wait for it: most peers never need one, and an idle
	// peer must cost no goroutine but its reader.
	writer bool
	// writing is when the write under way began (zero between writes).
	writing atomic.Int64
}

// newOutbox is c's outbox. Its writer, once started, ends when close is
// called or a write fails (which closes c).
func newOutbox(c *conn, name string, lines *ratelog.Limiter) *outbox {
	return &outbox{c: c, name: name, lines: lines, wake: make(chan struct{}, 1)}
}

// put writes frames to the peer if it takes them at once, else queues them
// for its writer, or drops them if its queue is full. It never waits on
// the peer.
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
	if len(o.queue) >= hwmMessages || len(o.queue) > 0 && o.bytes+size > hwmBytes && o.stalled() {
		queued, bytes := len(o.queue), o.bytes
		o.mu.Unlock()
		o.lines.Printf("full", "%s: not reading; a message for it dropped, %d (%d bytes) already queued", o.name, queued, bytes)
		return
	}
	if !o.active && len(o.queue) == 0 { // nothing to overtake
		switch o.c.tryWriteMsg(frames) {
		case wroteAll:
			o.mu.Unlock()
			return
		case wroteSome:
			o.active, o.owing = true, true
			start := o.startWriter()
			o.mu.Unlock()
			o.tell(start)
			return
		}
	}
	o.queue = append(o.queue, frames)
	o.bytes += size
	start := o.startWriter()
	o.mu.Unlock()
	o.tell(start)
}

// startWriter reports whether the writer's goroutine is yet to start, and
// counts it as started. Call with o.mu held.
func (o *outbox) startWriter() bool {
	start := !o.writer
	o.writer = true
	return start
}

// tell wakes the writer, starting it first if start.
func (o *outbox) tell(start bool) {
	if start {
		go o.run()
	}
	select {
	case o.wake <- struct{}{}:
	default: // the writer has been told already
	}
}

// stalled says whether the peer has taken nothing for stallTime: its
// write has been blocked that long.
func (o *outbox) stalled() bool {
	began := o.writing.Load()
	return began != 0 && time.Since(time.Unix(0, began)) > stallTime
}

// close stops the writer and lets go of what was queued.
func (o *outbox) close() {
	o.mu.Lock()
	o.closed = true
	o.queue, o.bytes = nil, 0
	o.mu.Unlock()
	o.tell(false) // a writer that never started has nothing to stop
}

func (o *outbox) run() {
	for range o.wake {
		for {
			more, ok := o.writeQueued()
			if !ok {
				return
			}
			if !more {
				break
			}
		}
	}
}

// writeQueued writes what put left over and what is queued, waiting on the
// peer. It reports whether there may be more, and false for ok once the
// outbox is closed or a write failed (which closes the connection).
func (o *outbox) writeQueued() (more, ok bool) {
	o.mu.Lock()
	batch, owing, closed := o.queue, o.owing, o.closed
	o.queue, o.bytes, o.owing = nil, 0, false
	active := len(batch) > 0 || owing
	o.active = active
	o.mu.Unlock()
	if closed {
		return false, false
	}
	if !active {
		return false, true
	}
	o.writing.Store(time.Now().UnixNano())
	defer o.writing.Store(0)
	if owing && o.c.finishWrite() != nil {
		o.close()
		return false, false
	}
	for i, frames := range batch {
		o.writing.Store(time.Now().UnixNano())
		if err := o.c.writeMsg(frames); err != nil {
			// The connection is closed; its reader ends and closes us.
			clear(batch[i:])
			o.close()
			return false, false
		}
		batch[i] = nil // written: its frames may go
	}
	return true, true
}
