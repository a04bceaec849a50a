// Package ceiling keeps an allocation ceiling on a kernel's processes:
// RLIMIT_DATA's soft limit, set from outside with prlimit(2), on every
// process of the tree. An allocation that would take a process past its
// line fails (mmap and brk return ENOMEM), which the kernel's language
// turns into its own error (MemoryError, std::bad_alloc, R's "cannot
// allocate vector") while the process lives on; the OOM killer would end
// it and every variable with it.
//
// A process's line is its VmData plus the room the budget leaves: what is
// left under the limit, less the fill in flight (mapped, not yet touched:
// touching it is not limited), less a reserve for the kernel's own work.
// Its own growth moves its VmData and the budget's figure alike, so the
// line holds still while only it grows; what moves it is memory outside
// its VmData (other processes under the same limit, page cache), which
// the guard's samples follow. Only the soft limit is set, to at most the
// hard one, so the kernel's user can raise it back without privilege;
// children inherit it on fork.
//
// RLIMIT_DATA counts private writable mappings only: PROT_NONE
// reservations (CUDA, JAX, V8 and Go reserve large ranges) are not
// refused, only the mprotect that makes a piece of them writable. Shared
// memory, page cache and kernel memory are not limited at all: there the
// guard's pause or interrupt remains the stop.
package ceiling

import (
	"errors"
	"fmt"
	"log"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jupyter-guard/jupyter-guard/guard/proctree"
	"github.com/jupyter-guard/jupyter-guard/guard/units"
)

// Plan is where the lines go at one sample.
type Plan struct {
	// Room is what each process may add to its VmData before an
	// allocation fails.
	Room uint64
	// Step is how far a line may be from where it belongs before it is
	// set again: the lines follow usage without a system call per process
	// at every sample.
	Step uint64
	// Lift is what a process stuck at its line gets on top of it while a
	// cell runs (Running), and MaxLift the most it gets until Rearm. At
	// the line, the error path itself needs memory (a traceback, the
	// reply, libzmq's buffers): Python spun at 100 % CPU for minutes in a
	// dict growing by small allocations until its line was lifted by a
	// few MiB, then replied with MemoryError at once. ipykernel 6.29's
	// error path took more than two lifts of a 1 GiB budget's (12.8 MiB:
	// its first traceback parses every frame's source, and when that fails
	// its fallback print spins at the line): 2 of 5 sessions of a dict
	// of tuples on a busy machine hung there at 100 % CPU, and one whose
	// line was lifted by hand by one lift more got out (2026-11-28).
	Lift, MaxLift uint64
	Running       bool
	// Zone is how far below its line a process growing toward it, while
	// a cell runs, is told so by Signal (0: never), if it catches that
	// signal and would reach the line within a second; again after
	// retell if it still does. A
	// lift comes too late for most: by the time a sample finds a process
	// at its line, Python's error path has failed for want of memory (the
	// traceback could not be formatted, ipykernel dropped the reply, or
	// libzmq aborted), in 1 ms polls as in 1 s ones. Python kernels take
	// the guard's hook (supervisor/pyhook), which raises MemoryError in
	// the running cell on Signal while the zone still holds the error
	// path's memory.
	Zone   uint64
	Signal syscall.Signal
	At     time.Time // when the sample was taken
}

// NearSignal is the signal that tells a process it is heading for its
// line (Plan.Signal): a real-time signal, which nothing in a kernel uses
// by default and the proxy's Python hook catches.
const NearSignal = syscall.Signal(62)

// retell is how long after telling a process it is heading for its line
// it is told again if it still is: where the signal lands decides whether
// the MemoryError it raises ends the cell. ipykernel 6.29 runs a callback
// of its own at each garbage collection, which a dict growing by small
// objects sets off inside the cell: raised there, the MemoryError was
// "ignored", the cell went on to its line, and the kernel died there of a
// segfault (1 of 6 sessions on a busy machine, 2026-11-28).
const retell = 100 * time.Millisecond

// nearRate is how soon a process in its zone must be heading for its line
// to be told: one that hovers there (a training loop that fits) is left
// alone.
const nearRate = time.Second

// atLine is how close to its line a process's VmData must be for it to
// count as stuck there: what glibc and Python's allocator ask for at a
// time when they grow (a 1 MiB arena, 128 KiB of heap) fits below it, so
// a process whose last small allocation failed sits within it.
const atLine = 2 << 20

// aborting are the libraries that end their process when an allocation
// is refused on one of their threads, by the name a notice gives and a
// piece of their path: TensorFlow 2.21's Eigen contraction under Conv2D
// lets std::bad_alloc go uncaught on a worker thread (SIGABRT in 5 runs of
// 5 of bench/cnn_story.py at a 2 GiB budget, 2026-11-27). A ceiling on
// such a kernel kills it, earlier than the OOM killer would.
var aborting = []struct{ name, path string }{{"TensorFlow", "libtensorflow"}}

// rescanStep is how much a process's VmData grows from its lowest since its
// libraries were last looked at before they are looked at again: an import
// that maps TensorFlow adds hundreds of MiB. Not at every cell: an ipykernel's
// maps run to a thousand lines, and reading them at each cell's end doubled
// the proxy's CPU per execute (bench/run, 2026-11-27: 1,640-1,900 µs against
// 790-1,030 µs with the ceiling off).
const rescanStep = 64 << 20

// recentLines is how many lines set lately are remembered, to tell a
// limit a new process inherited from one the kernel's code set itself.
const recentLines = 64

// Ceiling holds the lines of one kernel's processes. Keep and Release run
// in the guard's sampler goroutine (Release also when the kernel goes);
// Rearm may be called from anywhere and never blocks.
type Ceiling struct {
	log *log.Logger

	mu     sync.Mutex
	procs  map[int]*proc
	recent []uint64    // lines set lately, newest last
	base   unix.Rlimit // the proxy's own limit, which the kernel inherits: what inherited lines go back to
	buf    []byte
	told   map[string]bool

	// least is the least any process had left below its line at a Keep
	// since the last Rearm, while a cell ran (leastSet says there is one):
	// a process that was refused may be gone by the time the note under
	// its cell is written (a Pool's worker).
	least    uint64
	leastSet bool
	// ended: a process left the tree while a cell ran, since the last
	// Rearm. It may have reached its line between two samples (a Pool's
	// worker filling fast, then ended with the pool), unseen by least.
	ended bool

	// aborts names a library in the tree that dies of a refusal (see
	// aborting) and the process that has it, "" if none; off: the guard
	// took the ceiling off for it.
	aborts string
	off    bool

	rearm atomic.Bool
	// bitten is the latest pid found at its line or told it was near it
	// while a cell ran, 0 if none since the last Rearm; its line then.
	bitten     atomic.Int64
	bittenLine atomic.Uint64
}

// proc is one process the ceiling has set a line on.
type proc struct {
	line   uint64      // the soft limit set
	hard   uint64      // the hard limit, left as it was
	orig   unix.Rlimit // what it had before, given back by Release
	start  uint64      // its start time: a pid with another is another process
	lifted uint64      // lifts given since the last Rearm, in all
	liftTo uint64      // the line they lifted it to (0: none): it holds there whatever the room
	data   uint64      // its VmData as of the latest Keep (statm's data less VmStk)
	at     time.Time   // that Keep's sample
	stack  uint64      // VmStk at the latest status read
	own    bool        // its code set a limit of its own: never raised
	looked uint64      // its least VmData since its libraries were last looked at
	seen   bool        // in the latest Keep's tree
	// catches: it has a handler for Plan.Signal (at the latest status
	// read).
	catches bool
	// toldAt: the sample at which it was last sent Plan.Signal since the
	// last Rearm (zero: never).
	toldAt time.Time
}

// New returns a ceiling that holds no process yet.
func New(logger *log.Logger) *Ceiling {
	c := &Ceiling{log: logger, procs: map[int]*proc{}, told: map[string]bool{}}
	if err := unix.Getrlimit(unix.RLIMIT_DATA, &c.base); err != nil {
		c.base = unix.Rlimit{Cur: unix.RLIM_INFINITY, Max: unix.RLIM_INFINITY}
	}
	return c
}

// Keep brings the line of each of pids (the kernel's tree, root first) to
// plan: each[i] is pids[i]'s statm figures at this sample. A process seen
// for the first time gets its line at once (it may have inherited its
// parent's, which counts from the parent's VmData); a known one only when
// its line is more than a step from where it belongs, or when it is stuck
// at it while a cell runs. Processes no longer in the tree get their own
// limit back if they live on elsewhere.
func (c *Ceiling) Keep(pids []int, each []proctree.Usage, plan Plan) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.off {
		return
	}
	rearm := c.rearm.Swap(false)
	if rearm {
		c.leastSet, c.ended = false, false
	}
	for _, p := range c.procs {
		p.seen = false
		if rearm {
			p.lifted, p.liftTo, p.toldAt = 0, 0, time.Time{}
		}
	}
	for i, pid := range pids {
		p := c.procs[pid]
		if p == nil {
			c.adopt(pid, plan)
			continue
		}
		p.seen = true
		if each[i].Data == 0 {
			continue // gone since the tree was scanned
		}
		prev, prevAt := p.data, p.at
		p.data, p.at = each[i].Data-min(each[i].Data, p.stack), plan.At
		if p.data >= p.looked+rescanStep {
			c.look(pid, p)
		}
		p.looked = min(p.looked, p.data)
		// What it has left is counted before any lift: a process found at
		// its line had next to nothing, whatever it had a sample before.
		if left := p.line - min(p.line, p.data); plan.Running && (!c.leastSet || left < c.least) {
			c.least, c.leastSet = left, true
		}
		if plan.Running && p.data+atLine >= p.line && p.lifted+plan.Lift <= plan.MaxLift && plan.Lift > 0 {
			p.lifted, p.liftTo = p.lifted+plan.Lift, p.line+plan.Lift
			c.bite(pid, p)
			c.log.Printf("memory guard: ceiling: pid %d reached its line (%s of private memory); lifted by %s for the error to get out",
				pid, units.FormatBytes(p.line), units.FormatBytes(plan.Lift))
			c.set(pid, p, p.liftTo)
			// Back at its line after a lift, still growing, unseen in its
			// zone: its own error path is what is stuck (xeus-python's, a
			// dict growing by small allocations), and a process that takes
			// the hook is told, so that MemoryError is raised in the cell
			// with the room just given. At its first lift it is not: the
			// cell may be handling the refusal itself (an mprotect that
			// returned ENOMEM). One that did not grow (a kernel waiting on
			// a Pool whose worker took the room) is not either.
			if p.lifted > plan.Lift && p.data > prev && !prevAt.IsZero() {
				c.tell(pid, p, plan)
			}
			continue
		}
		if plan.Running && heading(prev, prevAt, p, plan) {
			c.tell(pid, p, plan)
		}
		if dist(max(p.data+plan.Room, p.liftTo), p.line) > plan.Step {
			c.reset(pid, p, plan)
		}
	}
	for pid, p := range c.procs {
		if !p.seen {
			c.ended = c.ended || plan.Running
			c.giveBack(pid, p)
			delete(c.procs, pid)
		}
	}
}

// heading says whether p, at prev (measured at prevAt) before this
// sample, is in its zone and would reach its line within nearRate at the
// pace it grew.
func heading(prev uint64, prevAt time.Time, p *proc, plan Plan) bool {
	if plan.Zone == 0 || plan.Signal == 0 || p.data+plan.Zone < p.line || p.data <= prev || prevAt.IsZero() {
		return false
	}
	dt := p.at.Sub(prevAt)
	left := p.line - min(p.line, p.data)
	return dt > 0 && float64(left) < float64(p.data-prev)*nearRate.Seconds()/dt.Seconds()
}

// tell sends p plan.Signal if it catches it, at most once a retell.
func (c *Ceiling) tell(pid int, p *proc, plan Plan) {
	if plan.Signal == 0 || !p.catches || !p.toldAt.IsZero() && plan.At.Sub(p.toldAt) < retell {
		return
	}
	p.toldAt = plan.At
	c.bite(pid, p)
	err := syscall.Kill(pid, plan.Signal)
	c.log.Printf("memory guard: ceiling: pid %d is %s from its line, growing: told it (signal %d: %v)",
		pid, units.FormatBytes(p.line-min(p.line, p.data)), plan.Signal, err)
}

func (c *Ceiling) bite(pid int, p *proc) {
	c.bitten.Store(int64(pid))
	c.bittenLine.Store(p.line)
}

// Rearm takes back the lifts at the next Keep: the cell that needed them
// has ended.
func (c *Ceiling) Rearm() {
	c.rearm.Store(true)
	c.bitten.Store(0)
}

// Bitten is the process found stuck at its line since the last Rearm, and
// that line; ok is false if none was.
func (c *Ceiling) Bitten() (pid int, line uint64, ok bool) {
	pid = int(c.bitten.Load())
	return pid, c.bittenLine.Load(), pid != 0
}

// Least is the least a process had left below its line (what it could
// still add to its VmData): at the latest Keep, or at one while the cell
// ran, since the last Rearm. ok is false if the ceiling holds no process.
func (c *Ceiling) Least() (left uint64, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.off {
		return 0, false
	}
	left, ok = c.least, c.leastSet
	for _, p := range c.procs {
		if l := p.line - min(p.line, p.data); !ok || l < left {
			left, ok = l, true
		}
	}
	return left, ok
}

// Ended says whether a process left the tree while a cell ran, since the
// last Rearm: what it had left at the end was not seen.
func (c *Ceiling) Ended() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ended
}

// Release gives every process its own limit back and forgets them: the
// guard no longer guards this kernel.
func (c *Ceiling) Release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for pid, p := range c.procs {
		c.giveBack(pid, p)
	}
	clear(c.procs)
	c.recent = c.recent[:0]
	c.rearm.Store(false)
	c.bitten.Store(0)
}

func dist(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return b - a
}

// adopt sets a line on a process seen for the first time.
func (c *Ceiling) adopt(pid int, plan Plan) {
	st, err := proctree.ReadStat(pid)
	if err != nil {
		c.complain("read the start of a new process", err)
		return
	}
	var old unix.Rlimit
	if err := unix.Prlimit(pid, unix.RLIMIT_DATA, nil, &old); err != nil {
		c.complain("read RLIMIT_DATA", err)
		return
	}
	p := &proc{start: st.Start, hard: old.Max, orig: old, seen: true, at: plan.At}
	if slices.Contains(c.recent, old.Cur) {
		p.orig = c.base // inherited from a process with a line: give back what the tree had
	} else if old.Cur != c.base.Cur {
		p.own = true // its code set one: the line stays below it
	}
	c.procs[pid] = p
	c.reset(pid, p, plan)
	c.look(pid, p)
}

// look notes whether p has mapped a library that dies of a refusal.
func (c *Ceiling) look(pid int, p *proc) {
	p.looked = p.data
	libraries := make([]string, len(aborting))
	for i, a := range aborting {
		libraries[i] = a.path
	}
	if i, err := proctree.Mapped("/proc", pid, libraries); i >= 0 && c.aborts == "" {
		c.aborts = fmt.Sprintf("%s (pid %d)", aborting[i].name, pid)
	} else if err != nil && !errors.Is(err, syscall.ESRCH) && !errors.Is(err, os.ErrNotExist) {
		c.complain("look at a process's libraries", err)
	}
}

// Aborts names a library in the kernel's tree that ends its process when
// an allocation is refused, and that process; "" if none was seen.
func (c *Ceiling) Aborts() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.aborts
}

// Off gives every process its own limit back and holds no line again.
func (c *Ceiling) Off() {
	c.Release()
	c.mu.Lock()
	c.off, c.leastSet, c.ended = true, false, false
	c.mu.Unlock()
	c.bitten.Store(0)
}

// reset reads p's VmData and sets its line plan.Room past it, or where a
// lift put it if that is higher.
func (c *Ceiling) reset(pid int, p *proc, plan Plan) {
	var st proctree.Status
	var err error
	st, c.buf, err = proctree.ReadStatus(pid, c.buf)
	if err != nil {
		if !errors.Is(err, proctree.ErrGone) {
			c.complain("read VmData", err)
		}
		return
	}
	p.data, p.stack, p.catches = st.Data, st.Stack, st.Catches(plan.Signal)
	c.set(pid, p, max(p.data+plan.Room, p.liftTo))
}

// set makes line pid's soft limit, within its hard limit (and its own
// limit, if its code set one).
func (c *Ceiling) set(pid int, p *proc, line uint64) {
	if p.own {
		line = min(line, p.orig.Cur)
	}
	line = min(line, p.hard)
	var old unix.Rlimit
	err := unix.Prlimit(pid, unix.RLIMIT_DATA, &unix.Rlimit{Cur: line, Max: p.hard}, &old)
	if err == nil && old.Max != p.hard {
		// Its code moved the hard limit meanwhile: keep that one, and
		// never give it back above it.
		p.hard = old.Max
		line = min(line, p.hard)
		err = unix.Prlimit(pid, unix.RLIMIT_DATA, &unix.Rlimit{Cur: line, Max: p.hard}, nil)
	}
	if errors.Is(err, syscall.ESRCH) {
		return
	}
	if err != nil {
		c.complain("set RLIMIT_DATA", fmt.Errorf("pid %d: %w", pid, err))
		return
	}
	p.line = line
	if len(c.recent) == recentLines {
		c.recent = slices.Delete(c.recent, 0, 1)
	}
	c.recent = append(c.recent, line)
}

// giveBack restores p's own limit if pid is still that process.
func (c *Ceiling) giveBack(pid int, p *proc) {
	st, err := proctree.ReadStat(pid)
	if err != nil || st.Start != p.start {
		return // gone, or the pid is another process's now
	}
	orig := p.orig
	orig.Max = p.hard
	orig.Cur = min(orig.Cur, orig.Max)
	if err := unix.Prlimit(pid, unix.RLIMIT_DATA, &orig, nil); err != nil && !errors.Is(err, syscall.ESRCH) {
		c.complain("give back RLIMIT_DATA", fmt.Errorf("pid %d: %w", pid, err))
	}
}

// complain logs an error once per kind: a failing call would otherwise log
// at every sample.
func (c *Ceiling) complain(what string, err error) {
	if c.told[what] {
		return
	}
	c.told[what] = true
	c.log.Printf("memory guard: ceiling: %s: %v", what, err)
}
