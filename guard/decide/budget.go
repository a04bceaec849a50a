package decide

import (
	"fmt"
	"strconv"

	"github.com/jupyter-guard/jupyter-guard/guard/cgroup"
	"github.com/jupyter-guard/jupyter-guard/guard/config"
	"github.com/jupyter-guard/jupyter-guard/guard/ledger"
	"github.com/jupyter-guard/jupyter-guard/guard/units"
)

// Budget is the resolved configuration with what it is measured on.
type Budget struct {
	config.Budget // Limit, Warn, Pause in bytes
	Action        config.Action
	// Figure is what counts against the budget:
	//   - the cgroup's working set when the limit is a share of a cgroup
	//     limit: that cgroup's OOM killer counts it (page cache it can drop
	//     is left out, so reading files does not trip the guard);
	//   - the kernel tree's RSS when the user gave an absolute limit: it is
	//     a budget for the kernel's own processes;
	//   - the machine's used memory when the limit is a share of the host's
	//     RAM: the global OOM killer acts when the whole machine runs out.
	Figure ledger.Figure
	// Detected is the limit found on the system, which the budget must not
	// exceed.
	Detected cgroup.Limit
	// Source says where the budget comes from, for messages:
	// "JUPYTER_GUARD_LIMIT", "MEM_LIMIT", "cgroup v1 /a/b", "80% of host
	// memory".
	Source string
	// From is Source in a word, for the status bar: FromSetting,
	// FromMemLimit, FromCgroup or FromHost.
	From string
	// Reserve is what the allocation ceiling keeps below the limit (see
	// reserve); 0 when the ceiling is off. Ceiling is where it holds.
	Reserve uint64
	// Unattended says nobody can answer a pause: the kernel was not
	// started by a Jupyter server for a notebook (nbconvert, papermill,
	// nbclient, guardctl run). A pause would wait for nobody: with the
	// ceiling armed there is none, and the ceiling stops the cell; without
	// it the cell is interrupted.
	Unattended bool
	// RefusalCosts says an allocation refused at the ceiling costs this
	// kernel its variables (Deno's heap, bash itself), InterruptEnds that
	// an interrupt does (xeus-python, Deno on SIGINT): where nobody can
	// answer a pause, a cell is interrupted rather than run into the
	// ceiling only if the interrupt costs less.
	RefusalCosts, InterruptEnds bool
}

// minReserve is the least the ceiling keeps below the limit: a Python
// kernel's error path at its line took 2.5 MiB here (a traceback, the
// reply), and half the reserve is the zone in which the guard tells a
// cell it is heading for its line (ceiling.Plan).
const minReserve = 8 << 20

// reserve is what the ceiling keeps below the limit: half the gap between
// the pause line and the limit, so that the pause, which a person can
// answer, comes first, and the ceiling holds before the limit, with room
// to lift a process stuck at its line and for what a sample misses. At
// least minReserve, at most a quarter of a small budget.
func reserve(b config.Budget) uint64 {
	return min(max(minReserve, (b.Limit-b.Pause)/2), b.Limit/4)
}

// Ceiling is the usage at which the allocation ceiling holds, 0 if it is
// off.
func (b Budget) Ceiling() uint64 {
	if b.Reserve == 0 {
		return 0
	}
	return b.Limit - b.Reserve
}

// tfRuntime is what a TensorFlow kernel holds besides its tensors: about
// 520 MiB at the peak of the seeds' CNN (TensorFlow 2.21 on the CPU, Keras
// 3, with TensorFlow's allocator held to 1,000 MiB: a 1,524 MiB peak,
// bench/cnn_story.py, 2026-11-27), with room for the notebook's own data.
const tfRuntime = 768 << 20

// TensorPool is how much TensorFlow's CPU allocator may hold in a kernel
// under this budget, 0 when the ceiling is off. TensorFlow cannot live
// under the ceiling (a refused allocation on one of its worker threads
// aborts it, see ceiling.aborting), but its own allocator, held to a
// limit, fails a step with ResourceExhaustedError and the kernel lives
// on: the ceiling less what TensorFlow holds besides its tensors (a
// quarter of it when that is more), and at least half of it.
func (b Budget) TensorPool() uint64 {
	c := b.Ceiling()
	if c <= 2*tfRuntime {
		return c / 2
	}
	return c - max(c/4, tfRuntime)
}

// CeilingNote is the start-up line's word on the allocation ceiling.
func (b Budget) CeilingNote() string {
	if b.Reserve == 0 {
		return "; no allocation ceiling (JUPYTER_GUARD_CEILING=off)"
	}
	return "; allocations fail past " + units.FormatBytes(b.Ceiling()) + " (the ceiling)"
}

// From words for Budget.From: what a budget comes from.
const (
	FromSetting  = "JUPYTER_GUARD_LIMIT"
	FromMemLimit = "MEM_LIMIT"
	FromCgroup   = "cgroup"
	FromHost     = "host"
)

// NewBudget resolves cfg against the limit detected for the kernel. A size
// (JUPYTER_GUARD_LIMIT) is a budget for the kernel's own processes; a share
// (100% unless set) is taken of the lowest limit that applies: MEM_LIMIT,
// then the cgroup's or the host's. Its errors are config's: they quote the
// setting and say what to write.
func NewBudget(cfg config.Config, detected cgroup.Limit) (Budget, error) {
	base := detected.Bytes
	memLimit := cfg.Limit.Percent > 0 && cfg.MemLimit > 0 && (base == 0 || cfg.MemLimit < base)
	if memLimit {
		base = cfg.MemLimit
	}
	lines, err := cfg.Resolve(base)
	if err != nil {
		return Budget{}, err
	}
	b := Budget{Budget: lines, Action: cfg.Action, Detected: detected}
	if cfg.Ceiling {
		b.Reserve = reserve(lines)
	}
	switch {
	case cfg.Limit.Percent == 0:
		b.Figure, b.Source, b.From = ledger.Tree, FromSetting, FromSetting
		return b, nil
	case memLimit:
		// JupyterHub's limit for the whole server, which nothing may
		// enforce: the kernel's own processes are what the guard can hold
		// to it (jupyter-resource-usage counts processes too).
		b.Figure, b.Source, b.From = ledger.Tree, FromMemLimit, FromMemLimit
	case detected.Kind == cgroup.HostMemory:
		b.Figure, b.Source, b.From = ledger.Host, detected.Source(), FromHost
	default:
		b.Figure, b.Source, b.From = ledger.Cgroup, detected.Source(), FromCgroup
	}
	if cfg.Limit.Percent != 100 {
		b.Source = fmt.Sprintf("%s%% of %s", strconv.FormatFloat(cfg.Limit.Percent, 'f', -1, 64), b.Source)
	}
	return b, nil
}
