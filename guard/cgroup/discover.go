package cgroup

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
)

// Discover finds the memory cgroup of a process on the live system.
func Discover(pid int) (*Group, error) { return System.Discover(pid) }

// Discover finds the memory cgroup of a process: the v1 memory controller's
// line of /proc/PID/cgroup if there is one (hybrid systems keep memory on
// v1), else the v2 "0::" line. Errors wrap ErrNoMemoryCgroup when there is
// nothing to read, and os.ErrNotExist when the process is gone.
func (h Host) Discover(pid int) (*Group, error) {
	file := h.path(fmt.Sprintf("/proc/%d/cgroup", pid))
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var v2path string
	for line := range bytes.Lines(data) {
		// hierarchy-ID:controller-list:cgroup-path
		f := strings.SplitN(strings.TrimSpace(string(line)), ":", 3)
		if len(f) != 3 {
			return nil, fmt.Errorf("%s: malformed line %q", file, line)
		}
		if slices.Contains(strings.Split(f[1], ","), "memory") {
			return h.Lookup(V1, f[2], pid)
		}
		if f[0] == "0" && f[1] == "" {
			v2path = f[2]
		}
	}
	if v2path == "" {
		return nil, fmt.Errorf("%s: no memory controller line and no cgroup v2 line: %w", file, ErrNoMemoryCgroup)
	}
	return h.Lookup(V2, v2path, pid)
}
