package notice

import "fmt"

// GPUFacts are what the note under a cell that ran out of GPU memory says.
type GPUFacts struct {
	Framework string // whose error it was: "PyTorch"
	// Preallocates says that framework reserves most of a GPU by itself
	// (TensorFlow, JAX), so this kernel may be what holds it.
	Preallocates bool
	GPUs         []GPUHeld
	// Unknown says why this kernel's share and the other holders are not
	// known ("" if they are).
	Unknown string
}

// GPUHeld is one GPU and who holds its memory.
type GPUHeld struct {
	Index        int
	Name         string
	InUse, Total uint64
	Kernel       uint64   // what this kernel holds there
	Others       []Holder // the other holders, largest first
}

// Holder is another process holding GPU memory.
type Holder struct {
	Used uint64
	// Kernel and Notebook name a guarded kernel (its short id and its
	// notebook, "" if unknown); PID is the driver's pid otherwise.
	Kernel, Notebook string
	PID              int
}

func (h Holder) String() string {
	switch {
	case h.Kernel != "" && h.Notebook != "":
		return fmt.Sprintf("%s: the guarded kernel %s of %s", size(h.Used), h.Kernel, h.Notebook)
	case h.Kernel != "":
		return fmt.Sprintf("%s: the guarded kernel %s", size(h.Used), h.Kernel)
	}
	return fmt.Sprintf("%s: process %d (not a guarded kernel)", size(h.Used), h.PID)
}

// GPUOutOfMemory is posted under a cell that ended with a framework's GPU
// out-of-memory error: who holds the memory, and what to do.
func GPUOutOfMemory(f GPUFacts) string {
	l := []string{fmt.Sprintf("jupyter-guard: the GPU ran out of memory (%s).", f.Framework)}
	var kernels []Holder
	for _, g := range f.GPUs {
		l = append(l, fmt.Sprintf("  GPU %d (%s): %s of %s in use", g.Index, g.Name, size(g.InUse), size(g.Total)))
		if f.Unknown != "" {
			l[len(l)-1] += "; " + f.Unknown + "."
			continue
		}
		l[len(l)-1] += ":"
		l = append(l, "    "+size(g.Kernel)+": this kernel")
		for _, h := range g.Others {
			l = append(l, "    "+h.String())
			if h.Kernel != "" {
				kernels = append(kernels, h)
			}
		}
	}
	l = append(l, "What to do:")
	for _, h := range kernels {
		where := "that kernel"
		if h.Notebook != "" {
			where = h.Notebook
		}
		l = append(l, fmt.Sprintf("  - Free it there: in %s, delete what holds the GPU (del …; gc.collect()), or restart that kernel (guardctl restart %s).", where, h.Kernel))
	}
	if len(kernels) > 0 || f.Preallocates {
		l = append(l, "  - TensorFlow reserves nearly all of a GPU's memory when it first uses it: set TF_FORCE_GPU_ALLOW_GROWTH=true"+
			" (for JAX, XLA_PYTHON_CLIENT_PREALLOCATE=false) before the import, in each notebook that shares the GPU.")
	}
	l = append(l, "  - Ask the GPU for less at once: a smaller batch size.")
	return lines(l...)
}

// GPUWarning is posted when the kernel's processes come to hold line or
// more of a GPU's memory (JUPYTER_GUARD_GPU_WARN).
func GPUWarning(g GPUHeld, line string) string {
	return lines(
		"jupyter-guard: GPU memory warning.",
		fmt.Sprintf("  the kernel's processes hold %s of GPU %d (%s), %s of its %s (the warning line is %s, JUPYTER_GUARD_GPU_WARN);",
			size(g.Kernel), g.Index, g.Name, percent(g.Kernel, g.Total), size(g.Total), line),
		fmt.Sprintf("  %s of it is in use by all processes.", size(g.InUse)),
		"When it is full, the next allocation fails with an out-of-memory error (the kernel survives it).",
		"To make room, free what this notebook no longer needs on the GPU (del …; gc.collect()), or use a smaller batch.",
	)
}

// GPUSetup is posted under a cell that ended with a framework's report that
// the GPU software could not start (gpuerr.Setup): what it is, against the
// driver NVML reports ("" if unknown), and what fixes it.
func GPUSetup(kind, said, driver, fix string) string {
	l := []string{
		"jupyter-guard: this is a " + kind + ", not an error in the notebook's code.",
		"  the error: " + said,
	}
	if driver != "" {
		l = append(l, "  NVML reports "+driver+".")
	}
	return lines(append(l, "What to do: "+fix)...)
}
