package sampler

import "time"

// Pacing bounds. Far from any threshold one sample a second is plenty and
// costs next to nothing; close to one, the wait shrinks to MinWait, so at
// the fastest rates page faults reach (a few GB/s on one core) a line is
// overshot by a few MiB at most.
const (
	MaxWait = time.Second
	MinWait = 2 * time.Millisecond

	// AssumedRate is the growth to expect when nothing pushed covers the
	// next line: a cell can start allocating at full speed between two
	// samples. earlyoom assumes 6 GB/s; page faults on transparent huge
	// pages were measured here at 15 GiB/s from one core.
	AssumedRate = 16 << 30
	// PushedRate and PushedMinWait apply when a pushed threshold covers the
	// next line: the kernel wakes the sampler at the line, and the samples
	// only follow the cell's growth for the ledger (and are a safety net
	// should the push fail).
	PushedRate    = 512 << 20
	PushedMinWait = 20 * time.Millisecond
	// PushLatency is how soon after a pushed crossing the guard has the
	// next measurement: an eventfd wake-up, a goroutine switch, a sample.
	PushLatency = 2 * time.Millisecond
)

// Pace returns how long to sleep before the next sample and the horizon a
// decision must look ahead: the time until the guard sees memory again.
// headroom is what is left until the next line, fastest the fastest growth
// seen in the cell (bytes per second), pushed whether a pushed event covers
// that line. The sleep is half the time the line could be reached in at
// the fastest plausible rate, so samples close in on a line geometrically.
func Pace(headroom uint64, fastest float64, pushed bool) (wait, horizon time.Duration) {
	floor, lo := float64(AssumedRate), MinWait
	if pushed {
		floor, lo = PushedRate, PushedMinWait
	}
	secs := float64(headroom) / max(fastest, floor) / 2
	wait = max(lo, min(MaxWait, time.Duration(secs*float64(time.Second))))
	if pushed {
		return wait, min(wait, PushLatency)
	}
	return wait, wait
}
