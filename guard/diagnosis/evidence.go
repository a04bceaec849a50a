package diagnosis

import "time"

// Evidence is everything the proxy knows when the kernel has died.
type Evidence struct {
	KernelID string
	PID      int
	Exit     ExitStatus
	// OOMKills is the kernel cgroup's OOM-kill counter around the kernel's life.
	OOMKills OOMCounter
	// KernelLog is what KmsgWatcher.Collect found for the kernel's tree.
	KernelLog KernelLog
	// Stderr and Stdout are the kernel's last output lines (Tail.Lines).
	Stderr, Stdout []string
	// Cell is the cell that was running when the kernel died; nil if idle.
	Cell   *Cell
	Memory Memory
	// Kernel names the kernel as its kernel_info_reply does ("xeus-python
	// 0.19.0"), and Language is its language_info.name ("python", "R");
	// both "" when it never answered.
	Kernel, Language string
	// Interrupt is the last interrupt passed to the kernel within
	// InterruptWindow of its death; nil if none.
	Interrupt *Interrupt
	// GPUDriver is the NVIDIA driver's versions as NVML reports them
	// ("NVIDIA driver 535.129.03 (CUDA 12.2)"); "" without a GPU.
	GPUDriver string
	// Restart is what the proxy does next.
	Restart Restart
	// Unanswered is set when the kernel died before it ever answered
	// Jupyter: it could not start. Argv is its command line, for the
	// advice.
	Unanswered bool
	Argv       []string
	// Ceiling is where the guard's allocation ceiling held (the usage past
	// which allocations fail) when the running cell had taken the kernel
	// to it; 0 if it had not, or the ceiling is off.
	Ceiling uint64
	// TensorPool is the limit jupyter-guard held TensorFlow's CPU
	// allocator to (TF_CPU_BFC_MEM_LIMIT_IN_MB); 0 if it set none.
	TensorPool uint64
}

// OOMCounter is the cgroup's OOM-kill count (cgroup v1 memory.oom_control
// oom_kill, v2 memory.events oom_kill) when the kernel started and after it
// died. The kernel raises it before it sends its SIGKILL.
type OOMCounter struct {
	Known  bool   `json:"known"`
	Before uint64 `json:"before"`
	After  uint64 `json:"after"`
}

// kills is how many processes of the cgroup the OOM killer killed.
func (c OOMCounter) kills() uint64 {
	if !c.Known || c.After < c.Before {
		return 0
	}
	return c.After - c.Before
}

// Cell is one notebook cell and what it did to memory.
type Cell struct {
	// ExecutionCount is the number Jupyter shows as [N]; 0 if not known yet.
	ExecutionCount int `json:"execution_count,omitzero"`
	// Code is the cell's source. Only its first line is shown, except to
	// quote the line a crash points at.
	Code string `json:"code,omitempty"`
	// Start and Peak are the tree's memory in bytes when the cell started
	// and at its highest while it ran; 0 if not measured.
	Start uint64 `json:"start,omitzero"`
	Peak  uint64 `json:"peak,omitzero"`
	// Growth is what the cell added, in bytes (negative if it freed memory).
	Growth   int64         `json:"growth,omitzero"`
	Duration time.Duration `json:"duration_ns,omitzero"`
	// Rate is the recent growth in bytes per second the ledger measured;
	// 0 means Growth / Duration is used.
	Rate float64 `json:"rate,omitzero"`
}

// Memory is the memory story the ledger tells about the kernel's life.
type Memory struct {
	// Limit is the memory budget in bytes; 0 if none is known.
	Limit uint64 `json:"limit,omitzero"`
	// LimitSource says where Limit comes from: LimitEnv, LimitHost, or
	// where a cgroup sets it ("cgroup v2 memory.max at /job").
	LimitSource string `json:"limit_source,omitempty"`
	// TreePeak and TreeLast are the kernel's process tree's memory: the
	// highest and the last sample.
	TreePeak uint64      `json:"tree_peak,omitzero"`
	TreeLast uint64      `json:"tree_last,omitzero"`
	GPUs     []GPUMemory `json:"gpus,omitempty"`
	// TopCells are the earlier cells that grew the most, largest first.
	TopCells []Cell `json:"top_cells,omitempty"`
}

// Where a memory limit comes from; the advice to raise it depends on it.
const (
	LimitEnv  = "JUPYTER_GUARD_LIMIT"
	LimitHost = "host RAM"
)

// GPUMemory is the kernel's use of one GPU.
type GPUMemory struct {
	Index int    `json:"index"`
	Name  string `json:"name,omitempty"`
	Used  uint64 `json:"used"`
	Total uint64 `json:"total,omitzero"`
}

// Restart is what the proxy does after this death.
type Restart struct {
	// GaveUp is set when the kernel died too often within Window and the
	// proxy stopped restarting it.
	GaveUp bool `json:"gave_up,omitempty"`
	// Deaths counts the deaths within Window, this one included.
	Deaths int           `json:"deaths,omitzero"`
	Window time.Duration `json:"window_ns,omitzero"`
	// ByClient is set when the proxy ends with the kernel, leaving it to
	// the program that started it to start another, as for a plain kernel.
	ByClient bool `json:"by_client,omitempty"`
}
