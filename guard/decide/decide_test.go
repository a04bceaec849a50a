package decide

import (
	"testing"
	"time"

	"github.com/jupyter-guard/jupyter-guard/guard/config"
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
		want   Decision
	}{
		{"far below", config.Pause, Input{Used: 100 * mib, Start: 50 * mib, Rate: gbps, Horizon: time.Millisecond}, Decision{}},
		{"warn line reached", config.Pause, Input{Used: 800 * mib, Start: 100 * mib}, Decision{Warn, 800 * mib}},
		{"warned once already", config.Pause, Input{Used: 900 * mib, Start: 100 * mib, Done: Done{Warned: true}}, Decision{}},
		{"no warning is predicted", config.Pause, Input{Used: 790 * mib, Start: 100 * mib, Rate: gbps, Horizon: 20 * time.Millisecond}, Decision{}},
		{"pause line reached", config.Pause, Input{Used: 950 * mib, Start: 100 * mib, Done: Done{Warned: true}}, Decision{Pause, 950 * mib}},
		{"pause without a warning first", config.Pause, Input{Used: 960 * mib, Start: 100 * mib}, Decision{Pause, 950 * mib}},
		{"pause predicted within the horizon", config.Pause,
			Input{Used: 945 * mib, Start: 100 * mib, Rate: 1.6 * gbps, Horizon: 5 * time.Millisecond, Done: Done{Warned: true}},
			Decision{Pause, 950 * mib}},
		{"pause not yet predicted", config.Pause,
			Input{Used: 940 * mib, Start: 100 * mib, Rate: 1.6 * gbps, Horizon: 5 * time.Millisecond, Done: Done{Warned: true}},
			Decision{}},
		{"shrinking is not predicted", config.Pause,
			Input{Used: 949 * mib, Start: 100 * mib, Rate: -gbps, Horizon: time.Second, Done: Done{Warned: true}}, Decision{}},
		{"interrupt action", config.Interrupt, Input{Used: 951 * mib, Start: 100 * mib}, Decision{Interrupt, 950 * mib}},
		{"warn action alerts at the pause line", config.Warn, Input{Used: 951 * mib, Start: 100 * mib}, Decision{Alert, 950 * mib}},
		{"after a pause, nothing until halfway to the limit", config.Pause,
			Input{Used: 970 * mib, Start: 100 * mib, Done: Done{Warned: true, Acted: 1}}, Decision{}},
		{"after a pause, halfway to the limit", config.Pause,
			Input{Used: 975 * mib, Start: 100 * mib, Done: Done{Warned: true, Acted: 1}}, Decision{Pause, 975 * mib}},
		{"no warning after an action", config.Pause,
			Input{Used: 960 * mib, Start: 100 * mib, Done: Done{Acted: 1}}, Decision{}},
		{"third line", config.Interrupt, Input{Used: 990 * mib, Start: 100 * mib, Done: Done{Acted: 2}}, Decision{Interrupt, 987.5 * mib}},
		{"lines run out", config.Pause, Input{Used: 999 * mib, Start: 100 * mib, Done: Done{Acted: MaxActions}}, Decision{}},
		{"started past the warn line, grew little", config.Pause, Input{Used: 830 * mib, Start: 820 * mib}, Decision{}},
		{"started past the warn line, grew by the slack", config.Pause, Input{Used: 840 * mib, Start: 820 * mib}, Decision{Warn, 800 * mib}},
		{"started past the pause line, grew little", config.Pause,
			Input{Used: 960 * mib, Start: 955 * mib, Rate: gbps, Horizon: time.Second}, Decision{}},
		{"started past the pause line, grew by the slack", config.Pause, Input{Used: 975 * mib, Start: 955 * mib}, Decision{Pause, 950 * mib}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Decide(budget(tt.action), tt.in); got != tt.want {
				t.Errorf("Decide = %v at %d MiB, want %v at %d MiB", got.Act, got.Line/mib, tt.want.Act, tt.want.Line/mib)
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

func TestNext(t *testing.T) {
	b := budget(config.Pause)
	for _, tt := range []struct {
		done Done
		want uint64
		ok   bool
	}{
		{Done{}, 800 * mib, true},
		{Done{Warned: true}, 950 * mib, true},
		{Done{Acted: 1}, 975 * mib, true},
		{Done{Warned: true, Acted: MaxActions}, 0, false},
	} {
		if got, ok := Next(b, tt.done); got != tt.want || ok != tt.ok {
			t.Errorf("Next(%+v) = %d MiB %v, want %d MiB %v", tt.done, got/mib, ok, tt.want/mib, tt.ok)
		}
	}
}
