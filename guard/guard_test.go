package guard_test

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-guard/jupyter-guard/guard"
	"github.com/jupyter-guard/jupyter-guard/guard/cgroup/cgrouptest"
	"github.com/jupyter-guard/jupyter-guard/guard/config"
	"github.com/jupyter-guard/jupyter-guard/guard/ledger"
	"github.com/jupyter-guard/jupyter-guard/guard/sampler/growtest"
)

const mib = 1 << 20

// budget is an absolute budget on the tree's RSS, far below the machine's.
var budget = map[string]string{"JUPYTER_GUARD_LIMIT": "400MiB"}

func with(env map[string]string, key, value string) map[string]string {
	out := map[string]string{key: value}
	for k, v := range env {
		out[k] = v
	}
	return out
}

func actions(c ledger.Cell) string {
	var kinds []string
	for _, a := range c.Actions {
		kinds = append(kinds, a.Kind)
	}
	return strings.Join(kinds, ",")
}

func TestBadConfigIsRefusedClearly(t *testing.T) {
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"JUPYTER_GUARD_LIMIT": "64TiB"}[k]
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = guard.New(cfg, &growtest.Frontend{}, nil)
	if err == nil || !strings.Contains(err.Error(), "JUPYTER_GUARD_LIMIT=64TiB") {
		t.Errorf("New = %v, want an error quoting JUPYTER_GUARD_LIMIT=64TiB", err)
	}
}

// TestWarnPauseInterrupt is the main story on an absolute budget of 400
// MiB on the tree's RSS: a cell growing step by step is warned, then paused
// with all its processes stopped; the ■ button thaws and interrupts it, and
// what an earlier cell left is still there.
func TestWarnPauseInterrupt(t *testing.T) {
	for _, tt := range []struct {
		name, grow string
		workers    bool
	}{
		{"in the kernel", "grow 4 10 2000", false},
		{"in a multiprocessing child", "worker 4 10 2000", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := growtest.Guarded(t, budget, nil, nil)
			f.Cell(t, "earlier", "grow 16 0 16")
			f.Finish(t, "earlier", "done")
			waitRoom(t, f, true) // the sockets may hold the CPU

			f.Cell(t, "big", tt.grow)
			var worker int
			if tt.workers {
				worker = f.P.Pids(t, "worker")[0]
			}
			f.Next(t, "big", "jupyter-guard: memory warning.")
			f.Next(t, "big", "jupyter-guard paused the kernel")
			if !f.G.Paused() {
				t.Error("not Paused after the pause notice")
			}
			waitRoom(t, f, false)
			tree := f.Frozen(t)
			if tt.workers && !slices.Contains(tree, worker) {
				t.Errorf("worker %d is not in the paused tree %v", worker, tree)
			}
			c, _ := f.G.Running()
			if c.MsgID != "big" || c.Peak.Tree < 320*mib || c.Growth <= 0 { // never paused before the warning line
				t.Errorf("running cell %s: peak %d MiB, growth %d MiB", c.MsgID, c.Peak.Tree/mib, c.Growth/mib)
			}

			f.Button()
			f.Finish(t, "big", "interrupted")
			if f.G.Paused() {
				t.Error("still Paused after the interrupt")
			}
			f.Cell(t, "after", "ping")
			if held := f.Finish(t, "after", "pong"); tt.workers && held[0] != "16" {
				t.Errorf("the kernel holds %s MiB after the interrupt, want the earlier cell's 16", held[0])
			}
			big, _ := f.Ledger("big")
			if got := actions(big); got != "warn,pause,thaw" {
				t.Errorf("actions in the cell: %s", got)
			}
			if big.Code != tt.grow || big.State != ledger.Done || big.ExecutionCount != 2 {
				t.Errorf("ledger: %+v", big)
			}
			if f.Interrupts.Load() != 0 {
				t.Error("the guard interrupted by itself with action=pause")
			}
			if acts, want := f.G.Actions(), map[string]int{"warn": 1, "pause": 1, "thaw": 1}; !maps.Equal(acts, want) {
				t.Errorf("Actions = %v, want %v", acts, want)
			}
		})
	}
}

// Between cells the sampler sleeps: Fresh measures anew what grew since,
// and reuses a measurement young enough.
func TestFreshMeasuresBetweenCells(t *testing.T) {
	f := growtest.Guarded(t, budget, nil, nil)
	f.Cell(t, "first", "ping")
	f.Finish(t, "first", "pong")
	before, _, _ := f.G.Memory()
	f.P.Send(t, "grow 64 0 64") // outside any cell: no sample is taken
	f.P.Expect(t, "done")
	if now, _, _ := f.G.Memory(); now.Tree != before.Tree {
		t.Fatalf("the guard measured outside a cell: %d MiB, then %d MiB", before.Tree/mib, now.Tree/mib)
	}
	if m, _, ok := f.G.Fresh(time.Hour, time.Second); !ok || m.Tree != before.Tree {
		t.Errorf("Fresh with an hour's age allowed = %d MiB (%v), want the last measurement, %d MiB", m.Tree/mib, ok, before.Tree/mib)
	}
	m, pids, ok := f.G.Fresh(0, 5*time.Second)
	if !ok || m.Tree < before.Tree+60*mib {
		t.Errorf("Fresh = %d MiB (%v), want at least %d MiB", m.Tree/mib, ok, before.Tree/mib+60)
	}
	if len(pids) == 0 || pids[0] != f.P.Pid {
		t.Errorf("Fresh's processes are %v, want the kernel %d first", pids, f.P.Pid)
	}
}

// A cell whose last measurement is recent is told finished at once, its end
// measured after: Fresh right after its idle waits for that measurement,
// however young the one before.
func TestFreshAfterACellWaitsForItsEnd(t *testing.T) {
	f := growtest.Guarded(t, budget, nil, nil)
	for i := range 5 { // the end measurement is a race Fresh must never lose
		id := fmt.Sprint("cell", i)
		before, _, _ := f.G.Memory()
		f.Cell(t, id, fmt.Sprintf("grow 32 0 %d", 32*(i+1))) // up to what all cells hold
		f.P.Expect(t, "done")
		<-f.G.CellFinished(id)
		if m, _, ok := f.G.Fresh(time.Hour, 5*time.Second); !ok || m.Tree < before.Tree+30*mib {
			t.Fatalf("Fresh right after cell %d = %d MiB, want at least %d MiB", i, m.Tree/mib, before.Tree/mib+30)
		}
	}
}

func TestResumeContinuesToTheNextLine(t *testing.T) {
	f := growtest.Guarded(t, with(budget, "JUPYTER_GUARD_CEILING", "off"), nil, nil)
	f.Cell(t, "big", "grow 4 20 2000")
	f.Next(t, "big", "memory warning")
	f.Next(t, "big", "guardctl resume: continue anyway; jupyter-guard pauses it again at ")
	f.Frozen(t)
	if err := f.G.Resume(); err != nil {
		t.Fatal(err)
	}
	f.Next(t, "big", "jupyter-guard: the kernel was resumed (guardctl resume)")
	f.Next(t, "big", "jupyter-guard paused the kernel again")
	f.Frozen(t)
	f.Button()
	f.Finish(t, "big", "interrupted")
	if err := f.G.Resume(); err == nil {
		t.Error("Resume of a kernel that is not paused did not fail")
	}
	big, _ := f.Ledger("big")
	if got := actions(big); got != "warn,pause,resume,pause,thaw" {
		t.Errorf("actions in the cell: %s", got)
	}
}

// TestResumeRunsOnToTheCeiling: with the ceiling armed, a resumed cell
// runs on to it, where an allocation fails, and is not paused again; so
// does a pause nobody answers, once its timeout is up.
func TestResumeRunsOnToTheCeiling(t *testing.T) {
	for _, tt := range []struct {
		name, resumed, kind string
		env                 map[string]string
	}{
		{"guardctl resume", "jupyter-guard: the kernel was resumed (guardctl resume)", "resume", budget},
		{"nobody answers", "jupyter-guard resumed the kernel: nobody answered the pause within 1.0 s.", "unanswered",
			with(budget, "JUPYTER_GUARD_PAUSE_TIMEOUT", "1")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := growtest.Guarded(t, tt.env, nil, nil)
			f.Cell(t, "big", "grow 4 20 2000")
			f.Next(t, "big", "memory warning")
			f.Next(t, "big", "guardctl resume: continue; past 390 MiB an allocation fails with a memory error")
			f.Frozen(t)
			if tt.kind == "resume" {
				if err := f.G.Resume(); err != nil {
					t.Fatal(err)
				}
			}
			f.Next(t, "big", tt.resumed)
			if words := f.End(t, "big"); words[0] != "memory" {
				t.Fatalf("the resumed cell ended %v, want a memory error at the ceiling", words)
			}
			big, _ := f.Ledger("big")
			if got := actions(big); got != "warn,pause,"+tt.kind {
				t.Errorf("actions in the cell: %s", got)
			}
		})
	}
}

func TestInterruptAction(t *testing.T) {
	f := growtest.Guarded(t, with(budget, "JUPYTER_GUARD_ACTION", "interrupt"), nil, nil)
	f.Cell(t, "big", "grow 8 20 2000")
	f.Next(t, "big", "memory warning")
	f.Next(t, "big", "jupyter-guard interrupted this cell")
	f.Finish(t, "big", "interrupted")
	if f.G.Paused() || f.Interrupts.Load() != 1 {
		t.Errorf("paused %v, %d interrupts; want one interrupt and the kernel running", f.G.Paused(), f.Interrupts.Load())
	}
	big, _ := f.Ledger("big")
	if got := actions(big); got != "warn,interrupt,thaw" {
		t.Errorf("actions in the cell: %s", got)
	}
}

func TestWarnAction(t *testing.T) {
	f := growtest.Guarded(t, with(with(budget, "JUPYTER_GUARD_ACTION", "warn"), "JUPYTER_GUARD_CEILING", "off"), nil, nil)
	// Well past the pause line (380 MiB): the budget is the guard's alone,
	// and action=warn lets the cell grow, with no ceiling to stop it.
	f.Cell(t, "big", "grow 8 20 500")
	f.Next(t, "big", "jupyter-guard: memory warning.")
	f.Next(t, "big", "jupyter-guard: memory critical")
	f.Finish(t, "big", "done")
	if f.G.Paused() || f.Interrupts.Load() != 0 {
		t.Error("action=warn paused or interrupted")
	}
}

// TestTheCeilingStopsWhatNothingElseDoes: under action=warn, and where
// nobody can answer a pause, the cell that grows past the budget ends with
// a refused allocation (MemoryError) below the limit, and the process
// lives on with what it held.
func TestTheCeilingStopsWhatNothingElseDoes(t *testing.T) {
	for _, tt := range []struct {
		name       string
		env        map[string]string
		unattended bool
	}{
		{"action warn", with(budget, "JUPYTER_GUARD_ACTION", "warn"), false},
		{"nobody to answer a pause", budget, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := growtest.Guarded(t, tt.env, nil, nil)
			f.G.SetUnattended(tt.unattended)
			f.Cell(t, "big", "grow 8 20 500")
			f.Next(t, "big", "memory warning")
			words := f.End(t, "big")
			if held, err := strconv.Atoi(words[len(words)-1]); words[0] != "memory" || err != nil || held < 300 || held >= 400 {
				t.Fatalf("the cell ended %v; want a memory error holding 300-399 MiB", words)
			}
			if f.G.Paused() || f.Interrupts.Load() != 0 {
				t.Error("paused or interrupted: only the ceiling was to stop the cell")
			}
			big, _ := f.Ledger("big")
			if big.Peak.Tree >= 400*mib {
				t.Errorf("peak %d MiB: past the 400 MiB budget", big.Peak.Tree/mib)
			}
			f.Cell(t, "after", "grow 64 0 500")
			if words := f.End(t, "after"); words[0] != "memory" {
				t.Errorf("64 MiB more ended %v: what the kernel holds leaves no room for it", words)
			}
			f.Cell(t, "ping", "ping")
			f.Finish(t, "ping", "pong")
		})
	}
}

// TestACellSeenOnlyAtItsEndIsWarnedBeforeItsIdle: a C call that holds the
// GIL (b'x' * 700 MiB) keeps ipykernel from sending busy until the cell's
// work is done, so the guard hears of the cell only as it ends. Its
// warning must still be posted before what CellFinished returns is closed:
// the proxy forwards the idle then, and a notice after the idle never
// shows.
func TestACellSeenOnlyAtItsEndIsWarnedBeforeItsIdle(t *testing.T) {
	f := growtest.Guarded(t, budget, nil, nil)
	f.Cell(t, "before", "ping")
	f.Finish(t, "before", "pong")
	f.P.Send(t, "grow 340 0 340") // past the warning line (320 MiB), short of the pause line
	f.P.Expect(t, "done")
	f.G.CellRequested("late", growtest.Header("late"), "grow")
	f.G.CellStarted("late")
	<-f.G.CellFinished("late")
	posted := f.Posted()
	if len(posted) != 1 || posted[0].Parent != string(growtest.Header("late")) ||
		!strings.Contains(posted[0].Text, "jupyter-guard: memory warning.") {
		t.Fatalf("posted before the idle: %+v, want the cell's warning", posted)
	}
	if c, _ := f.Ledger("late"); actions(c) != "warn" || c.Growth < 300*mib {
		t.Errorf("ledger: actions %q, growth %d MiB", actions(c), c.Growth/mib)
	}
}

func TestKernelDeathKeepsTheRunningCell(t *testing.T) {
	f := growtest.Guarded(t, budget, nil, nil)
	// The first cell may start before the guard's first measurement of the
	// kernel, and a fast one be over by then: start measured.
	f.Cell(t, "first", "ping")
	f.Finish(t, "first", "pong")
	f.Cell(t, "grew", "grow 32 0 32")
	f.Finish(t, "grew", "done")
	f.Cell(t, "dying", "ping")
	f.P.Expect(t, "pong")
	f.G.Detach()
	if c, ok := f.G.Running(); !ok || c.MsgID != "dying" {
		t.Errorf("Running after the kernel died = %v, %v; want the dying cell", c.MsgID, ok)
	}
	if top := f.G.Grew(3); len(top) != 1 || top[0].MsgID != "grew" {
		t.Errorf("Grew = %v, want the cell that grew", top)
	}
	f.G.Attach(f.P.Pid) // a new kernel (here the same process)
	if _, ok := f.G.Running(); ok {
		t.Error("the dead kernel's cell still runs after a new kernel attached")
	}
	if c, _ := f.Ledger("dying"); c.State != ledger.Lost {
		t.Errorf("the dead kernel's cell is %s, want lost", c.State)
	}
}

// TestCgroupPausesBeforeTheOOMKiller is the case on a real cgroup
// v1 limit of 1.5 GiB: the budget is the cgroup's, measured on its working
// set, and the OOM killer's counter must not move.
func TestCgroupPausesBeforeTheOOMKiller(t *testing.T) {
	for _, grow := range []string{"grow 32 20 3000", "grow 64 0 3000", "worker 32 20 3000"} {
		t.Run(grow, func(t *testing.T) {
			grp := cgrouptest.New(t, 1536*mib)
			f := growtest.Guarded(t, nil, grp.Wrap, nil)
			if b := f.G.Budget(); b.Figure != ledger.Cgroup || b.Limit != 1536*mib || !strings.Contains(b.Source, grp.Path()) {
				t.Fatalf("budget %+v, want the test cgroup's 1.5 GiB on its working set", b)
			}
			kills := grp.OOMKills()
			f.Cell(t, "earlier", "grow 16 0 16")
			f.Finish(t, "earlier", "done")
			f.Cell(t, "big", grow)
			f.Next(t, "big", "jupyter-guard: memory warning.")
			f.Next(t, "big", "jupyter-guard paused the kernel")
			f.Frozen(t)
			if k := grp.OOMKills(); k != kills {
				t.Fatalf("the OOM killer killed %d processes before the pause", k-kills)
			}
			c, _ := f.G.Running()
			t.Logf("paused at %d MiB working set (pause line %d MiB), peak tree %d MiB, growing at %.0f MiB/s",
				c.Last().Cgroup/mib, f.G.Budget().Pause/mib, c.Peak.Tree/mib, c.Rate/mib)
			f.Button()
			f.Finish(t, "big", "interrupted")
			f.Cell(t, "after", "ping")
			f.Finish(t, "after", "pong")
			if k := grp.OOMKills(); k != kills {
				t.Errorf("the OOM killer killed %d processes", k-kills)
			}
		})
	}
}

func TestCellsInOrder(t *testing.T) {
	f := growtest.Guarded(t, budget, nil, nil)
	for i := range 3 {
		id := fmt.Sprint("c", i)
		f.Cell(t, id, "ping")
		f.Finish(t, id, "pong")
	}
	cells := f.G.Cells()
	if len(cells) != 3 || cells[2].ExecutionCount != 3 || cells[0].Code != "ping" || cells[0].Start.Tree == 0 {
		t.Errorf("cells: %+v", cells)
	}
}

// waitRoom waits for the guard to say the kernel's memory has room, or not
// (Notifier.Room): it says so on its loop, after the sample that shows it.
func waitRoom(t *testing.T, f *growtest.Frontend, ample bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); f.Ample.Load() != ample; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the guard did not say Room(%v)", ample)
		}
	}
}
