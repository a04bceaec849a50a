package main

import (
	"strings"
	"testing"

	"github.com/jupyter-guard/jupyter-guard/control"
)

func TestGPUCell(t *testing.T) {
	const gib = 1 << 30
	a100 := func(i int, used uint64) control.GPU {
		return control.GPU{Index: i, Name: "A100", Used: used, InUse: used + gib, Total: 80 * gib}
	}
	tests := []struct {
		state control.State
		want  string
	}{
		{control.State{}, "-"},
		{control.State{GPU: []control.GPU{a100(0, 0), a100(1, 0)}}, "0 B"},
		{control.State{GPU: []control.GPU{a100(0, 70*gib), a100(1, 0)}}, "70 GiB on GPU 0"},
		{control.State{GPU: []control.GPU{a100(0, 2*gib), a100(1, 0), a100(2, gib)}}, "3 GiB on GPUs 0,2"},
		{control.State{GPU: []control.GPU{a100(0, 0)}, GPUUnknown: "this container cannot see the host's pids"}, "unknown ?"},
	}
	for _, tt := range tests {
		if got := gpuCell(tt.state); got != tt.want {
			t.Errorf("gpuCell(%+v) = %q, want %q", tt.state, got, tt.want)
		}
	}
}

func TestMemoryCell(t *testing.T) {
	const gib = 1 << 30
	for _, c := range []struct {
		m    control.Memory
		want string
	}{
		{control.Memory{Used: gib, Budget: 4 * gib, Share: 0.25}, "1 GiB / 4 GiB (25%)"},
		{control.Memory{Used: 3.5 * gib, Budget: 4 * gib, Share: 0.875}, "3.5 GiB / 4 GiB (88%) !"},
		// A budget of host memory where a container's limit may be lower.
		{control.Memory{Used: gib, Budget: 4 * gib, Share: 0.25, LimitUnseen: "limits above / cannot be read"}, "1 GiB / 4 GiB (25%) ?"},
		{control.Memory{Used: gib}, "1 GiB"},
	} {
		if got := memoryCell(c.m); got != c.want {
			t.Errorf("memoryCell(%+v) = %q, want %q", c.m, got, c.want)
		}
	}
}

func TestPrintJSONEmptyLedger(t *testing.T) {
	var b strings.Builder
	if err := printJSON(&b, []control.Cell(nil)); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(b.String()); got != "[]" {
		t.Errorf("an empty ledger prints %q, want []: scripts index it", got)
	}
}
