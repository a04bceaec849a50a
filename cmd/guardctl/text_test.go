package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/jupyter-guard/jupyter-guard/control"
)

func TestShownEscapesWhatATerminalWouldObey(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"train.ipynb", "train.ipynb"},
		{"\x1b]0;pwned\x07\x1b[2Jx.ipynb", `\x1b]0;pwned\x07\x1b[2Jx.ipynb`},
		{"a\u009bb", `a\x9bb`},                               // C1 CSI
		{"a\x9bb", "a\ufffdb"},                               // not UTF-8: not passed on raw
		{"invoice\u202egnp.ipynb", `invoice\u202egnp.ipynb`}, // right-to-left override
		{"\tx = 1\r", ` x = 1\x0d`},
		{"données", "données"},
		{strings.Repeat("é", 50), strings.Repeat("é", 39) + "…"},
	} {
		if got := shown(tt.in, 40); got != tt.want {
			t.Errorf("shown(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCellsTableShowsNoRawControlCharacters(t *testing.T) {
	var b bytes.Buffer
	if err := printCells(&b, []control.Cell{{ExecutionCount: 1, Code: "print('\x1b[31mred')\nx = 1"}}); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); strings.ContainsRune(out, '\x1b') || !strings.Contains(out, `print('\x1b[31mred')`) {
		t.Errorf("cells table:\n%s", out)
	}
}
