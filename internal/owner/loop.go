// Package owner runs functions one at a time on one goroutine, the owner
// of whatever state they touch: that state needs no lock, and its order of
// changes is the order the functions were handed in.
package owner

import (
	"sync"
	"sync/atomic"
)

// Loop is the owner goroutine and its queue. Post never blocks, whatever
// the loop is doing: the goroutines that forward a kernel's messages hand
// it their events and go on.
type Loop struct {
	mu     sync.Mutex // the queue's only
	queue  []task
	closed bool
	wake   chan struct{}
	// open counts the functions posted and not yet returned.
	open atomic.Int64
}

// task is a posted function, and for Do the channel closed once it has
// returned and is no longer counted in open, so that Idle after Do is true
// when nothing else was posted.
type task struct {
	f    func()
	done chan struct{}
}

// New starts a loop.
func New() *Loop {
	l := &Loop{wake: make(chan struct{}, 1)}
	go l.run()
	return l
}

// Post queues f to run on the loop, after everything posted before it.
// After Close it is dropped.
func (l *Loop) Post(f func()) { l.post(task{f: f}) }

func (l *Loop) post(t task) (queued bool) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return false
	}
	l.open.Add(1)
	l.queue = append(l.queue, t)
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default: // woken already
	}
	return true
}

// Do runs f on the loop and waits for it: for a question, or an action
// whose caller must not go on before it is taken. Never from the loop
// itself. After Close, f does not run.
func (l *Loop) Do(f func()) {
	t := task{f: f, done: make(chan struct{})}
	if l.post(t) {
		<-t.done
	}
}

// Idle says that nothing posted is waiting or running.
func (l *Loop) Idle() bool { return l.open.Load() == 0 }

// Close ends the loop once what was posted before has run.
func (l *Loop) Close() {
	l.Post(func() {
		l.mu.Lock()
		l.closed = true
		l.mu.Unlock()
	})
}

func (l *Loop) run() {
	for {
		<-l.wake
		for {
			l.mu.Lock()
			if len(l.queue) == 0 {
				closed := l.closed
				l.mu.Unlock()
				if closed {
					return
				}
				break
			}
			t := l.queue[0]
			l.queue[0] = task{}
			l.queue = l.queue[1:]
			l.mu.Unlock()
			t.f()
			l.open.Add(-1)
			if t.done != nil {
				close(t.done)
			}
		}
	}
}
