package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-guard/jupyter-guard/control"
	"github.com/jupyter-guard/jupyter-guard/guard/diagnosis"
)

func TestWriteMetrics(t *testing.T) {
	crashed := control.State{KernelID: "k1", Kernelspec: "python3-guarded", Notebook: "a \"quoted\" \\ path\nwith a line feed \xff.ipynb",
		State: "idle", Memory: control.Memory{Kernel: 300 << 20, KernelSource: "tree_rss", Used: 300 << 20, Scope: "kernel",
			Budget: 2 << 30, BudgetFrom: "JUPYTER_GUARD_LIMIT", MeasuredAt: time.Now()},
		GPU:         []control.GPU{{Index: 0, Used: 3 << 30}, {Index: 3}},
		DeathCauses: map[string]int{"segfault": 2}, Actions: map[string]int{"warn": 1, "alert": 1, "pause": 3, "thaw": 3}}
	hidden := control.State{KernelID: "k2", Kernelspec: "bash-guarded", State: "paused",
		Memory: control.Memory{Kernel: 1, KernelSource: "tree_rss", Used: 5 << 30, Scope: "host", Budget: 6 << 30, BudgetFrom: "host",
			MeasuredAt: time.Now()},
		GPU: []control.GPU{{Index: 0, Used: 0}}, GPUUnknown: "a container"}
	restarting := control.State{KernelID: "k3", Kernelspec: "python3-guarded", State: "restarting",
		Memory: control.Memory{Budget: 2 << 30, BudgetFrom: "MEM_LIMIT"}}
	var b bytes.Buffer
	if err := writeMetrics(&b, []control.State{crashed, hidden, restarting}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	t.Log("\n" + out)
	k1 := `kernel_id="k1",kernelspec="python3-guarded",notebook="a \"quoted\" \\ path\nwith a line feed ` + "\uFFFD" + `.ipynb"`
	k2 := `kernel_id="k2",kernelspec="bash-guarded",notebook=""`
	for _, want := range []string{
		"jupyter_guard_memory_used_bytes{" + k1 + `,source="tree_rss"} 314572800` + "\n",
		"jupyter_guard_memory_budget_bytes{" + k1 + `,from="JUPYTER_GUARD_LIMIT"} 2147483648` + "\n",
		"jupyter_guard_memory_budget_used_bytes{" + k1 + `,scope="kernel"} 314572800` + "\n",
		"jupyter_guard_memory_used_bytes{" + k2 + `,source="tree_rss"} 1` + "\n",
		"jupyter_guard_memory_budget_used_bytes{" + k2 + `,scope="host"} 5368709120` + "\n",
		"jupyter_guard_memory_budget_bytes{" + k2 + `,from="host"} 6442450944` + "\n",
		"jupyter_guard_gpu_memory_used_bytes{" + k1 + `,gpu="0"} 3221225472` + "\n",
		"jupyter_guard_gpu_memory_used_bytes{" + k1 + `,gpu="3"} 0` + "\n",
		"jupyter_guard_state{" + k1 + `,state="idle"} 1` + "\n",
		"jupyter_guard_state{" + k1 + `,state="paused"} 0` + "\n",
		"jupyter_guard_state{" + k2 + `,state="paused"} 1` + "\n",
		"jupyter_guard_warnings_total{" + k1 + "} 2\n", // warn and alert
		"jupyter_guard_pauses_total{" + k1 + "} 3\n",
		"jupyter_guard_interrupts_total{" + k1 + "} 0\n",
		"jupyter_guard_deaths_total{" + k1 + `,cause="segfault"} 2` + "\n",
		"jupyter_guard_deaths_total{" + k2 + `,cause="segfault"} 0` + "\n",
		"# TYPE jupyter_guard_deaths_total counter\n",
		"# TYPE jupyter_guard_state gauge\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no line %q", want)
		}
	}
	if strings.Contains(out, `_used_bytes{kernel_id="k3"`) {
		t.Error("a kernel not measured (restarting) has memory figures")
	}
	if strings.Contains(out, k2+`,gpu=`) {
		t.Error("GPU memory of a kernel whose share is unknown is printed")
	}
	// One family's lines together, after its HELP and TYPE: the format
	// rejects a family that comes back after another.
	var seen []string
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		name := strings.Fields(strings.TrimPrefix(strings.TrimPrefix(line, "# HELP "), "# TYPE "))[0]
		name, _, _ = strings.Cut(name, "{")
		if len(seen) == 0 || seen[len(seen)-1] != name {
			for _, s := range seen {
				if s == name {
					t.Fatalf("%s comes back after other metrics", name)
				}
			}
			if !strings.HasPrefix(line, "# HELP "+name+" ") {
				t.Errorf("%s does not start with its HELP line: %q", name, line)
			}
			seen = append(seen, name)
		}
		if !strings.HasPrefix(name, "jupyter_guard_") {
			t.Errorf("metric %q lacks the jupyter_guard_ prefix", name)
		}
	}
	if len(seen) != 9 {
		t.Errorf("%d metrics, want 9: %v", len(seen), seen)
	}
	if n := strings.Count(out, "jupyter_guard_deaths_total{"); n != 3*len(diagnosis.Causes) {
		t.Errorf("%d death counters, want every cause for each kernel (%d)", n, 3*len(diagnosis.Causes))
	}
}

func TestEscapeHelp(t *testing.T) {
	if got := escapeHelp("a \\ b\n\"c\""); got != `a \\ b\n"c"` {
		t.Errorf("escapeHelp = %q", got)
	}
}

func TestWriteAtomically(t *testing.T) {
	path := filepath.Join(t.TempDir(), "guard.prom")
	if err := writeAtomically(path, func(w io.Writer) error { return writeMetrics(w, nil) }); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("%s: %v, %v; want a file of mode 0644", path, fi, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("the temporary file is left: %v", entries)
	}
	if err := writeAtomically(path, func(io.Writer) error { return os.ErrClosed }); err == nil {
		t.Error("a failed write is not reported")
	}
	if data, _ := os.ReadFile(path); !strings.Contains(string(data), "# TYPE jupyter_guard_state gauge") {
		t.Errorf("a failed write replaced the file: %q", data)
	}
}
