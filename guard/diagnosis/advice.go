package diagnosis

import (
	"fmt"
	"strings"
	"syscall"

	"github.com/jupyter-guard/jupyter-guard/guard/units"
)

// advice is the "What to do" list, one bullet per point.
func (d *Diagnosis) advice() []string {
	var points []string
	switch d.Cause {
	case CauseOOMCgroup, CauseOOMHost:
		points = d.oomAdvice()
	case CauseOutsideKill:
		points = d.outsideKillAdvice()
	case CauseCUDA:
		points = d.cudaAdvice()
	case CauseCeiling:
		points = d.ceilingAdvice()
	case CauseSegfault:
		points = d.crashAdvice("")
	case CausePythonFatal:
		points = d.crashAdvice("The interpreter stopped itself because its state was broken, " +
			"usually by a native extension: a reference-count bug, a call into Python " +
			"without the GIL, or binary packages built against different versions.")
	case CauseAbort:
		points = d.crashAdvice(d.abortExplanation())
	case CauseInterrupt:
		points = d.interruptAdvice()
	case CauseSignal:
		points = d.signalAdvice()
	case CauseExit:
		points = d.exitAdvice()
	}
	if d.Evidence.Unanswered && d.Cause != CauseOOMCgroup && d.Cause != CauseOOMHost {
		points = d.startAdvice()
	}
	var lines []string
	for _, p := range points {
		lines = append(lines, wrap(p, "  - ", "    ")...)
	}
	return lines
}

func (d *Diagnosis) oomAdvice() []string {
	var p []string
	if c := d.Evidence.Cell; c != nil && c.Growth > 0 {
		p = append(p, fmt.Sprintf("%s added %s before the kernel was killed.", capitalize(cellName(c)),
			units.FormatBytes(uint64(c.Growth))))
	}
	p = append(p,
		"Process the data in smaller batches or chunks instead of all at once "+
			"(e.g. pandas.read_csv(..., chunksize=...), a generator, a smaller dtype).",
		"Free what you no longer need before the big step: del the variable, "+
			"then import gc; gc.collect().")
	switch m := d.Evidence.Memory; {
	case d.Cause == CauseOOMHost || m.LimitSource == LimitHost:
		p = append(p, "The whole machine ran out of memory, so other programs count too: "+
			"close what you do not need, or use a machine with more RAM.")
	case m.LimitSource == LimitEnv:
		p = append(p, "Or raise the limit jupyter-guard was given, JUPYTER_GUARD_LIMIT, "+
			"if the machine has the memory.")
	default:
		p = append(p, "Or raise the limit: JUPYTER_GUARD_LIMIT, or the container's "+
			"memory limit (e.g. docker run --memory, a Kubernetes pod's limits).")
	}
	return p
}

func (d *Diagnosis) outsideKillAdvice() []string {
	p := []string{
		"Something sent the kernel SIGKILL: the cell's own code (os.kill), a job " +
			"scheduler enforcing a time or memory limit (Slurm, Kubernetes), `kill -9`, " +
			"a container runtime stopping the container, or a system service.",
		"Look in that scheduler's or the container's logs for a kill at this time.",
	}
	ev := d.Evidence
	switch {
	case !ev.OOMKills.Known && !ev.KernelLog.Read:
		p = append(p, "jupyter-guard could read neither the kernel log nor a cgroup OOM "+
			"counter here, so the out-of-memory killer is not ruled out.")
	case !ev.KernelLog.Read:
		p = append(p, "The kernel log could not be read, so an out-of-memory kill of the "+
			"whole machine is not ruled out; `dmesg` on the host would show it.")
	}
	return p
}

func (d *Diagnosis) cudaAdvice() []string {
	if d.Setup != nil {
		return d.setupAdvice()
	}
	p := []string{"After a CUDA error the process's GPU state is gone and no GPU work can " +
		"continue in it: the kernel has to restart, and everything on the GPU is lost."}
	s := d.sign(SignCUDA)
	if s != nil && strings.Contains(strings.Join(s.Lines, "\n"), "device-side assert") {
		p = append(p, "A device-side assert is usually an index out of range on the GPU, "+
			"e.g. a class label not below the number of classes of a loss. Run the same "+
			"step on the CPU to get a readable error.")
	}
	p = append(p, "CUDA reports errors late, often at a later call. To find the operation "+
		"that failed, run import os; os.environ[\"CUDA_LAUNCH_BLOCKING\"] = \"1\" first "+
		"in the notebook, before anything uses the GPU, then re-run.")
	if d.Xid != nil {
		p = append(p, fmt.Sprintf("If Xid %d repeats, tell the machine's administrator; "+
			"NVIDIA explains each Xid at https://docs.nvidia.com/deploy/xid-errors/", d.Xid.Xid))
	}
	return p
}

// setupAdvice is for GPU software that could not start: what it was, the
// versions NVML and the error report, and what fixes it.
func (d *Diagnosis) setupAdvice() []string {
	p := []string{"This is not an error in the notebook's code: the GPU software could not start."}
	if drv := d.Evidence.GPUDriver; drv != "" {
		p[0] += " NVML reports " + drv + ", against the versions in the error above."
	}
	return append(p, d.Setup.Fix())
}

// abortExplanation says what printed the reason for abort(), if anything did.
func (d *Diagnosis) abortExplanation() string {
	s := d.abortReason()
	switch {
	case s == nil:
		return "Native code called abort(), usually because it found a state it " +
			"cannot handle."
	case s.Kind == SignCppTerminate:
		return "A C++ library threw an exception that nothing caught; its message " +
			"above says why."
	default:
		return "glibc found the heap corrupted: native code wrote past the end of a " +
			"buffer or freed memory twice, possibly well before the line that crashed."
	}
}

// crashAdvice points at the library the stack leads to, or at how to find it.
func (d *Diagnosis) crashAdvice(explanation string) []string {
	var p []string
	if explanation != "" {
		p = append(p, explanation)
	}
	i, hasUser := d.Stack.userFrame()
	lib, hasLib := d.Stack.library()
	switch {
	case hasLib && lib.stdlib:
		p = append(p, fmt.Sprintf("The stack points at %s, part of Python: a crash there "+
			"usually means a bad pointer, size or argument was passed to it. Check them.", lib.name))
	case hasLib:
		p = append(p,
			fmt.Sprintf("The stack points at %s. Check what you pass to it (shapes, dtypes, "+
				"objects changed or freed while in use).", lib.name),
			fmt.Sprintf("Update it (pip install -U %s). If it still crashes, report it to "+
				"%s's maintainers with this stack and a small example.", lib.name, lib.name))
	case hasUser:
		f := d.Stack.Frames[i]
		p = append(p, fmt.Sprintf("The crash is in native code called directly from line %d "+
			"of %s: check that call's arguments, and update or report the library it "+
			"belongs to.", f.Line, d.frameCell(f)))
	default:
		p = append(p, d.noStackAdvice())
	}
	return p
}

func (d *Diagnosis) frameCell(f Frame) string {
	name, _ := d.cellOf(f)
	return name
}

// signalAdvice explains a signal by what usually sends or raises it.
func (d *Diagnosis) signalAdvice() []string {
	sig := d.Evidence.Exit.Signal
	switch sig {
	case syscall.SIGTERM:
		return []string{"Something asked the kernel process to stop: the machine or container " +
			"shutting down, a job scheduler, or `kill`."}
	case syscall.SIGFPE:
		return d.crashAdvice("Native code divided an integer by zero or overflowed.")
	case syscall.SIGILL:
		return d.crashAdvice("The CPU met an instruction it does not have: a library was built " +
			"for a newer CPU (e.g. with AVX-512). Install a build made for this machine.")
	}
	if _, crash := crashSignals[sig]; crash {
		return d.crashAdvice("")
	}
	return []string{fmt.Sprintf("Something sent %s to the kernel process: look for what signals "+
		"processes on this machine (a scheduler, a supervisor, `kill`).", signalName(sig))}
}

func (d *Diagnosis) exitAdvice() []string {
	code := d.Evidence.Exit.Code
	python := d.Evidence.Language == "" || d.Evidence.Language == "python"
	switch {
	case code == 0 && python:
		return []string{"The kernel process ended itself without an error: exit(), quit(), " +
			"os._exit(0), or a library that calls exit(0)."}
	case code == 0:
		return []string{"The kernel process ended itself without an error: the code, or a " +
			"library it called, asked it to exit."}
	case python:
		return []string{fmt.Sprintf("Something ended the kernel process with code %d: os._exit(%d), "+
			"or a native library that calls exit() on an error it cannot handle (its last "+
			"output, if any, is above). sys.exit() in a cell does not end the kernel.", code, code)}
	}
	return []string{fmt.Sprintf("Something ended the kernel process with code %d: the code, or a "+
		"native library that exits on an error it cannot handle (its last output, if any, is "+
		"above).", code)}
}

// startAdvice is for a kernel that died before it answered: what it
// printed says why, and its command and environment are what to check.
func (d *Diagnosis) startAdvice() []string {
	return []string{
		"The kernel's program ended before it answered Jupyter: its last lines above usually say " +
			"why (a module or file that is missing, a wrong option).",
		fmt.Sprintf("Check the kernelspec's argv, %s (jupyter kernelspec list shows where its kernel.json is), "+
			"and the environment it starts in: PATH, the Python environment and its packages, the "+
			"kernelspec's env.", quoteArgv(d.Evidence.Argv)),
	}
}

// quoteArgv is a command line as a shell would take it, briefly.
func quoteArgv(argv []string) string {
	if len(argv) == 0 {
		return "(unknown)"
	}
	q := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t'\"\\$") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// noStackAdvice is how to find the crashing line without a stack: Python's
// faulthandler only helps a Python kernel.
func (d *Diagnosis) noStackAdvice() string {
	if l := d.Evidence.Language; l != "" && l != "python" {
		return "No stack was captured. To find the line, split the cell and run the parts."
	}
	return "No Python stack was captured. To find the line, split the cell and " +
		"run the parts, or run the code as a script with python -X faulthandler."
}

// ceilingAdvice explains a death at the allocation ceiling: where Python
// raises MemoryError there and lives on, this kernel ended.
func (d *Diagnosis) ceilingAdvice() []string {
	if d.poolRefused() {
		return d.tensorPoolAdvice()
	}
	kernel := "This kernel"
	if d.Evidence.Kernel != "" {
		kernel += " (" + d.Evidence.Kernel + ")"
	}
	p := []string{kernel + " does not survive an allocation that fails: past " + units.FormatBytes(d.Evidence.Ceiling) +
		" jupyter-guard's ceiling refuses allocations, so that a kernel that can raises a memory error instead of being " +
		"killed, and this one ended there."}
	if c := d.Evidence.Cell; c != nil && c.Growth > 0 {
		p = append(p, fmt.Sprintf("%s added %s before it ended.", capitalize(cellName(c)), units.FormatBytes(uint64(c.Growth))))
	}
	p = append(p, "Work on the data in smaller pieces, or free what earlier cells hold, so that the cell fits the budget.",
		"JUPYTER_GUARD_CEILING=off leaves it to the OOM killer at the limit instead, which ends it all the same.")
	return p
}

// tensorPoolAdvice explains a death after TensorFlow's allocator refused a
// tensor at the guard's limit: TensorFlow's own ops raise
// ResourceExhaustedError there, but its oneDNN ops (on by default on x86)
// crashed on an AVX-512 Xeon (bench/cnn_story.py, 2026-11-28).
func (d *Diagnosis) tensorPoolAdvice() []string {
	p := []string{"jupyter-guard holds TensorFlow's CPU allocator to " + units.FormatBytes(d.Evidence.TensorPool) +
		" (TF_CPU_BFC_MEM_LIMIT_IN_MB), so that a step that needs more fails with ResourceExhaustedError and the " +
		"kernel lives on. Here the op that was refused crashed the kernel instead: TensorFlow's oneDNN ops (on by " +
		"default on x86) do not survive that refusal on this CPU."}
	if c := d.Evidence.Cell; c != nil && c.Growth > 0 {
		p = append(p, fmt.Sprintf("%s added %s before it ended.", capitalize(cellName(c)), units.FormatBytes(uint64(c.Growth))))
	}
	return append(p, "Train with a smaller batch (fit(..., batch_size=...)): a batch's activations are what grew.",
		"TF_ENABLE_ONEDNN_OPTS=0 in the kernel's environment makes such a step raise ResourceExhaustedError and "+
			"keeps the kernel, at a cost in speed (training a CNN took 1.4-2.2x as long without oneDNN on an AVX-512 CPU).",
		"TF_CPU_ALLOCATOR_USE_BFC=false in the kernel's environment lifts the limit: the OOM killer then ends the "+
			"kernel at the budget instead.")
}
