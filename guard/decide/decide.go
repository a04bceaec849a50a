package decide

import (
	"time"

	"github.com/jupyter-guard/jupyter-guard/guard/config"
)

// Act is what to do now.
type Act int

const (
	None Act = iota
	Warn
	Pause
	Interrupt
	// Alert is the action line's warning with action=warn: the guard will
	// not stop the cell, so it says loudly what is about to happen.
	Alert
)

var actNames = [...]string{None: "none", Warn: "warn", Pause: "pause", Interrupt: "interrupt", Alert: "alert"}

func (a Act) String() string { return actNames[a] }

// MaxActions is how many action lines a cell has: the pause threshold and
// then halfway to the limit, three times.
const MaxActions = 4

// Done is what the guard already did in the running cell.
type Done struct {
	Warned bool
	Acted  int // pauses, interrupts or alerts
}

// Input is one measurement of the running cell, on the budget's figure.
type Input struct {
	Used  uint64 // now
	Start uint64 // when the cell started
	// Rate is the recent growth in bytes per second (negative: shrinking).
	Rate float64
	// Horizon is how long until the guard sees the next measurement.
	Horizon time.Duration
	Done    Done
}

// Decision is what to do and at which line.
type Decision struct {
	Act  Act
	Line uint64 // the threshold crossed (or about to be)
}

// Decide applies the rules of the package comment.
func Decide(b Budget, in Input) Decision {
	if line, ok := Line(b, in.Done.Acted); ok && crossed(b, in, line, true) {
		return Decision{Act: action(b.Action), Line: line}
	}
	if !in.Done.Warned && in.Done.Acted == 0 && crossed(b, in, b.Warn, false) {
		return Decision{Act: Warn, Line: b.Warn}
	}
	return Decision{}
}

// Next is the next line that would make the guard act, for the sampler to
// pace itself and arm pushed thresholds; false when none is left.
func Next(b Budget, d Done) (uint64, bool) {
	if !d.Warned && d.Acted == 0 {
		return b.Warn, true
	}
	return Line(b, d.Acted)
}

// Line is the action line after acted actions: the pause threshold, then
// halfway to the limit each time; false when no line is left (MaxActions
// reached, or the halving no longer moves).
func Line(b Budget, acted int) (uint64, bool) {
	if acted >= MaxActions {
		return 0, false
	}
	if acted == 0 {
		return b.Pause, true
	}
	prev, _ := Line(b, acted-1)
	line := b.Limit - (b.Limit-b.Pause)>>acted
	return line, line > prev
}

// Slack is how much a cell must add before a line it started beyond counts
// for it: an eighth of the gap between warning and pause.
func Slack(b Budget) uint64 { return (b.Pause - b.Warn) / 8 }

// crossed tells whether the cell is at line, or (predict) will be within
// the horizon at its recent rate, and whether the line is the cell's to
// answer for.
func crossed(b Budget, in Input, line uint64, predict bool) bool {
	ours := in.Start < line || in.Used >= in.Start+Slack(b)
	if !ours {
		return false
	}
	if in.Used >= line {
		return true
	}
	if !predict || in.Rate <= 0 {
		return false
	}
	return float64(in.Used)+in.Rate*in.Horizon.Seconds() >= float64(line)
}

func action(a config.Action) Act {
	switch a {
	case config.Interrupt:
		return Interrupt
	case config.Warn:
		return Alert
	}
	return Pause
}
