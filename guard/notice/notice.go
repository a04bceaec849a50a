// Package notice writes what the guard tells the user inside the running
// cell, as stderr stream output. Each text names jupyter-guard, gives the
// numbers (what is used of which budget, where the budget comes from, what
// this cell added and how fast it grows) and says what to do next. They are
// plain text: a notebook shows them as they are, and so does a terminal.
package notice

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jupyter-guard/jupyter-guard/guard/config"
	"github.com/jupyter-guard/jupyter-guard/guard/ledger"
	"github.com/jupyter-guard/jupyter-guard/guard/units"
)

// Facts are the numbers a notice quotes, in bytes and bytes per second.
type Facts struct {
	Used   uint64 // the budget's figure now
	Budget uint64
	Figure ledger.Figure
	Source string // where the budget comes from: "cgroup v1 /a", "JUPYTER_GUARD_LIMIT"
	Action config.Action
	Line   uint64 // the threshold that was crossed (or about to be)
	// Next is where the guard acts next in this cell; 0 if it will not.
	Next   uint64
	Growth int64   // what the running cell added
	Rate   float64 // how fast it grows now
	Again  bool    // the guard already acted in this cell
	// Unstopped: an interrupt came before this action and did not stop the
	// cell, which went on growing past the fill it was in.
	Unstopped bool
	// Fill is the most the cell was seen mapping at a time; Room is what
	// Line leaves below the budget for it when the line was moved down
	// for it (decide.Decision.Room), else 0.
	Fill, Room uint64
	// Short is how much the fill in flight lacks to finish within the
	// budget (decide.Short); InFlight is that fill's unfilled rest.
	Short, InFlight uint64
	// InterruptEnds names the kernel when an interrupt ends it instead of
	// the cell ("xeus-python 0.19.0"): no notice may then promise that the
	// kernel survives one.
	InterruptEnds string
	// Panel: the user's JupyterLab or Notebook 7 has jupyter-guard's
	// guarded kernels panel, with Resume, Interrupt and Restart.
	Panel bool
	// Ceiling is the usage past which an allocation fails (the allocation
	// ceiling), 0 when it is off. PauseTimeout is how long a pause waits
	// for an answer while it is armed.
	Ceiling      uint64
	PauseTimeout time.Duration
	// Outside is what counts against the budget and is not the kernel's
	// (nor the proxy's): other processes under the same limit, page cache.
	// Freeing memory outside is offered only where there is that much.
	Outside uint64
	// Soon: an action follows in the same sample; a warning then says
	// nothing of what comes next, the action's notice does.
	Soon bool
	// RefusalLoses says what a refused allocation costs a kernel that
	// does not raise an error for it ("this kernel ends when its
	// JavaScript heap cannot grow"); "" where the kernel lives on with its
	// variables. The notices say it before the ceiling is reached, and a
	// pause nobody answers ends with an interrupt then, not a resume.
	RefusalLoses string
	// TensorPool is what TensorFlow's CPU allocator may hold, where the
	// guard took the ceiling off for TensorFlow and held its allocator to
	// that instead (decide.Budget.TensorPool); 0 otherwise.
	TensorPool uint64
}

// Warning is posted when the warning threshold is crossed. Its forecast
// names the line the guard will act at (moved down for the cell's fills),
// and none when the action comes in the same sample.
func Warning(f Facts) string {
	l := []string{
		"jupyter-guard: memory warning.",
		"  " + f.usage() + ";",
		"  " + f.growth() + ".",
	}
	if !f.Soon {
		l = append(l, f.forecast())
	}
	if f.Short > 0 {
		return lines(append(l, f.fillShort()+".", f.lostAnyway())...)
	}
	return lines(append(l, f.stopNow())...)
}

// forecast is what the guard does next if the cell keeps growing.
func (f Facts) forecast() string {
	then := map[config.Action]string{
		config.Pause:     "pause the kernel",
		config.Interrupt: "interrupt the cell",
		config.Warn:      "warn again",
	}[f.Action]
	switch {
	case then == "" || f.Next == 0:
		return "If it keeps growing, " + f.ceilingHolds() + "."
	case f.Ceiling > 0 && f.RefusalLoses != "":
		return fmt.Sprintf("If it keeps growing, jupyter-guard will %s at %s.\n%s", then, size(f.Next), f.ceilingPast())
	case f.Ceiling > 0 && f.Action != config.Interrupt:
		return fmt.Sprintf("If it keeps growing, jupyter-guard will %s at %s; past %s an allocation fails (a memory error), and the kernel is kept.",
			then, size(f.Next), size(f.Ceiling))
	}
	return fmt.Sprintf("If it keeps growing, jupyter-guard will %s at %s, before the OOM killer would kill the kernel.", then, size(f.Next)) + f.tensorPool()
}

// tensorPool is what stops TensorFlow where the ceiling cannot: "" unless
// the guard holds its allocator to a limit.
func (f Facts) tensorPool() string {
	if f.TensorPool == 0 {
		return ""
	}
	return "\nTensorFlow's tensors are held to " + size(f.TensorPool) +
		": a step that needs more fails with ResourceExhaustedError, and the kernel and its variables are kept;\n" +
		"but an op of oneDNN's (on by default on x86) refused there may crash the kernel instead, as on an AVX-512 CPU."
}

// ceilingHolds is what the ceiling does: "an allocation past 998 MiB fails
// with a memory error (jupyter-guard's ceiling), and the kernel and its
// variables are kept", or the OOM killer's end without one.
func (f Facts) ceilingHolds() string {
	switch {
	case f.Ceiling == 0:
		return "the OOM killer will kill the kernel at " + size(f.Budget) + " and its variables will be lost"
	case f.RefusalLoses != "":
		return "past " + size(f.Ceiling) + " (jupyter-guard's ceiling) " + f.RefusalLoses + ": its variables are lost"
	}
	return "an allocation past " + size(f.Ceiling) + " fails with a memory error (jupyter-guard's ceiling), and the kernel and its variables are kept"
}

// ceilingPast is what happens past the ceiling, as a sentence.
func (f Facts) ceilingPast() string {
	if f.RefusalLoses != "" {
		return "Past " + size(f.Ceiling) + " " + f.RefusalLoses + ": its variables are lost."
	}
	return "Past " + size(f.Ceiling) + " an allocation fails with a memory error, and the kernel and its variables are kept."
}

// lostAnyway is what a fill that cannot finish means for the user's
// choice. The ceiling cannot refuse the filling of memory already
// allocated, but the guard cannot be sure the fill is one (some libraries
// allocate more than they fill): with the ceiling, it says what it knows.
func (f Facts) lostAnyway() string {
	if f.Ceiling > 0 {
		return "If it fills all of it, the OOM killer ends the kernel whatever is chosen (memory already allocated is not refused); some libraries allocate more than they fill."
	}
	return "An interrupt (■) or guardctl resume lets that fill finish first: the OOM killer would kill the kernel, and its variables would be lost."
}

// Paused is posted once the kernel's processes are stopped. It promises
// that an interrupt keeps the kernel only if the fill in flight can finish
// (see Unsaved).
func Paused(f Facts) string {
	head := "jupyter-guard paused the kernel before it ran out of memory."
	switch {
	case f.Unstopped:
		head = "jupyter-guard paused the kernel again: the interrupt did not stop the cell, which went on growing."
	case f.Again:
		head = "jupyter-guard paused the kernel again before it ran out of memory."
	}
	if f.Short > 0 {
		return Unsaved(f, head)
	}
	resume := "continue anyway; it will not be paused again in this cell, and the OOM killer may kill it."
	switch {
	case f.Ceiling > 0 && f.RefusalLoses != "":
		resume = "continue; past " + size(f.Ceiling) + " " + f.RefusalLoses + ": its variables are lost."
	case f.Ceiling > 0:
		resume = "continue; past " + size(f.Ceiling) + " an allocation fails with a memory error, and the kernel and its variables are kept."
	case f.Next > 0:
		resume = "continue anyway; jupyter-guard pauses it again at " + size(f.Next) + "."
	}
	interrupt := f.interruptLeaves()
	if f.Unstopped {
		interrupt = "tries again; if it does not stop the cell either (C code, a kernel that ignores it), restart."
	}
	choose, resumeHow, interruptHow := "Choose one (guardctl runs in a terminal):", "guardctl resume", "Interrupt (■, or Kernel > Interrupt Kernel)"
	if f.Panel {
		choose = "Choose one (buttons in the Guarded Kernels panel: Kernel > Show Guarded Kernels, or click Guard in the status bar):"
		resumeHow, interruptHow = "Resume (the panel, or guardctl resume)", "Interrupt (■, Kernel > Interrupt Kernel, or the panel)"
	}
	l := []string{head, "  " + f.usage() + ";", "  " + f.reached("pause") + "."}
	switch {
	case f.TensorPool > 0:
		l = append(l, "Left running, TensorFlow stops at "+size(f.TensorPool)+" of tensors (ResourceExhaustedError), keeping the kernel; other growth may still meet the OOM killer.")
	case f.Ceiling == 0:
		l = append(l, "Left running, the kernel would be killed by the OOM killer and its variables lost.")
	}
	l = append(l, choose,
		"  "+interruptHow+": "+interrupt,
		"  "+resumeHow+": "+resume,
		"  Restart the kernel (Kernel > Restart Kernel): gives all its memory back; its variables are lost.")
	switch {
	case f.RefusalLoses != "" && f.InterruptEnds != "": // both end it: the pause waits for the person
	case f.Ceiling > 0 && f.PauseTimeout > 0 && f.RefusalLoses != "":
		l = append(l, "Unanswered, jupyter-guard interrupts it in "+units.FormatDuration(f.PauseTimeout)+".")
	case f.Ceiling > 0 && f.PauseTimeout > 0:
		l = append(l, "Unanswered, jupyter-guard resumes it in "+units.FormatDuration(f.PauseTimeout)+".")
	}
	return lines(l...)
}

// Unsaved is the pause notice when the fill in flight cannot finish within
// the budget: the C code filling an array sees an interrupt only when it is
// done, so no choice keeps the variables unless memory is freed outside the
// kernel, which is offered only where that much is counted outside it.
func Unsaved(f Facts, head string) string {
	l := []string{
		head,
		"  " + f.usage() + ";",
		"  " + f.reached("pause") + ".",
		f.fillShort() + ".",
		f.lostAnyway(),
		"What can be done:",
	}
	if f.Ceiling > 0 {
		l = append(l, "  Interrupt (■): the cell ends once that fill is done, with the kernel if it fits; or restart the kernel, which keeps nothing.")
	} else {
		l = append(l, "  Restart the kernel (Kernel > Restart Kernel): it keeps nothing, but the notebook goes on; run the cell again in smaller pieces.")
	}
	if f.Figure != ledger.Tree && f.Outside >= f.Short {
		l = append(l, "  Or free "+size(f.Short)+" outside this kernel ("+f.outside()+"), then interrupt (■): the kernel and its variables survive.")
	}
	return lines(l...)
}

// Interrupted is posted when action=interrupt stopped the cell.
func Interrupted(f Facts) string {
	head := "jupyter-guard interrupted this cell to save the kernel from running out of memory."
	if f.Unstopped {
		head = "jupyter-guard interrupted this cell again: the last interrupt did not stop it, and it went on growing."
	}
	leaves := f.interruptedLeaves()
	if f.Unstopped {
		leaves = "If this one does not stop it either (C code, a kernel that ignores interrupts), restart the kernel: the OOM killer would end it at the limit."
	}
	l := []string{
		head,
		"  " + f.usage() + ";",
		"  " + f.reached("interrupt") + ".",
		leaves,
	}
	if f.Short > 0 {
		lost := "The interrupt lands only once that fill is done: the OOM killer will likely kill the kernel first, and its variables would be lost."
		if f.Ceiling > 0 {
			lost = "The interrupt lands only once that fill is done: " + f.lostAnyway()
		}
		l = append(l[:3], f.fillShort()+".", lost)
	}
	return lines(l...)
}

// fillShort is e.g. "It is in the middle of filling memory it allocated at
// once: 225 MiB still to fill, and only 49 MiB left (176 MiB short)".
func (f Facts) fillShort() string {
	left := f.Budget - min(f.Budget, f.Used)
	return fmt.Sprintf("It is in the middle of filling memory it allocated at once: %s still to fill, and only %s left (%s short)",
		size(f.InFlight), size(left), size(f.Short))
}

// outside is where memory counted against the budget but not the kernel's
// can be: what else runs under the same limit.
func (f Facts) outside() string {
	if f.Figure == ledger.Host {
		return "other programs on this machine"
	}
	return "another kernel or process under the same limit"
}

// Alert is posted at the pause threshold when action=warn: nothing will
// stop the cell.
func Alert(f Facts) string {
	then := "At " + size(f.Budget) + " the OOM killer kills the kernel and its variables are lost: interrupt the cell (■) now to keep them."
	if f.Ceiling > 0 {
		then = f.ceilingPast() + " Interrupt the cell (■) to stop it sooner."
	}
	return lines(
		"jupyter-guard: memory critical: the kernel is about to run out of memory.",
		"  "+f.usage()+";",
		"  "+f.reached("pause")+".",
		then,
		"(JUPYTER_GUARD_ACTION=warn: jupyter-guard only warns.)",
	)
}

// overranHead begins Overran's notice.
const overranHead = "jupyter-guard: this cell took the kernel past the "

// Overran is posted at the end of a cell that ended past the line where
// the guard acts, which no sample saw it reach while it ran: one
// allocation filled faster than the guard looks, or the cell was shorter
// than a look. Nothing was stopped, and the kernel holds more than the
// budget allows.
func Overran(f Facts) string {
	kind := "pause"
	if f.Action == config.Interrupt {
		kind = "interrupt"
	}
	left := "little is left of its budget"
	if f.Used >= f.Budget {
		left = "it holds more than its budget"
	}
	return lines(
		overranHead+kind+" line ("+size(f.Line)+") faster than the guard could stop it.",
		"  "+f.usage()+";",
		"  "+f.growth()+".",
		"The kernel and its variables are kept, but "+left+": the next cell that allocates may be killed by the OOM killer.",
		"Free memory now (del the big variables, or restart the kernel), then do this work in smaller pieces.",
	)
}

// pastPause begins each notice posted when a cell reached the line where
// the guard acts: Paused (and Unsaved), Interrupted, Alert, Overran and
// Refused (the ceiling's refusal, or the stop near it).
var pastPause = []string{"jupyter-guard paused the kernel", "jupyter-guard interrupted this cell", "jupyter-guard: memory critical", overranHead,
	refusedHead, nearHead}

// PastPause says whether a notice's text says its cell reached the line
// where the guard acts, stopped there or not: a headless run fails on it.
func PastPause(text string) bool {
	text = strings.TrimLeft(text, "\n")
	return slices.ContainsFunc(pastPause, func(head string) bool { return strings.HasPrefix(text, head) })
}

// Resumed is posted when the user lets a paused kernel go on.
func Resumed(f Facts) string {
	next := "It will not be paused again in this cell: the OOM killer may kill it at the limit."
	switch {
	case f.Ceiling > 0:
		next = f.ceilingPast()
	case f.Next > 0:
		next = "jupyter-guard pauses it again at " + size(f.Next) + "."
	}
	return lines(fmt.Sprintf("jupyter-guard: the kernel was resumed (guardctl resume) at %s of its %s budget.", size(f.Used), size(f.Budget)), next)
}

// Unanswered is posted when nobody answered a pause within timeout and the
// guard resumed the kernel itself, the ceiling armed.
func Unanswered(f Facts, timeout time.Duration) string {
	return lines(fmt.Sprintf("jupyter-guard resumed the kernel: nobody answered the pause within %s.", units.FormatDuration(timeout)),
		f.ceilingPast())
}

// UnansweredInterrupt is posted when nobody answered a pause within
// timeout in a kernel that a refused allocation would cost its variables:
// the guard interrupts the cell instead of resuming it.
func UnansweredInterrupt(timeout time.Duration) string {
	return lines(fmt.Sprintf("jupyter-guard interrupted this cell: nobody answered the pause within %s,", units.FormatDuration(timeout)),
		"and at the ceiling this kernel would lose its variables.")
}

func (f Facts) stopNow() string {
	switch {
	case f.InterruptEnds != "" && f.Action == config.Interrupt:
		return "An interrupt, the guard's or yours (■), ends " + f.endsKernel() + "."
	case f.InterruptEnds != "":
		return "To stop it now, interrupt the cell (■), but that ends " + f.endsKernel() + "."
	}
	return "To stop it now, interrupt the cell (■); the kernel and its variables are kept."
}

func (f Facts) interruptLeaves() string {
	if f.InterruptEnds != "" {
		return "ends the cell and " + f.endsKernel() + "."
	}
	return "ends this cell; the kernel and its variables survive."
}

func (f Facts) interruptedLeaves() string {
	if f.InterruptEnds != "" {
		return "An interrupt ends " + f.endsKernel() + "."
	}
	return "The kernel and its variables are kept. Free memory (del big variables) or work in smaller pieces before running it again."
}

// endsKernel is said wherever a notice speaks of interrupting a kernel
// that does not survive it: the variables are lost either way, and the
// user must know before choosing.
func (f Facts) endsKernel() string {
	return "this kernel (" + f.InterruptEnds + "); it restarts and its variables are lost"
}

// usage is e.g. "the kernel's cgroup uses 1.2 GiB of its 1.5 GiB budget
// (80%, from cgroup v1 /jobs/a)".
func (f Facts) usage() string {
	return fmt.Sprintf("%s %s of its %s budget (%s, from %s)", subject(f.Figure), size(f.Used), size(f.Budget), percent(f.Used, f.Budget), f.Source)
}

// percent is a share in whole percent, with a decimal just below 100%
// where sizes round to the same figure: "1.5 GiB of 1.5 GiB (99.6%)".
func percent(part, whole uint64) string {
	if whole == 0 {
		return "?%"
	}
	p := 100 * float64(part) / float64(whole)
	if p >= 99.5 && p < 100 {
		return fmt.Sprintf("%.1f%%", p)
	}
	return fmt.Sprintf("%.0f%%", p)
}

// growth is e.g. "this cell has added 1.1 GiB, growing at 1.6 GiB/s".
func (f Facts) growth() string {
	if f.growing() {
		return f.added() + ", growing at " + size(uint64(f.Rate)) + "/s"
	}
	return f.added() + ", and is not growing now"
}

// reached says how the cell came to the line of an action: "…, and
// reached the pause line (1.4 GiB)", or, for a cell paused ahead of it
// because it grows faster than the guard can react, "…: too fast to wait
// for the pause line (1.4 GiB)".
func (f Facts) reached(kind string) string {
	s := f.added()
	if f.growing() {
		s += ", growing at " + size(uint64(f.Rate)) + "/s"
	}
	line := size(f.Line)
	if f.Room > 0 {
		line += ", lowered for the " + size(f.Fill) + " it fills at a time"
	}
	if f.Used < f.Line {
		return s + ": too fast to wait for the " + kind + " line (" + line + ")"
	}
	return s + ", and reached the " + kind + " line (" + line + ")"
}

func (f Facts) added() string {
	switch {
	case f.Growth > 0:
		return "this cell has added " + size(uint64(f.Growth))
	case f.Growth < 0:
		return "this cell has freed " + size(uint64(-f.Growth))
	}
	return "this cell has added nothing yet"
}

// growing: below 1 MiB/s the rate is measurement noise.
func (f Facts) growing() bool { return f.Rate >= 1<<20 }

func subject(f ledger.Figure) string {
	switch f {
	case ledger.Cgroup:
		return "the kernel's cgroup uses"
	case ledger.Host:
		return "this machine uses"
	}
	return "the kernel's processes use"
}

func size(n uint64) string { return units.FormatBytes(n) }

// lines joins a notice's lines. It starts with an empty line: a notebook
// runs consecutive stderr output together, and each notice must stand out
// from what the cell printed before it.
func lines(l ...string) string { return "\n" + strings.Join(l, "\n") + "\n" }
