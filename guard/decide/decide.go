package decide

import (
	"time"

	"github.com/jupyter-guard/jupyter-guard/guard/config"
	"github.com/jupyter-guard/jupyter-guard/guard/ledger"
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
	// Acted is the number of the next action line: the pauses, interrupts
	// or alerts so far.
	Acted int
	// Thawed: the kernel was thawed for an interrupt since the last
	// action. The cell may grow to Until (what it used then plus the fill
	// in flight, or a whole fill, whichever is more) while the interrupt
	// lands; past it by half a rung, the interrupt has not stopped it,
	// and the next line holds.
	Thawed bool
	Until  uint64
	// Unstopped: the last action came after a thaw whose interrupt did not
	// stop the cell.
	Unstopped bool
}

// Kinds of actions besides the Acts, as the ledger records them.
const (
	// Thawed: the kernel was thawed for an interrupt, a restart or a
	// shutdown. The thawed kernel runs on until the interrupt lands, after
	// the C call it is in returns (a 64 MiB array is finished first):
	// pausing it meanwhile would trap the interrupt in a stopped process,
	// the user's one way out. So the next line holds only past what that
	// takes (Done.Until); a cell that grows further was not stopped by the
	// interrupt (a kernel that ignores SIGINT, C code that never returns)
	// and is stopped again rather than let run into the OOM killer.
	Thawed = "thaw"
	// Resumed: the user let the paused cell go on; the next line holds.
	Resumed = "resume"
	// Unanswered: nobody answered a pause within the pause timeout, and
	// the guard let the cell go on to the ceiling, as Resumed.
	Unanswered = "unanswered"
)

// Tally folds the actions taken in a cell, oldest first, into what Decide
// needs to know.
func Tally(actions []ledger.Action) Done {
	var d Done
	for _, a := range actions {
		switch a.Kind {
		case Warn.String():
			d.Warned = true
		case Pause.String(), Interrupt.String(), Alert.String():
			d.Acted++
			d.Unstopped, d.Thawed = d.Thawed, false
		case Thawed:
			d.Thawed, d.Until = true, a.Until
		}
	}
	return d
}

// Input is one measurement of the running cell, on the budget's figure.
type Input struct {
	Used  uint64 // now
	Start uint64 // when the cell started
	// Rate is the growth in bytes per second, smoothed over about a second
	// (negative: shrinking). The rate over the last interval alone would
	// read a cell that allocates in blocks as growing at the page-fault
	// speed of one block, and predict lines it is far from.
	Rate float64
	// Horizon is how long until the guard sees the next measurement.
	Horizon time.Duration
	// Fill is the largest fill the cell was seen finishing (ledger.Cell.Fill):
	// what it maps at a time and fills in C code, which sees an interrupt
	// only when it is done. The next may start at any moment.
	Fill uint64
	Done Done
}

// Decision is what to do and at which line.
type Decision struct {
	Act  Act
	Line uint64 // the threshold crossed (or about to be)
	// Room is what the line leaves below the limit when it was moved down
	// to let the cell finish its fills (see fillLine); 0 if it was not.
	Room uint64
}

// Reaction is the time the guard allows itself from a measurement to a
// stopped tree: a wake-up, a sample, the SIGSTOPs. Measured here: p50
// 1.9 ms, max 9.8 ms (go test -bench Pause ./guard/sampler). A cell growing
// at 4 GB/s covers 40 MB in that time. The wait for a CPU on a busy
// machine comes on top (100 ms was seen on two loaded cores): the guard
// measures it (sampler.Sample.Lag) and adds it to the horizon, so it is
// not guessed here. Every millisecond of it moves the action line down by
// the cell's rate: 20 ms paused a 3.3 GiB/s cell that stops by itself at
// 85% of the budget, under a 95% pause line, on a lightly loaded machine.
const Reaction = 10 * time.Millisecond

// Margin is how far below an action line the guard acts on a cell growing
// at rate whose next measurement comes within horizon.
func Margin(rate float64, horizon time.Duration) uint64 {
	if rate <= 0 {
		return 0
	}
	return uint64(rate * (horizon + Reaction).Seconds())
}

// trigger is a usage at which Decide acts.
type trigger struct {
	act  Act
	line uint64 // the threshold
	at   uint64 // the usage that counts as reaching it
	room uint64 // Decision.Room
}

// triggers are where Decide acts next on the running cell: the warning,
// then the action line. A line the cell started beyond counts only once
// the cell has grown by Slack, and is not predicted; so does an action
// line the cell started within Slack of: after an interrupt at the pause
// line, memory sits just below it, and the user's next cell (print a
// variable, del a big one) must not be paused for a few KiB.
func triggers(b Budget, in Input) []trigger {
	var ts []trigger
	if !in.Done.Warned && in.Done.Acted == 0 {
		at := b.Warn
		if in.Start >= b.Warn {
			at = in.Start + Slack(b)
		}
		ts = append(ts, trigger{act: Warn, line: b.Warn, at: at})
	}
	act := action(b)
	if act == None {
		return ts
	}
	if line, ok := Line(b, in.Done.Acted); ok && in.Done.Thawed {
		// Only growth the interrupt should have stopped counts: no
		// prediction, as the fill it finishes first grows fast. Below the
		// next line where that leaves room for one more fill, as the first
		// line does (fillLine); never before Until and half a rung, what a
		// measurement may be off by: Slack would leave no room for that
		// fill between a 95% line and the limit.
		// No stop where a fill cannot finish: the interrupt it is for would
		// only let the OOM killer in, and near the limit a cell whose
		// interrupt is on its way can grow that much by other means (the
		// guest's 512 MiB group was stopped again 3 MiB below its limit,
		// and the second interrupt cost the cell its traceback).
		room := b.Limit - min(b.Limit, in.Fill+RungStep(b))
		if at := max(in.Done.Until+RungStep(b)/2, min(line, room)); at+in.Fill < b.Limit {
			ts = append(ts, trigger{act: act, line: at, at: at})
		}
	} else if ok {
		var room uint64
		if in.Done.Acted == 0 {
			line, room = fillLine(b, line, in.Fill)
		}
		// Never before the warning line: it is as early as the user agreed
		// to be stopped. A later line with the ceiling armed is not
		// predicted: the growth a rate foresees is what the ceiling stops
		// below it, and the cell is to run on to the ceiling.
		margin := Margin(in.Rate, in.Horizon)
		if b.Reserve > 0 && in.Done.Acted > 0 {
			margin = 0
		}
		at := max(line-min(line, margin), b.Warn)
		if in.Start+Slack(b) > line {
			at = in.Start + Slack(b)
		}
		ts = append(ts, trigger{act, line, at, room})
	}
	return ts
}

// fillLine is the first action line moved down, if need be, so that a cell
// stopped there can still finish a fill as large as the largest it
// finished, which it may have just begun: the user's interrupt thaws it,
// and the C code filling an array sees the interrupt only once it is done.
// A fill may be sized short by what was filled before the guard first saw
// it, at most the growth between two looks, which the rungs bound near the
// line (a timer paces the looks as closely where nothing pushes): a rung's
// step covers it. It also returns the room the line leaves below the
// limit, 0 if it did not move. After the user resumed, the later lines
// stay where they are: the pause notice said what the fill needs (Short).
// Never below the warning line: a fill too big for that cannot finish in
// any case, and Short says so.
func fillLine(b Budget, line, fill uint64) (uint64, uint64) {
	// With the ceiling armed, the next fill is refused past the ceiling,
	// not the limit: the pause must come before that refusal, where a
	// person can still choose.
	top := b.Limit
	if c := b.Ceiling(); c > 0 {
		top = c
	}
	moved := top - min(top, fill+RungStep(b))
	if fill == 0 || moved >= line {
		return line, 0
	}
	moved = max(moved, b.Warn)
	return moved, b.Limit - moved
}

// Short is how much the fill in flight lacks to finish within the limit
// at used: an interrupt lets it finish first, so a cell paused with a
// shortfall is lost to the OOM killer whatever the user chooses.
func Short(b Budget, used, inFlight uint64) uint64 {
	return used + inFlight - min(used+inFlight, b.Limit)
}

// Decide applies the rules of the package comment: what to do now, in
// order. A cell that grows fast reaches the warning and the action in one
// measurement: it gets both, the warning first.
func Decide(b Budget, in Input) []Decision {
	var ds []Decision
	for _, t := range triggers(b, in) {
		if in.Used >= t.at {
			ds = append(ds, Decision{Act: t.act, Line: t.line, Room: t.room})
		}
	}
	return ds
}

// Headroom is how much the cell can grow before Decide acts; false when
// nothing is left that would make it act. The sampler paces itself on it
// and arms pushed thresholds at Used + Headroom.
func Headroom(b Budget, in Input) (uint64, bool) {
	var room uint64
	found := false
	for _, t := range triggers(b, in) {
		if t.at > in.Used && (!found || t.at-in.Used < room) {
			room, found = t.at-in.Used, true
		}
	}
	return room, found
}

// RungsPerGap is how many pushed thresholds the guard wants between the
// warning line and the limit: a cell growing across them is measured at
// every (Limit-Warn)/RungsPerGap of growth (19 MiB for a 1.5 GiB budget
// warned at 80%), whatever the pace of the timer.
const RungsPerGap = 16

// Rungs are the usages at which the guard wants to be woken: the warning
// line, then evenly up to the limit. They are in the budget's figure; for
// the cgroup's working set they serve as well on its raw usage, which is
// never below it, so the wake-up comes at the rung or before.
func Rungs(b Budget) []uint64 {
	rungs := make([]uint64, 0, RungsPerGap)
	step := RungStep(b)
	for i := range uint64(RungsPerGap) {
		rungs = append(rungs, b.Warn+i*step)
	}
	return rungs
}

// RungStep is the growth between two rungs.
func RungStep(b Budget) uint64 { return (b.Limit - b.Warn) / RungsPerGap }

// Line is the action line after acted actions: the pause threshold, then
// halfway to the limit each time; false when no line is left (MaxActions
// reached, or the halving no longer moves). With the ceiling armed, a cell
// that goes on after the first stop (resumed, or thawed for an interrupt)
// runs on to the ceiling, where an allocation fails: a later line is only
// for what the ceiling cannot refuse (shared memory, page cache, a fill
// under way), so it lies above the ceiling and what it may lift.
func Line(b Budget, acted int) (uint64, bool) {
	if acted >= MaxActions {
		return 0, false
	}
	if acted == 0 {
		return b.Pause, true
	}
	prev, _ := Line(b, acted-1)
	line := b.Limit - (b.Limit-b.Pause)>>acted
	if b.Reserve > 0 {
		line = max(line, b.Limit-b.Reserve/4)
	}
	return line, line > prev
}

// Next is the line at which Decide acts next in the cell, as it will act
// there: the first line moved down for the cell's fills. False if it will
// not act again (or, unattended with the ceiling armed, at all).
func Next(b Budget, in Input) (uint64, bool) {
	if action(b) == None {
		return 0, false
	}
	line, ok := Line(b, in.Done.Acted)
	if ok && in.Done.Acted == 0 {
		line, _ = fillLine(b, line, in.Fill)
	}
	return line, ok
}

// Slack is how much a cell must add before a line it started beyond counts
// for it: an eighth of the gap between warning and pause.
func Slack(b Budget) uint64 { return (b.Pause - b.Warn) / 8 }

// Action is the action the guard takes at the action lines: the
// configured one, except where nobody can answer a pause: then the
// ceiling stops the cell ("", no action), or an interrupt does where there
// is no ceiling, or where a refused allocation would cost the kernel its
// variables and an interrupt would not.
func Action(b Budget) config.Action {
	if b.Action != config.Pause || !b.Unattended {
		return b.Action
	}
	if b.Reserve > 0 && (!b.RefusalCosts || b.InterruptEnds) {
		return ""
	}
	return config.Interrupt
}

func action(b Budget) Act {
	switch Action(b) {
	case config.Interrupt:
		return Interrupt
	case config.Warn:
		return Alert
	case config.Pause:
		return Pause
	}
	return None
}
