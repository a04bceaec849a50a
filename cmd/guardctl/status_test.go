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
	kernel := control.Memory{Kernel: gib, KernelShare: 0.25, Used: gib, Share: 0.25, Budget: 4 * gib, Scope: control.ScopeKernel,
		LimitSource: "JUPYTER_GUARD_LIMIT"}
	near := kernel
	near.Kernel, near.KernelShare, near.Used, near.Share = 3.5*gib, 0.875, 3.5*gib, 0.875
	// The host's memory as the budget: the kernel's own figure first, the
	// host's in the budget's column.
	host := control.Memory{Kernel: gib, KernelShare: 1.0 / 24, Used: 21 * gib, Share: 0.875, Budget: 24 * gib, Scope: control.ScopeHost,
		LimitSource: "host memory"}
	unseen := host
	unseen.Used, unseen.Share = 2*gib, 2.0/24
	unseen.LimitSource, unseen.LimitUnseen = "host memory; in a container: set JUPYTER_GUARD_LIMIT", "limits above / cannot be read"
	shared := control.Memory{Kernel: 300 << 20, KernelShare: 300.0 / 4096, Used: 3 * gib, Share: 0.75, Budget: 4 * gib,
		Scope: control.ScopeCgroup, LimitSource: "cgroup v2 memory.max at /kubepods/pod-a"}
	for _, c := range []struct {
		m              control.Memory
		memory, budget string
	}{
		{kernel, "1 GiB / 4 GiB (25%)", "JUPYTER_GUARD_LIMIT"},
		{near, "3.5 GiB / 4 GiB (88%) !", "JUPYTER_GUARD_LIMIT"},
		{host, "1 GiB / 24 GiB (4%)", "host memory: 21 GiB used (88%) !"},
		{unseen, "1 GiB / 24 GiB (4%) ?", "host memory: 2 GiB used (8%)"},
		{shared, "300 MiB / 4 GiB (7%)", "cgroup v2 memory.max at /kubepods/pod-a: 3 GiB used (75%)"},
		{control.Memory{Kernel: gib}, "1 GiB", "-"},
	} {
		if got := memoryCell(c.m); got != c.memory {
			t.Errorf("memoryCell(%+v) = %q, want %q", c.m, got, c.memory)
		}
		if got := budgetCell(c.m); got != c.budget {
			t.Errorf("budgetCell(%+v) = %q, want %q", c.m, got, c.budget)
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

func TestPrintHistory(t *testing.T) {
	const mib = 1 << 20
	h := control.History{Budget: 600 * mib, Warn: 480 * mib, Pause: 570 * mib, KernelSource: "tree_rss", Scope: control.ScopeKernel}
	for i := range 100 {
		h.Points = append(h.Points, control.Point{At: int64(1000 * i), Kernel: uint64(i) * mib, Used: uint64(i) * mib})
	}
	var b strings.Builder
	if err := printHistory(&b, h); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	t.Log("\n" + b.String())
	if lines[0] != "Budget 600 MiB: warn at 480 MiB, pause at 570 MiB, on the kernel's own memory (tree_rss)." {
		t.Errorf("first line %q", lines[0])
	}
	if len(lines) != 2+historyRows || !strings.HasSuffix(lines[2], "0 B") || !strings.HasSuffix(lines[len(lines)-1], "99 MiB") {
		t.Errorf("%d lines, want the header, %d rows from the first to the last measurement:\n%s", len(lines), historyRows, b.String())
	}
	h.Scope, h.Points = control.ScopeHost, h.Points[:2]
	b.Reset()
	_ = printHistory(&b, h)
	if !strings.Contains(b.String(), "on the host's used memory") || !strings.Contains(b.String(), "TIME      KERNEL  HOST") {
		t.Errorf("a budget on the host's memory:\n%s", b.String())
	}
}
