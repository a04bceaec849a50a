package cgroup

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// maxHiddenDirs bounds the search for a group whose ancestors' names the
// cgroup namespace hides: a node's whole tree is a few thousand groups.
const maxHiddenDirs = 20000

// findHidden finds the directory of pid's cgroup when the mount shows more
// than the reader's cgroup namespace names: hidden levels below point, whose
// names /proc does not give, then rest. It is the one directory at that
// depth whose rest/cgroup.procs lists pid (a process is in one group).
func findHidden(point string, hidden int, rest string, pid int) (string, error) {
	if pid <= 0 {
		return "", fmt.Errorf("the cgroup lies %d levels below %s, under names this cgroup namespace hides, and no process was given to find it by: %w", hidden, point, ErrNoMemoryCgroup)
	}
	level, seen := []string{point}, 0
	for range hidden {
		var next []string
		for _, dir := range level {
			entries, err := os.ReadDir(dir)
			if err != nil {
				continue // removed meanwhile, or not ours to read
			}
			for _, e := range entries {
				if !e.IsDir() {
					continue
				}
				if seen++; seen > maxHiddenDirs {
					return "", fmt.Errorf("more than %d cgroups under %s: gave up looking for pid %d's group: %w", maxHiddenDirs, point, pid, ErrNoMemoryCgroup)
				}
				next = append(next, filepath.Join(dir, e.Name()))
			}
		}
		level = next
	}
	for _, dir := range level {
		dir = filepath.Join(dir, rest)
		if holds(dir, pid) {
			return dir, nil
		}
	}
	return "", fmt.Errorf("no cgroup %d levels below %s holds pid %d: %w", hidden, point, pid, ErrNoMemoryCgroup)
}

// holds says whether pid is a process of the group in dir.
func holds(dir string, pid int) bool {
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return false
	}
	want := []byte(strconv.Itoa(pid))
	for line := range bytes.Lines(data) {
		if bytes.Equal(bytes.TrimSpace(line), want) {
			return true
		}
	}
	return false
}
