package supervisor

import (
	"cmp"
	"io"
	"slices"

	"github.com/jupyter-guard/jupyter-guard/control"
	"github.com/jupyter-guard/jupyter-guard/guard/gpu"
	"github.com/jupyter-guard/jupyter-guard/guard/gpuerr"
	"github.com/jupyter-guard/jupyter-guard/guard/notice"
	"github.com/jupyter-guard/jupyter-guard/proxy"
)

// checkGPUError starts the note for the cell r if text is a framework's GPU out-of-memory error, or
// its report that the GPU software could not start. It returns at once
// (see postNote).
func (s *Supervisor) checkGPUError(r *proxy.Request, text string) {
	var write func() (string, bool)
	if oom, ok := gpuerr.Find(text); ok {
		if !s.guard.GPUMetered() {
			return // no GPU to say anything about
		}
		write = func() (string, bool) { return s.gpuNote(oom) }
	} else if setup, ok := gpuerr.FindSetup([]string{text}); ok {
		write = func() (string, bool) {
			return notice.GPUSetup(setup.Kind, setup.Line, s.guard.GPUDriver().String(), setup.Fix()), true
		}
	} else {
		return
	}
	s.postNote(r, "gpu", write)
}

// gpuNote measures the GPUs now and asks the other guarded kernels which
// of the processes on them are theirs.
func (s *Supervisor) gpuNote(oom gpuerr.OOM) (string, bool) {
	u, err := s.guard.MeasureGPU()
	if err != nil {
		s.cfg.Log.Printf("GPU note: %v", err)
	}
	if len(u.GPUs) == 0 {
		return "", false
	}
	found, _, err := control.Find(s.cfg.RuntimeDir, controlPath(s), io.Discard)
	if err != nil {
		s.cfg.Log.Printf("GPU note: other kernels: %v", err)
	}
	others := make([]control.State, len(found))
	for i, f := range found {
		others[i] = f.State
	}
	return notice.GPUOutOfMemory(gpuFacts(oom, u, others)), true
}

// gpuFacts picks the GPUs to show — the one the framework names, else
// those the kernel holds memory on, else all in use — and names the other
// holders: a guarded kernel by its notebook, any other process by pid.
func gpuFacts(oom gpuerr.OOM, u gpu.Usage, others []control.State) notice.GPUFacts {
	f := notice.GPUFacts{Framework: oom.Framework, Preallocates: oom.Preallocates}
	if u.PIDsHidden {
		f.Unknown = gpu.HiddenReason
	}
	owner := map[int]control.State{}
	for _, st := range others {
		for _, g := range st.GPU {
			for _, pid := range g.PIDs {
				owner[pid] = st
			}
		}
	}
	for _, g := range pickGPUs(oom, u) {
		h := notice.GPUHeld{Index: g.Index, Name: g.Name, InUse: g.MemUsed, Total: g.MemTotal, Kernel: g.Used}
		byKernel := map[string]int{} // a kernel's processes make one holder
		for _, p := range g.Others {
			st, guarded := owner[p.PID]
			if !guarded {
				h.Others = append(h.Others, notice.Holder{Used: p.Used, PID: p.PID})
				continue
			}
			if i, seen := byKernel[st.KernelID]; seen {
				h.Others[i].Used += p.Used
				continue
			}
			byKernel[st.KernelID] = len(h.Others)
			h.Others = append(h.Others, notice.Holder{Used: p.Used, Kernel: control.ShortID(st.KernelID), Notebook: st.Notebook})
		}
		slices.SortStableFunc(h.Others, func(a, b notice.Holder) int { return cmp.Compare(b.Used, a.Used) })
		f.GPUs = append(f.GPUs, h)
	}
	return f
}

func pickGPUs(oom gpuerr.OOM, u gpu.Usage) []gpu.GPU {
	for _, g := range u.GPUs {
		if g.Index == oom.Device {
			return []gpu.GPU{g}
		}
	}
	var held, used []gpu.GPU
	for _, g := range u.GPUs {
		if g.Used > 0 {
			held = append(held, g)
		}
		if len(g.Procs)+len(g.Others) > 0 {
			used = append(used, g)
		}
	}
	switch {
	case len(held) > 0:
		return held
	case len(used) > 0:
		return used
	}
	return u.GPUs
}
