package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jupyter-guard/jupyter-guard/control"
	"github.com/jupyter-guard/jupyter-guard/guard/units"
	"github.com/jupyter-guard/jupyter-guard/kernelspec"
	"github.com/jupyter-guard/jupyter-guard/supervisor"
)

func init() {
	register(command{name: "status", summary: "show every guarded kernel of this user", run: runStatus})
	register(command{name: "cells", summary: "show the per-cell memory ledger of one kernel", run: runCells})
	for _, a := range []string{"resume", "interrupt", "restart"} {
		register(command{name: a, summary: a + " a guarded kernel", run: actOn(a)})
	}
}

// kernel is one live proxy found through its control socket.
type kernel = control.Found

// findKernels finds every guarded kernel of this user (control.Find).
func findKernels(w io.Writer) (ks []kernel, skipped int, err error) {
	dir, err := kernelspec.RuntimeDir()
	if err != nil {
		return nil, 0, err
	}
	// What killed proxies left goes first: their kernels are gone.
	supervisor.SweepLeftovers(dir)
	return control.Find(dir, "", w)
}

// pickKernel finds the one kernel that ref names: a unique prefix of its
// id, or its notebook's name.
func pickKernel(ref string) (kernel, error) {
	ks, _, err := findKernels(os.Stderr)
	if err != nil {
		return kernel{}, err
	}
	var hits []kernel
	for _, k := range ks {
		nb := k.State.Notebook
		if strings.HasPrefix(k.State.KernelID, ref) || (nb != "" && (nb == ref || filepath.Base(nb) == ref)) {
			hits = append(hits, k)
		}
	}
	switch len(hits) {
	case 1:
		return hits[0], nil
	case 0:
		return kernel{}, fmt.Errorf("no guarded kernel matches %q (%d running; see guardctl status)", ref, len(ks))
	}
	var ids []string
	for _, k := range hits {
		ids = append(ids, control.ShortID(k.State.KernelID))
	}
	return kernel{}, fmt.Errorf("%q matches %d kernels (%s): give more of the id", ref, len(hits), strings.Join(ids, ", "))
}

func runStatus(args []string) error {
	cl := newCmdline("status", "", "Shows every guarded kernel of this user: its state, memory against its budget, GPU memory, last cell's growth and deaths.", 0, 0)
	asJSON := cl.Bool("json", false, "print the kernels as JSON (a stable shape for scripts)")
	watch := cl.Bool("watch", false, "refresh every 2 s until Ctrl-C")
	if _, err := cl.parse(args); err != nil {
		return err
	}
	if !*watch {
		return printStatus(os.Stdout, *asJSON)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt)
	for {
		fmt.Print("\033[H\033[2J") // home and clear, so the table refreshes in place
		if err := printStatus(os.Stdout, *asJSON); err != nil {
			return err
		}
		select {
		case <-stop:
			return nil
		case <-time.After(2 * time.Second):
		}
	}
}

func printStatus(w io.Writer, asJSON bool) error {
	ks, skipped, err := findKernels(os.Stderr)
	if err != nil {
		return err
	}
	if asJSON {
		states := make([]control.State, 0, len(ks))
		for _, k := range ks {
			states = append(states, k.State)
		}
		return printJSON(w, states)
	}
	if err := printKernels(w, ks, skipped); err != nil {
		return err
	}
	// A kernel the guard cannot see is missing from the table: say which
	// kernelspecs start theirs where it cannot follow.
	if search, err := kernelspec.FindAll(kernelspec.FindPython()); err == nil {
		printOwnProvisioners(w, search)
	}
	return nil
}

// printKernels is the table of guarded kernels, and what is unknown about
// them.
func printKernels(w io.Writer, ks []kernel, skipped int) error {
	switch {
	case len(ks) == 0 && skipped > 0:
		// A refused socket may well be a running kernel's: do not say none runs.
		fmt.Fprintf(w, "No guarded kernel could be read: %d control socket(s) skipped, see above.\n", skipped)
		return nil
	case len(ks) == 0:
		fmt.Fprintln(w, "No guarded kernel is running.")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KERNEL\tKERNELSPEC\tNOTEBOOK\tSTATE\tMEMORY\tBUDGET FROM\tGPU\tUPTIME\tLAST CELL\tDEATHS")
	var unknown []string
	for _, k := range ks {
		s := k.State
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n",
			control.ShortID(s.KernelID), orDash(shown(s.Kernelspec, 40)), orDash(shown(s.Notebook, 60)), stateCell(s), memoryCell(s.Memory),
			budgetCell(s.Memory), gpuCell(s), units.FormatDuration(time.Since(s.Started)), lastCellCell(s.LastCell), s.Deaths)
		if s.Memory.LimitUnseen != "" {
			unknown = append(unknown, fmt.Sprintf("Memory limit of %s: %s; its budget is the host's memory: set JUPYTER_GUARD_LIMIT to the real limit.",
				control.ShortID(s.KernelID), shown(s.Memory.LimitUnseen, 300)))
		}
		if s.GPUUnknown != "" {
			unknown = append(unknown, fmt.Sprintf("GPU of %s: %s.", control.ShortID(s.KernelID), shown(s.GPUUnknown, 300)))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, u := range unknown {
		fmt.Fprintln(w, u)
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// stateCell makes the states that need a person stand out.
func stateCell(s control.State) string {
	switch s.State {
	case "paused", "dead":
		return strings.ToUpper(s.State) + " !"
	}
	return s.State
}

// memoryCell is the kernel's own memory against its budget: "412 MiB / 600
// MiB (69%)", marked " !" near the budget when the budget counts it.
func memoryCell(m control.Memory) string {
	if m.Budget == 0 {
		return units.FormatBytes(m.Kernel)
	}
	cell := fmt.Sprintf("%s / %s (%.0f%%)", units.FormatBytes(m.Kernel), units.FormatBytes(m.Budget), m.KernelShare*100)
	switch {
	case m.Scope == control.ScopeKernel && m.Share >= 0.8:
		cell += " !"
	case m.LimitUnseen != "":
		cell += " ?" // the budget may be above the real limit: see the line below the table
	}
	return cell
}

// budgetCell says where the budget comes from and, when it counts the host
// or a cgroup shared with others rather than the kernel, what that scope
// uses: "host memory: 1.5 GiB used (6%)", marked " !" near the budget.
func budgetCell(m control.Memory) string {
	from := shown(m.LimitSource, 40)
	if m.LimitUnseen != "" {
		from = "host memory" // the reason is below the table
	}
	if m.Scope != control.ScopeHost && m.Scope != control.ScopeCgroup {
		return orDash(from)
	}
	cell := fmt.Sprintf("%s: %s used (%.0f%%)", from, units.FormatBytes(m.Used), m.Share*100)
	if m.Share >= 0.8 {
		cell += " !"
	}
	return cell
}

// gpuCell is what the kernel holds on the GPUs and where: "70 GiB on GPU
// 0"; "-" without a GPU, "unknown ?" where its share cannot be told.
func gpuCell(s control.State) string {
	switch {
	case len(s.GPU) == 0:
		return "-"
	case s.GPUUnknown != "":
		return "unknown ?"
	}
	var used uint64
	var on []string
	for _, g := range s.GPU {
		if g.Used > 0 {
			used += g.Used
			on = append(on, strconv.Itoa(g.Index))
		}
	}
	switch len(on) {
	case 0:
		return units.FormatBytes(0)
	case 1:
		return units.FormatBytes(used) + " on GPU " + on[0]
	}
	return units.FormatBytes(used) + " on GPUs " + strings.Join(on, ",")
}

func lastCellCell(c *control.Cell) string {
	if c == nil {
		return "-"
	}
	return fmt.Sprintf("[%d] %s", c.ExecutionCount, units.FormatSignedBytes(c.GrowthBytes))
}

func runCells(args []string) error {
	return showKernel(args, "cells", "Shows the per-cell memory ledger of one guarded kernel (KERNEL: a unique id prefix or the notebook's name); the cells that grew most are marked.",
		"print the ledger as JSON (the control API's cells, a stable shape for scripts)", (*control.Conn).Cells, printCells)
}

// showKernel runs a command that reads one kernel (KERNEL: a unique id
// prefix or the notebook's name) with read and prints what it read with
// text, or as JSON with --json.
func showKernel[T any](args []string, cmd, about, jsonHelp string, read func(*control.Conn) (T, error), text func(io.Writer, T) error) error {
	cl := newCmdline(cmd, "KERNEL", about, 1, 1)
	asJSON := cl.Bool("json", false, jsonHelp)
	pos, err := cl.parse(args)
	if err != nil {
		return err
	}
	k, err := pickKernel(pos[0])
	if err != nil {
		return err
	}
	v, err := read(k.Conn)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(os.Stdout, v)
	}
	return text(os.Stdout, v)
}

// printJSON prints v indented, as status --json does; an empty ledger is
// [], not null.
func printJSON(w io.Writer, v any) error {
	if cells, ok := v.([]control.Cell); ok && cells == nil {
		v = []control.Cell{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printCells prints a ledger, marking the cells that grew memory the most.
func printCells(w io.Writer, cells []control.Cell) error {
	if len(cells) == 0 {
		fmt.Fprintln(w, "No cell has run yet.")
		return nil
	}
	top := topGrowers(cells, 3)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CELL\tCODE\tTIME\tSTART\tPEAK\tEND\tGROWTH\tGPU PEAK\t")
	for i, c := range cells {
		dur := "running"
		if !c.End.IsZero() {
			dur = units.FormatDuration(c.End.Sub(c.Start))
		}
		gpu := "-"
		if c.GPUPeakBytes > 0 {
			gpu = units.FormatBytes(c.GPUPeakBytes)
		}
		mark := ""
		if top[i] {
			mark = "<- grew most"
		}
		fmt.Fprintf(tw, "[%d]\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.ExecutionCount, firstCodeLine(c.Code, 40), dur,
			units.FormatBytes(c.StartBytes), units.FormatBytes(c.PeakBytes), units.FormatBytes(c.EndBytes),
			units.FormatSignedBytes(c.GrowthBytes), gpu, mark)
	}
	return tw.Flush()
}

// topGrowers marks the n cells (by index) that added the most memory,
// leaving out growth too small to matter beside the biggest.
func topGrowers(cells []control.Cell, n int) map[int]bool {
	idx := make([]int, 0, len(cells))
	for i, c := range cells {
		if c.GrowthBytes >= 1<<20 {
			idx = append(idx, i)
		}
	}
	sort.Slice(idx, func(a, b int) bool { return cells[idx[a]].GrowthBytes > cells[idx[b]].GrowthBytes })
	top := map[int]bool{}
	for _, i := range idx[:min(n, len(idx))] {
		if cells[i].GrowthBytes*10 >= cells[idx[0]].GrowthBytes {
			top[i] = true
		}
	}
	return top
}

// actionAbout says what each action does, for its help.
var actionAbout = map[string]string{
	"resume":    "Lets a kernel the guard paused run on; the guard pauses it again further up.",
	"interrupt": "Interrupts the running cell, as the stop button does; a paused kernel is thawed to take it.",
	"restart":   "Restarts the kernel: its memory is given back and its variables are lost.",
}

func actOn(action string) func([]string) error {
	return func(args []string) error {
		cl := newCmdline(action, "KERNEL", actionAbout[action]+" KERNEL: a unique id prefix or the notebook's name.", 1, 1)
		asJSON := cl.Bool("json", false, "print the kernel's state afterwards as JSON (one entry of status --json)")
		pos, err := cl.parse(args)
		if err != nil {
			return err
		}
		k, err := pickKernel(pos[0])
		if err != nil {
			return err
		}
		st, err := k.Conn.Act(action)
		if err != nil {
			return fmt.Errorf("kernel %s: %w", control.ShortID(k.State.KernelID), err)
		}
		if *asJSON {
			return printJSON(os.Stdout, st)
		}
		fmt.Printf("kernel %s: %s\n", control.ShortID(st.KernelID), st.State)
		return nil
	}
}
