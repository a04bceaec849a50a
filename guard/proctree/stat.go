package proctree

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
)

// Stat is what the guard reads from /proc/PID/stat.
type Stat struct {
	State byte // R, S, D, T (stopped), t (traced), Z, X, ...
	PPID  int
	PGrp  int
	// TPGID is the foreground process group of the process's controlling
	// terminal, or -1 when it has none.
	TPGID int
	Start uint64 // start time in clock ticks since boot: a pid with another start time is another process
	// CPU is the time the process has run, in user and kernel mode, in
	// clock ticks (UserHZ a second); its threads' included, its
	// children's not.
	CPU uint64
}

// ReadStat reads /proc/PID/stat; the error wraps ErrGone when the process
// has exited.
func ReadStat(pid int) (Stat, error) {
	data, err := os.ReadFile(procPath(pid, "stat"))
	if isGone(err) {
		return Stat{}, fmt.Errorf("pid %d: %w", pid, ErrGone)
	}
	if err != nil {
		return Stat{}, err
	}
	return ParseStat(data)
}

// ParseStat reads fields 3 (state), 4 (ppid), 5 (pgrp), 8 (tpgid), 14 and
// 15 (utime, stime) and 22 (starttime) of a /proc/PID/stat line. Field 2, the command name, is in
// parentheses and may itself hold spaces and ')', so fields are counted
// from the last ')'.
func ParseStat(data []byte) (Stat, error) {
	end := bytes.LastIndexByte(data, ')')
	if end < 0 {
		return Stat{}, fmt.Errorf("no ')' after the command name in %q", data)
	}
	f := bytes.Fields(data[end+1:]) // f[0] is field 3
	if len(f) < 20 || len(f[0]) != 1 {
		return Stat{}, fmt.Errorf("short /proc stat line %q", data)
	}
	s := Stat{State: f[0][0]}
	var err error
	for _, n := range []struct {
		to   *int
		i    int
		name string
	}{{&s.PPID, 1, "parent pid"}, {&s.PGrp, 2, "process group"}, {&s.TPGID, 5, "terminal's foreground group"}} {
		if *n.to, err = strconv.Atoi(string(f[n.i])); err != nil {
			return Stat{}, fmt.Errorf("%s %q: %w", n.name, f[n.i], err)
		}
	}
	var ticks [3]uint64
	for i, n := range []struct {
		i    int
		name string
	}{{11, "user time"}, {12, "system time"}, {19, "start time"}} {
		if ticks[i], err = strconv.ParseUint(string(f[n.i]), 10, 64); err != nil {
			return Stat{}, fmt.Errorf("%s %q: %w", n.name, f[n.i], err)
		}
	}
	s.CPU, s.Start = ticks[0]+ticks[1], ticks[2]
	return s, nil
}

// ForegroundGroups returns the process groups, other than skip, that are
// in the foreground of a terminal held by one of pids: the jobs a ^C typed
// there would interrupt. bash_kernel runs each cell as such a job of an
// interactive bash on a pty; a kernel's SIGINT reaches the job only when the
// kernel types ^C itself, which it does not always manage after a pause.
func ForegroundGroups(pids []int, skip int) []int {
	var groups []int
	for _, pid := range pids {
		s, err := ReadStat(pid)
		if err == nil && s.TPGID > 0 && s.TPGID == s.PGrp && s.PGrp != skip && !slices.Contains(groups, s.PGrp) {
			groups = append(groups, s.PGrp)
		}
	}
	return groups
}
