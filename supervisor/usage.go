package supervisor

import (
	"fmt"
	"math"
	"os"
	"time"

	"github.com/jupyter-guard/jupyter-guard/guard/proctree"
	"github.com/jupyter-guard/jupyter-guard/proxy"
)

// jupyter-resource-usage's kernel usage panel asks every 5 s while it is
// shown and gives up after 10 s. A measurement younger than usageMaxAge
// answers as it is; an older one (the sampler sleeps between cells) is
// taken anew, waiting at most usageWait for it, then the last one answers.
const (
	usageMaxAge = time.Second
	usageWait   = 500 * time.Millisecond
)

// usageReply is the content of ipykernel's usage_reply (kernelbase.py,
// usage_request), which the panel shows, measured here on the kernel's
// whole process tree for any kernel language, with the guard's own figures
// under jupyter_guard. Figures that could not be had are left out.
type usageReply struct {
	Hostname string `json:"hostname"`
	// PID is the kernel's process, the root of the tree measured.
	PID int `json:"pid,omitempty"`
	// KernelCPU is the tree's CPU use since the previous usage_request, in
	// percent of one CPU, as psutil's cpu_percent() summed over the tree.
	KernelCPU *float64 `json:"kernel_cpu,omitempty"`
	// KernelMemory is the tree's resident memory (ipykernel sums PSS where
	// psutil can read it, which costs a walk of every mapping: the guard's
	// RSS is what it measures anyway, and what its budget counts).
	KernelMemory      uint64         `json:"kernel_memory,omitzero"`
	HostCPUPercent    *float64       `json:"host_cpu_percent,omitempty"`
	CPUCount          int            `json:"cpu_count,omitempty"`
	HostVirtualMemory *virtualMemory `json:"host_virtual_memory,omitempty"`
	Guard             usageGuard     `json:"jupyter_guard"`
}

// virtualMemory is psutil's virtual_memory() on Linux (psutil 7), as
// ipykernel passes it on.
type virtualMemory struct {
	Total     uint64  `json:"total"`
	Available uint64  `json:"available"`
	Percent   float64 `json:"percent"`
	Used      uint64  `json:"used"`
	Free      uint64  `json:"free"`
	Active    uint64  `json:"active"`
	Inactive  uint64  `json:"inactive"`
	Buffers   uint64  `json:"buffers"`
	Cached    uint64  `json:"cached"`
	Shared    uint64  `json:"shared"`
	Slab      uint64  `json:"slab"`
}

// usageGuard is the guard's view of the kernel, as guardctl status has it.
type usageGuard struct {
	State       string `json:"state"` // as guardctl status: idle, busy, paused, starting, restarting, dead
	UsedBytes   uint64 `json:"used_bytes,omitzero"`
	BudgetBytes uint64 `json:"budget_bytes"`
	MeasuredOn  string `json:"measured_on"` // the figure the budget counts: tree_rss, cgroup or host
	LimitSource string `json:"limit_source"`
}

// answerUsage answers a usage_request itself, whatever the kernel: most
// kernels do not answer one, and ipykernel's answer would be the second.
// It runs on a goroutine of its own: reading /proc must never hold up the
// control channel it came on.
func (s *Supervisor) answerUsage(req proxy.Request) {
	hostname, _ := os.Hostname() // as socket.gethostname(); "" if it cannot be had
	b := s.guard.Budget()
	rep := usageReply{Hostname: hostname, Guard: usageGuard{State: s.kernelState(), BudgetBytes: b.Limit,
		MeasuredOn: string(b.Figure), LimitSource: b.Source}}
	if proc := s.currentProc(); proc != nil {
		rep.PID = proc.Pid
		if m, pids, ok := s.guard.Fresh(usageMaxAge, usageWait); ok {
			rep.KernelMemory, rep.Guard.UsedBytes = m.Tree, m.Of(b.Figure)
			if cpu, err := s.cpu.Tree(pids); err != nil {
				s.cfg.Log.Printf("usage_request: %v", err)
			} else {
				cpu = tenths(cpu)
				rep.KernelCPU = &cpu
			}
		}
	}
	if load, err := s.cpu.Host(); err != nil {
		s.cfg.Log.Printf("usage_request: host CPU: %v", err)
	} else {
		rep.CPUCount = load.CPUs
		if load.Known {
			percent := tenths(load.Percent)
			rep.HostCPUPercent = &percent
		}
	}
	if vm, err := hostVirtualMemory(); err != nil {
		s.cfg.Log.Printf("usage_request: %v", err)
	} else {
		rep.HostVirtualMemory = &vm
	}
	s.reply(req, rep)
}

// hostVirtualMemory reads /proc/meminfo as psutil's virtual_memory() does.
func hostVirtualMemory() (virtualMemory, error) {
	data, err := os.ReadFile(proctree.Meminfo)
	if err != nil {
		return virtualMemory{}, err
	}
	m, err := proctree.ParseMeminfo(data)
	if err != nil {
		return virtualMemory{}, fmt.Errorf("%s: %w", proctree.Meminfo, err)
	}
	vm := virtualMemory{Total: m.Total, Available: m.Available, Used: m.Used(), Free: m.Free, Active: m.Active,
		Inactive: m.Inactive, Buffers: m.Buffers, Cached: m.Cached + m.SReclaimable, Shared: m.Shmem, Slab: m.Slab}
	if m.Total > 0 {
		vm.Percent = tenths(float64(vm.Used) / float64(m.Total) * 100)
	}
	return vm, nil
}

// tenths rounds a percentage to one decimal, as psutil gives them.
func tenths(percent float64) float64 { return math.Round(percent*10) / 10 }
