package control

import (
	"encoding/json"
	"time"
)

// State is one guarded kernel as `guardctl status --json` prints it. The
// field names are a stable interface for scripts: add, never rename.
type State struct {
	KernelID   string    `json:"kernel_id"`
	Kernelspec string    `json:"kernelspec"`
	Notebook   string    `json:"notebook,omitempty"`
	ProxyPID   int       `json:"proxy_pid"`
	KernelPID  int       `json:"kernel_pid,omitempty"`
	State      string    `json:"state"` // one of States
	Started    time.Time `json:"started"`
	Memory     Memory    `json:"memory"`
	GPU        []GPU     `json:"gpu,omitempty"`
	// GPUUnknown says why the kernel's share of the GPUs is unknown (a
	// container that cannot see the host's pids); GPU then has each
	// device's own figures and 0 as the kernel's.
	GPUUnknown string `json:"gpu_unknown,omitempty"`
	Deaths     int    `json:"deaths"`
	// DeathCauses counts Deaths by cause (diagnosis.Cause: segfault,
	// oom-kill-cgroup, ...).
	DeathCauses map[string]int `json:"death_causes,omitempty"`
	// Actions counts what the guard did in the kernel's cells, by kind:
	// warn, alert (the warning at the action line under action=warn),
	// pause, interrupt, thaw (for an interrupt or restart of a paused
	// kernel), resume.
	Actions  map[string]int `json:"actions,omitempty"`
	LastCell *Cell          `json:"last_cell,omitempty"`
	// Proxy is the proxy process's own footprint, for leak hunting.
	Proxy *ProxyRuntime `json:"proxy,omitempty"`
}

// States are the values of State.State.
var States = []string{"starting", "idle", "busy", "paused", "restarting", "dead"}

// ProxyRuntime is the proxy process's own use of resources.
type ProxyRuntime struct {
	Goroutines int `json:"goroutines"`
	FDs        int `json:"open_fds"`
}

// Memory is the kernel's memory against its budget. Kernel is the
// kernel's own figure, which the status bar, guardctl status, the panel and
// /metrics show first; Used is what the budget counts, which is Kernel
// unless Scope says it is the host's or a cgroup shared with others.
type Memory struct {
	TreeRSS uint64 `json:"tree_rss_bytes"`
	Cgroup  uint64 `json:"cgroup_bytes,omitempty"`
	// Kernel is the memory of the kernel's own processes: the RSS of its
	// process tree, or its cgroup's working set where that cgroup holds
	// the kernel's processes and no others (KernelSource says which).
	Kernel       uint64  `json:"kernel_bytes"`
	KernelSource string  `json:"kernel_source"` // tree_rss or cgroup
	KernelShare  float64 `json:"kernel_share"`  // kernel / budget
	Used         uint64  `json:"used_bytes"`    // the figure compared with the budget
	// Scope is what Used measures: kernel (Kernel itself), cgroup (a
	// cgroup shared with other processes, a container's) or host (the
	// machine's used memory).
	Scope  string  `json:"scope"`
	Budget uint64  `json:"budget_bytes"`
	Share  float64 `json:"share"` // used / budget, 0..1+
	// Warn and Pause are the lines on Used: the guard warns in the cell at
	// the first and takes Action at the second: pause, interrupt, warn, or
	// none where nobody can answer a pause and the ceiling stops the cell.
	Warn   uint64 `json:"warn_bytes"`
	Pause  uint64 `json:"pause_bytes"`
	Action string `json:"action"`
	// Ceiling is the usage past which the kernel's allocations fail (the
	// allocation ceiling), 0 when it is off. Headless says nobody can
	// answer a pause, so none is made (JUPYTER_GUARD_HEADLESS).
	Ceiling  uint64 `json:"ceiling_bytes,omitempty"`
	Headless bool   `json:"headless,omitempty"`
	// LimitSource says where the budget comes from ("cgroup v1 /a/b",
	// "80% of MEM_LIMIT"); BudgetFrom says it in a word: JUPYTER_GUARD_LIMIT,
	// MEM_LIMIT, cgroup or host.
	LimitSource string `json:"limit_source"`
	BudgetFrom  string `json:"budget_from"`
	// LimitUnseen says why a limit the guard cannot read may bind the
	// kernel, when the budget fell back to host memory.
	LimitUnseen string `json:"limit_unseen,omitempty"`
	// MeasuredAt is when the figures were measured: within a second of
	// the question for a running kernel (an idle kernel is measured anew).
	MeasuredAt time.Time `json:"measured_at,omitzero"`
}

// Scopes are the values of Memory.Scope.
const (
	ScopeKernel = "kernel"
	ScopeCgroup = "cgroup"
	ScopeHost   = "host"
)

// GPU is the kernel's use of one device; every device is listed.
type GPU struct {
	Index int    `json:"index"`
	Name  string `json:"name"`
	Used  uint64 `json:"used_bytes"` // by the kernel's processes
	// PIDs are the kernel's processes on the device, as the driver names
	// them (host pids): how other proxies tell whose memory they see.
	PIDs  []int  `json:"pids,omitempty"`
	InUse uint64 `json:"in_use_bytes"` // by everyone
	Total uint64 `json:"total_bytes"`
}

// Cell is one executed cell of the ledger.
type Cell struct {
	ExecutionCount int       `json:"execution_count"`
	Code           string    `json:"code"` // first line
	Start          time.Time `json:"start"`
	End            time.Time `json:"end,omitzero"`
	Running        bool      `json:"running,omitempty"`
	StartBytes     uint64    `json:"start_bytes"`
	PeakBytes      uint64    `json:"peak_bytes"`
	EndBytes       uint64    `json:"end_bytes"`
	GrowthBytes    int64     `json:"growth_bytes"`
	GPUPeakBytes   uint64    `json:"gpu_peak_bytes,omitempty"`
}

// History is the kernel's memory over the last minutes, for the panel's
// picture: the measurements the guard took (a few a second while a cell
// runs, one for each status asked between cells), and the lines they are
// read against. Cells come from Cells.
type History struct {
	Budget uint64 `json:"budget_bytes"`
	Warn   uint64 `json:"warn_bytes"`
	Pause  uint64 `json:"pause_bytes"`
	// KernelSource and Scope say what each point's Kernel and Used
	// measure, as in Memory: Warn and Pause are lines on Used.
	KernelSource string  `json:"kernel_source"`
	Scope        string  `json:"scope"`
	Points       []Point `json:"points"`
}

// Point is one measurement: At in milliseconds since the Unix epoch (as
// JavaScript counts time), the kernel's own figure and what the budget
// counts, in bytes.
type Point struct {
	At     int64  `json:"t"`
	Kernel uint64 `json:"kernel"`
	Used   uint64 `json:"used"`
}

// ShortID is a kernel id as guardctl shows it: enough to tell kernels apart
// and to name one on its command line.
func ShortID(id string) string { return id[:min(8, len(id))] }

// Kernel is what a proxy serves.
type Kernel interface {
	State() State
	Cells() []Cell
	History() History
	Resume() error
	Interrupt() error
	Restart() error
}

// apiError is the body of every error answer.
type apiError struct {
	Error string `json:"error"`
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(apiError{Error: err.Error()})
	}
	return b
}
