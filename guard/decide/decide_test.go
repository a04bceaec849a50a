package decide

import (
	"slices"
	"testing"
	"time"

	"github.com/jupyter-guard/jupyter-guard/guard/config"
	"github.com/jupyter-guard/jupyter-guard/guard/ledger"
)

const mib = 1 << 20

func budget(action config.Action) Budget {
	return Budget{Budget: config.Budget{Limit: 1000 * mib, Warn: 800 * mib, Pause: 950 * mib}, Action: action}
}

func TestDecide(t *testing.T) {
	const gbps = 1 << 30 // bytes per second
	tests := []struct {
		name   string
		action config.Action
		in     Input
		want   []Decision
	}{
		{"far below", config.Pause, Input{Used: 100 * mib, Start: 50 * mib, Rate: gbps, Horizon: time.Millisecond}, nil},
		{"warn line reached", config.Pause, Input{Used: 800 * mib, Start: 100 * mib}, []Decision{{Act: Warn, Line: 800 * mib}}},
		{"warned once already", config.Pause, Input{Used: 900 * mib, Start: 100 * mib, Done: Done{Warned: true}}, nil},
		{"no warning is predicted", config.Pause, Input{Used: 790 * mib, Start: 100 * mib, Rate: gbps, Horizon: 20 * time.Millisecond}, nil},
		{"pause line reached", config.Pause, Input{Used: 950 * mib, Start: 100 * mib, Done: Done{Warned: true}}, []Decision{{Act: Pause, Line: 950 * mib}}},
		{"warning and pause at once", config.Pause, Input{Used: 960 * mib, Start: 100 * mib}, []Decision{{Act: Warn, Line: 800 * mib}, {Act: Pause, Line: 950 * mib}}},
		{"too fast for the margin, not yet at the warning line", config.Pause,
			Input{Used: 700 * mib, Start: 100 * mib, Rate: 14 * gbps, Horizon: 2 * time.Millisecond}, nil},
		{"too fast for the margin: paused at the warning line", config.Pause,
			Input{Used: 800 * mib, Start: 100 * mib, Rate: 14 * gbps, Horizon: 2 * time.Millisecond},
			[]Decision{{Act: Warn, Line: 800 * mib}, {Act: Pause, Line: 950 * mib}}},
		{"pause predicted within the horizon", config.Pause,
			Input{Used: 945 * mib, Start: 100 * mib, Rate: 1.6 * gbps, Horizon: 5 * time.Millisecond, Done: Done{Warned: true}},
			[]Decision{{Act: Pause, Line: 950 * mib}}},
		{"pause not yet predicted", config.Pause,
			Input{Used: 900 * mib, Start: 100 * mib, Rate: 1.6 * gbps, Horizon: 5 * time.Millisecond, Done: Done{Warned: true}},
			nil},
		{"shrinking is not predicted", config.Pause,
			Input{Used: 949 * mib, Start: 100 * mib, Rate: -gbps, Horizon: time.Second, Done: Done{Warned: true}}, nil},
		{"interrupt action", config.Interrupt, Input{Used: 951 * mib, Start: 100 * mib, Done: Done{Warned: true}}, []Decision{{Act: Interrupt, Line: 950 * mib}}},
		{"warn action alerts at the pause line", config.Warn, Input{Used: 951 * mib, Start: 100 * mib, Done: Done{Warned: true}}, []Decision{{Act: Alert, Line: 950 * mib}}},
		{"after a pause, nothing until halfway to the limit", config.Pause,
			Input{Used: 970 * mib, Start: 100 * mib, Done: Done{Warned: true, Acted: 1}}, nil},
		{"after a pause, halfway to the limit", config.Pause,
			Input{Used: 975 * mib, Start: 100 * mib, Done: Done{Warned: true, Acted: 1}}, []Decision{{Act: Pause, Line: 975 * mib}}},
		{"no warning after an action", config.Pause,
			Input{Used: 960 * mib, Start: 100 * mib, Done: Done{Acted: 1}}, nil},
		{"third line", config.Interrupt, Input{Used: 990 * mib, Start: 100 * mib, Done: Done{Acted: 2}}, []Decision{{Act: Interrupt, Line: 987.5 * mib}}},
		// A thaw for an interrupt lets the fill in flight finish (Until)
		// and half a rung (6.25 MiB) more, unpredicted: a cell growing
		// beyond was not stopped by the interrupt.
		{"after a thaw, the fill in flight finishes", config.Pause,
			Input{Used: 975 * mib, Start: 100 * mib, Rate: 14 * gbps, Horizon: 5 * time.Millisecond, Done: Done{Warned: true, Acted: 1, Thawed: true, Until: 970 * mib}}, nil},
		{"after a thaw, grown past the fill and half a rung", config.Pause,
			Input{Used: 977 * mib, Start: 100 * mib, Done: Done{Warned: true, Acted: 1, Thawed: true, Until: 970 * mib}}, []Decision{{Act: Pause, Line: 976.25 * mib}}},
		{"after a thaw with a small fill, the next line", config.Interrupt,
			Input{Used: 976 * mib, Start: 100 * mib, Done: Done{Warned: true, Acted: 1, Thawed: true, Until: 900 * mib}}, []Decision{{Act: Interrupt, Line: 975 * mib}}},
		{"after a thaw, the next line leaves room for a fill", config.Pause,
			Input{Used: 924 * mib, Start: 100 * mib, Fill: 64 * mib, Done: Done{Warned: true, Acted: 1, Thawed: true, Until: 900 * mib}},
			[]Decision{{Act: Pause, Line: 923.5 * mib}}},
		{"after a thaw, a stop where one more fill finishes", config.Interrupt,
			Input{Used: 967 * mib, Start: 100 * mib, Fill: 32 * mib, Done: Done{Warned: true, Acted: 1, Thawed: true, Until: 960 * mib}},
			[]Decision{{Act: Interrupt, Line: 966.25 * mib}}},
		{"after a thaw, no stop where the next fill cannot finish", config.Interrupt,
			Input{Used: 980 * mib, Start: 100 * mib, Fill: 32 * mib, Done: Done{Warned: true, Acted: 1, Thawed: true, Until: 965 * mib}}, nil},
		{"after a thaw, a fill that ends at the limit leaves no line", config.Pause,
			Input{Used: 999 * mib, Start: 100 * mib, Done: Done{Warned: true, Acted: 1, Thawed: true, Until: 995 * mib}}, nil},
		{"lines run out", config.Pause, Input{Used: 999 * mib, Start: 100 * mib, Done: Done{Acted: MaxActions}}, nil},
		{"started past the warn line, grew little", config.Pause, Input{Used: 830 * mib, Start: 820 * mib}, nil},
		{"started past the warn line, grew by the slack", config.Pause, Input{Used: 840 * mib, Start: 820 * mib}, []Decision{{Act: Warn, Line: 800 * mib}}},
		// After an interrupt at the pause line, memory stays just below it.
		{"started just below the pause line, grew little", config.Pause,
			Input{Used: 951 * mib, Start: 945 * mib, Done: Done{Warned: true}}, nil},
		{"started just below the pause line, grew by the slack", config.Pause,
			Input{Used: 964 * mib, Start: 945 * mib, Done: Done{Warned: true}}, []Decision{{Act: Pause, Line: 950 * mib}}},
		{"started past the pause line, grew little", config.Pause,
			Input{Used: 960 * mib, Start: 955 * mib, Rate: gbps, Horizon: time.Second}, nil},
		{"started past the pause line, grew by the slack", config.Pause, Input{Used: 975 * mib, Start: 955 * mib},
			[]Decision{{Act: Warn, Line: 800 * mib}, {Act: Pause, Line: 950 * mib}}},
		// Rungs of 12.5 MiB: a 64 MiB fill needs the line 76.5 MiB below
		// the limit.
		{"a fill in flight moves the pause line down", config.Pause,
			Input{Used: 924 * mib, Start: 100 * mib, Fill: 64 * mib, Done: Done{Warned: true}},
			[]Decision{{Act: Pause, Line: 923.5 * mib, Room: 76.5 * mib}}},
		{"not yet at the moved line", config.Pause,
			Input{Used: 920 * mib, Start: 100 * mib, Fill: 64 * mib, Done: Done{Warned: true}}, nil},
		{"a small fill fits above the pause line", config.Pause,
			Input{Used: 949 * mib, Start: 100 * mib, Fill: 30 * mib, Done: Done{Warned: true}}, nil},
		{"a fill too big for the warning line: paused there", config.Pause,
			Input{Used: 800 * mib, Start: 100 * mib, Fill: 400 * mib},
			[]Decision{{Act: Warn, Line: 800 * mib}, {Act: Pause, Line: 800 * mib, Room: 200 * mib}}},
		{"the margin counts below the moved line", config.Interrupt,
			Input{Used: 915 * mib, Start: 100 * mib, Fill: 64 * mib, Rate: gbps, Horizon: 0, Done: Done{Warned: true}},
			[]Decision{{Act: Interrupt, Line: 923.5 * mib, Room: 76.5 * mib}}},
		{"after the user resumed, the next line stays", config.Pause,
			Input{Used: 970 * mib, Start: 100 * mib, Fill: 64 * mib, Done: Done{Warned: true, Acted: 1}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Decide(budget(tt.action), tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("Decide = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestLine(t *testing.T) {
	b := budget(config.Pause)
	var got []float64
	for acted := 0; ; acted++ {
		line, ok := Line(b, acted)
		if !ok {
			break
		}
		got = append(got, float64(line)/mib)
	}
	want := []float64{950, 975, 987.5, 993.75}
	if len(got) != len(want) {
		t.Fatalf("lines %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("lines %v, want %v", got, want)
		}
	}
}

func TestLineStopsWhenPauseIsTheLimit(t *testing.T) {
	b := Budget{Budget: config.Budget{Limit: 1000, Warn: 800, Pause: 1000}}
	if _, ok := Line(b, 1); ok {
		t.Error("a second line at the limit itself: a resumed cell would be paused again at once")
	}
}

func TestHeadroom(t *testing.T) {
	const gbps = 1 << 30
	b := budget(config.Pause)
	for _, tt := range []struct {
		name string
		in   Input
		want float64 // MiB
		ok   bool
	}{
		{"to the warn line", Input{Used: 100 * mib, Start: 100 * mib}, 700, true},
		{"to the pause line", Input{Used: 900 * mib, Start: 100 * mib, Done: Done{Warned: true}}, 50, true},
		// 1 GiB/s for 10 ms (Reaction) is 10.24 MiB of margin.
		{"to the pause line's margin", Input{Used: 900 * mib, Start: 100 * mib, Rate: gbps, Done: Done{Warned: true}}, 39.76, true},
		{"to the next line after a pause", Input{Used: 960 * mib, Start: 100 * mib, Done: Done{Warned: true, Acted: 1}}, 15, true},
		{"started past both lines", Input{Used: 960 * mib, Start: 955 * mib}, 13.75, true},
		{"no line left", Input{Used: 960 * mib, Start: 100 * mib, Done: Done{Acted: MaxActions}}, 0, false},
	} {
		got, ok := Headroom(b, tt.in)
		if ok != tt.ok || float64(got)/mib < tt.want-0.01 || float64(got)/mib > tt.want+0.01 {
			t.Errorf("%s: Headroom = %.2f MiB %v, want %.2f MiB %v", tt.name, float64(got)/mib, ok, tt.want, tt.ok)
		}
	}
}

func TestMargin(t *testing.T) {
	if got := Margin(-1, time.Second); got != 0 {
		t.Errorf("Margin of a shrinking cell = %d", got)
	}
	if got := Margin(1.6e9, 5*time.Millisecond); got != 24e6 {
		t.Errorf("Margin(1.6 GB/s, 5 ms) = %d, want 1.6 GB/s for 15 ms (with Reaction)", got)
	}
}

func TestTally(t *testing.T) {
	acts := func(kinds ...string) []ledger.Action {
		var as []ledger.Action
		for _, k := range kinds {
			as = append(as, ledger.Action{Kind: k, Until: 900 * mib})
		}
		return as
	}
	for _, tt := range []struct {
		actions []ledger.Action
		want    Done
	}{
		{nil, Done{}},
		{acts("warn"), Done{Warned: true}},
		{acts("warn", "pause", "resume"), Done{Warned: true, Acted: 1}},
		{acts("warn", "pause", "resume", "pause"), Done{Warned: true, Acted: 2}},
		{acts("warn", "pause", "thaw"), Done{Warned: true, Acted: 1, Thawed: true, Until: 900 * mib}},
		{acts("warn", "pause", "thaw", "pause"), Done{Warned: true, Acted: 2, Unstopped: true, Until: 900 * mib}},
		{acts("interrupt", "alert"), Done{Acted: 2}},
	} {
		if got := Tally(tt.actions); got != tt.want {
			t.Errorf("Tally(%v) = %+v, want %+v", tt.actions, got, tt.want)
		}
	}
}

func TestRungs(t *testing.T) {
	b := budget(config.Pause)
	rungs := Rungs(b)
	if len(rungs) != RungsPerGap || rungs[0] != b.Warn || rungs[len(rungs)-1] >= b.Limit {
		t.Fatalf("rungs %v for %+v", rungs, b.Budget)
	}
	step := rungs[1] - rungs[0]
	for i := 1; i < len(rungs); i++ {
		if rungs[i]-rungs[i-1] != step {
			t.Errorf("uneven rungs %v", rungs)
		}
	}
	if step != (b.Limit-b.Warn)/RungsPerGap {
		t.Errorf("step %d", step)
	}
}

func TestShort(t *testing.T) {
	b := budget(config.Pause)
	for _, tt := range []struct{ used, inFlight, want uint64 }{
		{900 * mib, 150 * mib, 50 * mib},
		{900 * mib, 100 * mib, 0},
		{900 * mib, 0, 0},
		{1010 * mib, 0, 10 * mib},
	} {
		if got := Short(b, tt.used, tt.inFlight); got != tt.want {
			t.Errorf("Short(%d MiB used, %d MiB in flight) = %d MiB, want %d", tt.used/mib, tt.inFlight/mib, got/mib, tt.want/mib)
		}
	}
}

// TestCeiling: the allocation ceiling sits halfway between the pause line
// and the limit; where nobody can answer a pause there is none (the
// ceiling stops the cell), or, without the ceiling, an interrupt; after a
// first stop the cell runs on to the ceiling, and the next line, for what
// the ceiling cannot refuse, lies above it and is not predicted.
func TestCeiling(t *testing.T) {
	on := budget(config.Pause)
	on.Reserve = reserve(on.Budget)
	if on.Reserve != 25*mib || on.Ceiling() != 975*mib {
		t.Fatalf("reserve %d MiB, ceiling %d MiB; want 25 and 975", on.Reserve/mib, on.Ceiling()/mib)
	}
	if off := budget(config.Pause); off.Ceiling() != 0 {
		t.Errorf("ceiling off: Ceiling() = %d", off.Ceiling())
	}
	small := Budget{Budget: config.Budget{Limit: 400 * mib, Warn: 320 * mib, Pause: 380 * mib}}
	if r := reserve(small.Budget); r != 10*mib {
		t.Errorf("reserve of a 400 MiB budget paused at 380 MiB: %d MiB, want 10", r/mib)
	}
	if r := reserve(config.Budget{Limit: 16 * mib, Warn: 8 * mib, Pause: 15 * mib}); r != 4*mib {
		t.Errorf("reserve of a 16 MiB budget: %d MiB, want a quarter of it", r/mib)
	}
	warned := Done{Warned: true}
	unattended := on
	unattended.Unattended = true
	if ds := Decide(unattended, Input{Used: 999 * mib, Start: 100 * mib, Done: warned}); len(ds) != 0 {
		t.Errorf("unattended with the ceiling: %+v, want no action", ds)
	}
	if _, ok := Next(unattended, Input{Done: warned}); ok {
		t.Error("unattended with the ceiling: a next line")
	}
	fragile := unattended
	fragile.RefusalCosts = true // Deno: a refused allocation ends it
	if ds := Decide(fragile, Input{Used: 951 * mib, Start: 100 * mib, Done: warned}); !slices.Equal(ds, []Decision{{Act: Interrupt, Line: 950 * mib}}) {
		t.Errorf("unattended, a kernel a refusal costs its variables: %+v, want an interrupt", ds)
	}
	fragile.InterruptEnds = true // Deno on SIGINT: an interrupt ends it too
	if ds := Decide(fragile, Input{Used: 999 * mib, Start: 100 * mib, Done: warned}); len(ds) != 0 {
		t.Errorf("unattended, a kernel both an interrupt and a refusal end: %+v, want the ceiling alone", ds)
	}
	bare := budget(config.Pause)
	bare.Unattended = true
	if ds := Decide(bare, Input{Used: 951 * mib, Start: 100 * mib, Done: warned}); !slices.Equal(ds, []Decision{{Act: Interrupt, Line: 950 * mib}}) {
		t.Errorf("unattended without the ceiling: %+v, want an interrupt", ds)
	}
	stopped := Done{Warned: true, Acted: 1}
	if line, ok := Line(on, 1); !ok || line != 1000*mib-on.Reserve/4 {
		t.Errorf("the line after a stop: %d MiB, %v; want above the ceiling and its lifts", line/mib, ok)
	}
	if _, ok := Line(on, 2); ok {
		t.Error("a third line with the ceiling armed")
	}
	if ds := Decide(on, Input{Used: 990 * mib, Start: 100 * mib, Rate: 14 << 30, Horizon: 50 * time.Millisecond, Done: stopped}); len(ds) != 0 {
		t.Errorf("after a resume, heading for the ceiling at 14 GiB/s: %+v; the ceiling stops it", ds)
	}
	// The warning names the line the guard will pause at: moved down for
	// the cell's 64 MiB fills, and below the ceiling, which refuses the
	// next fill, by a fill and a rung, so the pause comes first.
	if line, ok := Next(on, Input{Fill: 64 * mib, Done: Done{}}); !ok || line != 975*mib-64*mib-on.Budget.Limit/80 {
		t.Errorf("Next with 64 MiB fills: %.1f MiB, %v; want 898.5", float64(line)/mib, ok)
	}
}
