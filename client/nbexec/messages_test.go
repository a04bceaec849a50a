package nbexec

import (
	"testing"

	"github.com/jupyter-guard/jupyter-guard/notebook"
)

// TestTimestamp: dates are recorded as nbclient writes them, UTC with
// microseconds, whatever precision and zone the kernel used.
func TestTimestamp(t *testing.T) {
	for in, want := range map[string]string{
		"2026-11-21T23:41:16.123456Z":      "2026-11-21T23:41:16.123456Z",
		"2026-11-21T23:41:16.1Z":           "2026-11-21T23:41:16.100000Z",
		"2026-11-22T01:41:16.123456+02:00": "2026-11-21T23:41:16.123456Z",
	} {
		if got := timestamp(in); got != want {
			t.Errorf("timestamp(%q) = %s, want %s", in, got, want)
		}
	}
	if got := timestamp(""); len(got) != len("2026-11-21T23:41:16.123456Z") {
		t.Errorf("a missing date gives %q", got)
	}
}

func TestHasTag(t *testing.T) {
	cell := &notebook.Cell{Metadata: map[string]any{"tags": []any{"x", "raises-exception"}}}
	if !hasTag(cell, "raises-exception") || hasTag(cell, "y") || hasTag(&notebook.Cell{}, "x") {
		t.Fatal("hasTag")
	}
}
