package proctree

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tail is fields 9 to 52 of a real /proc/PID/stat line (Linux 6.1): field
// 22, the start time, is its 14th.
const tail = "4194560 119 0 0 0 0 0 0 0 20 0 1 0 1204388 7544832 256 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0"

func TestParseStat(t *testing.T) {
	tests := []struct {
		stat string
		want Stat
	}{
		{"1234 (sh) S 42 1234 1234 0 -1 " + tail, Stat{State: 'S', PPID: 42, PGrp: 1234, TPGID: -1, Start: 1204388}},
		{"1234 (Web Content) R 7 1 1 34816 1 " + tail, Stat{State: 'R', PPID: 7, PGrp: 1, TPGID: 1, Start: 1204388}},
		{"1234 (a) b) c) T 99 5 5 34817 5 " + tail, Stat{State: 'T', PPID: 99, PGrp: 5, TPGID: 5, Start: 1204388}},
		{"2 (kthreadd) S 0 0 0 0 -1 " + tail, Stat{State: 'S', TPGID: -1, Start: 1204388}},
		// utime 250 and stime 31 ticks, then tail from field 16 on.
		{"7 (busy) R 1 7 7 0 -1 4194560 119 0 0 0 250 31 " + tail[strings.Index(tail, " 0 0 20 ")+1:], Stat{State: 'R', PPID: 1, PGrp: 7, TPGID: -1, CPU: 281, Start: 1204388}},
	}
	for _, tt := range tests {
		got, err := ParseStat([]byte(tt.stat))
		if err != nil || got != tt.want {
			t.Errorf("ParseStat(%q) = %+v, %v; want %+v", tt.stat, got, err, tt.want)
		}
	}
}

func TestParseStatRejects(t *testing.T) {
	for _, stat := range []string{"", "1234 sh S 42 " + tail, "1234 (sh) S", "1234 (sh) S x 1 1 0 -1 " + tail, "1234 (sh) S 1 1 1 0 -1 4194560", "1 (sh) S 1 1 1 0 -1 4194560 119 0 0 0 -5 31 " + tail[strings.Index(tail, " 0 0 20 ")+1:]} {
		if s, err := ParseStat([]byte(stat)); err == nil {
			t.Errorf("ParseStat(%q) = %+v, want an error", stat, s)
		}
	}
}

func TestReadStatOfThisProcessAndAGoneOne(t *testing.T) {
	// The state is the main thread's, running or not while this one reads.
	s, err := ReadStat(os.Getpid())
	if err != nil || s.PPID != os.Getppid() || s.PGrp != syscall.Getpgrp() || s.Start == 0 {
		t.Errorf("ReadStat(self) = %+v, %v", s, err)
	}
	if _, err := ReadStat(exitedPID(t)); !errors.Is(err, ErrGone) {
		t.Errorf("ReadStat of a reaped process: %v, want ErrGone", err)
	}
}

// TestForegroundGroupsFindsAJobOnATerminal: an interactive bash on a
// pseudo-terminal, as bash_kernel runs one, with a command running: bash
// puts it in a process group of its own, in the terminal's foreground.
func TestForegroundGroupsFindsAJobOnATerminal(t *testing.T) {
	// script(1) gives bash the pty; "; true" keeps bash from exec'ing sleep.
	c := start(t, "script", "-qfec", "bash --norc -i -c 'sleep 30; true'", "/dev/null")
	var tree []int
	var job Stat
	pid := 0
	// bash forks the job in its own group and only then moves it to a group of
	// its own and the foreground: wait for both, not for the fork. The job is
	// found by name: CI once saw a fourth process under script.
	for tries := 0; pid == 0 || job.PGrp != pid || job.TPGID != pid; tries++ {
		if tries == 5000 {
			t.Fatalf("no job in a terminal's foreground under script: %s", describe(tree))
		}
		time.Sleep(time.Millisecond)
		var err error
		if tree, err = Descendants(c.pid()); err != nil {
			t.Fatal(err)
		}
		if pid = named(tree, "sleep"); pid != 0 {
			job, _ = ReadStat(pid)
		}
	}
	if g := ForegroundGroups(tree, c.pid()); !slices.Equal(g, []int{pid}) {
		t.Errorf("ForegroundGroups = %v, want the job's group [%d]; %s", g, pid, describe(tree))
	}
	if g := ForegroundGroups(tree, pid); g != nil {
		t.Errorf("ForegroundGroups skipping the job's group = %v, want none", g)
	}
}

// named is the first of pids whose command name is name, or 0.
func named(pids []int, name string) int {
	for _, pid := range pids {
		if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err == nil && strings.TrimSpace(string(comm)) == name {
			return pid
		}
	}
	return 0
}

// describe gives each process's name and stat, for a failure message.
func describe(pids []int) string {
	var b strings.Builder
	for _, pid := range pids {
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		s, err := ReadStat(pid)
		fmt.Fprintf(&b, "\n  %d %s %+v %v", pid, strings.TrimSpace(string(comm)), s, err)
	}
	return b.String()
}
