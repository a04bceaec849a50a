package diagnosis

import (
	"fmt"
	"slices"
	"strings"
)

// stackFramesShown bounds a stack that never reaches a cell.
const stackFramesShown = 12

// outputLinesShown is how much of the kernel's last output is quoted when
// nothing in it was recognised.
const outputLinesShown = 8

// evidenceLines lists what the diagnosis rests on.
func (d *Diagnosis) evidenceLines() []string {
	ev := d.Evidence
	lines := wrap(fmt.Sprintf("kernel process %d: %s", ev.PID, ev.Exit), "  ", "    ")
	oomAsked := d.Cause == CauseOOMCgroup || d.Cause == CauseOOMHost || d.Cause == CauseOutsideKill
	if c := ev.OOMKills; c.Known && (oomAsked || c.kills() > 0) {
		lines = append(lines, fmt.Sprintf("  OOM kills in the kernel's cgroup while it ran: %d (oom_kill %d -> %d)",
			c.kills(), c.Before, c.After))
	}
	lines = append(lines, d.kernelLogLines(oomAsked)...)
	lines = append(lines, d.stackLines()...)
	if printed := d.signLines(); len(printed) > 0 {
		lines = append(lines, "  the kernel printed:")
		for _, l := range printed {
			lines = append(lines, quote(l)...)
		}
	}
	if d.Stack == nil && len(d.Signs) == 0 && !oomAsked {
		lines = append(lines, lastOutput(ev)...)
	}
	return lines
}

func (d *Diagnosis) kernelLogLines(oomAsked bool) []string {
	kl := d.Evidence.KernelLog
	var lines []string
	switch {
	case oomAsked && !kl.Read:
		lines = append(lines, wrap("kernel log: not readable here (it needs CAP_SYSLOG; "+
			"containers usually deny it)", "  ", "    ")...)
	case oomAsked && d.OOMKill == nil:
		lines = append(lines, "  kernel log: no OOM kill of the kernel's processes")
	}
	if e := d.OOMKill; e != nil {
		if e.Kind == EventOOMKilled {
			lines = append(lines, wrap("kernel log: "+e.Text, "  ", "    ")...)
		} else {
			lines = append(lines, fmt.Sprintf("  kernel log: the OOM killer chose pid %d (%s)", e.PID, e.Comm))
			if e.OOMMemcg != "" {
				lines = append(lines, "    in the memory cgroup "+e.OOMMemcg)
			}
		}
	}
	if d.Xid != nil {
		lines = append(lines, wrap("kernel log: "+d.Xid.Text, "  ", "    ")...)
	}
	if kl.Overwritten {
		lines = append(lines, "  kernel log: some records were overwritten before they were read")
	}
	return lines
}

// signLines are the output lines the signs were read from, each once, in
// the order the kernel printed them. The stack's header already quotes a
// fatal Python error.
func (d *Diagnosis) signLines() []string {
	var quoted []string
	for _, s := range d.Signs {
		if s.Kind != SignPythonFatal || d.Stack == nil {
			quoted = append(quoted, s.Lines...)
		}
	}
	var printed []string
	for _, l := range slices.Concat(d.Evidence.Stderr, d.Evidence.Stdout) {
		if slices.Contains(quoted, l) && !slices.Contains(printed, l) {
			printed = append(printed, l)
		}
	}
	return printed
}

// stackLines shows faulthandler's stack down to the running cell; the
// IPython machinery below it is only counted.
func (d *Diagnosis) stackLines() []string {
	st := d.Stack
	if st == nil || len(st.Frames) == 0 {
		return nil
	}
	lines := []string{"  " + st.Header, "  Python stack of the crashing thread, most recent call first:"}
	shown := min(len(st.Frames), stackFramesShown)
	if f := st.runningCellFile(); f != "" {
		shown = lastIndex(st.Frames, f) + 1
	}
	for _, f := range st.Frames[:shown] {
		if !f.isCell() {
			lines = append(lines, fmt.Sprintf("    %s, line %d, in %s", f.shortFile(), f.Line, f.Func))
			continue
		}
		name, running := d.cellOf(f)
		lines = append(lines, fmt.Sprintf("    %s, line %d, in %s", name, f.Line, f.Func))
		if code := d.codeLine(f.Line); running && code != "" {
			lines = append(lines, "      "+clip(code, lineWidth-6))
		}
	}
	switch rest := len(st.Frames) - shown; {
	case rest == 1:
		lines = append(lines, "    (1 frame below the cell not shown)")
	case rest > 1:
		lines = append(lines, fmt.Sprintf("    (%d frames below the cell not shown)", rest))
	}
	return lines
}

func lastIndex(frames []Frame, file string) int {
	for i := len(frames) - 1; i >= 0; i-- {
		if frames[i].File == file {
			return i
		}
	}
	return -1
}

// lastOutput quotes the last non-empty lines of the first stream that has
// any: a process that exits often says why just before.
func lastOutput(ev Evidence) []string {
	streams := []struct {
		name  string
		lines []string
	}{{"stderr", ev.Stderr}, {"stdout", ev.Stdout}}
	for _, s := range streams {
		var kept []string
		for i := len(s.lines) - 1; i >= 0 && len(kept) < outputLinesShown; i-- {
			if strings.TrimSpace(s.lines[i]) != "" {
				kept = append(kept, s.lines[i])
			}
		}
		if len(kept) == 0 {
			continue
		}
		out := []string{"  the kernel's last lines on " + s.name + ":"}
		for i := len(kept) - 1; i >= 0; i-- {
			out = append(out, quote(kept[i])...)
		}
		return out
	}
	return []string{"  no output of the kernel process reached jupyter-guard"}
}
