package proctree

import (
	"errors"
	"io/fs"
	"syscall"
)

// ErrGone reports that a process exited before or while it was read.
var ErrGone = errors.New("process is gone")

// isGone tells whether err means the process vanished: its /proc directory
// disappeared (ENOENT) or its task was released mid-read (ESRCH).
func isGone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH)
}
