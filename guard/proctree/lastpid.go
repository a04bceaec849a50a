package proctree

import (
	"bytes"
	"fmt"
	"strconv"
)

// LastPID is the pid (or thread id) the system handed out last, in the
// reader's pid namespace, from /proc/loadavg. While it stays the same no
// process was born, so a tree scanned before cannot have grown: a few
// microseconds to read instead of a walk of every thread's children.
func LastPID() (int, error) {
	var buf [128]byte
	data, err := readInto(procRoot+"/loadavg", buf[:0])
	if err != nil {
		return 0, err
	}
	fields := bytes.Fields(data)
	if len(fields) != 5 {
		return 0, fmt.Errorf("/proc/loadavg: %q has not 5 fields", data)
	}
	pid, err := strconv.Atoi(string(fields[4]))
	if err != nil {
		return 0, fmt.Errorf("/proc/loadavg: last pid %q: %w", fields[4], err)
	}
	return pid, nil
}
