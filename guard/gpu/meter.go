//go:build cgo

package gpu

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// nvmlMeter is the Meter on a machine whose NVML started.
type nvmlMeter struct {
	lib       nvml.Interface
	devices   []device
	view      pidView // nil: the driver's pids cannot be matched to ours
	driver    Driver
	closeOnce sync.Once
	closeErr  error
}

// device is a GPU found at Open.
type device struct {
	handle nvml.Device
	index  int
	name   string
}

// Usage reads every GPU. If some fail it still returns what the others said,
// with an error naming the failed ones.
func (m *nvmlMeter) Usage(pids []int) (Usage, error) {
	tree := make(map[int]bool, len(pids))
	for _, pid := range pids {
		tree[pid] = true
	}
	u := Usage{PIDsHidden: m.view == nil}
	var errs []error
	for _, d := range m.devices {
		g, err := d.usage(tree, m.view)
		if err != nil {
			errs = append(errs, err)
		}
		if g.MemTotal == 0 {
			continue // not read at all
		}
		u.GPUs = append(u.GPUs, g)
		u.Total += g.Used
	}
	return u, errors.Join(errs...)
}

func (m *nvmlMeter) Driver() Driver { return m.driver }

// Close shuts NVML down, once however often it is called: a second
// nvmlShutdown would run after the library is unloaded.
func (m *nvmlMeter) Close() error {
	m.closeOnce.Do(func() {
		if ret := m.lib.Shutdown(); ret != nvml.SUCCESS {
			m.closeErr = fmt.Errorf("shut NVML down: %w", ret)
		}
	})
	return m.closeErr
}

// usage reads one GPU. A process whose pid cannot be mapped is counted
// among the others, with the error; a GPU whose figures cannot be read is
// returned empty.
func (d device) usage(tree map[int]bool, view pidView) (GPU, error) {
	mem, ret := d.handle.GetMemoryInfo()
	if ret != nvml.SUCCESS {
		return GPU{}, fmt.Errorf("GPU %d memory: %w", d.index, ret)
	}
	g := GPU{Index: d.index, Name: d.name, MemUsed: mem.Used, MemTotal: mem.Total}
	if view == nil {
		return g, nil // its pids would be host pids we cannot match
	}
	procs, err := d.processes()
	if err != nil {
		return GPU{}, err
	}
	var errs []error
	for _, p := range procs {
		pid, ours, err := view(p.PID)
		if err != nil {
			errs = append(errs, fmt.Errorf("GPU %d: %w", d.index, err))
		}
		if ours && tree[pid] {
			g.Procs = append(g.Procs, p)
			g.Used += p.Used
		} else {
			g.Others = append(g.Others, p)
		}
	}
	byPID := func(a, b Proc) int { return a.PID - b.PID }
	slices.SortFunc(g.Procs, byPID)
	slices.SortFunc(g.Others, byPID)
	return g, errors.Join(errs...)
}

// notAvailable is NVML_VALUE_NOT_AVAILABLE (-1) as a uint64.
const notAvailable = ^uint64(0)

// processes lists the GPU's compute and graphics processes. A process with
// both kinds of context is in both lists with the same figure, so it is
// counted once.
func (d device) processes() (map[int]Proc, error) {
	lists := []struct {
		kind string
		get  func() ([]nvml.ProcessInfo, nvml.Return)
	}{
		{"compute", d.handle.GetComputeRunningProcesses},
		{"graphics", d.handle.GetGraphicsRunningProcesses},
	}
	procs := map[int]Proc{}
	for _, list := range lists {
		infos, ret := list.get()
		if ret == nvml.ERROR_NOT_SUPPORTED {
			continue // some GPUs do not report one kind
		}
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("GPU %d %s processes: %w", d.index, list.kind, ret)
		}
		for _, info := range infos {
			p := Proc{PID: int(info.Pid), Used: info.UsedGpuMemory}
			if seen, ok := procs[p.PID]; ok {
				p = merge(seen, p)
			}
			procs[p.PID] = p
		}
	}
	for pid, p := range procs {
		if p.Used == notAvailable {
			procs[pid] = Proc{PID: pid, UsedUnknown: true}
		}
	}
	return procs, nil
}

// merge keeps the larger figure for a process seen twice, preferring a
// known figure over notAvailable (which is the largest uint64).
func merge(seen, p Proc) Proc {
	switch {
	case seen.Used == notAvailable:
		return p
	case p.Used == notAvailable:
		return seen
	}
	return Proc{PID: p.PID, Used: max(seen.Used, p.Used)}
}
