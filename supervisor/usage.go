package supervisor

import (
	"fmt"
	"math"
	"os"
	"time"

	"github.com/jupyter-guard/jupyter-guard/guard/proctree"
	"github.com/jupyter-guard/jupyter-guard/internal/ratelog"
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

// usageDesk answers usage_requests, on one goroutine of its own: reading
// /proc must never hold up the control channel they come on, and a
// goroutine per request let a client that sends 50,000 in a second, and
// reads none of the answers, hold 25,000 goroutines and 427 MiB. Requests
// wait in a queue of usageQueued; one measurement answers every request
// that waited for it (the panel asks every 5 s, so they are never more
// than one from each panel); a request that finds the queue full is
// answered at once that the guard is busy, with a line in the log now and
// then. So every request the proxy reads gets an answer, whether or not
// its client reads it.
type usageDesk struct {
	queue   chan *proxy.Request
	measure func() usageReply
	reply   func(*proxy.Request, any)
	busy    *ratelog.Limiter
}

const (
	usageQueued = 64
	// usageBusyReport is how often the busy answers are logged, at most.
	usageBusyReport = 10 * time.Second
)

// usageBusy is the content of the answer to a request that found the
// queue full: an error reply, as the protocol has them.
type usageBusy struct {
	Status    string   `json:"status"`
	Ename     string   `json:"ename"`
	Evalue    string   `json:"evalue"`
	Traceback []string `json:"traceback"`
}

func newUsageDesk(measure func() usageReply, reply func(*proxy.Request, any), log func(string, ...any)) *usageDesk {
	return &usageDesk{queue: make(chan *proxy.Request, usageQueued), measure: measure, reply: reply,
		busy: ratelog.New(log, usageBusyReport)}
}

// ask queues req, or answers it at once that the desk is busy. It never
// waits.
func (d *usageDesk) ask(req *proxy.Request) {
	select {
	case d.queue <- req:
	default:
		d.busy.Printf("busy", "usage_request: %d are waiting for a measurement already; one more answered that the guard is busy", usageQueued)
		evalue := fmt.Sprintf("jupyter-guard is busy: %d usage requests are waiting already; ask again later", usageQueued)
		d.reply(req, usageBusy{Status: "error", Ename: "Busy", Evalue: evalue, Traceback: []string{evalue}})
	}
}

// serve answers the queued requests until stop is closed.
func (d *usageDesk) serve(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case req := <-d.queue:
			rep := d.measure()
			d.reply(req, rep)
			for waited := len(d.queue); waited > 0; waited-- {
				d.reply(<-d.queue, rep)
			}
		}
	}
}

// measureUsage is the answer to a usage_request, whatever the kernel: most
// kernels do not answer one, and ipykernel's answer would be the second.
func (s *Supervisor) measureUsage() usageReply {
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
	return rep
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
