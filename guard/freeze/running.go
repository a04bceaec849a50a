package freeze

import (
	"errors"
	"fmt"

	"github.com/jupyter-guard/jupyter-guard/guard/proctree"
)

// stopped tells whether a state means the process runs no code.
func stopped(s proctree.Stat) bool {
	switch s.State {
	case 'T', 't', 'Z', 'X':
		return true
	}
	return false
}

// Running returns those of pids that are still running code: not stopped,
// and neither dead nor a zombie. A freeze is complete when it returns none;
// a process in uninterruptible sleep (D) stops when its system call ends.
func Running(pids []int) ([]int, error) {
	var running []int
	for _, pid := range pids {
		s, err := proctree.ReadStat(pid)
		if errors.Is(err, proctree.ErrGone) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("state of pid %d: %w", pid, err)
		}
		if !stopped(s) {
			running = append(running, pid)
		}
	}
	return running, nil
}
