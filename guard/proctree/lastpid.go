package proctree

import (
	"bytes"
	"fmt"
	"strconv"
)

// Loadavg is where LastPID's figure is read.
const Loadavg = procRoot + "/loadavg"

// LastPID is the pid (or thread id) the system handed out last, in the
// reader's pid namespace, from the content of /proc/loadavg. While it stays
// the same no process was born, so a tree scanned before cannot have grown:
// a few microseconds to read instead of a walk of every thread's children.
func LastPID(loadavg []byte) (int, error) {
	fields := bytes.Fields(loadavg)
	if len(fields) != 5 {
		return 0, fmt.Errorf("%s: %q has not 5 fields", Loadavg, loadavg)
	}
	pid, err := strconv.Atoi(string(fields[4]))
	if err != nil {
		return 0, fmt.Errorf("%s: last pid %q: %w", Loadavg, fields[4], err)
	}
	return pid, nil
}
