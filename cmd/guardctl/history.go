package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jupyter-guard/jupyter-guard/control"
	"github.com/jupyter-guard/jupyter-guard/guard/units"
)

func init() {
	register(command{name: "history", summary: "show one kernel's memory over the last minutes", run: runHistory})
}

func runHistory(args []string) error {
	return showKernel(args, "history", "Shows one guarded kernel's memory over the last minutes (KERNEL: a unique id prefix or the notebook's name): its own figure, and the host's or a shared cgroup's where its budget counts that, against the budget's lines.",
		"print every measurement as JSON (the control API's history, which the lab panel draws)", (*control.Conn).History, printHistory)
}

// historyRows is how many measurements the table shows at most.
const historyRows = 30

// printHistory prints the lines and up to historyRows measurements, evenly
// spread over the history, the latest last.
func printHistory(w io.Writer, h control.History) error {
	fmt.Fprintf(w, "Budget %s: warn at %s, pause at %s, on %s.\n", units.FormatBytes(h.Budget),
		units.FormatBytes(h.Warn), units.FormatBytes(h.Pause), countedOn(h))
	if len(h.Points) == 0 {
		fmt.Fprintln(w, "No measurement yet.")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	shared := h.Scope != control.ScopeKernel
	header := "TIME\tKERNEL"
	if shared {
		header += "\t" + strings.ToUpper(h.Scope)
	}
	fmt.Fprintln(tw, header)
	n := len(h.Points)
	for i := range min(n, historyRows) {
		p := h.Points[i*(n-1)/max(1, min(n, historyRows)-1)]
		row := time.UnixMilli(p.At).Format("15:04:05") + "\t" + units.FormatBytes(p.Kernel)
		if shared {
			row += "\t" + units.FormatBytes(p.Used)
		}
		fmt.Fprintln(tw, row)
	}
	return tw.Flush()
}

// countedOn says what the lines are on: the kernel's own figure, or the
// host's or a shared cgroup's.
func countedOn(h control.History) string {
	switch h.Scope {
	case control.ScopeHost:
		return "the host's used memory"
	case control.ScopeCgroup:
		return "the working set of a cgroup shared with other processes"
	}
	return "the kernel's own memory (" + h.KernelSource + ")"
}
