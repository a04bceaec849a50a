package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/jupyter-guard/jupyter-guard/notebook"
)

// The guard's notices in a cell as a notebook stores them: run together
// with the cell's own stderr in one stream output.
func TestGuardNoticesOfACell(t *testing.T) {
	golden := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "guard", name+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	warning, overran, paused := golden("warning"), golden("overran"), golden("paused")
	cell := func(texts ...string) *notebook.Cell {
		c := &notebook.Cell{Type: notebook.Code}
		c.Outputs = append(c.Outputs, &notebook.Output{Type: notebook.Stream, Name: "stdout", Text: "800 MiB kept\n" + paused})
		for _, text := range texts {
			c.Outputs = append(c.Outputs, &notebook.Output{Type: notebook.Stream, Name: "stderr", Text: text})
		}
		return c
	}
	for _, tt := range []struct {
		name    string
		cell    *notebook.Cell
		notices int
		past    bool
	}{
		{"nothing on stderr", cell(), 0, false},
		{"the cell's own stderr", cell("a warning of the cell's own\n"), 0, false},
		{"a warning", cell("progress 10%\n" + warning), 1, false},
		{"a warning, then past the line unseen", cell(warning + overran), 2, true},
		{"a pause in a stream of its own", cell(warning, paused), 2, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := guardNotices(tt.cell)
			if len(got) != tt.notices || pastPause(tt.cell) != tt.past {
				t.Errorf("notices %q, past the pause line %v; want %d notices, %v", got, pastPause(tt.cell), tt.notices, tt.past)
			}
			if slices.ContainsFunc(got, func(n string) bool { return n == "" || n[len(n)-1] == '\n' }) {
				t.Errorf("a notice is empty or ends in a newline: %q", got)
			}
		})
	}
}
