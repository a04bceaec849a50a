// Package ratelog keeps a log readable, and small, under a flood of the
// same trouble: a peer that sends millions of bad messages gets a line
// now and then saying how many, not a line each.
package ratelog

import (
	"fmt"
	"sync"
	"time"
)

// Limiter logs each cause at once the first time, then at most once per
// interval; a line after a quiet spell says how many it left out.
type Limiter struct {
	printf func(format string, args ...any)
	every  time.Duration

	mu     sync.Mutex
	causes map[string]*tally
}

type tally struct {
	last    time.Time
	skipped int
}

// New logs through printf, each cause at most once per every.
func New(printf func(format string, args ...any), every time.Duration) *Limiter {
	return &Limiter{printf: printf, every: every, causes: map[string]*tally{}}
}

// Printf logs the line under cause, or counts it if that cause was logged
// less than the interval ago. Causes are a fixed set of kinds of trouble,
// never a peer's own bytes: the map must not grow with a flood.
func (l *Limiter) Printf(cause, format string, args ...any) {
	now := time.Now()
	l.mu.Lock()
	c := l.causes[cause]
	if c == nil {
		c = &tally{}
		l.causes[cause] = c
	}
	if !c.last.IsZero() && now.Sub(c.last) < l.every {
		c.skipped++
		l.mu.Unlock()
		return
	}
	skipped := c.skipped
	c.last, c.skipped = now, 0
	l.mu.Unlock()
	line := fmt.Sprintf(format, args...)
	if skipped > 0 {
		line += fmt.Sprintf(" (and %d more like it since the last such line)", skipped)
	}
	l.printf("%s", line)
}
