package freeze

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"syscall"
)

// stat is what the freezer reads from /proc/PID/stat.
type stat struct {
	state byte   // R, S, D, T (stopped), t (traced), Z, X, ...
	start uint64 // start time in clock ticks since boot: a pid with another start time is another process
}

// errGone says the process has exited (or exited and was reaped).
var errGone = errors.New("process is gone")

func readStat(pid int) (stat, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return stat{}, errGone
	}
	if err != nil {
		return stat{}, err
	}
	return parseStat(data)
}

// parseStat reads fields 3 (state) and 22 (starttime). The command name,
// field 2, may hold spaces and ')', so fields are counted from the last ')'.
func parseStat(data []byte) (stat, error) {
	end := bytes.LastIndexByte(data, ')')
	if end < 0 {
		return stat{}, fmt.Errorf("no ')' after the command name in %q", data)
	}
	fields := bytes.Fields(data[end+1:]) // fields[0] is field 3
	if len(fields) < 20 || len(fields[0]) != 1 {
		return stat{}, fmt.Errorf("short /proc stat line %q", data)
	}
	start, err := strconv.ParseUint(string(fields[19]), 10, 64)
	if err != nil {
		return stat{}, fmt.Errorf("start time %q: %w", fields[19], err)
	}
	return stat{state: fields[0][0], start: start}, nil
}

// stopped tells whether a state means the process runs no code.
func (s stat) stopped() bool {
	switch s.state {
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
		s, err := readStat(pid)
		if errors.Is(err, errGone) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("state of pid %d: %w", pid, err)
		}
		if !s.stopped() {
			running = append(running, pid)
		}
	}
	return running, nil
}
