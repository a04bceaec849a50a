package sampler

import (
	"slices"
	"time"

	"github.com/jupyter-guard/jupyter-guard/guard/cgroup"
	"github.com/jupyter-guard/jupyter-guard/guard/ledger"
	"github.com/jupyter-guard/jupyter-guard/guard/procfile"
	"github.com/jupyter-guard/jupyter-guard/guard/proctree"
)

// Wake says what made the sampler take a sample.
type Wake int

const (
	Kicked Wake = iota + 1 // a cell started or finished
	Timed                  // the wait the handler asked for ran out
	Pushed                 // an event from the kernel's cgroup
)

func (w Wake) String() string {
	switch w {
	case Kicked:
		return "kicked"
	case Timed:
		return "timed"
	case Pushed:
		return "pushed"
	}
	return "unknown"
}

// Sample is one measurement of the kernel's memory.
type Sample struct {
	Time time.Time
	Root int   // the kernel's pid
	Pids []int // its tree as last scanned, root first
	// Tree is the resident memory of Pids, in bytes.
	Tree uint64
	// Unfilled is what Pids have mapped to write and not yet touched (see
	// proctree.Usage): its growth in a cell is the fill in flight.
	Unfilled uint64
	// Each is each of Pids' own figures, in the same order (zero for one
	// that is gone): the allocation ceiling follows each process. It is
	// valid until the handler returns.
	Each []proctree.Usage
	// Cgroup is the kernel's memory cgroup's usage; HasCgroup says whether
	// it was read. Unless the guard decides on it, it may be up to
	// otherMaxAge older than Time.
	Cgroup    cgroup.Usage
	HasCgroup bool
	// Host is the machine's used memory; 0 if it could not be read. Unless
	// the guard decides on it, it may be up to otherMaxAge older than Time.
	Host uint64
	// GPU is the memory the tree holds on GPUs, if a meter is set. It is
	// measured with each scan of the tree and repeated in between: it is
	// recorded and warned about (Options.GPU may post a warning), never
	// paused for, and NVML calls are slow.
	GPU uint64
	// NextRung is the lowest usage threshold in place above Cgroup.Bytes
	// (cgroup v1, see Sampler.Arm): the kernel wakes the sampler when the
	// cgroup's usage reaches it. 0 if there is none.
	NextRung uint64
	Woken    Wake
	// Cost is how long the measurement took.
	Cost time.Duration
	// Lag is how late the sampler's timers have fired lately (see lag):
	// how long the guard can be kept from running on a busy machine.
	Lag time.Duration
}

// treeMaxAge is how long a scan of the tree is reused. A full scan reads
// every process's stat on the host (about 1 ms for 100 processes), the RSS
// of a known tree a few microseconds per process; a worker that starts
// between scans is counted at most this late (its cgroup charge at once).
const treeMaxAge = 250 * time.Millisecond

// otherMaxAge is how long a figure the guard does not decide on is reused:
// the host's used memory under a cgroup's limit, the cgroup's usage under
// the host's. Those are for the record (status, the diagnosis), and
// /proc/meminfo and memory.stat, rendered afresh on every read, are the
// dearest files of the end-of-cell sample (about half its cost). The
// figure decided on, and the tree, which counts each cell under the
// host's limit, are read at every sample.
const otherMaxAge = treeMaxAge

// kept is a figure as last read, at at (zero: none yet, or the last read
// failed, and v is what the failed read gave).
type kept[T any] struct {
	v  T
	at time.Time
}

// update reads the figure again if the guard decides on it (every) or it
// is otherMaxAge old, and returns the read's error.
func (k *kept[T]) update(every bool, now time.Time, read func() (T, error)) error {
	if !every && now.Sub(k.at) < otherMaxAge {
		return nil
	}
	var err error
	k.v, err = read()
	k.at = now
	if err != nil {
		k.at = time.Time{}
	}
	return err
}

// files are the kernel files the sampler reads at every sample, kept open
// (see procfile). Only the sampler's loop touches them, so a descriptor is
// never closed under a read, nor its number reused meanwhile.
type files struct {
	meminfo, loadavg *procfile.File
	rss              *proctree.RSSReader
	each             []proctree.Usage    // Sample.Each's storage
	usage            *cgroup.UsageReader // of target of, nil if it has no cgroup
	of               *target
}

func newFiles() *files {
	return &files{meminfo: procfile.New(proctree.Meminfo), loadavg: procfile.New(proctree.Loadavg), rss: proctree.NewRSSReader()}
}

// usageOf is the usage reader of t's cgroup; it closes the previous
// target's.
func (f *files) usageOf(t *target) *cgroup.UsageReader {
	if f.of != t {
		f.closeUsage()
		if t.group != nil {
			f.usage = t.group.UsageReader()
		}
		f.of = t
	}
	return f.usage
}

func (f *files) closeUsage() {
	if f.usage != nil {
		f.usage.Close()
	}
	f.usage, f.of = nil, nil
}

func (f *files) close() {
	f.closeUsage()
	f.meminfo.Close()
	f.loadavg.Close()
	f.rss.Close()
}

// measure takes one sample of t.
func (s *Sampler) measure(t *target, why Wake, f *files) Sample {
	now := time.Now()
	// A pushed wake-up is urgent: it measures the tree it knows (the freeze
	// scans the tree itself). Otherwise a tree older than treeMaxAge is
	// scanned again, and a kick wants the tree as it is now, which is the
	// tree last scanned if no process was born since.
	stale := len(t.pids) == 0 || why != Pushed && now.Sub(t.scanned) >= treeMaxAge
	if stale || why == Kicked {
		if lastPID := s.lastPID(t, f); stale || lastPID < 0 || lastPID != t.lastPID {
			s.scan(t, now, lastPID)
		}
	}
	smp := Sample{Time: now, Root: t.root, Pids: t.pids, GPU: t.gpu, Woken: why}
	f.each = slices.Grow(f.each[:0], len(t.pids))[:len(t.pids)]
	tree, err := f.rss.SumEach(t.pids, f.each)
	if err != nil {
		t.complain(s.log, "measure the tree's RSS", err)
	}
	smp.Tree, smp.Unfilled, smp.Each = tree.RSS, tree.Unfilled, f.each
	if usage := f.usageOf(t); usage != nil {
		t.complain(s.log, "read the cgroup's usage", t.cgroup.update(t.on == ledger.Cgroup, now, usage.Read))
		smp.Cgroup, smp.HasCgroup = t.cgroup.v, !t.cgroup.at.IsZero()
	}
	t.complain(s.log, "read the host's memory", t.host.update(t.on == ledger.Host, now, func() (uint64, error) { return hostUsed(f.meminfo) }))
	smp.Host = t.host.v
	if t.ladder != nil && smp.HasCgroup {
		smp.NextRung = t.ladder.next(smp.Cgroup.Bytes)
	}
	smp.Cost = time.Since(now)
	return smp
}

// lastPID is the system's last pid now (proctree.LastPID), -1 if it cannot
// be read.
func (s *Sampler) lastPID(t *target, f *files) int {
	loadavg, err := f.loadavg.Read()
	pid := -1
	if err == nil {
		pid, err = proctree.LastPID(loadavg)
	}
	if err != nil {
		t.complain(s.log, "read the last pid", err)
		return -1
	}
	return pid
}

// scan finds t's tree again, and its GPU memory, as of now, when the last
// pid was lastPID.
func (s *Sampler) scan(t *target, now time.Time, lastPID int) {
	pids, err := s.opts.Tree(t.root)
	if err != nil {
		t.complain(s.log, "scan the process tree", err)
	} else {
		t.pids, t.scanned, t.lastPID = pids, now, lastPID
	}
	if s.opts.GPU != nil {
		if t.gpu, err = s.opts.GPU(t.pids); err != nil {
			t.complain(s.log, "measure GPU memory", err)
		}
	}
}
