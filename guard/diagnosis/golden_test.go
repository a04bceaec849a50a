package diagnosis

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden messages in testdata/diagnosis/golden")

const gib = 1 << 30

func gibs(n float64) uint64 { return uint64(n * gib) }

// stderrOf is a recorded stderr in testdata/diagnosis/output, as Tail.Lines
// would return it.
func stderrOf(t *testing.T, name string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testdata, "output", name))
	if err != nil {
		t.Fatal(err)
	}
	tail := NewTail(64<<10, 200)
	tail.Write(data)
	return tail.Lines()
}

func cellFile(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testdata, "cells", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// goldenCases are one death of each cause, with the evidence the proxy
// would pass.
func goldenCases(t *testing.T) map[string]Evidence {
	killed := func(sig syscall.Signal) ExitStatus { return ExitStatus{Code: -1, Signal: sig} }
	bigCell := &Cell{
		ExecutionCount: 12,
		Code:           "x = np.ones((40000, 40000))\ny = x * 2",
		Start:          gibs(1.2), Peak: gibs(12.5), Growth: int64(gibs(11.3)),
		Duration: 4200 * time.Millisecond,
	}
	memory := Memory{
		Limit: 12 * gib, LimitSource: "cgroup v1 /jupyter/alice",
		TreePeak: gibs(12.4), TreeLast: gibs(12.3),
		GPUs: []GPUMemory{{Index: 0, Name: "NVIDIA A100-SXM4-40GB", Used: gibs(3.1), Total: 40 * gib}},
		TopCells: []Cell{
			{ExecutionCount: 7, Code: "df = pd.read_csv(\"events.csv\")", Growth: int64(gibs(2.1))},
			{ExecutionCount: 9, Code: "emb = model.encode(df.text.tolist(), batch_size=256, show_progress_bar=True)\n", Growth: 700 << 20},
		},
	}
	killedLine := "Memory cgroup out of memory: Killed process 4242 (python) total-vm:13312000kB, anon-rss:12582912kB, file-rss:10240kB, shmem-rss:0kB, UID:1000 pgtables:24800kB oom_score_adj:0"
	ev, _ := parseKernelEvent(killedLine)
	globalLine := "Out of memory: Killed process 4242 (python) total-vm:13312000kB, anon-rss:12582912kB, file-rss:10240kB, shmem-rss:0kB, UID:1000 pgtables:24800kB oom_score_adj:0"
	globalEv, _ := parseKernelEvent(globalLine)
	xid, _ := parseKernelEvent("NVRM: Xid (PCI:0000:3b:00): 43, pid=4242, name=python, Ch 00000010")

	return map[string]Evidence{
		"oom-cgroup": {
			PID: 4242, Exit: killed(syscall.SIGKILL),
			OOMKills:  OOMCounter{Known: true, Before: 3, After: 4},
			KernelLog: KernelLog{Read: true, Events: []KernelEvent{ev}},
			Cell:      bigCell, Memory: memory,
		},
		"oom-host": {
			PID: 4242, Exit: killed(syscall.SIGKILL),
			KernelLog: KernelLog{Read: true, Events: []KernelEvent{globalEv}},
			Cell:      bigCell,
			Memory:    Memory{Limit: 16 * gib, LimitSource: LimitHost, TreePeak: gibs(12.4), TreeLast: gibs(12.3)},
		},
		"outside-kill": {
			PID: 4242, Exit: killed(syscall.SIGKILL),
			OOMKills:  OOMCounter{Known: true, Before: 0, After: 0},
			KernelLog: KernelLog{Read: true},
			Cell:      &Cell{ExecutionCount: 4, Code: "train(model, epochs=50)"},
			Memory:    Memory{Limit: 12 * gib, LimitSource: "cgroup v1 /jupyter/alice", TreePeak: 3 * gib, TreeLast: gibs(2.9)},
		},
		"outside-kill-unchecked-gave-up": {
			PID: 4242, Exit: ExitStatus{Code: 137},
			Cell:    &Cell{ExecutionCount: 4, Code: "train(model, epochs=50)"},
			Restart: Restart{GaveUp: true, Deaths: 3, Window: time.Minute},
		},
		"segfault-ctypes": {
			PID: 5549, Exit: killed(syscall.SIGSEGV),
			Stderr: stderrOf(t, "ipykernel-segfault.stderr"),
			Cell: &Cell{ExecutionCount: 2, Code: "import ctypes, faulthandler\nfaulthandler.enable()\n" +
				"def f():\n    return ctypes.string_at(0)\nf()\n"},
		},
		"segfault-numpy": {
			PID: 32175, Exit: ExitStatus{Code: -1, Signal: syscall.SIGSEGV, CoreDumped: true},
			Stderr: stderrOf(t, "ipykernel-numpy-segfault.stderr"),
			Cell: &Cell{ExecutionCount: 3, Code: "import numpy as np\nimport faulthandler\nfaulthandler.enable()\n" +
				"a = np.lib.stride_tricks.as_strided(np.zeros(1), shape=(10**7,), strides=(10**7,))\ntotal = a.sum()\n"},
		},
		"segfault-no-stack": {
			PID: 4242, Exit: killed(syscall.SIGSEGV),
			Cell: &Cell{ExecutionCount: 5, Code: "out = fast_lib.transform(data)"},
		},
		"abort-cpp": {
			PID: 4242, Exit: killed(syscall.SIGABRT),
			Stderr: stderrOf(t, "cpp-terminate.stderr"),
			Cell:   &Cell{ExecutionCount: 6, Code: "model.fit(X, y)"},
		},
		"abort-glibc": {
			PID: 4242, Exit: killed(syscall.SIGABRT),
			Stderr: stderrOf(t, "glibc-double-free.stderr"),
			Cell:   &Cell{ExecutionCount: 6, Code: cellFile(t, "double_free.py")},
		},
		"cuda-device-assert": {
			PID: 4242, Exit: killed(syscall.SIGABRT),
			Stderr:    stderrOf(t, "torch-device-assert.stderr"),
			KernelLog: KernelLog{Read: true, Events: []KernelEvent{xid}},
			Cell:      &Cell{ExecutionCount: 8, Code: "loss = criterion(model(x), labels)\nloss.backward()"},
		},
		"cudnn-mismatch": {
			PID: 4242, Exit: killed(syscall.SIGABRT),
			Stderr:    stderrOf(t, "tf-cudnn-mismatch.stderr"),
			Cell:      &Cell{ExecutionCount: 3, Code: "model.fit(x, y, epochs=3)"},
			GPUDriver: "NVIDIA driver 535.129.03 (CUDA 12.2)",
		},
		"python-fatal": {
			PID: 32612, Exit: killed(syscall.SIGABRT),
			Stderr: stderrOf(t, "python-fatal.stderr"),
			Cell:   &Cell{ExecutionCount: 9, Code: cellFile(t, "python_fatal.py")},
		},
		"exit-3": {
			PID: 4242, Exit: ExitStatus{Code: 3},
			Stdout: []string{"epoch 1/3 done", "saving results..."},
			Cell:   &Cell{ExecutionCount: 6, Code: cellFile(t, "exit3.py")},
		},
		"signal-sigterm-idle": {
			PID: 4242, Exit: killed(syscall.SIGTERM),
		},
		// A kernel whose environment lacks ipykernel, under a Jupyter
		// server: the proxy tries again.
		"exit-at-start": {
			PID: 4242, Exit: ExitStatus{Code: 1},
			Stderr:     []string{"/opt/conda/envs/old/bin/python: No module named ipykernel_launcher"},
			Unanswered: true,
			Argv:       []string{"/opt/conda/envs/old/bin/python", "-m", "ipykernel_launcher", "-f", "{connection_file}"},
		},
		// The same under nbclient, with the restarts the client's.
		"exit-at-start-client": {
			PID: 4242, Exit: ExitStatus{Code: 3},
			Stderr:     []string{"starting", "my-kernel: cannot read /etc/my-kernel.conf"},
			Unanswered: true,
			Argv:       []string{"/usr/local/bin/my kernel", "{connection_file}"},
			Restart:    Restart{ByClient: true},
		},
		// A crash under nbclient: the proxy ends with the kernel.
		"segfault-client": {
			PID: 4242, Exit: killed(syscall.SIGSEGV),
			Cell:    &Cell{ExecutionCount: 5, Code: "out = fast_lib.transform(data)"},
			Restart: Restart{ByClient: true},
		},
		// Deno's V8 at the allocation ceiling, as recorded under a 1 GiB
		// cgroup: its heap could not grow, and it ended the process.
		"ceiling-deno": {
			PID: 19412, Exit: killed(syscall.SIGTRAP),
			Stderr: stderrOf(t, "deno-heap-ceiling.stderr"),
			Cell: &Cell{ExecutionCount: 7, Code: "var o = []; while (true) o.push({i: o.length, s: String(o.length)})",
				Start: 70 << 20, Peak: 990 << 20, Growth: 920 << 20},
			Memory:  Memory{Limit: gib, LimitSource: "cgroup v1 /jupyter/kernel-1", TreePeak: 990 << 20, TreeLast: 985 << 20},
			Kernel:  "Deno kernel 2.9.8",
			Ceiling: 998 << 20,
		},
	}
}

// TestGolden keeps the wording of every message under review: a change
// shows up as a diff of testdata/diagnosis/golden.
func TestGolden(t *testing.T) {
	for name, ev := range goldenCases(t) {
		t.Run(name, func(t *testing.T) {
			ev.KernelID = "5f2c8a1e-golden"
			d := Diagnose(ev)
			got := "Ename: " + Ename + "\nEvalue: " + d.Evalue + "\n\n" + strings.Join(d.Traceback, "\n") + "\n"
			path := filepath.Join(testdata, "golden", name+".txt")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("message for %s changed; run with -update and review the diff.\ngot:\n%s", name, got)
			}
		})
	}
}

// TestMessagesReadInATerminal checks what every message promises: it says
// it is from jupyter-guard, uses short plain lines, and ends with the restart.
func TestMessagesReadInATerminal(t *testing.T) {
	for name, ev := range goldenCases(t) {
		d := Diagnose(ev)
		first, end := "jupyter-guard: kernel died (", "were lost"
		if ev.Unanswered {
			first, end = "jupyter-guard: the kernel could not start (", "start"
		}
		if d.Traceback[0] != first+causeTitles[d.Cause]+")" {
			t.Errorf("%s: first line %q", name, d.Traceback[0])
		}
		if strings.Contains(d.Evalue, "\n") {
			t.Errorf("%s: Evalue is more than one line", name)
		}
		for _, l := range d.Traceback {
			if strings.ContainsRune(l, '\x1b') {
				t.Errorf("%s: escape sequence in %q", name, l)
			}
		}
		last := d.Traceback[len(d.Traceback)-1]
		if !strings.Contains(last, end) && !strings.Contains(strings.Join(d.Traceback[len(d.Traceback)-2:], " "), end) {
			t.Errorf("%s: does not end with the restart and lost variables: %q", name, last)
		}
	}
}
