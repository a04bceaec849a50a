package diagnosis

import (
	"fmt"

	"github.com/jupyter-guard/jupyter-guard/guard/units"
)

// causeTitles are the short names on the message's first line.
var causeTitles = map[Cause]string{
	CauseOOMCgroup:   "out of memory",
	CauseOOMHost:     "the machine ran out of memory",
	CauseOutsideKill: "killed by SIGKILL",
	CauseCUDA:        "CUDA error",
	CauseCeiling:     "out of memory at the ceiling",
	CauseSegfault:    "crash",
	CausePythonFatal: "fatal Python error",
	CauseAbort:       "abort",
	CauseInterrupt:   "ended on an interrupt",
	CauseSignal:      "signal",
	CauseExit:        "exited",
}

// render writes the Evalue and the Traceback lines: plain text in short
// lines, read in a notebook cell and in a terminal alike.
func render(d *Diagnosis) (string, []string) {
	evalue := d.summary()
	tb := []string{"jupyter-guard: kernel died (" + causeTitles[d.Cause] + ")"}
	if d.Evidence.Unanswered {
		tb[0] = "jupyter-guard: the kernel could not start (" + causeTitles[d.Cause] + ")"
	}
	tb = append(tb, wrap(evalue, "", "")...)
	tb = section(tb, "Evidence:", d.evidenceLines())
	if d.Cause == CauseOOMCgroup || d.Cause == CauseOOMHost || d.Cause == CauseOutsideKill || d.Cause == CauseCeiling {
		tb = section(tb, "Memory:", d.memoryLines())
	}
	tb = section(tb, "What to do:", d.advice())
	tb = append(tb, "")
	return evalue, append(tb, wrap(d.restartLine(), "", "")...)
}

func section(tb []string, title string, lines []string) []string {
	if len(lines) == 0 {
		return tb
	}
	tb = append(tb, "", title)
	return append(tb, lines...)
}

// restartLine ends every message: the caller says whether it restarts.
func (d *Diagnosis) restartLine() string {
	r := d.Evidence.Restart
	switch {
	case d.Evidence.Unanswered && r.ByClient:
		return "jupyter-guard does not start it again: fix the kernelspec or its environment, then start the kernel again."
	case d.Evidence.Unanswered && r.GaveUp:
		return fmt.Sprintf("jupyter-guard stopped trying after %d attempts within %s: fix the kernelspec or its "+
			"environment, then restart the kernel from the Kernel menu.", r.Deaths, units.FormatDuration(r.Window))
	case d.Evidence.Unanswered:
		return "jupyter-guard will try to start it again."
	case r.ByClient:
		return "jupyter-guard leaves restarting the kernel to the program that started it (nbclient, " +
			"papermill and nbconvert stop the run, as they do without jupyter-guard). All variables were lost."
	}
	if r.GaveUp {
		return fmt.Sprintf("jupyter-guard stopped restarting the kernel after %d deaths within %s, "+
			"and all variables were lost. Fix the cause, then restart the kernel "+
			"from the Kernel menu.", r.Deaths, units.FormatDuration(r.Window))
	}
	return "jupyter-guard is restarting the kernel. All variables were lost: " +
		"re-run the cells you need."
}
