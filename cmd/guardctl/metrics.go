package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jupyter-guard/jupyter-guard/control"
	"github.com/jupyter-guard/jupyter-guard/guard/diagnosis"
)

func init() {
	register(command{name: "metrics", summary: "print every guarded kernel's figures for Prometheus (node_exporter's textfile collector)", run: runMetrics})
}

func runMetrics(args []string) error {
	cl := newCmdline("metrics", "", "Prints every guarded kernel of this user in Prometheus's text format, for node_exporter's textfile collector.", 0, 0)
	out := cl.String("o", "", "write to `FILE` (atomically: node_exporter never reads half of it) instead of stdout")
	cl.alias("o", "output")
	if _, err := cl.parse(args); err != nil {
		return err
	}
	ks, _, err := findKernels(os.Stderr)
	if err != nil {
		return err
	}
	states := make([]control.State, 0, len(ks))
	for _, k := range ks {
		states = append(states, k.State)
	}
	if *out == "" {
		return writeMetrics(os.Stdout, states)
	}
	return writeAtomically(*out, func(w io.Writer) error { return writeMetrics(w, states) })
}

// writeAtomically writes a file through a temporary one in its directory,
// renamed over it once complete: the textfile collector may read it at
// any moment.
func writeAtomically(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	if err := write(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	// CreateTemp makes it 0600; the collector may run as another user.
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// family is one metric in the Prometheus text exposition format (0.0.4):
// its HELP and TYPE lines, then every sample, together as the format
// requires.
type family struct {
	name, help, kind string
	samples          []sample
}

type sample struct {
	labels []label // after the kernel's own
	value  uint64
}

type label struct{ name, value string }

// writeMetrics prints the kernels' figures. Every family is printed, with
// its HELP and TYPE, even with no kernel: a scrape then tells "none run"
// from "not collected".
func writeMetrics(w io.Writer, states []control.State) error {
	used := &family{name: "jupyter_guard_memory_used_bytes", kind: "gauge",
		help: "Memory of the kernel's own processes: the RSS of its process tree (source=tree_rss), or the working set of its cgroup where that holds the kernel alone (source=cgroup). One series per kernel, so sums across kernels are right."}
	budget := &family{name: "jupyter_guard_memory_budget_bytes", kind: "gauge",
		help: "The kernel's memory budget, from JUPYTER_GUARD_LIMIT, MEM_LIMIT, a cgroup's limit or the host's memory (from): the guard pauses (or interrupts) the cell before it."}
	budgetUsed := &family{name: "jupyter_guard_memory_budget_used_bytes", kind: "gauge",
		help: "What the kernel's budget counts: the kernel's own memory (scope=kernel), or the working set of a cgroup it shares with other processes (scope=cgroup), or the host's used memory (scope=host). A shared scope's figure repeats for every kernel in it: do not sum it across kernels."}
	gpu := &family{name: "jupyter_guard_gpu_memory_used_bytes", kind: "gauge",
		help: "GPU memory the kernel's processes hold, by device; absent where it cannot be known."}
	state := &family{name: "jupyter_guard_state", kind: "gauge",
		help: "1 for the state the kernel is in, 0 for the others (" + strings.Join(control.States, ", ") + ")."}
	warnings := &family{name: "jupyter_guard_warnings_total", kind: "counter",
		help: "Memory warnings the guard wrote into the kernel's cells."}
	pauses := &family{name: "jupyter_guard_pauses_total", kind: "counter",
		help: "Times the guard paused the kernel before it ran out of memory."}
	interrupts := &family{name: "jupyter_guard_interrupts_total", kind: "counter",
		help: "Cells the guard interrupted before the kernel ran out of memory (JUPYTER_GUARD_ACTION=interrupt)."}
	deaths := &family{name: "jupyter_guard_deaths_total", kind: "counter",
		help: "Deaths of the kernel, by the cause the guard diagnosed."}
	for _, st := range states {
		kernel := []label{{"kernel_id", st.KernelID}, {"kernelspec", st.Kernelspec}, {"notebook", st.Notebook}}
		add := func(f *family, value uint64, extra ...label) {
			f.samples = append(f.samples, sample{labels: append(kernel[:len(kernel):len(kernel)], extra...), value: value})
		}
		if m := st.Memory; !m.MeasuredAt.IsZero() { // no kernel measured (it is restarting): no figure rather than 0
			add(used, m.Kernel, label{"source", m.KernelSource})
			add(budgetUsed, m.Used, label{"scope", m.Scope})
		}
		add(budget, st.Memory.Budget, label{"from", st.Memory.BudgetFrom})
		if st.GPUUnknown == "" {
			for _, g := range st.GPU {
				add(gpu, g.Used, label{"gpu", strconv.Itoa(g.Index)})
			}
		}
		for _, s := range control.States {
			add(state, boolValue(s == st.State), label{"state", s})
		}
		add(warnings, uint64(st.Actions["warn"]+st.Actions["alert"]))
		add(pauses, uint64(st.Actions["pause"]))
		add(interrupts, uint64(st.Actions["interrupt"]))
		// Every cause from 0, so that a rate over the first death sees it.
		for _, c := range diagnosis.Causes {
			add(deaths, uint64(st.DeathCauses[string(c)]), label{"cause", string(c)})
		}
	}
	bw := bufio.NewWriter(w)
	for _, f := range []*family{used, budget, budgetUsed, gpu, state, warnings, pauses, interrupts, deaths} {
		f.write(bw)
	}
	return bw.Flush()
}

func boolValue(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func (f *family) write(w *bufio.Writer) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", f.name, escapeHelp(f.help), f.name, f.kind)
	for _, s := range f.samples {
		w.WriteString(f.name)
		for i, l := range s.labels {
			sep := ","
			if i == 0 {
				sep = "{"
			}
			fmt.Fprintf(w, `%s%s="%s"`, sep, l.name, escapeLabel(l.value))
		}
		if len(s.labels) > 0 {
			w.WriteByte('}')
		}
		fmt.Fprintf(w, " %d\n", s.value)
	}
}

// The text format escapes a backslash and a line feed in HELP text, and
// also a double quote in label values; label values are any UTF-8.
var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

func escapeHelp(s string) string { return helpEscaper.Replace(s) }

// escapeLabel also replaces what is not valid UTF-8 (a notebook's path is
// any bytes), which a scraper would reject along with the whole file.
func escapeLabel(s string) string { return labelEscaper.Replace(strings.ToValidUTF8(s, "\uFFFD")) }
