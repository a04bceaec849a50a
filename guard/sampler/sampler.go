package sampler

import (
	"log"
	"sync"
	"time"

	"github.com/jupyter-guard/jupyter-guard/guard/cgroup"
	"github.com/jupyter-guard/jupyter-guard/guard/ledger"
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
	next    time.Time       // when the loop wakes by itself; zero: never (see run)
	ready   time.Duration   // see Ready; zero: not known
	waiters []chan struct{} // Sync calls waiting for the next sample to be handled
}

// target is the kernel being measured.
type target struct {
	root     int
	on       ledger.Figure // the figure the guard decides on
	group    *cgroup.Group
	notifier *cgroup.Notifier // nil if the group pushes nothing
	ladder   *ladder          // nil unless the group takes usage thresholds (v1)
	closed   sync.Once
	pids     []int
	scanned  time.Time
	lastPID  int             // the system's last pid at that scan (proctree.LastPID)
	gpu      uint64          // at the last scan
	told     map[string]bool // errors already logged
	// The cgroup's and the host's figures, as last read: the one the
	// guard does not decide on is reused for a while (see otherMaxAge).
	cgroup kept[cgroup.Usage]
	host   kept[uint64]
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
// if it has none), for a guard that decides on figure on. Pushed events are
// set up here; if the group cannot push them, that is logged once and the
// sampler relies on its pace alone.
func (s *Sampler) Attach(pid int, group *cgroup.Group, on ledger.Figure) {
	t := &target{root: pid, on: on, group: group, told: map[string]bool{}}
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

// Ready tells the sampler how soon a cell that started now would ask for
// its first sample (Within): while it lingers, the loop then looks by
// itself at least that often, and the cell's ask need not wake it. The
// handler calls it, from the latest measurement's headroom.
func (s *Sampler) Ready(d time.Duration) {
	s.mu.Lock()
	s.ready = d
	s.mu.Unlock()
}

// lingerEvery is how long the loop lingers before it looks by itself: at
// most lingerFor, at least MinWait, and no longer than a starting cell
// may wait for its first sample (Ready).
func (s *Sampler) lingerEvery() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ready <= 0 {
		return lingerFor
	}
	return max(MinWait, min(lingerFor, s.ready))
}

// Kick takes a sample now. It never blocks.
func (s *Sampler) Kick() { s.Within(0) }

// Within asks for a sample at most d from now; one due sooner stays due.
// It never blocks. A cell that starts asks for its first sample within the
// time its last known headroom allows, rather than now: a sample costs as
// much CPU as the proxy spends forwarding a short cell, and most cells end
// before a sample would see anything. The loop is woken only if it would
// not look by itself in time: waking it is another thread's wake-up, as
// costly as the forwarding of a message.
func (s *Sampler) Within(d time.Duration) {
	at := time.Now().Add(d)
	s.mu.Lock()
	if s.asked.IsZero() || at.Before(s.asked) {
		s.asked = at
	}
	wake := s.next.IsZero() || at.Before(s.next)
	s.mu.Unlock()
	if wake {
		select {
		case s.kick <- struct{}{}:
		default: // the loop has yet to read the earlier ask
		}
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

// ask folds what Within asked for into due, the time the next sample is
// due (zero: none), and publishes when the loop will wake by itself: at
// due or at linger, whichever comes first. fromAsk says whether the due
// it returns is Within's.
func (s *Sampler) ask(due, linger time.Time) (_ time.Time, fromAsk bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.asked.IsZero() && (due.IsZero() || s.asked.Before(due)) {
		due, fromAsk = s.asked, true
	}
	s.asked = time.Time{}
	s.next = due
	if s.next.IsZero() || !linger.IsZero() && linger.Before(s.next) {
		s.next = linger
	}
	return due, fromAsk
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

// lingerFor is how long the loop keeps waking by itself after a sample
// that left nothing to watch: cells that follow each other (Run All, a
// notebook run headless) then ask for their first samples (Within) without
// waking it. It looks that often, or as often as Ready says a starting
// cell needs, for as long as samples come; once a look finds none taken
// since the one before, it is idle.
const lingerFor = MaxWait

// run is the loop: idle until asked, then sample, hand over, and wait as
// long as the handler says or until asked for sooner.
func (s *Sampler) run() {
	defer close(s.exited)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var armed time.Time  // what timer is set for; zero: stopped
	var due time.Time    // when the next sample is due; zero: none
	var fromAsk bool     // due is what Within asked for
	var linger time.Time // see lingerFor; zero: idle
	var sampled bool     // a sample was taken since linger was set
	var lag lag
	files := newFiles()
	defer files.close()
	for {
		t := s.current()
		if next, asked := s.ask(due, linger); asked {
			due, fromAsk = next, true
			if t != nil && t.notifier != nil && !due.After(time.Now()) {
				drain(t.notifier.Events()) // older crossings are in this sample
			}
		}
		why := Timed
		if fromAsk {
			why = Kicked
		}
		if due.IsZero() || due.After(time.Now()) {
			wake := due
			if wake.IsZero() || !linger.IsZero() && linger.Before(wake) {
				wake = linger
			}
			if !wake.Equal(armed) {
				timer.Stop()
				if !wake.IsZero() {
					timer.Reset(time.Until(wake))
				}
				armed = wake
			}
			var events <-chan cgroup.Event
			if !due.IsZero() && t != nil && t.notifier != nil {
				events = t.notifier.Events()
			}
			select {
			case <-s.done:
				return
			case <-s.kick:
				continue // fold in what was asked
			case <-timer.C:
				armed = time.Time{}
				if due.IsZero() || due.After(time.Now()) {
					// The linger ran out: again if cells came and went
					// meanwhile, else idle.
					linger = time.Time{}
					if sampled {
						linger, sampled = time.Now().Add(s.lingerEvery()), false
					}
					continue
				}
				why = Timed // a wait ran out, whoever asked for it
				lag.late(time.Since(due))
			case _, ok := <-events:
				why = Pushed
				if !ok {
					s.pushFailed(t)
				}
			}
		}
		due, fromAsk = time.Time{}, false
		waiters := s.takeWaiters()
		if t = s.current(); t != nil {
			smp := s.measure(t, why, files)
			smp.Lag = lag.now()
			if wait := s.handle(smp); wait > 0 {
				due = time.Now().Add(wait)
			}
			sampled = true
			if linger.IsZero() {
				linger = time.Now().Add(s.lingerEvery())
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
