package cgroup

import (
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sys/unix"
)

// EventKind says what woke a Notifier.
type EventKind int

const (
	// UsageCrossed (v1): usage crossed Event.Threshold, upward or downward.
	UsageCrossed EventKind = iota + 1
	// OOMNotified (v1): the group hit its limit and the OOM path ran: a
	// task is being killed or, with oom_kill_disable, parked.
	OOMNotified
	// EventsChanged (v2): memory.events changed: one of its high, max, oom
	// or oom_kill counters moved.
	EventsChanged
	// Pressure (v2): tasks of the group stalled on memory beyond the level
	// given to WatchPressure.
	Pressure
)

// Event is a wake-up, not a measurement: read the group for the figures.
// Events that arrive while the channel is full are dropped, since one
// pending wake-up already makes the reader look.
type Event struct {
	Kind      EventKind
	Threshold uint64 // for UsageCrossed
}

// Notifier delivers the kernel's pushed memory events for one group, so a
// sampler can sleep long while usage is far from the limit.
type Notifier struct {
	g      *Group
	events chan Event
	wake   int // eventfd: interrupts the poll when sources change or on Close
	done   chan struct{}
	err    error // why the loop stopped, written before done is closed
	once   sync.Once

	mu       sync.Mutex
	stopping bool
	pending  map[setKind][]source // replacements, installed by the loop
}

// setKind names a group of sources that is replaced as a whole.
type setKind int

const (
	baseSet      setKind = iota // v1 OOM eventfd, v2 inotify on memory.events
	thresholdSet                // v1 usage thresholds (Arm)
	pressureSet                 // v2 PSI trigger (WatchPressure)
	numSets
)

// source is one file descriptor the loop polls.
type source struct {
	fd    int
	poll  int16 // POLLIN, or POLLPRI for PSI
	drain bool  // read it empty after it fires (eventfd, inotify); a PSI trigger resets itself
	event Event
	dead  bool // reported an error: sent once, then dropped
}

var errClosed = errors.New("cgroup notifier closed")

// Notify starts watching the group: on v1 for OOM notifications (through
// cgroup.event_control), on v2 for changes of memory.events (inotify). Usage
// thresholds (v1, Arm) and a pressure trigger (v2, WatchPressure) are added
// later. An error means no pushed events here (a read-only cgroupfs, a
// kernel without them): the caller logs it once and keeps polling.
func (g *Group) Notify() (*Notifier, error) {
	var base source
	var err error
	if g.Version == V1 {
		base, err = g.oomSource()
	} else {
		base, err = g.eventsSource()
	}
	if err != nil {
		return nil, err
	}
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(base.fd)
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	n := &Notifier{g: g, events: make(chan Event, 16), wake: wake, done: make(chan struct{}), pending: map[setKind][]source{}}
	go n.run([]source{base})
	return n, nil
}

// Events is closed after Close, or if the loop fails (Close says why).
func (n *Notifier) Events() <-chan Event { return n.events }

// Close stops the notifier and releases its file descriptors, which also
// unregisters the kernel's v1 events and PSI trigger.
func (n *Notifier) Close() error {
	n.once.Do(func() {
		n.mu.Lock()
		n.stopping = true
		n.mu.Unlock()
		n.signal()
		<-n.done
		unix.Close(n.wake)
	})
	return n.err
}

// install hands a new set of sources to the loop, which closes the set it
// replaces.
func (n *Notifier) install(k setKind, srcs []source) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stopping {
		closeAll(srcs)
		return errClosed
	}
	closeAll(n.pending[k]) // superseded before the loop took it
	n.pending[k] = srcs
	n.signal()
	return nil
}

func (n *Notifier) signal() {
	one := [8]byte{1}          // any non-zero count, whatever the byte order
	unix.Write(n.wake, one[:]) // fails (EAGAIN) only if the counter is full: a wake-up is pending anyway
}
