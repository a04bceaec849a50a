package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/jupyter-guard/jupyter-guard/guard/notice"
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

// pastPause says whether the guard said of cell c that it reached the
// line where the guard acts, stopped there or not.
func pastPause(c *notebook.Cell) bool { return slices.ContainsFunc(guardNotices(c), notice.PastPause) }

// printNotices shows the terminal what the guard said in cell c, as the
// notebook shows it.
func printNotices(w io.Writer, c *notebook.Cell) {
	for _, n := range guardNotices(c) {
		fmt.Fprintln(w, n)
	}
}
