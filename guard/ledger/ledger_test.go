package ledger

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"
)

const mib = 1 << 20

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func TestCellLife(t *testing.T) {
	l := New(Tree, 0)
	l.Request("a", []byte(`{"msg_id":"a"}`), "\n  x = np.ones(10**9)  \nprint(x)", at(0))
	if c, _ := l.Get("a"); c.State != Requested || c.Code != "x = np.ones(10**9)" || string(c.Header()) != `{"msg_id":"a"}` {
		t.Fatalf("after Request: %+v", c)
	}
	l.Start("a", 42, at(10))
	l.Count("a", 7)
	l.Observe(Memory{Tree: 100 * mib, Cgroup: 150 * mib}, at(10))
	l.Observe(Memory{Tree: 200 * mib, Cgroup: 240 * mib}, at(110))
	l.Observe(Memory{Tree: 150 * mib, Cgroup: 260 * mib}, at(210))
	l.Finish("a", at(250))
	if c, _ := l.Get("a"); c.State != Finishing || !c.End.isZero() {
		t.Fatalf("after Finish: state %s, end %+v", c.State, c.End)
	}
	l.Observe(Memory{Tree: 140 * mib, Cgroup: 250 * mib}, at(260))
	l.Observe(Memory{Tree: 999 * mib}, at(300)) // after the end: not this cell's

	c, _ := l.Get("a")
	want := Cell{
		MsgID: "a", ExecutionCount: 7, Code: "x = np.ones(10**9)", Kernel: 42, State: Done,
		Requested: at(0), Started: at(10), Finished: at(250),
		Start:  Memory{Tree: 100 * mib, Cgroup: 150 * mib},
		Peak:   Memory{Tree: 200 * mib, Cgroup: 260 * mib},
		End:    Memory{Tree: 140 * mib, Cgroup: 250 * mib},
		Growth: 40 * mib,
	}
	if c.MsgID != want.MsgID || c.ExecutionCount != want.ExecutionCount || c.Code != want.Code ||
		c.Kernel != want.Kernel || c.State != want.State || c.Requested != want.Requested ||
		c.Started != want.Started || c.Finished != want.Finished || c.Start != want.Start ||
		c.Peak != want.Peak || c.End != want.End || c.Growth != want.Growth {
		t.Errorf("cell\n got %+v\nwant %+v", c, want)
	}
	if got := c.Fastest; got != 1000*mib {
		t.Errorf("Fastest = %.0f, want 100 MiB in 100 ms = %d", got, 1000*mib)
	}
}

func (m Memory) isZero() bool { return m == Memory{} }

func TestRateFollowsSteadyGrowth(t *testing.T) {
	l := New(Cgroup, 0)
	l.Start("a", 1, at(0))
	// 32 MiB every 20 ms is 1.6 GiB/s; the first rate is taken whole and
	// the smoothed rate stays on it.
	for i := range 50 {
		l.Observe(Memory{Cgroup: uint64(i) * 32 * mib}, at(20*i))
	}
	c, _ := l.Get("a")
	want := 1600.0 * mib
	if c.Rate < want*0.999 || c.Rate > want*1.001 {
		t.Errorf("Rate = %.0f, want %.0f", c.Rate, want)
	}
}

func TestRateForgetsABurst(t *testing.T) {
	l := New(Tree, 0)
	l.Start("a", 1, at(0))
	l.Observe(Memory{Tree: 0}, at(0))
	l.Observe(Memory{Tree: 1024 * mib}, at(500)) // 2 GiB/s
	for i := 1; i <= 5; i++ {
		l.Observe(Memory{Tree: 1024 * mib}, at(500+1000*i))
	}
	c, _ := l.Get("a")
	if c.Fastest != 2048*mib {
		t.Errorf("Fastest = %.0f, want 2 GiB/s", c.Fastest)
	}
	if c.Rate > 2048*mib/100 {
		t.Errorf("Rate = %.0f five seconds after the burst, want under 1%% of it", c.Rate)
	}
}

func TestFinishWithoutStartIsIgnored(t *testing.T) {
	l := New(Tree, 0)
	l.Request("aborted", nil, "1/0", at(0))
	l.Finish("aborted", at(1))
	l.Finish("unknown", at(1))
	if c, _ := l.Get("aborted"); c.State != Requested {
		t.Errorf("aborted request: state %s, want requested", c.State)
	}
	if _, ok := l.Get("unknown"); ok {
		t.Error("Finish created a cell for an unknown id")
	}
}

func TestCurrentIsTheNewestRunning(t *testing.T) {
	l := New(Tree, 0)
	if _, ok := l.Current(); ok {
		t.Fatal("Current on an empty ledger")
	}
	l.Start("a", 1, at(0))
	l.Start("b", 1, at(5)) // a subshell's cell, alongside a
	l.Start("c", 1, at(9))
	l.Finish("c", at(10))
	c, ok := l.Current()
	if !ok || c.MsgID != "b" {
		t.Errorf("Current = %v %v, want b", c, ok)
	}
}

func TestLoseEndsUnfinishedCells(t *testing.T) {
	l := New(Tree, 0)
	l.Start("done", 1, at(0))
	l.Finish("done", at(1))
	l.Observe(Memory{Tree: mib}, at(2))
	l.Start("running", 1, at(3))
	l.Request("queued", nil, "", at(4))
	l.Lose()
	for id, want := range map[string]State{"done": Done, "running": Lost, "queued": Lost} {
		if c, _ := l.Get(id); c.State != want {
			t.Errorf("%s: state %s, want %s", id, c.State, want)
		}
	}
	if _, ok := l.Current(); ok {
		t.Error("a cell still runs after Lose")
	}
}

func TestBounded(t *testing.T) {
	l := New(Tree, 3)
	l.Start("running", 1, at(0)) // oldest, but evicted only after ended cells
	for i := range 5 {
		id := fmt.Sprint("c", i)
		l.Start(id, 1, at(i+1))
		l.Finish(id, at(i+1))
		l.Observe(Memory{}, at(i+1))
	}
	var ids []string
	for _, c := range l.Cells() {
		ids = append(ids, c.MsgID)
	}
	if got := strings.Join(ids, " "); got != "running c3 c4" {
		t.Errorf("kept %q, want the running cell and the two newest", got)
	}
	if _, ok := l.Get("c0"); ok {
		t.Error("evicted cell still found by id")
	}
	if len(l.open) != 1 || l.open[0].MsgID != "running" {
		t.Errorf("open cells %v, want only the running one", l.open)
	}
}

// The cells a message or sample looks at are those that have not ended,
// however long the history; an evicted or lost cell is not among them.
func TestOnlyOpenCellsAreWalked(t *testing.T) {
	l := New(Tree, 3)
	l.Request("never", nil, "", at(0)) // requested, never run: evicted last
	for i := range 10 {
		id := fmt.Sprint("c", i)
		l.Start(id, 1, at(i+1))
		l.Finish(id, at(i+1))
		l.Observe(Memory{Tree: mib}, at(i+1))
	}
	if len(l.open) != 1 || l.open[0].MsgID != "never" {
		t.Fatalf("open cells %v, want only the requested one", l.open)
	}
	for i := range 4 { // fills the ledger with running cells: "never" goes
		l.Start(fmt.Sprint("r", i), 1, at(20+i))
	}
	if _, ok := l.Get("never"); ok {
		t.Error("the requested cell was not evicted")
	}
	if len(l.open) != 3 {
		t.Errorf("%d open cells, want the 3 running", len(l.open))
	}
	if c, ok := l.Current(); !ok || c.MsgID != "r3" {
		t.Errorf("current %v %v, want r3", c.MsgID, ok)
	}
	l.Lose()
	if len(l.open) != 0 || l.Finishing() {
		t.Errorf("open cells after Lose: %v", l.open)
	}
	// A second busy for a cell that ended runs it again, as before.
	l.Start("r3", 1, at(30))
	if c, ok := l.Current(); !ok || c.MsgID != "r3" {
		t.Errorf("current %v %v after a second busy, want r3", c.MsgID, ok)
	}
}

func TestTopGrowth(t *testing.T) {
	l := New(Tree, 0)
	run := func(id string, kernel int, from, to uint64) {
		l.Observe(Memory{Tree: from}, at(0)) // between cells
		l.Start(id, kernel, at(0))
		l.Finish(id, at(1))
		l.Observe(Memory{Tree: to}, at(1))
	}
	run("small", 1, 100, 200)
	run("shrank", 1, 500, 100)
	run("big", 1, 100, 900)
	run("other kernel", 2, 0, 5000)
	run("mid", 1, 100, 500)
	l.Start("running", 1, at(2))
	l.Observe(Memory{Tree: 0}, at(2))
	l.Observe(Memory{Tree: 9000}, at(3))

	var ids []string
	for _, c := range l.Top(2, 1) {
		ids = append(ids, c.MsgID)
	}
	if got := strings.Join(ids, ","); got != "big,mid" {
		t.Errorf("Top(2) = %s, want big,mid", got)
	}
	if got := len(l.Top(10, 1)); got != 3 {
		t.Errorf("Top(10) has %d cells, want the 3 that grew", got)
	}
}

func TestActions(t *testing.T) {
	l := New(Tree, 0)
	l.Start("a", 1, at(0))
	l.Act("a", Action{Time: at(1), Kind: "warn", Used: 1})
	l.Act("a", Action{Time: at(2), Kind: "pause", Used: 2})
	l.Act("a", Action{Time: at(3), Kind: "pause", Used: 3})
	l.Act("missing", Action{Kind: "warn"})
	c, _ := l.Get("a")
	if len(c.Actions) != 3 || c.Actions[2].Kind != "pause" || c.Actions[2].Used != 3 {
		t.Errorf("actions: %+v", c.Actions)
	}
	// A snapshot does not change with the ledger.
	l.Act("a", Action{Kind: "resume"})
	if len(c.Actions) != 3 {
		t.Error("snapshot shares its actions with the ledger")
	}
	acts := l.Acts()
	if want := map[string]int{"warn": 1, "pause": 2, "resume": 1}; !maps.Equal(acts, want) {
		t.Errorf("Acts = %v, want %v", acts, want)
	}
	acts["warn"] = 9
	if l.Acts()["warn"] != 1 {
		t.Error("Acts shares its counts with the ledger")
	}
}

// The counts outlive the cells a small ledger drops.
func TestActsCountDroppedCells(t *testing.T) {
	l := New(Tree, 1)
	for _, id := range []string{"a", "b", "c"} {
		l.Start(id, 1, at(0))
		l.Act(id, Action{Kind: "warn"})
	}
	if n := len(l.Cells()); n != 1 || l.Acts()["warn"] != 3 {
		t.Errorf("%d cells kept, %d warnings counted; want 1 and 3", n, l.Acts()["warn"])
	}
}

func TestSnapshotIsJSON(t *testing.T) {
	l := New(Cgroup, 0)
	l.Request("a", []byte(`{}`), "x = 1", at(0))
	l.Start("a", 9, at(1))
	l.Observe(Memory{Tree: mib, Cgroup: 2 * mib}, at(1))
	data, err := json.Marshal(l.Cells())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"msg_id":"a"`, `"code":"x = 1"`, `"state":"running"`, `"start":{"tree_rss":1048576,"cgroup":2097152}`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("JSON lacks %s:\n%s", want, data)
		}
	}
	if strings.Contains(string(data), `"end"`) || strings.Contains(string(data), "header") {
		t.Errorf("JSON shows an unset end or the raw header:\n%s", data)
	}
}

func TestStartTakesTheLatestMeasurement(t *testing.T) {
	l := New(Tree, 0)
	l.Start("first", 1, at(0)) // no measurement yet: the first one counts
	l.Observe(Memory{Tree: 100 * mib}, at(5))
	l.Finish("first", at(10))
	l.Observe(Memory{Tree: 120 * mib}, at(12))
	l.Start("fast", 1, at(1000)) // grows before the next sample lands
	l.Observe(Memory{Tree: 220 * mib}, at(1010))
	l.Finish("fast", at(1011))
	l.Observe(Memory{Tree: 220 * mib}, at(1012))
	first, _ := l.Get("first")
	fast, _ := l.Get("fast")
	if first.Start.Tree != 100*mib || first.Growth != 20*mib {
		t.Errorf("first cell: start %d MiB, growth %d MiB", first.Start.Tree/mib, first.Growth/mib)
	}
	// Its rate runs from the last measurement, 12 ms in, to 1010 ms.
	if fast.Start.Tree != 120*mib || fast.Growth != 100*mib || fast.Fastest != 100*mib/0.998 {
		t.Errorf("fast cell: start %d MiB, growth %d MiB, fastest %.0f MiB/s", fast.Start.Tree/mib, fast.Growth/mib, fast.Fastest/mib)
	}
	l.Lose()
	l.Start("new kernel", 2, at(2000))
	if c, _ := l.Get("new kernel"); c.Start.Tree != 0 {
		t.Error("a new kernel's cell started from the old kernel's memory")
	}
}

func TestNoRateOverAShortInterval(t *testing.T) {
	l := New(Tree, 0)
	l.Start("a", 1, at(0))
	l.Observe(Memory{Tree: 100 * mib}, at(0))
	l.Observe(Memory{Tree: 101 * mib}, t0.Add(20*time.Microsecond))
	c, _ := l.Get("a")
	if c.Fastest != 0 || c.Rate != 0 || c.Last().Tree != 101*mib || c.Growth != mib {
		t.Errorf("after 20 µs: fastest %.0f, rate %.0f, last %d, growth %d", c.Fastest, c.Rate, c.Last().Tree, c.Growth)
	}
	l.Observe(Memory{Tree: 102 * mib}, at(5))
	if c, _ = l.Get("a"); c.Rate != 0 {
		t.Errorf("rate over 5 ms = %.0f, want none yet", c.Rate)
	}
	l.Observe(Memory{Tree: 103 * mib}, at(12))
	if c, _ = l.Get("a"); c.Rate != 3*mib/0.012 {
		t.Errorf("rate over 12 ms from the last anchor = %.0f, want 3 MiB / 12 ms", c.Rate)
	}
}

func TestQueuedCellsEachGetTheirOwnGrowth(t *testing.T) {
	l := New(Tree, 0)
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	l.Observe(Memory{Tree: 100}, at(0))
	l.Request("a", nil, "a = grow()", at(1))
	l.Request("b", nil, "b = grow()", at(1))
	l.Start("a", 1, at(2))
	l.Finish("a", at(10)) // a grew by 50, not measured yet
	l.Start("b", 1, at(11))
	l.Observe(Memory{Tree: 150}, at(12)) // a's end, b's start
	l.Finish("b", at(20))
	l.Observe(Memory{Tree: 170}, at(21))
	a, _ := l.Get("a")
	b, _ := l.Get("b")
	if a.Growth != 50 || b.Growth != 20 {
		t.Fatalf("growth a %d b %d, want 50 and 20", a.Growth, b.Growth)
	}
}

// TestAMeasurementTakenBeforeTheEndDoesNotEndTheCell: a sample under way
// when the cell's idle arrives is recorded after Finish, but measured
// before it; the end measurement is the next one.
func TestAMeasurementTakenBeforeTheEndDoesNotEndTheCell(t *testing.T) {
	l := New(Tree, 0)
	l.Start("a", 42, at(0))
	l.Observe(Memory{Tree: 100 * mib}, at(0))
	l.Finish("a", at(20))
	l.Observe(Memory{Tree: 150 * mib}, at(19))
	if c, _ := l.Get("a"); c.State != Finishing || !l.Finishing() {
		t.Fatalf("ended by a measurement from before its end: %+v", c)
	}
	l.Observe(Memory{Tree: 180 * mib}, at(21))
	if c, _ := l.Get("a"); c.State != Done || c.End.Tree != 180*mib || c.Growth != 80*mib {
		t.Errorf("state %s, end %d MiB, growth %d MiB; want done at 180 MiB, +80 MiB", c.State, c.End.Tree/mib, c.Growth/mib)
	}
}

// fillSteps observes a cell measurement by measurement, in MiB of tree RSS
// and unfilled memory, and checks what is in flight and the largest fill
// done after each.
func fillSteps(t *testing.T, steps [][4]uint64) {
	t.Helper()
	l := New(Tree, 0)
	l.Start("a", 1, at(0))
	for i, s := range steps {
		l.Observe(Memory{Tree: s[0] * mib, Unfilled: s[1] * mib}, at(20*i))
		c, _ := l.Current()
		if c.InFlight() != s[2]*mib || c.Fill != s[3]*mib {
			t.Errorf("step %d: in flight %d MiB, fill %d MiB; want %d, %d", i, c.InFlight()/mib, c.Fill/mib, s[2], s[3])
		}
	}
}

// TestFillInFlight: 64 MiB blocks mapped whole and filled, over 74 MiB
// that was unfilled before the cell (thread stacks).
func TestFillInFlight(t *testing.T) {
	fillSteps(t, [][4]uint64{
		// tree, unfilled; in flight, fill
		{100, 74, 0, 0},
		{110, 74 + 54, 54, 0}, // a block mapped, 10 MiB of it filled
		{150, 74 + 14, 14, 0},
		// The next block, 4 MiB filled: the first is done, and its size is
		// what was mapped with it, the look after it having filled little.
		{168, 74 + 60, 60, 64},
		{228, 74, 0, 64},
		{228, 70, 0, 64}, // a thread ended: less than at the start
	})
}

// TestBlocksBetweenSparseLooks: far below the lines the looks are sparse,
// and blocks of 64 MiB come and go between two of them: a fill is one
// block, seen as what is unfilled at a look, never the growth in between.
// Closer looks near the lines see more of one.
func TestBlocksBetweenSparseLooks(t *testing.T) {
	fillSteps(t, [][4]uint64{
		{100, 74, 0, 0},
		{140, 74 + 24, 24, 0},  // block 1, 40 MiB filled
		{400, 74 + 20, 20, 24}, // blocks 2-4 come and go, block 5 has 20 MiB left
		{456, 74 + 28, 28, 24}, // block 6
		{470, 74 + 14, 14, 24},
		{484, 74 + 64, 64, 28}, // block 7, just mapped
		{548, 74, 0, 28},
		{560, 74 + 52, 52, 64}, // block 8
	})
}

// TestAnImportIsNotAFill: NumPy's first import maps 70 MiB it never fills,
// with the first block: it counts as in flight until the next fill begins
// with it still unfilled.
func TestAnImportIsNotAFill(t *testing.T) {
	fillSteps(t, [][4]uint64{
		{100, 74, 0, 0},
		{110, 74 + 70 + 54, 124, 0},
		{160, 74 + 70 + 4, 74, 0},
		{170, 74 + 70 + 58, 128, 0}, // 4 MiB of block 1, 6 of block 2; 64 MiB left
		{220, 74 + 70 + 8, 78, 0},
		{234, 74 + 70 + 58, 64, 64}, // left again, unshrunk: not a fill; block 2 is done
		{284, 74 + 70 + 8, 14, 64},
		{298, 74 + 70 + 58, 64, 64},
	})
}

// TestAFillGoesOnPastAThread: a 300 MiB fill during which a thread maps its
// 8 MiB stack: the fill is not done, and what is left of it still counts.
func TestAFillGoesOnPastAThread(t *testing.T) {
	fillSteps(t, [][4]uint64{
		{100, 74, 0, 0},
		{120, 74 + 280, 280, 0},
		{170, 74 + 230 + 8, 238, 0},
		{230, 74 + 170 + 8, 178, 0},
		{270, 74 + 130 + 16, 146, 0}, // another stack: the rest shrank, still a fill
	})
}

// TestOneBigFillIsNotABlock: a cell that fills one 700 MiB array and stops
// has no fill done: the guard must not stop it early for a next one that
// never comes.
func TestOneBigFillIsNotABlock(t *testing.T) {
	fillSteps(t, [][4]uint64{
		{100, 0, 0, 0},
		{100, 700, 700, 0},
		{300, 500, 500, 0},
		{790, 10, 10, 0},
		{800, 0, 0, 0},
		{800, 1, 1, 0}, // an arena after it, mapped, untouched
	})
}

// TestABigFillAfterAnImport: the import's 60 MiB are left when a 750 MiB
// fill begins, and a thread's stack is mapped during it: what is left then
// is the import's and the fill's rest, which is still under way.
func TestABigFillAfterAnImport(t *testing.T) {
	fillSteps(t, [][4]uint64{
		{100, 74, 0, 0},
		{105, 74 + 60, 60, 0},
		{115, 74 + 60 + 740, 800, 0},
		{415, 74 + 60 + 440 + 8, 508, 0},
		{615, 74 + 60 + 240 + 16, 316, 0},
	})
}

// TestAnImportBetweenSparseLooks: a kernel's first cell as the guard saw
// it (tree RSS and unfilled MiB, as measured, twice): numpy's import maps
// 74 MiB, then the looks skip to the warning line, far below which nothing
// is pushed. The import's memory goes on counting as in flight until the
// fill after next shows it did not shrink; from then on only the block
// counts.
func TestAnImportBetweenSparseLooks(t *testing.T) {
	for i, trace := range [][][2]float64{
		{{51.2, 97.9}, {51.5, 98.6}, {57.1, 172.4}, {801.9, 200.3}, {813.9, 188.3},
			{823.9, 178.3}, {829.9, 236.3}, {837.9, 228.3}, {839.9, 226.3}, {847.9, 218.3}, {851.9, 214.3},
			{857.9, 208.3}, {863.9, 202.3}, {865.9, 200.3}, {871.9, 194.3}, {877.9, 188.3}, {883.9, 182.3},
			{889.9, 176.3}, {897.9, 232.3}, {903.9, 226.3}},
		{{51.2, 97.9}, {51.4, 97.6}, {58.9, 171.7}, {769.9, 232.3}, {777.9, 224.3}, {783.9, 218.3},
			{791.9, 210.3}, {797.9, 204.3}, {799.9, 202.3}, {801.9, 200.3}, {813.9, 188.3}, {825.9, 176.3},
			{837.9, 228.3}, {849.9, 216.3}, {851.9, 214.3}, {859.9, 206.3}, {863.9, 202.3}, {871.9, 194.3},
			{877.9, 188.3}, {883.9, 182.3}, {889.9, 176.3}, {897.9, 232.3}, {901.9, 228.3}, {903.9, 226.3}},
	} {
		l := New(Tree, 0)
		l.Start("a", 1, at(0))
		for j, m := range trace {
			l.Observe(Memory{Tree: uint64(m[0] * mib), Unfilled: uint64(m[1] * mib)}, at(20*j))
		}
		if c, _ := l.Current(); c.InFlight() > 60*mib {
			t.Errorf("trace %d: in flight %.1f MiB of a 64 MiB block filled by 6 MiB", i, float64(c.InFlight())/mib)
		}
	}
}
