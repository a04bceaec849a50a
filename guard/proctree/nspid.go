package proctree

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// parseNSpid reads the NSpid line of a status file: a process's pid in each
// pid namespace it belongs to, first in the namespace that /proc was
// mounted from, last in its own (what getpid() returns inside a container).
// The list never reaches above /proc's namespace: inside a container with
// its own /proc it holds no host pid.
func parseNSpid(status []byte) ([]int, error) {
	value, ok := lookup(status, "NSpid")
	if !ok {
		return nil, errNoNSpid
	}
	var pids []int
	for _, field := range strings.Fields(string(value)) {
		n, err := strconv.Atoi(field)
		if err != nil {
			return nil, fmt.Errorf("NSpid %q: %w", value, err)
		}
		pids = append(pids, n)
	}
	return pids, nil
}

// errNoNSpid marks a status file without an NSpid line: Linux before 4.1.
var errNoNSpid = errors.New("no NSpid line (Linux 4.1+)")

// hostPIDNamespace is how the initial pid namespace's link reads: the kernel
// gives it a fixed inode (PROC_PID_INIT_INO); other namespaces get dynamic
// ones from 0xF0000000 up.
const hostPIDNamespace = "pid:[4026531836]"

// SeesHostPIDs reports whether pids are the host's, which is how the GPU
// driver (NVML) names processes: true on the host and in containers that
// share its pid namespace (--pid=host), false in a container with its own,
// where only the host's /proc maps a process to its host pid (HostProc).
//
// It answers no, too, in the rare nested namespace that kept the host's
// /proc: telling that case apart needs the right to ptrace a process outside
// our namespace, and a wrong yes would blame other people's GPU memory on us.
func SeesHostPIDs() (bool, error) {
	ns, err := OwnPIDNamespace()
	return ns == hostPIDNamespace, err
}
