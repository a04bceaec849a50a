package sampler

import (
	"log"
	"slices"
	"sync"

	"github.com/jupyter-guard/jupyter-guard/guard/cgroup"
)

// ladder keeps usage thresholds ("rungs") armed on a cgroup v1 group, each
// of which wakes the sampler when the group's usage crosses it. Arming runs
// in a goroutine of its own: the kernel waits for an RCU grace period on
// every threshold registered or removed, tens of milliseconds each on a
// busy machine, and a sampling loop blocked that long lets a fast cell
// run hundreds of MiB past the point it should have been stopped.
type ladder struct {
	n    *cgroup.Notifier
	log  *log.Logger
	want chan []uint64 // the latest rungs asked for; one slot, latest wins
	quit chan struct{}

	mu    sync.Mutex
	asked []uint64
	armed []uint64 // sorted; nil while none are in place
}

func newLadder(n *cgroup.Notifier, logger *log.Logger) *ladder {
	l := &ladder{n: n, log: logger, want: make(chan []uint64, 1), quit: make(chan struct{})}
	go l.run()
	return l
}

// ask arms rungs instead of the current ones, soon. It never blocks.
func (l *ladder) ask(rungs []uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if slices.Equal(rungs, l.asked) {
		return
	}
	l.asked = slices.Clone(rungs)
	select {
	case <-l.want: // superseded before it was armed
	default:
	}
	l.want <- l.asked
}

// next is the lowest armed rung above usage, 0 if none: the usage at which
// the kernel will wake the sampler next.
func (l *ladder) next(usage uint64) uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	i, _ := slices.BinarySearch(l.armed, usage+1)
	if i == len(l.armed) {
		return 0
	}
	return l.armed[i]
}

func (l *ladder) stop() { close(l.quit) }

func (l *ladder) run() {
	told := false
	for {
		select {
		case <-l.quit:
			return
		case rungs := <-l.want:
			err := l.n.Arm(rungs...)
			l.mu.Lock()
			l.armed = nil
			if err == nil {
				l.armed = slices.Sorted(slices.Values(rungs))
			}
			l.mu.Unlock()
			select {
			case <-l.quit: // the group may be gone: its errors say nothing
				return
			default:
			}
			if err != nil && !told {
				told = true
				l.log.Printf("memory guard: no usage thresholds, sampling on a timer only: %v", err)
			}
		}
	}
}
