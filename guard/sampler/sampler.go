package sampler

import (
	"log"
	"sync"
	"time"

	"github.com/jupyter-guard/jupyter-guard/guard/cgroup"
	"github.com/jupyter-guard/jupyter-guard/guard/proctree"
)

// Handler receives each sample, in the sampler's goroutine, and returns how
// long to wait for the next one; zero or less means the kernel is idle: no
// sample until the next Kick.
type Handler func(Sample) time.Duration

// Options say how to measure. Zero values take the live system's.
type Options struct {
	// Tree lists the kernel's pid and its descendants.
	Tree func(root int) ([]int, error)
	// GPU is the GPU memory of a set of processes; nil: none measured.
	GPU func(pids []int) (uint64, error)
	Log *log.Logger
}

// Sampler measures one kernel at a time.
type Sampler struct {
	opts    Options
	handle  Handler
	log     *log.Logger
	kick    chan struct{}
	done    chan struct{}
	closing sync.Once
	exited  chan struct{}

	mu      sync.Mutex
	target  *target         // nil while no kernel is attached
	asked   time.Time       // the latest time Within allows for the next sample; zero: none asked
	waiters []chan struct{} // Sync calls waiting for the next sample to be handled
}

// target is the kernel being measured.
type target struct {
	root     int
	group    *cgroup.Group
	notifier *cgroup.Notifier // nil if the group pushes nothing
	ladder   *ladder          // nil unless the group takes usage thresholds (v1)
	closed   sync.Once
	pids     []int
	scanned  time.Time
	lastPID  int             // the system's last pid at that scan (proctree.LastPID)
	gpu      uint64          // at the last scan
	told     map[string]bool // errors already logged
}

// New starts a sampler that calls h with each sample.
func New(opts Options, h Handler) *Sampler {
	if opts.Tree == nil {
		opts.Tree = proctree.Descendants
	}
	if opts.Log == nil {
		opts.Log = log.Default()
	}
	s := &Sampler{opts: opts, handle: h, log: opts.Log, kick: make(chan struct{}, 1),
		done: make(chan struct{}), exited: make(chan struct{})}
	go s.run()
	return s
}

// Attach starts measuring the kernel pid, whose memory cgroup is group (nil
// if it has none). Pushed events are set up here; if the group cannot push
// them, that is logged once and the sampler relies on its pace alone.
func (s *Sampler) Attach(pid int, group *cgroup.Group) {
	t := &target{root: pid, group: group, told: map[string]bool{}}
	if group != nil {
		t.notifier = s.notify(group)
	}
	if t.notifier != nil && group.Version == cgroup.V1 {
		t.ladder = newLadder(t.notifier, s.log)
	}
	s.swap(t)
}

// Memory stalls that wake the sampler on cgroup v2, where there are no
// usage thresholds: reclaim is struggling, so the limit is near.
const (
	pressureStall  = 100 * time.Millisecond
	pressureWindow = time.Second
)

// notify starts the group's pushed events, or returns nil.
func (s *Sampler) notify(group *cgroup.Group) *cgroup.Notifier {
	n, err := group.Notify()
	if err != nil {
		s.log.Printf("memory guard: no pushed memory events from %v %s, sampling on a timer only: %v", group.Version, group.Path, err)
		return nil
	}
	if group.Version == cgroup.V2 {
		if err := n.WatchPressure(pressureStall, pressureWindow); err != nil {
			s.log.Printf("memory guard: no memory pressure events from %s: %v", group.Path, err)
		}
	}
	return n
}

// Detach stops measuring the current kernel.
func (s *Sampler) Detach() { s.swap(nil) }

func (s *Sampler) swap(t *target) {
	s.mu.Lock()
	old := s.target
	s.target = t
	s.mu.Unlock()
	if old != nil {
		old.closeNotifier()
	}
}

// closeNotifier stops the target's pushed events, once: the loop does when
// the notifier fails, Detach when the kernel goes.
func (t *target) closeNotifier() (err error) {
	t.closed.Do(func() {
		if t.ladder != nil {
			t.ladder.stop()
		}
		if t.notifier != nil {
			err = t.notifier.Close()
		}
	})
	return err
}

// Kick takes a sample now. It never blocks.
func (s *Sampler) Kick() { s.Within(0) }

// Within asks for a sample at most d from now; one due sooner stays due.
// It never blocks. A cell that starts asks for its first sample within the
// time its last known headroom allows, rather than now: a sample costs as
// much CPU as the proxy spends forwarding a short cell, and most cells end
// before a sample would see anything.
func (s *Sampler) Within(d time.Duration) {
	at := time.Now().Add(d)
	s.mu.Lock()
	if s.asked.IsZero() || at.Before(s.asked) {
		s.asked = at
	}
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default: // the loop has yet to read the earlier ask
	}
}

// Sync takes a sample now and waits until the handler has had it (at
// once if no kernel is attached), or for at most timeout; it reports
// whether it did not time out. A sample under way when Sync is called does
// not count: it may predate the call.
func (s *Sampler) Sync(timeout time.Duration) bool {
	handled := make(chan struct{})
	s.mu.Lock()
	s.waiters = append(s.waiters, handled)
	s.mu.Unlock()
	s.Kick()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-handled:
		return true
	case <-t.C:
		return false
	}
}

// takeWaiters returns the Sync calls the next sample answers.
func (s *Sampler) takeWaiters() []chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.waiters
	s.waiters = nil
	return w
}

// takeAsked returns the time asked for by Within, and forgets it.
func (s *Sampler) takeAsked() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	at := s.asked
	s.asked = time.Time{}
	return at
}

// Arm asks the kernel's cgroup to wake the sampler whenever its usage
// (bytes of memory.usage_in_bytes, cgroup v1) crosses one of rungs. The
// rungs are armed in the background, which takes a while (the kernel waits
// for an RCU grace period on each); Sample.NextRung tells which are in
// place. Ask early, when the kernel attaches: asking again for the same
// rungs costs nothing.
func (s *Sampler) Arm(rungs []uint64) {
	if t := s.current(); t != nil && t.ladder != nil {
		t.ladder.ask(rungs)
	}
}

// Close stops the sampler and waits for its loop to end.
func (s *Sampler) Close() {
	s.closing.Do(func() { close(s.done) })
	<-s.exited
	s.Detach()
}

func (s *Sampler) current() *target {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.target
}

// run is the loop: idle until kicked, then sample, hand over, and wait as
// long as the handler says or until woken.
func (s *Sampler) run() {
	defer close(s.exited)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var due time.Time // when the next sample is due; zero: idle
	var lag lag
	files := newFiles()
	defer files.close()
	for {
		t := s.current()
		var tick <-chan time.Time
		var events <-chan cgroup.Event
		if !due.IsZero() {
			timer.Reset(time.Until(due))
			tick = timer.C
			if t != nil && t.notifier != nil {
				events = t.notifier.Events()
			}
		}
		var why Wake
		select {
		case <-s.done:
			return
		case <-s.kick:
			asked := s.takeAsked()
			if asked.IsZero() {
				continue // taken with an earlier signal
			}
			if time.Until(asked) > 0 {
				if due.IsZero() || asked.Before(due) {
					due = asked
				}
				timer.Stop()
				continue // a sample is asked for later, not now
			}
			why = Kicked
			if t != nil && t.notifier != nil {
				drain(t.notifier.Events()) // older crossings are in this sample
			}
		case <-tick:
			why = Timed
			lag.late(time.Since(due))
		case _, ok := <-events:
			why = Pushed
			if !ok {
				s.pushFailed(t)
			}
		}
		timer.Stop()
		due = time.Time{}
		waiters := s.takeWaiters()
		if t = s.current(); t != nil {
			smp := s.measure(t, why, files)
			smp.Lag = lag.now()
			if wait := s.handle(smp); wait > 0 {
				due = time.Now().Add(wait)
			}
		} else {
			files.closeUsage() // the kernel's cgroup may be removed
		}
		for _, w := range waiters {
			close(w)
		}
	}
}

// pushFailed drops a notifier whose loop ended, so the sampler paces itself
// as if nothing pushed.
func (s *Sampler) pushFailed(t *target) {
	t.complain(s.log, "cgroup notifier", t.closeNotifier())
	s.mu.Lock()
	t.notifier, t.ladder = nil, nil
	s.mu.Unlock()
}

func drain(events <-chan cgroup.Event) {
	for {
		select {
		case _, ok := <-events:
			if !ok {
				return
			}
		default:
			return
		}
	}
}

// complain logs an error once per kind for a kernel: a failing file would
// otherwise log on every sample.
func (t *target) complain(l *log.Logger, what string, err error) {
	if err == nil || t.told[what] {
		return
	}
	t.told[what] = true
	l.Printf("memory guard: %s of kernel pid %d: %v", what, t.root, err)
}
