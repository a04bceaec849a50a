package sampler

import (
	"math"
	"time"
)

// lagMemory is how long a late wake-up is remembered, halving every
// lagMemory: machines stay busy for a while, and a guard that was once kept
// from running for 100 ms should plan for it again.
const lagMemory = 10 * time.Second

// lag tracks how late the sampler's timers fire: the time the process waits
// for a CPU on a busy machine, during which a cell keeps growing unseen.
type lag struct {
	worst time.Duration // decayed maximum
	at    time.Time     // when worst was last updated
}

// late records one wake-up that came d after it was due.
func (l *lag) late(d time.Duration) {
	l.worst = max(l.now(), d)
	l.at = time.Now()
}

// now is the remembered lateness, decayed to this moment.
func (l *lag) now() time.Duration {
	if l.worst <= 0 {
		return 0
	}
	halvings := time.Since(l.at).Seconds() / lagMemory.Seconds()
	return time.Duration(float64(l.worst) * math.Exp2(-halvings))
}
