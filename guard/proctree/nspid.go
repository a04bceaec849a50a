package proctree

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// NSpid returns the pids of a process in each pid namespace it belongs to, as
// the NSpid line of /proc/PID/status lists them: first its pid in the
// namespace /proc was mounted from (pid itself), last its pid in its own
// namespace (what getpid() returns inside a container). It returns ErrGone if
// the process is gone.
//
// The list never reaches above /proc's namespace: inside a container with its
// own /proc it holds no host pid. See SeesHostPIDs.
func NSpid(pid int) ([]int, error) {
	data, err := os.ReadFile(procPath(pid, "status"))
	if isGone(err) {
		return nil, fmt.Errorf("namespace pids of pid %d: %w", pid, ErrGone)
	}
	if err != nil {
		return nil, fmt.Errorf("namespace pids of pid %d: %w", pid, err)
	}
	value, ok := lookup(data, "NSpid")
	if !ok {
		return nil, fmt.Errorf("namespace pids of pid %d: no NSpid line (Linux 4.1+)", pid)
	}
	var pids []int
	for _, field := range strings.Fields(string(value)) {
		n, err := strconv.Atoi(field)
		if err != nil {
			return nil, fmt.Errorf("namespace pids of pid %d: NSpid %q: %w", pid, value, err)
		}
		pids = append(pids, n)
	}
	return pids, nil
}

// hostPIDNamespace is how the initial pid namespace's link reads: the kernel
// gives it a fixed inode (PROC_PID_INIT_INO); other namespaces get dynamic
// ones from 0xF0000000 up.
const hostPIDNamespace = "pid:[4026531836]"

// SeesHostPIDs reports whether pids are the host's, which is how the GPU
// driver (NVML) names processes: true on the host and in containers that
// share its pid namespace (--pid=host), false in a container with its own,
// where no file maps a process to its host pid.
//
// It answers no, too, in the rare nested namespace that kept the host's
// /proc: telling that case apart needs the right to ptrace a process outside
// our namespace, and a wrong yes would blame other people's GPU memory on us.
func SeesHostPIDs() (bool, error) {
	ns, err := os.Readlink(procRoot + "/self/ns/pid")
	if err != nil {
		return false, fmt.Errorf("own pid namespace: %w", err)
	}
	return ns == hostPIDNamespace, nil
}
