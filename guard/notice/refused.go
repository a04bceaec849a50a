package notice

import (
	"github.com/jupyter-guard/jupyter-guard/guard/ledger"
	"github.com/jupyter-guard/jupyter-guard/guard/memerr"
)

// Refusal is what the allocation ceiling had left when a cell's
// allocation failed at it.
type Refusal struct {
	Asked uint64 // what the allocation asked for, 0 if unknown
	Left  uint64 // what the process could still have allocated
	// Used, Budget, Figure, Source: the budget as the other notices give
	// it; Ceiling is where allocations fail.
	Used, Budget, Ceiling uint64
	Figure                ledger.Figure
	Source                string
	Work                  memerr.Work
	// Near: the guard's hook raised MemoryError before the line, where the
	// cell would have had no room left to report it.
	Near bool
	// Ended: at the samples every process had room for Asked, but one has
	// ended since (a Pool's worker): it was most likely refused between
	// two samples, and what it had left was not seen (Left is not).
	Ended bool
	// Pool is the limit jupyter-guard gave TensorFlow's CPU allocator
	// (TF_CPU_BFC_MEM_LIMIT_IN_MB), when that is what refused: a kernel
	// running TensorFlow has no ceiling, which would abort it.
	Pool uint64
}

const (
	refusedHead = "jupyter-guard: the kernel's memory ceiling refused an allocation"
	nearHead    = "jupyter-guard stopped this cell with MemoryError"
)

// Refused is the note under a cell whose allocation the ceiling refused:
// what was asked and left, against which budget, that the kernel lives on,
// and advice that fits what the cell was doing.
func Refused(r Refusal) string {
	head := refusedHead + ": " + size(r.Left) + " was left."
	kept := "The allocation failed instead of the OOM killer ending the kernel: the kernel and its variables are kept."
	switch {
	case r.Work == memerr.Shell:
		kept = "bash_kernel restarted bash: the kernel is kept, but bash's variables are lost."
	}
	usage := Facts{Used: r.Used, Budget: r.Budget, Figure: r.Figure, Source: r.Source}.usage()
	where := "  " + usage + "; allocations fail past " + size(r.Ceiling) + "."
	switch {
	case r.Pool > 0:
		of := ""
		if r.Asked > 0 {
			of = " of " + size(r.Asked)
		}
		head = refusedHead + of + " in TensorFlow: its tensors may take " + size(r.Pool) + " here."
		where = "  " + usage + ";\n  jupyter-guard holds TensorFlow's CPU allocator to " + size(r.Pool) + " (TF_CPU_BFC_MEM_LIMIT_IN_MB): the rest is for TensorFlow itself and your data."
		kept = "TensorFlow raised ResourceExhaustedError instead of the OOM killer ending the kernel: the kernel and its variables are kept."
	case r.Near:
		head = nearHead + ": it was " + size(r.Left) + " from the kernel's memory ceiling, where no allocation succeeds."
		kept = "The cell ended before the OOM killer could end the kernel: the kernel and its variables are kept."
	case r.Ended:
		head = refusedHead + " of " + size(r.Asked) + ", most likely in a worker that has ended since."
	case r.Asked > 0:
		head = refusedHead + " of " + size(r.Asked) + ": " + size(r.Left) + " was left."
	}
	l := []string{
		head,
		where,
		kept,
		"What to do:",
		"  - " + advice[r.Work],
	}
	switch r.Work {
	case memerr.Shell: // bash was restarted: nothing of its is left to free
	case memerr.Vector:
		l = append(l, "  - Free what earlier cells hold (rm(…); gc()) before running it again, or restart the kernel to start afresh.")
	default:
		l = append(l, "  - Free what earlier cells hold (del …; gc.collect()) before running it again, or restart the kernel to start afresh.")
	}
	return lines(l...)
}

// advice is what to change in a cell that ran out of memory, by what it
// was doing.
var advice = map[memerr.Work]string{
	memerr.Fit:    "Train with a smaller batch (fit(..., batch_size=...), a DataLoader's batch_size): a batch's activations are what grew.",
	memerr.Array:  "Work on the array in chunks that fit, or in a smaller dtype (float32 rather than float64, uint8 for bytes).",
	memerr.Frame:  "Read the data in chunks (read_csv(..., chunksize=...)), only the columns needed (usecols=), in smaller dtypes.",
	memerr.Vector: "Work on the data in pieces that fit, or in a smaller type (integer rather than double).",
	memerr.Shell:  "bash holds a variable's whole value in memory: write big output to a file, or pipe it on, instead.",
	memerr.Other:  "Work on the data in smaller pieces, or keep less of it at once.",
}
