package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jupyter-guard/jupyter-guard/client"
	"github.com/jupyter-guard/jupyter-guard/client/nbexec"
	"github.com/jupyter-guard/jupyter-guard/control"
	"github.com/jupyter-guard/jupyter-guard/guard/config"
	"github.com/jupyter-guard/jupyter-guard/guard/units"
	"github.com/jupyter-guard/jupyter-guard/kernelspec"
	"github.com/jupyter-guard/jupyter-guard/notebook"
)

func init() {
	register(command{
		name:    "run",
		summary: "execute a notebook headlessly through the guard, as jupyter nbconvert --execute does",
		run:     runNotebook,
	})
}

// Exit statuses of guardctl run besides 0 and 1.
const (
	exitRunUsage       = 2
	exitRunInterrupted = 130 // as a shell reports a command ended by Ctrl-C
)

// runOptions are guardctl run's command line.
type runOptions struct {
	notebook    string
	kernel      string
	limit       string
	action      string
	output      string
	timeout     time.Duration
	allowErrors bool
}

func parseRunArgs(args []string) (runOptions, error) {
	var o runOptions
	cl := newCmdline("run", "NOTEBOOK.ipynb", "Executes a notebook headlessly under the guard, as jupyter nbconvert --execute does, prints each cell's memory and writes the executed notebook. Exit status: 0 when every cell ran, 1 when a cell raised, the kernel died or a cell reached the line where the guard acts (stopped there or not), 2 for a mistake on the command line, 130 when interrupted.", 1, 1)
	cl.StringVar(&o.kernel, "kernel", "", "kernelspec `NAME` (default: the notebook's own); NAME-guarded is used when installed, else NAME is guarded on the fly")
	cl.StringVar(&o.limit, "limit", "", "the kernel's memory budget: a `SIZE` (4GiB) or a share of the detected limit (80%); sets JUPYTER_GUARD_LIMIT")
	cl.StringVar(&o.action, "action", "", "what the guard does near the limit: `ACTION`, one of pause, interrupt or warn; sets JUPYTER_GUARD_ACTION (by default nobody is there to answer a pause, so none is made: the allocation ceiling stops the cell with MemoryError, or, with JUPYTER_GUARD_CEILING=off, an interrupt)")
	cl.StringVar(&o.output, "o", "", "write the executed notebook to `OUT.ipynb` (default: NOTEBOOK.out.ipynb)")
	cl.alias("o", "output")
	cl.DurationVar(&o.timeout, "timeout", 10*time.Minute, "the longest one cell may run; 0 for no limit")
	cl.BoolVar(&o.allowErrors, "allow-errors", false, "keep running after a cell raises")
	pos, err := cl.parse(args)
	if err != nil {
		return o, err
	}
	o.notebook = pos[0]
	if o.output == "" {
		o.output = defaultOutput(o.notebook)
	}
	if err := o.check(); err != nil {
		return o, cl.fail("%v", err)
	}
	return o, nil
}

// check refuses what would fail later, so a typo fails before a kernel
// starts and before any cell has run.
func (o runOptions) check() error {
	if o.limit != "" {
		if _, err := config.ParseSpec(o.limit); err != nil {
			return fmt.Errorf("--limit %s: %w", o.limit, err)
		}
	}
	if o.action != "" {
		if _, err := config.ParseAction(o.action); err != nil {
			return fmt.Errorf("--action %s: %w", o.action, err)
		}
	}
	return writable(o.output)
}

// writable says whether a file can be written at path: its directory
// exists and takes new files, and path is not a directory.
func writable(path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("output %s is a directory", path)
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("output %s: %w", path, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("output %s: %s is not a directory", path, dir)
	}
	if err := unix.Access(dir, unix.W_OK); err != nil {
		return fmt.Errorf("output %s: cannot write in %s: %w", path, dir, err)
	}
	return nil
}

// defaultOutput is where the executed notebook goes without -o: next to
// the input, NAME.ipynb becoming NAME.out.ipynb.
func defaultOutput(input string) string {
	return strings.TrimSuffix(input, ".ipynb") + ".out.ipynb"
}

// guardEnv passes --limit and --action to the guard in the kernel's
// environment, where guardctl kernel reads its settings, and tells it the
// run is headless: nobody can resume a paused kernel, so none is paused;
// the ceiling (or, with it off, an interrupt) stops a cell that outgrows
// its budget, and the run fails there with the notice instead of hanging
// until its timeout.
func guardEnv(o runOptions, getenv func(string) string) []string {
	var env []string
	if getenv("JUPYTER_GUARD_HEADLESS") == "" {
		env = append(env, "JUPYTER_GUARD_HEADLESS=on")
	}
	if o.limit != "" {
		env = append(env, "JUPYTER_GUARD_LIMIT="+o.limit)
	}
	if o.action != "" {
		env = append(env, "JUPYTER_GUARD_ACTION="+o.action)
	}
	// guardctl run reads the guard's KernelDied itself: the proxy restarts
	// a dead kernel in place, as under a Jupyter server.
	if getenv("JUPYTER_GUARD_RESTART") == "" {
		env = append(env, "JUPYTER_GUARD_RESTART=guard")
	}
	return env
}

// guardedSpec is the kernelspec that runs the kernel called name under the
// guard: its installed guarded form, or (none installed) one made on the
// fly that starts this guardctl with the original argv. A name that is
// itself a guarded spec is used as it is.
func guardedSpec(py kernelspec.Python, name string) (*kernelspec.KernelSpec, error) {
	search, err := findSpecs(py)
	if err != nil {
		return nil, err
	}
	if g := search.GuardOf(name); g != nil {
		return g, nil
	}
	spec, err := search.Get(name)
	if err != nil {
		return nil, err
	}
	if spec.Wraps() != "" {
		return spec, nil
	}
	self, err := selfPath()
	if err != nil {
		return nil, err
	}
	g, err := kernelspec.Wrap(spec, self)
	if err != nil {
		return nil, err
	}
	g.Dir = spec.Dir // not installed: {resource_dir} is the original's
	return g, nil
}

func runNotebook(args []string) error {
	o, err := parseRunArgs(args)
	if err != nil {
		return err
	}
	nb, err := notebook.Read(o.notebook)
	if err != nil {
		return err
	}
	name := o.kernel
	if name == "" {
		if name = nb.KernelName(); name == "" {
			return fmt.Errorf("%s names no kernel (metadata.kernelspec.name); choose one with --kernel NAME", o.notebook)
		}
	}
	py := kernelspec.FindPython()
	spec, err := guardedSpec(py, name)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(o.notebook)
	if err != nil {
		return err
	}
	output := o.output

	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	ex := &nbexec.Executor{Notebook: nb, Timeout: o.timeout, AllowErrors: o.allowErrors}
	stop := watchInterrupts(cancel, ex)
	defer stop.close()

	fmt.Fprintf(os.Stderr, "guardctl run: starting %s for %s\n", spec.Name, o.notebook)
	k, err := client.Launch(ctx, spec, client.LaunchOptions{
		// Cells open files relative to the notebook, as under nbconvert.
		Dir:    filepath.Dir(abs),
		Env:    guardEnv(o, os.Getenv),
		Prefix: py.Prefix,
		// The kernel's own output (and the guard's log) goes where
		// progress does; stdout keeps only the summary table.
		Stdout: os.Stderr,
		Stderr: os.Stderr,
	})
	if err != nil {
		if stop.interrupted() {
			fmt.Fprintln(os.Stderr, "guardctl run: interrupted while the kernel was starting")
			return exitCode(exitRunInterrupted)
		}
		return err
	}
	defer func() {
		if err := k.Shutdown(context.Background()); err != nil {
			fmt.Fprintf(os.Stderr, "guardctl run: %v\n", err)
		}
	}()
	ex.Client = k.Client
	stop.running(k)

	progress := &runProgress{w: os.Stderr, total: len(nb.Cells), ledger: openLedger(k), stop: ex.Stop}
	if o.allowErrors {
		progress.stop = nil // every cell runs; the exit status still says it
	}
	progress.ledger.announce(os.Stderr)
	ex.OnDone = progress.done
	_, runErr := ex.Run(ctx) // progress keeps each cell's result, with its memory

	writeErr := nb.Write(output)
	printTable(os.Stdout, progress.rows)
	status := explainRun(runErr, stop.interrupted(), o.notebook, nb, progress.pastPause)
	switch {
	case writeErr != nil:
		fmt.Fprintf(os.Stderr, "guardctl run: %v\n", writeErr)
		return exitCode(1)
	case status == nil:
		fmt.Fprintf(os.Stderr, "guardctl run: wrote %s\n", output)
	default:
		fmt.Fprintf(os.Stderr, "guardctl run: wrote the notebook so far to %s\n", output)
	}
	return status
}

// explainRun tells the user why the run stopped, if it did, and picks the
// exit status. pastPause is the cell that reached the line where the guard
// acts, if one did: the run stopped after it and fails, whether the guard
// stopped the cell in time (it raised) or not (it ended as if nothing had
// happened, or went on under JUPYTER_GUARD_ACTION=warn), so that the exit
// status does not depend on timing.
func explainRun(err error, interrupted bool, input string, nb *notebook.Notebook, pastPause *runRow) error {
	var cellErr *nbexec.CellError
	var died *nbexec.KernelDiedError
	var timeout *nbexec.TimeoutError
	switch {
	case interrupted:
		fmt.Fprintln(os.Stderr, "guardctl run: interrupted")
		return exitCode(exitRunInterrupted)
	case err == nil && pastPause == nil:
		return nil
	case errors.As(err, &died):
		fmt.Fprintf(os.Stderr, "guardctl run: the kernel died in %s of %s:\n%s\n", died.Place, input, plainTraceback(died.Diagnosis()))
	case errors.As(err, &cellErr):
		fmt.Fprintf(os.Stderr, "guardctl run: %s of %s raised %s: %s\n%s\n",
			cellErr.Place, input, cellErr.Ename, cellErr.Evalue, plainTraceback(strings.Join(cellErr.Traceback, "\n")))
		printNotices(os.Stderr, nb.Cells[cellErr.Index])
	case pastPause != nil:
		fmt.Fprintf(os.Stderr, "guardctl run: %s of %s reached the line where the guard acts:\n", pastPause.Place, input)
		printNotices(os.Stderr, pastPause.Cell)
	case errors.As(err, &timeout):
		fmt.Fprintf(os.Stderr, "guardctl run: %s of %s did not finish within %s (see --timeout)\n", timeout.Place, input, timeout.Timeout)
	default:
		fmt.Fprintf(os.Stderr, "guardctl run: %v\n", err)
	}
	return exitCode(1)
}

// ansiEscape matches the colour codes of IPython tracebacks.
var ansiEscape = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")

// plainTraceback drops colour codes unless stderr is a terminal that shows them.
func plainTraceback(s string) string {
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		return s
	}
	return ansiEscape.ReplaceAllString(s, "")
}

// runInterrupts turns Ctrl-C into what Jupyter's stop button does. The first
// interrupts the kernel and ends the run once the running cell returns;
// the second, SIGTERM, or a Ctrl-C while the kernel is still starting
// stops at once.
type runInterrupts struct {
	signals chan os.Signal
	cancel  context.CancelCauseFunc
	ex      *nbexec.Executor

	mu     sync.Mutex
	kernel *client.Kernel // nil until it runs
	count  int
}

// errInterrupted is the cause of a run stopped by the user.
var errInterrupted = errors.New("interrupted")

func watchInterrupts(cancel context.CancelCauseFunc, ex *nbexec.Executor) *runInterrupts {
	s := &runInterrupts{signals: make(chan os.Signal, 2), cancel: cancel, ex: ex}
	signal.Notify(s.signals, os.Interrupt, syscall.SIGTERM)
	go s.watch()
	return s
}

func (s *runInterrupts) watch() {
	for sig := range s.signals {
		s.mu.Lock()
		s.count++
		k, first := s.kernel, s.count == 1
		s.mu.Unlock()
		if sig == syscall.SIGTERM || !first || k == nil {
			fmt.Fprintln(os.Stderr, "\nguardctl run: stopping")
			s.cancel(errInterrupted)
			continue
		}
		fmt.Fprintln(os.Stderr, "\nguardctl run: interrupting the kernel; the run ends after this cell (Ctrl-C again to stop now)")
		s.ex.Stop()
		go func() {
			if err := k.Interrupt(context.Background()); err != nil {
				fmt.Fprintf(os.Stderr, "guardctl run: %v\n", err)
			}
		}()
	}
}

// running says the kernel is up: from now on Ctrl-C interrupts it.
func (s *runInterrupts) running(k *client.Kernel) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.kernel = k
}

func (s *runInterrupts) interrupted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count > 0
}

// close gives Ctrl-C back to the default: end the program.
func (s *runInterrupts) close() {
	signal.Stop(s.signals)
	close(s.signals)
}

// ledger reads the guard's per-cell ledger of the kernel through its
// control socket: each cell's peak and growth while it ran.
type ledger struct{ conn *control.Conn }

// openLedger finds the control socket of the kernel k; nil if it cannot
// be reached (the table then has no memory columns).
func openLedger(k *client.Kernel) *ledger {
	dir, err := kernelspec.RuntimeDir()
	if err != nil {
		return nil
	}
	c, err := control.Open(control.SocketPath(dir, control.KernelID(k.ConnFile)))
	if err != nil {
		return nil
	}
	return &ledger{c}
}

// announce says what budget the guard holds the kernel to, and where it
// comes from (the proxy says it only in its debug log).
func (l *ledger) announce(w io.Writer) {
	if l == nil {
		return
	}
	st, err := l.conn.State()
	if err != nil {
		return
	}
	m := st.Memory
	fmt.Fprintf(w, "guardctl run: budget %s from %s: warn at %s, %s, measured on %s\n",
		units.FormatBytes(m.Budget), m.LimitSource, units.FormatBytes(m.Warn), stops(m), measuredOn(m))
}

// stops says where the guard stops a cell: nobody is there to answer a
// pause, so none is made; the ceiling refuses what does not fit, or, with
// it off, the cell is interrupted at the pause line.
func stops(m control.Memory) string {
	if m.Action == "none" {
		return fmt.Sprintf("allocations fail past %s (the ceiling; no pause, nobody is there to answer it)", units.FormatBytes(m.Ceiling))
	}
	s := fmt.Sprintf("%s at %s", m.Action, units.FormatBytes(m.Pause))
	if m.Ceiling > 0 {
		s += fmt.Sprintf(", allocations fail past %s (the ceiling)", units.FormatBytes(m.Ceiling))
	}
	return s
}

// measuredOn is the figure the budget counts, as the guard's log names it.
func measuredOn(m control.Memory) string {
	if m.Scope == control.ScopeKernel {
		return m.KernelSource
	}
	return m.Scope
}

// cell is the ledger's entry for the cell of r, by its execution count.
func (l *ledger) cell(r nbexec.Result) (control.Cell, bool) {
	if l == nil || r.Cell.ExecutionCount == nil {
		return control.Cell{}, false
	}
	cells, err := l.conn.Cells()
	if err != nil {
		return control.Cell{}, false
	}
	for i := len(cells) - 1; i >= 0; i-- {
		if cells[i].ExecutionCount == *r.Cell.ExecutionCount {
			return cells[i], true
		}
	}
	return control.Cell{}, false
}

// runProgress writes one line per cell as it finishes, and keeps the
// ledger's entry of each for the table at the end.
type runProgress struct {
	w      io.Writer
	total  int
	ledger *ledger
	rows   []runRow
	// stop ends the run after pastPause, the first cell the guard said
	// reached the line where it acts; nil with --allow-errors.
	stop      func()
	pastPause *runRow
}

// runRow is one cell that ran, with its memory if the ledger had it.
type runRow struct {
	nbexec.Result
	mem   control.Cell
	known bool
}

func (p *runProgress) done(r nbexec.Result) {
	row := runRow{Result: r}
	row.mem, row.known = p.ledger.cell(r)
	p.rows = append(p.rows, row)
	if p.pastPause == nil && pastPause(r.Cell) {
		p.pastPause = &row
		if p.stop != nil {
			p.stop()
		}
	}
	line := fmt.Sprintf("cell %d/%d  %s  %-7s %8s", r.Index+1, p.total, cellCount(r), cellStatus(r), units.FormatDuration(r.Duration))
	if row.known {
		mem := fmt.Sprintf("peak %s, %s", units.FormatBytes(row.mem.PeakBytes), units.FormatSignedBytes(row.mem.GrowthBytes))
		line += fmt.Sprintf("  %-24s", mem) // padded so the code lines up
	}
	fmt.Fprintf(p.w, "%s  %s\n", line, firstCodeLine(r.Cell.Source, 50))
}

// printTable summarises the cells that ran, the ones that grew memory the
// most on top.
func printTable(w io.Writer, rows []runRow) {
	if len(rows) == 0 {
		return
	}
	rows = slices.Clone(rows)
	slices.SortStableFunc(rows, func(a, b runRow) int { return cmp.Compare(b.mem.GrowthBytes, a.mem.GrowthBytes) })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CELL\tEXEC\tSTATUS\tTIME\tPEAK\tGROWTH\tCODE")
	for _, r := range rows {
		peak, growth := "-", "-"
		if r.known {
			peak, growth = units.FormatBytes(r.mem.PeakBytes), units.FormatSignedBytes(r.mem.GrowthBytes)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Index+1, cellCount(r.Result), cellStatus(r.Result),
			units.FormatDuration(r.Duration), peak, growth, firstCodeLine(r.Cell.Source, 60))
	}
	_ = tw.Flush() // stdout gone: nothing left to tell
}

// cellCount is the cell's execution count as Jupyter shows it: [3], [ ].
func cellCount(r nbexec.Result) string {
	if r.Cell.ExecutionCount == nil {
		return "[ ]"
	}
	return fmt.Sprintf("[%d]", *r.Cell.ExecutionCount)
}

// cellStatus is how the cell ended: ok, error, aborted, died or unfinished.
func cellStatus(r nbexec.Result) string {
	switch {
	case r.Reply == nil:
		return "unfinished"
	case r.Reply.Ename == nbexec.KernelDied:
		return "died"
	}
	return r.Reply.Status
}

// firstCodeLine is the first non-blank line of code, cut to width runes.
func firstCodeLine(src string, width int) string {
	for line := range strings.Lines(src) {
		if line = strings.TrimSpace(line); line != "" {
			return shown(line, width)
		}
	}
	return ""
}
