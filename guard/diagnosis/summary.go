package diagnosis

import (
	"fmt"
	"strings"
	"syscall"

	"github.com/jupyter-guard/jupyter-guard/guard/units"
)

// crashSignals are raised by the faulting instruction itself, so the
// kernel "crashed with" them; any other signal was sent to it.
var crashSignals = map[syscall.Signal]string{
	syscall.SIGSEGV: "a segmentation fault",
	syscall.SIGBUS:  "a bus error",
	syscall.SIGFPE:  "an arithmetic error",
	syscall.SIGILL:  "an illegal instruction",
	syscall.SIGTRAP: "a trap",
	syscall.SIGSYS:  "a bad system call",
}

// summary is the one-line Evalue: what happened (why), where.
func (d *Diagnosis) summary() string {
	ev := d.Evidence
	var what, why string
	switch d.Cause {
	case CauseOOMCgroup, CauseOOMHost:
		return d.oomSummary()
	case CauseOutsideKill:
		what = "The kernel was killed by a SIGKILL signal"
	case CauseCUDA:
		what = "The kernel died of a CUDA error"
		if s := d.sign(SignCUDA); d.Setup != nil {
			what, why = "The kernel died of a "+d.Setup.Kind, d.Setup.Line
		} else if s != nil {
			why = strings.TrimPrefix(s.Message, cudaErrorPrefix)
		} else {
			what = "The kernel died after a GPU error"
			why = fmt.Sprintf("NVIDIA Xid %d", d.Xid.Xid)
		}
	case CauseCeiling:
		what = "The kernel ended when jupyter-guard's allocation ceiling refused it memory"
		if d.poolRefused() {
			what = "The kernel ended when TensorFlow's CPU allocator, which jupyter-guard holds to " +
				units.FormatBytes(ev.TensorPool) + ", refused a tensor"
		}
		if s := d.ceilingReason(); s != nil {
			why = s.Message
		} else {
			why = signalOrCode(ev.Exit)
		}
	case CausePythonFatal:
		what, why = "The kernel stopped on a fatal Python error", d.sign(SignPythonFatal).Message
	case CauseAbort:
		what = "The kernel aborted (SIGABRT)"
		if s := d.abortReason(); s != nil {
			what += " after " + signPhrase[s.Kind]
			why = s.Message
		}
	case CauseSegfault, CauseSignal:
		name := signalName(ev.Exit.Signal)
		if phrase, ok := crashSignals[ev.Exit.Signal]; ok {
			what = fmt.Sprintf("The kernel crashed with %s (%s)", phrase, name)
		} else {
			what = "The kernel was killed by " + name
		}
	case CauseInterrupt:
		what = d.interruptSummary()
	case CauseExit:
		what = fmt.Sprintf("The kernel process exited with code %d", ev.Exit.Code)
	}
	s := what
	if why != "" {
		s += " (" + why + ")"
	}
	if d.Evidence.Unanswered {
		s += " before it answered Jupyter: it never started"
	} else {
		s += d.where()
	}
	if d.Cause == CauseOutsideKill {
		s += d.oomRuledOut()
	}
	return sentence(s)
}

// ceilingReason is what the kernel printed as it ended at the ceiling:
// V8's out-of-memory, an uncaught C++ exception, glibc's complaint.
func (d *Diagnosis) ceilingReason() *OutputSign {
	if s := d.sign(SignV8OOM); s != nil {
		return s
	}
	return d.abortReason()
}

// signalOrCode is how the process ended, for a summary: "SIGTRAP", "exit
// code 1".
func signalOrCode(e ExitStatus) string {
	if e.Signal != 0 {
		return signalName(e.Signal)
	}
	return fmt.Sprintf("exit code %d", e.Code)
}

// signPhrase names what printed a sign, for "aborted after …".
var signPhrase = map[SignKind]string{
	SignCppTerminate: "an uncaught C++ exception",
	SignGlibc:        "glibc found its heap corrupted",
}

// abortReason is the message printed by whatever called abort().
func (d *Diagnosis) abortReason() *OutputSign {
	if s := d.sign(SignCppTerminate); s != nil {
		return s
	}
	return d.sign(SignGlibc)
}

func (d *Diagnosis) oomSummary() string {
	s := "The kernel was killed by the Linux out-of-memory killer"
	if d.Cause == CauseOOMHost {
		s = "The machine ran out of memory and the Linux out-of-memory killer killed the kernel"
	}
	s += d.where()
	var facts []string
	if c := d.Evidence.Cell; c != nil && c.Growth > 0 {
		f := "the cell had added " + units.FormatBytes(uint64(c.Growth))
		if c.Duration > 0 {
			f += " in " + units.FormatDuration(c.Duration)
		}
		facts = append(facts, f)
	}
	if m := d.Evidence.Memory; m.Limit > 0 {
		f := "the limit is " + units.FormatBytes(m.Limit)
		if m.LimitSource != "" {
			f += " (" + m.LimitSource + ")"
		}
		facts = append(facts, f)
	}
	if len(facts) > 0 {
		s += ": " + strings.Join(facts, "; ")
	}
	return sentence(s)
}

// sentence ends s with a full stop, unless a clipped quote already does.
func sentence(s string) string {
	if strings.HasSuffix(s, "...") {
		return s
	}
	return s + "."
}

// oomRuledOut says how sure it is that the OOM killer was not involved.
func (d *Diagnosis) oomRuledOut() string {
	if d.Evidence.OOMKills.Known || d.Evidence.KernelLog.Read {
		return "; nothing shows that memory ran out"
	}
	return "; jupyter-guard could not check whether memory ran out"
}

// where places the death in the user's code: the line of the cell the
// crashing stack points at, else the running cell.
func (d *Diagnosis) where() string {
	i, ok := d.Stack.userFrame()
	if !ok {
		if d.Evidence.Cell == nil {
			return " while no cell was running"
		}
		return " while running " + cellName(d.Evidence.Cell)
	}
	s := " in "
	if lib, ok := d.Stack.library(); ok {
		s = " in " + lib.name + ", called from "
	}
	f := d.Stack.Frames[i]
	name, running := d.cellOf(f)
	if !running {
		s += fmt.Sprintf("%s(), line %d of %s", f.Func, f.Line, name)
		if d.Evidence.Cell != nil {
			s += ", while running " + cellName(d.Evidence.Cell)
		}
		return s
	}
	s += fmt.Sprintf("%s, at line %d", name, f.Line)
	if code := d.codeLine(f.Line); code != "" {
		s += ": " + clip(code, 60)
	}
	return s
}

// cellName is how the message refers to a cell: by its execution count.
func cellName(c *Cell) string {
	if c == nil || c.ExecutionCount == 0 {
		return "the running cell"
	}
	return fmt.Sprintf("cell [%d]", c.ExecutionCount)
}

// cellOf names the cell a frame's code is from and says whether it is the
// running cell (whose source the proxy has).
func (d *Diagnosis) cellOf(f Frame) (name string, running bool) {
	c := d.Evidence.Cell
	if n, _ := f.cellNumber(); n > 0 {
		running = c != nil && c.ExecutionCount == n
		return fmt.Sprintf("cell [%d]", n), running
	}
	if f.File == d.Stack.runningCellFile() {
		return cellName(c), true
	}
	return "an earlier cell", false
}

// codeLine is line n (from 1) of the running cell's source, trimmed.
func (d *Diagnosis) codeLine(n int) string {
	if d.Evidence.Cell == nil || n < 1 {
		return ""
	}
	lines := strings.Split(d.Evidence.Cell.Code, "\n")
	if n > len(lines) {
		return ""
	}
	line := lines[n-1]
	if i := strings.Index(line, "  #"); i >= 0 {
		line = line[:i] // an inline comment is not what crashed
	}
	return strings.TrimSpace(line)
}
