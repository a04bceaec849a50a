package freeze

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/jupyter-guard/jupyter-guard/guard/proctree"
)

// Tree lists root and all its descendants; proctree.Descendants does.
type Tree func(root int) ([]int, error)

// maxScans bounds the rescans of one freeze. Each scan that finds new
// processes stops them, and stopped processes cannot fork, so only a tree
// that keeps forking faster than a scan (a fork bomb) gets near it.
const maxScans = 64

// Freezer stops one process tree at a time and remembers what it stopped.
// It is safe for concurrent use.
type Freezer struct {
	tree Tree

	mu      sync.Mutex
	stopped []proc
}

type proc struct {
	pid   int
	start uint64
}

// New returns a freezer that finds trees with tree.
func New(tree Tree) *Freezer { return &Freezer{tree: tree} }

// Report says what a freeze did.
type Report struct {
	Stopped int // processes sent SIGSTOP
	Scans   int // tree scans, the last of which found nothing new
}

// Freeze stops the tree under root, each process only once its parent has
// stopped. A shell with job control (bash_kernel's bash, a terminal in the
// tree) that sees its foreground job stop reports "[1]+ Stopped", puts the
// job in the background and prints its prompt, and the cell ends while the
// job stays behind: a stopped parent sees nothing, and Thaw continues the
// children before their parents, so it never does.
//
// known are pids already believed to be in the tree (the last sample's):
// the rounds after the root's take them, a level at a time, instead of
// scans, so the processes that are growing stop within a millisecond or so. The processes
// stopped are remembered even if it fails, so Thaw undoes a partial freeze.
//
// A pid seen in a scan could exit and be reused by an unrelated process
// before the signal is sent; pids are handed out in increasing order and
// wrap only after pid_max, so that gap of microseconds is not guarded.
func (f *Freezer) Freeze(root int, known []int) (Report, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	held := map[int]bool{} // stopped, or sent SIGSTOP and settled
	for _, p := range f.stopped {
		held[p.pid] = true
	}
	var r Report
	// stop signals the pids not held yet whose parent is held (or that are
	// root) and returns those it reached.
	stop := func(pids []int) []int {
		var sent []int
		for _, pid := range pids {
			if held[pid] {
				continue
			}
			s, err := proctree.ReadStat(pid)
			if err != nil || pid != root && !held[s.PPID] {
				continue // gone, or its parent has not stopped yet: a later round
			}
			if syscall.Kill(pid, syscall.SIGSTOP) == nil {
				sent = append(sent, pid)
				f.stopped = append(f.stopped, proc{pid: pid, start: s.Start})
				r.Stopped++
			}
		}
		return sent
	}
	sent := stop([]int{root})
	for r.Scans < maxScans {
		// A process signalled in the middle of a fork finishes it before
		// it stops, and its child shows up only then; and a child is
		// signalled only once its parent is still: wait until all have
		// stopped before the next round. The hint serves as long as it
		// reaches a deeper level; then scans follow, and a scan that finds
		// nothing new is the last.
		settle(sent)
		for _, pid := range sent {
			held[pid] = true
		}
		if sent = stop(known); len(sent) > 0 {
			continue
		}
		pids, err := f.tree(root)
		r.Scans++
		if err != nil {
			return r, fmt.Errorf("freeze the tree of pid %d: %w", root, err)
		}
		if sent = stop(pids); len(sent) == 0 {
			return r, nil
		}
	}
	return r, fmt.Errorf("freeze the tree of pid %d: new processes still appeared after %d scans", root, maxScans)
}

// settleChecks bounds the wait for signalled processes to stop: SIGSTOP
// lands within microseconds on a running process, but one in
// uninterruptible sleep (D) stops only when its system call ends, and the
// freeze must not hang on it. It cannot fork from there either.
const settleChecks = 100

// settle waits, briefly, until none of pids runs code.
func settle(pids []int) {
	for range settleChecks {
		running, err := Running(pids)
		if err != nil || len(running) == 0 {
			return
		}
		pids = running
		time.Sleep(50 * time.Microsecond)
	}
}

// Thaw continues every process the freezer stopped and is still the same
// process, and forgets them. It returns how many it continued.
func (f *Freezer) Thaw() (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var errs []error
	n := 0
	// Children first (f.stopped holds parents first): SIGCONT takes effect
	// as it is sent, so a parent never wakes to find its child stopped, and
	// when the kernel itself resumes, its workers already run.
	for _, p := range slices.Backward(f.stopped) {
		s, err := proctree.ReadStat(p.pid)
		if errors.Is(err, proctree.ErrGone) || err == nil && (s.Start != p.start || s.State == 'Z' || s.State == 'X') {
			continue // gone, dead, or the pid is another process now
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("thaw pid %d: %w", p.pid, err))
			continue
		}
		if err := syscall.Kill(p.pid, syscall.SIGCONT); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("thaw pid %d: %w", p.pid, err))
			continue
		}
		n++
	}
	f.stopped = nil
	return n, errors.Join(errs...)
}

// Forget drops what the freezer stopped without continuing it: the tree is
// dead or being killed.
func (f *Freezer) Forget() {
	f.mu.Lock()
	f.stopped = nil
	f.mu.Unlock()
}

// Frozen tells whether the freezer holds stopped processes.
func (f *Freezer) Frozen() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.stopped) > 0
}
