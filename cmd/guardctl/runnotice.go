package main

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/jupyter-guard/jupyter-guard/guard/config"
	"github.com/jupyter-guard/jupyter-guard/guard/notice"
	"github.com/jupyter-guard/jupyter-guard/guard/units"
	"github.com/jupyter-guard/jupyter-guard/notebook"
)

// guardNotices are the guard's notices in cell c, in order: each begins
// on a line of its own with "jupyter-guard" and runs to a blank line, the
// next notice or the end of the stream (a notebook runs consecutive
// stderr output together).
func guardNotices(c *notebook.Cell) []string {
	var out []string
	for _, o := range c.Outputs {
		if o.Type != notebook.Stream || o.Name != "stderr" {
			continue
		}
		for _, part := range strings.Split(o.Text, "\njupyter-guard")[1:] {
			part, _, _ = strings.Cut("jupyter-guard"+part, "\n\n")
			out = append(out, strings.TrimRight(part, "\n"))
		}
	}
	return out
}

// stoppedByGuard says whether the guard stopped cell c: paused or
// interrupted it, or its ceiling refused the cell memory.
func stoppedByGuard(c *notebook.Cell) bool {
	return slices.ContainsFunc(guardNotices(c), func(n string) bool {
		return slices.ContainsFunc(notice.Stops, func(head string) bool { return strings.HasPrefix(n, head) })
	})
}

// guardStopped fails a run that went through although the guard stopped a
// cell (with --allow-errors) or a cell's peak passed --limit (with the
// action warn and no ceiling): the exit status says what the run did,
// whatever the timing. It prints the cell's notices.
func guardStopped(rows []runRow, limit, input string) error {
	budget, _ := config.ParseSpec(limit)
	for _, r := range rows {
		past := budget.Bytes > 0 && r.known && r.mem.PeakBytes > budget.Bytes
		if !past && !stoppedByGuard(r.Cell) {
			continue
		}
		if past {
			fmt.Fprintf(os.Stderr, "guardctl run: %s of %s peaked at %s, past --limit %s\n", r.Place, input, units.FormatBytes(r.mem.PeakBytes), limit)
		} else {
			fmt.Fprintf(os.Stderr, "guardctl run: jupyter-guard stopped %s of %s:\n", r.Place, input)
		}
		for _, n := range guardNotices(r.Cell) {
			fmt.Fprintf(os.Stderr, "%s\n", n)
		}
		return exitCode(1)
	}
	return nil
}
