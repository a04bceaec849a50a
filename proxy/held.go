package proxy

import (
	"sync"
	"time"
)

// heldOutput keeps the order of the kernel's iopub messages while one is
// held back: a cell's idle waits for what the guard posts into the cell
// before it (frontends drop a cell's output that comes after its idle),
// and every message after it waits behind it. The kernel's iopub is still
// read meanwhile, so the kernel never blocks on it and nothing it sends is
// lost to a full socket; only the forwarding waits, and for a bounded
// time and size: past maxHold or maxHeldBytes the queue goes out at once
// (what the guard had not posted by then comes after the idle, as before).
type heldOutput struct {
	send func(frames [][]byte)

	mu      sync.Mutex
	queue   []heldMessage
	seq     uint64 // of the last message queued
	bytes   int
	running bool          // a flusher goroutine owns the queue's head
	hurry   chan struct{} // tells the flusher to send everything now
}

type heldMessage struct {
	frames [][]byte
	wait   <-chan struct{} // nil: goes as soon as those before it have
	seq    uint64
}

// maxHold bounds how long one message is held; the hooks' own waits are
// shorter (the end measurement, the notes).
const maxHold = 5 * time.Second

// maxHeldBytes bounds the output queued behind a held message.
const maxHeldBytes = 256 << 20

func newHeldOutput(send func([][]byte)) *heldOutput {
	return &heldOutput{send: send, hurry: make(chan struct{}, 1)}
}

// forward sends frames now, unless something before them is held or wait
// is not nil: then they go once everything before them has and wait is
// closed. It never blocks.
func (q *heldOutput) forward(frames [][]byte, wait <-chan struct{}) {
	if wait != nil {
		select {
		case <-wait:
			wait = nil // nothing left to wait for
		default:
		}
	}
	q.mu.Lock()
	if !q.running && wait == nil {
		q.mu.Unlock()
		q.send(frames)
		return
	}
	q.seq++
	q.queue = append(q.queue, heldMessage{frames, wait, q.seq})
	q.bytes += frameBytes(frames)
	full := q.bytes > maxHeldBytes
	start := !q.running
	q.running = true
	q.mu.Unlock()
	if full {
		q.rush()
	}
	if start {
		go q.flush()
	}
}

// rush sends everything held, now: the kernel has gone (what it published
// goes before what the guard says of its end), or the queue is full.
func (q *heldOutput) rush() {
	q.mu.Lock()
	for _, m := range q.queue {
		q.send(m.frames)
	}
	clear(q.queue)
	q.queue, q.bytes = q.queue[:0], 0
	waiting := q.running
	q.mu.Unlock()
	if waiting {
		select {
		case q.hurry <- struct{}{}: // the flusher stops waiting for what went
		default:
		}
	}
}

// flush sends the queue in order, waiting for each message's wait, until
// it is empty.
func (q *heldOutput) flush() {
	for {
		q.mu.Lock()
		if len(q.queue) == 0 {
			q.running = false
			select {
			case <-q.hurry: // a rush that came as the queue emptied is spent
			default:
			}
			q.mu.Unlock()
			return
		}
		head := q.queue[0]
		q.mu.Unlock()
		if head.wait != nil {
			timer := time.NewTimer(maxHold)
			select {
			case <-head.wait:
			case <-q.hurry: // rush sent it
			case <-timer.C:
			}
			timer.Stop()
		}
		// Sent under the lock, so that forward cannot send a later message
		// before it; unless rush has sent it meanwhile.
		q.mu.Lock()
		if len(q.queue) > 0 && q.queue[0].seq == head.seq {
			q.send(head.frames)
			q.queue[0] = heldMessage{}
			q.queue = q.queue[1:]
			q.bytes -= frameBytes(head.frames)
		}
		q.mu.Unlock()
	}
}
