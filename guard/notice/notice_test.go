package notice

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-guard/jupyter-guard/guard/config"
	"github.com/jupyter-guard/jupyter-guard/guard/ledger"
	"github.com/jupyter-guard/jupyter-guard/guard/memerr"
)

var update = flag.Bool("update", false, "rewrite the golden texts in testdata/guard")

const (
	mib = 1 << 20
	gib = 1 << 30
)

// cgroupFacts is the case: a 1.5 GiB v1 cgroup, a cell adding
// 32 MiB every 20 ms.
var cgroupFacts = Facts{
	Used: 1229 * mib, Budget: 1536 * mib, Figure: ledger.Cgroup, Source: "cgroup v1 /jupyter/kernel-1",
	Action: config.Pause, Line: 1229 * mib, Next: 1459 * mib, Growth: 1100 * mib, Rate: 1.6 * gib,
}

func TestGolden(t *testing.T) {
	paused := cgroupFacts
	paused.Used, paused.Line, paused.Next, paused.Growth = 1462*mib, 1459*mib, 1498*mib, 1330*mib
	again := paused
	again.Again, again.Used, again.Line, again.Next = true, 1530*mib, 1527*mib, 0
	// The user's interrupt did not stop the cell: it grew past its fill.
	unstopped := again
	unstopped.Unstopped, unstopped.Used, unstopped.Line, unstopped.Next = true, 1500*mib, 1498*mib, 1517*mib
	unstoppedInterrupt := unstopped
	unstoppedInterrupt.Action = config.Interrupt
	tree := Facts{Used: 241 * mib, Budget: 300 * mib, Figure: ledger.Tree, Source: "JUPYTER_GUARD_LIMIT",
		Action: config.Interrupt, Line: 240 * mib, Next: 285 * mib, Growth: 200 * mib, Rate: 100 * mib}
	host := Facts{Used: 20 * gib, Budget: 24 * gib, Figure: ledger.Host, Source: "host memory",
		Action: config.Warn, Line: 19 * gib, Next: 23347 * mib, Growth: 0}
	alert := paused
	alert.Action = config.Warn
	interrupted := paused
	interrupted.Action = config.Interrupt
	resumed := paused
	resumed.Used = 1470 * mib
	early := paused
	early.Used, early.Growth, early.Rate = 1180*mib, 1150*mib, 13.6*gib
	// 64 MiB NumPy blocks under 1 GiB: the line moved down for them.
	blocks := Facts{Used: 941 * mib, Budget: 1024 * mib, Figure: ledger.Cgroup, Source: "cgroup v1 /jupyter/kernel-1",
		Action: config.Pause, Line: 938 * mib, Next: 998 * mib, Growth: 820 * mib, Rate: 362 * mib,
		Fill: 64 * mib, Room: 86 * mib, InFlight: 40 * mib}
	// One np.ones of 300 MiB started at 900 MiB, paused at the pause line.
	unsaved := blocks
	unsaved.Used, unsaved.Growth, unsaved.Line, unsaved.Room = 975*mib, 75*mib, 973*mib, 0
	unsaved.Fill, unsaved.InFlight, unsaved.Short, unsaved.Outside = 0, 225*mib, 176*mib, 300*mib
	// The CNN: only the proxy shares the cgroup, so nothing can
	// be freed outside the kernel.
	unsavedAlone := unsaved
	unsavedAlone.Outside = 15 * mib
	unsavedTree := unsaved
	unsavedTree.Figure, unsavedTree.Source = ledger.Tree, "JUPYTER_GUARD_LIMIT"
	unsavedInterrupt := unsaved
	unsavedInterrupt.Action = config.Interrupt

	// xeus-python exits on SIGINT: nothing may promise that it survives.
	xeus, xeusPaused, xeusInterrupted := tree, paused, interrupted
	xeus.InterruptEnds, xeusPaused.InterruptEnds, xeusInterrupted.InterruptEnds = "xeus-python 0.19.0", "xeus-python 0.19.0", "xeus-python 0.19.0"
	// jupyter-guard's lab extension is there: the notice names its panel.
	panel := paused
	panel.Panel = true

	// guardctl run --limit 400MiB testdata/demo/grow.ipynb: 700 MiB in one
	// step, seen only at the cell's end.
	overran := Facts{Used: 851 * mib, Budget: 400 * mib, Figure: ledger.Tree, Source: "JUPYTER_GUARD_LIMIT",
		Action: config.Interrupt, Line: 380 * mib, Growth: 700 * mib}
	for _, text := range []string{Paused(paused), Paused(unsaved), Interrupted(interrupted), Alert(alert), Overran(overran)} {
		if !PastPause(text) {
			t.Errorf("PastPause misses:\n%s", text)
		}
	}
	for _, text := range []string{Warning(cgroupFacts), Warning(unsaved), Resumed(resumed)} {
		if PastPause(text) {
			t.Errorf("PastPause takes a notice below the pause line:\n%s", text)
		}
	}
	// The allocation ceiling armed: past it an allocation fails instead of
	// the kernel. It holds at 1.5 GiB less a reserve of 38 MiB.
	withCeiling := func(f Facts) Facts {
		f.Ceiling, f.PauseTimeout = 1498*mib, time.Minute
		return f
	}
	// Nobody can answer a pause (nbconvert): no action line, the ceiling
	// stops the cell.
	unattended := withCeiling(cgroupFacts)
	unattended.Action, unattended.Next = "", 0
	// The warning and the pause in one sample: the warning forecasts
	// nothing, the pause notice follows.
	soon := withCeiling(cgroupFacts)
	soon.Soon = true
	// Deno: V8 ends the process when its heap cannot grow.
	deno, denoPaused, denoUnattended := withCeiling(cgroupFacts), withCeiling(paused), unattended
	const loses = "this kernel (Deno kernel 2.9.8) ends when its JavaScript heap cannot grow"
	deno.RefusalLoses, denoPaused.RefusalLoses, denoUnattended.RefusalLoses = loses, loses, loses
	// TensorFlow: no ceiling (it aborts at one), its allocator held to
	// 1.2 GiB instead.
	tensorflow, tensorflowPaused := cgroupFacts, paused
	tensorflow.TensorPool, tensorflowPaused.TensorPool = 1229*mib, 1229*mib
	unsavedCeiling := withCeiling(unsavedAlone)
	unsavedCeiling.Ceiling = 998 * mib

	for name, text := range map[string]string{
		"warning":                 Warning(cgroupFacts),
		"warning-tree-interrupt":  Warning(tree),
		"warning-host-warn":       Warning(host),
		"warning-unsaved":         Warning(unsaved),
		"paused":                  Paused(paused),
		"paused-again-last":       Paused(again),
		"paused-early":            Paused(early),
		"paused-unstopped":        Paused(unstopped),
		"interrupted-unstopped":   Interrupted(unstoppedInterrupt),
		"paused-blocks":           Paused(blocks),
		"paused-unsaved":          Paused(unsaved),
		"paused-unsaved-tree":     Paused(unsavedTree),
		"interrupted-unsaved":     Interrupted(unsavedInterrupt),
		"interrupted":             Interrupted(interrupted),
		"alert":                   Alert(alert),
		"resumed":                 Resumed(resumed),
		"resumed-last":            Resumed(again),
		"warning-ends-kernel":     Warning(xeus),
		"paused-ends-kernel":      Paused(xeusPaused),
		"paused-panel":            Paused(panel),
		"interrupted-ends-kernel": Interrupted(xeusInterrupted),
		"overran":                 Overran(overran),
		"paused-unsaved-alone":    Paused(unsavedAlone),
		"warning-ceiling":         Warning(withCeiling(cgroupFacts)),
		"warning-unattended":      Warning(unattended),
		"warning-soon":            Warning(soon),
		"paused-ceiling":          Paused(withCeiling(paused)),
		"paused-ceiling-panel":    Paused(withCeiling(panel)),
		"paused-unsaved-ceiling":  Paused(unsavedCeiling),
		"alert-ceiling":           Alert(withCeiling(alert)),
		"resumed-ceiling":         Resumed(withCeiling(resumed)),
		"unanswered":              Unanswered(withCeiling(paused), time.Minute),
		"warning-tensorflow":      Warning(tensorflow),
		"paused-tensorflow":       Paused(tensorflowPaused),
		"warning-refusal-ends":    Warning(deno),
		"warning-unattended-ends": Warning(denoUnattended),
		"paused-refusal-ends":     Paused(denoPaused),
		"unanswered-interrupt":    UnansweredInterrupt(time.Minute),
		"refused-array": Refused(Refusal{Asked: 2 * gib, Left: 842 * mib, Used: 156 * mib, Budget: gib, Ceiling: 998 * mib,
			Figure: ledger.Tree, Source: "JUPYTER_GUARD_LIMIT", Work: memerr.Array}),
		"refused-fit": Refused(Refusal{Left: 31 * mib, Used: 1990 * mib, Budget: 2 * gib, Ceiling: 1997 * mib,
			Figure: ledger.Cgroup, Source: "cgroup v1 /cnn-story", Work: memerr.Fit}),
		"refused-tensorflow": Refused(Refusal{Asked: 48 * mib, Used: 1410 * mib, Budget: 2 * gib, Pool: 1229 * mib,
			Figure: ledger.Cgroup, Source: "cgroup v1 /cnn-story", Work: memerr.Fit}),
		"refused-ended": Refused(Refusal{Asked: 64 * mib, Left: 209 * mib, Used: 880 * mib, Budget: gib, Ceiling: 998 * mib,
			Figure: ledger.Cgroup, Source: "cgroup v1 /jupyter/kernel-1", Work: memerr.Array, Ended: true}),
		"refused-near": Refused(Refusal{Left: 9 * mib, Used: 985 * mib, Budget: gib, Ceiling: 998 * mib,
			Figure: ledger.Cgroup, Source: "cgroup v1 /jupyter/kernel-1", Near: true}),
		"refused-bash": Refused(Refusal{Asked: 934 * mib, Left: 850 * mib, Used: 140 * mib, Budget: gib, Ceiling: 998 * mib,
			Figure: ledger.Cgroup, Source: "cgroup v1 /jupyter/kernel-1", Work: memerr.Shell}),
		"refused-r": Refused(Refusal{Asked: 15 * gib / 2, Left: 400 * mib, Used: 100 * mib, Budget: 512 * mib, Ceiling: 499 * mib,
			Figure: ledger.Tree, Source: "JUPYTER_GUARD_LIMIT", Work: memerr.Vector}),
	} {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join("..", "..", "testdata", "guard", name+".txt")
			if *update {
				if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if text != string(want) {
				t.Errorf("text differs from %s:\n%s", file, text)
			}
			checkShape(t, text)
			if strings.HasSuffix(name, "-ends-kernel") && (!strings.Contains(text, "xeus-python 0.19.0") ||
				strings.Contains(text, "are kept") || strings.Contains(text, "survive")) {
				t.Errorf("promises what an interrupt cannot keep, or does not name the kernel:\n%s", text)
			}
		})
	}
}

// checkShape holds every notice to the same form: an empty line to set it
// apart from the cell's own output, then a line naming jupyter-guard; it
// ends with a newline and stays short.
func checkShape(t *testing.T, text string) {
	t.Helper()
	body, apart := strings.CutPrefix(text, "\n")
	if !apart {
		t.Errorf("does not start with an empty line: %q", text)
	}
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	if !strings.HasPrefix(lines[0], "jupyter-guard") {
		t.Errorf("first line does not name jupyter-guard: %q", lines[0])
	}
	if len(lines) > 8 {
		t.Errorf("%d lines; a notice must stay short", len(lines))
	}
	for _, l := range lines {
		if len([]rune(l)) > 160 {
			t.Errorf("line of %d characters: %q", len([]rune(l)), l)
		}
	}
}

func TestGrowthWording(t *testing.T) {
	for _, tt := range []struct {
		growth int64
		rate   float64
		want   string
	}{
		{100 * mib, 2 * mib, "this cell has added 100 MiB, growing at 2 MiB/s"},
		{-100 * mib, 0, "this cell has freed 100 MiB, and is not growing now"},
		{0, 1000, "this cell has added nothing yet, and is not growing now"},
	} {
		if got := (Facts{Growth: tt.growth, Rate: tt.rate}).growth(); got != tt.want {
			t.Errorf("growth(%d, %.0f) = %q, want %q", tt.growth, tt.rate, got, tt.want)
		}
	}
}
