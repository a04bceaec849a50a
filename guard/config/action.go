package config

import (
	"errors"
	"strings"
)

// Action is what the guard does when the kernel's memory reaches the pause
// threshold.
type Action string

const (
	// Pause stops the kernel (SIGSTOP or the cgroup freezer) until the user
	// frees memory or lets it go on.
	Pause Action = "pause"
	// Interrupt sends the kernel an interrupt, as the stop button does.
	Interrupt Action = "interrupt"
	// Warn only warns, louder: the OOM killer may still strike.
	Warn Action = "warn"
)

// ParseAction reads an action name, in any case.
func ParseAction(s string) (Action, error) {
	switch a := Action(strings.ToLower(strings.TrimSpace(s))); a {
	case Pause, Interrupt, Warn:
		return a, nil
	}
	return "", errors.New("unknown action; use pause, interrupt or warn")
}
