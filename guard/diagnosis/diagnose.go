package diagnosis

import (
	"slices"
	"syscall"

	"github.com/jupyter-guard/jupyter-guard/guard/gpuerr"
)

// Cause is why the kernel died.
type Cause string

const (
	CauseOOMCgroup   Cause = "oom-kill-cgroup" // the OOM killer, at a cgroup's limit
	CauseOOMHost     Cause = "oom-kill-host"   // the OOM killer, the machine out of memory
	CauseOutsideKill Cause = "outside-kill"    // SIGKILL with no sign of the OOM killer
	CauseCUDA        Cause = "cuda-error"
	CauseCeiling     Cause = "ceiling"  // an allocation refused at the guard's ceiling, which this kernel cannot survive
	CauseSegfault    Cause = "segfault" // SIGSEGV or SIGBUS
	CausePythonFatal Cause = "python-fatal-error"
	CauseAbort       Cause = "abort"     // SIGABRT
	CauseInterrupt   Cause = "interrupt" // an exit right after an interrupt: the kernel does not survive one
	CauseSignal      Cause = "signal"
	CauseExit        Cause = "exit"
	CauseStart       Cause = "start-failed" // the kernel's program could not be run (missing, not executable)
)

// Causes are all the causes, in the order above.
var Causes = []Cause{CauseOOMCgroup, CauseOOMHost, CauseOutsideKill, CauseCUDA, CauseCeiling, CauseSegfault, CausePythonFatal,
	CauseAbort, CauseInterrupt, CauseSignal, CauseExit, CauseStart}

// Ename is the exception name the proxy reports in the cell.
const Ename = "KernelDied"

// Diagnosis is why the kernel died, what shows it, and the text to show.
type Diagnosis struct {
	Cause Cause
	// Evalue is one line naming the cause; Traceback is the full message,
	// one line per element, that the cell and the terminal show.
	Evalue    string
	Traceback []string

	// OOMKill is the kernel log's line about the OOM killer's victim.
	OOMKill *KernelEvent
	// Xid is the GPU driver's error for a process of the kernel.
	Xid *KernelEvent
	// Signs are the reasons the kernel printed before it died.
	Signs []OutputSign
	// Stack is faulthandler's dump of the crashing thread.
	Stack *PythonStack
	// Setup is the GPU software's failure to start, if the output names
	// one: a CUDA error that no change to the notebook's code fixes.
	Setup    *gpuerr.Setup
	Evidence Evidence
}

// Diagnose decides why the kernel died. The rules, first match wins:
//
//  1. Killed by SIGKILL (or exit code 137 from a wrapper shell) and the
//     cgroup's OOM-kill counter moved or the kernel log shows the OOM killer
//     picking a process of the tree: an OOM kill, of the host when the log
//     says the whole machine was out of memory, else of the cgroup.
//  2. Killed by SIGKILL otherwise: killed from outside the kernel. An OOM
//     kill is never claimed without evidence.
//  3. Any other abnormal end (a signal or a non-zero code) with a CUDA error
//     in the output, or an NVIDIA Xid for the tree in the kernel log: a CUDA
//     error, whatever signal followed it.
//  4. Any other abnormal end (a signal, a non-zero code) of a cell that had
//     taken the kernel to the guard's allocation ceiling (Evidence.Ceiling),
//     or after TensorFlow's allocator refused a tensor at the limit the
//     guard held it to (Evidence.TensorPool): an allocation refused there,
//     which this kernel does not survive (V8's fatal out-of-memory, an
//     abort, a crash in C code that does not check what malloc returns,
//     TensorFlow's oneDNN ops).
//  5. SIGSEGV or SIGBUS: a segmentation fault.
//  6. Another signal after "Fatal Python error: …" that is not
//     faulthandler's report of a signal: a fatal Python error.
//  7. SIGABRT: an abort, with the C++ or glibc reason if one was printed.
//  8. An exit, or SIGINT, within InterruptWindow of an interrupt the proxy
//     passed on: the kernel ended on the interrupt.
//  9. Any other signal.
//
// 10. Otherwise the process exited with a code.
//
// A CUDA text that a kernel printed long before it died still counts:
// give each kernel process a fresh Tail.
func Diagnose(ev Evidence) Diagnosis {
	output := slices.Concat(ev.Stderr, ev.Stdout)
	d := Diagnosis{
		Evidence: ev,
		OOMKill:  oomEvent(ev.KernelLog.Events, ev.PID),
		Xid:      firstEvent(ev.KernelLog.Events, EventGPUXid),
		Signs:    findSigns(output),
		Stack:    findStack(ev.Stderr), // faulthandler writes to stderr
	}
	if s, ok := gpuerr.FindSetup(output); ok {
		d.Setup = &s
	}
	d.Cause = d.cause()
	d.Evalue, d.Traceback = render(&d)
	return d
}

func (d *Diagnosis) cause() Cause {
	e := d.Evidence.Exit
	switch {
	case e.killedBy(syscall.SIGKILL) && d.oomEvidence():
		if d.OOMKill != nil && d.OOMKill.Global {
			return CauseOOMHost
		}
		return CauseOOMCgroup
	case e.killedBy(syscall.SIGKILL):
		return CauseOutsideKill
	case e.abnormal() && (d.sign(SignCUDA) != nil || d.Xid != nil):
		return CauseCUDA
	case e.abnormal() && (d.Evidence.Ceiling > 0 || d.poolRefused()) && !d.endedOnInterrupt():
		return CauseCeiling
	case e.Signal == syscall.SIGSEGV || e.Signal == syscall.SIGBUS:
		return CauseSegfault
	case e.Signal != 0 && d.sign(SignPythonFatal) != nil:
		return CausePythonFatal
	case e.Signal == syscall.SIGABRT:
		return CauseAbort
	case d.endedOnInterrupt():
		return CauseInterrupt
	case e.Signal != 0:
		return CauseSignal
	default:
		return CauseExit
	}
}

func (d *Diagnosis) oomEvidence() bool {
	return d.Evidence.OOMKills.kills() > 0 || d.OOMKill != nil
}

// poolRefused says TensorFlow's allocator refused a tensor at the limit
// jupyter-guard held it to.
func (d *Diagnosis) poolRefused() bool {
	return d.Evidence.TensorPool > 0 && d.sign(SignTensorPool) != nil
}

// sign returns the first sign of the kind the output showed, or nil.
func (d *Diagnosis) sign(k SignKind) *OutputSign {
	for i := range d.Signs {
		if d.Signs[i].Kind == k {
			return &d.Signs[i]
		}
	}
	return nil
}

// oomEvent picks the best line about an OOM kill in the tree: the kernel
// process's own over a worker's, and "Killed process" (which has the
// victim's memory) over the summary before it.
func oomEvent(events []KernelEvent, kernelPID int) *KernelEvent {
	var best *KernelEvent
	score := func(e *KernelEvent) int {
		s := 0
		if e.PID == kernelPID {
			s += 2
		}
		if e.Kind == EventOOMKilled {
			s++
		}
		return s
	}
	for i := range events {
		e := &events[i]
		if e.Kind == EventGPUXid {
			continue
		}
		if best == nil || score(e) > score(best) {
			best = e
		}
	}
	return best
}

func firstEvent(events []KernelEvent, k KernelEventKind) *KernelEvent {
	for i := range events {
		if events[i].Kind == k {
			return &events[i]
		}
	}
	return nil
}
