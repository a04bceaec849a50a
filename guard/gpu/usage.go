package gpu

// Meter measures the GPU memory of a set of processes.
type Meter interface {
	// Usage measures the processes with these pids, as /proc lists them.
	Usage(pids []int) (Usage, error)
	// Close releases NVML. The Meter is not used after.
	Close() error
	// Driver is the driver's versions, as NVML reported them at Open.
	Driver() Driver
}

// Driver is the NVIDIA driver's versions, for a diagnosis of a framework
// that would not start on it. Empty fields are unknown.
type Driver struct {
	Version string // "535.129.03"
	CUDA    string // the newest CUDA it supports: "12.2"
}

// String is "NVIDIA driver 535.129.03 (CUDA 12.2)", or "" if unknown.
func (d Driver) String() string {
	switch {
	case d.Version == "":
		return ""
	case d.CUDA == "":
		return "NVIDIA driver " + d.Version
	}
	return "NVIDIA driver " + d.Version + " (CUDA " + d.CUDA + ")"
}

// Usage is the GPU memory of a process tree at one moment.
type Usage struct {
	Total uint64 // bytes the tree holds on all GPUs
	GPUs  []GPU  // every GPU, by index; none on a machine without
	// PIDsHidden says the tree's share could not be found: the driver names
	// processes by host pid, which a container with its own pid namespace
	// cannot see unless it is given the host's /proc (HostProc). Total and
	// every GPU's Used are then 0, whatever the tree holds, and no process
	// is listed; the GPUs' own figures are still right.
	PIDsHidden bool
}

// GPU is one device: what the tree holds on it and how full it is.
type GPU struct {
	Index int
	Name  string // "NVIDIA A100-SXM4-40GB"
	Used  uint64 // bytes the tree holds here
	Procs []Proc // the tree's processes on this GPU, by pid
	// Others are the other processes on this GPU, by pid: what holds the
	// rest of its memory, for the note under a cell that ran out of it.
	Others   []Proc
	MemUsed  uint64 // bytes in use by everyone, the driver included
	MemTotal uint64
}

// Proc is one process's memory on one GPU.
type Proc struct {
	PID  int    // as the driver names it: the host's pid
	Used uint64 // bytes; 0 when UsedUnknown
	// UsedUnknown says the driver would not tell (NVML_VALUE_NOT_AVAILABLE),
	// as happens without the right privileges: the process is on the GPU,
	// its share is not in Used.
	UsedUnknown bool
}
