package proctree

import (
	"fmt"
	"os"
	"strconv"
)

// HostProc finds this process's own pids from host pids, which is how the
// GPU driver names processes even inside a container: NVIDIA's driver does
// not support pid namespaces. It reads a /proc mounted from the host's pid
// namespace (a container's bind mount of the host's /proc, such as
// /host/proc): there a process of our container has an NSpid line
// "HOST … OURS", and an ns/pid link equal to ours.
type HostProc struct {
	root string // the host's /proc
	ns   string // our pid namespace, as its ns/pid link reads
}

// NewHostProc reads the host's processes under root; ns is our own pid
// namespace as OwnPIDNamespace returns it.
func NewHostProc(root, ns string) HostProc { return HostProc{root: root, ns: ns} }

// Local is the pid under which we see the process with host pid hostPID;
// ok is false if it is gone or lives in another pid namespace (another
// container's, the host's, or one nested inside ours), where none of our
// processes can be.
func (h HostProc) Local(hostPID int) (pid int, ok bool, err error) {
	dir := h.root + "/" + strconv.Itoa(hostPID)
	ns, err := os.Readlink(dir + "/ns/pid")
	if isGone(err) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("pid namespace of host pid %d: %w", hostPID, err)
	}
	if ns != h.ns {
		return 0, false, nil
	}
	data, err := os.ReadFile(dir + "/status")
	if isGone(err) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("host pid %d: %w", hostPID, err)
	}
	pids, err := parseNSpid(data)
	if err != nil {
		return 0, false, fmt.Errorf("host pid %d: %w", hostPID, err)
	}
	if len(pids) < 2 || pids[0] != hostPID {
		// One level only, or not led by the host pid: root is not a /proc
		// of an ancestor namespace, and its pids map to nothing of ours.
		return 0, false, fmt.Errorf("%s is not the host's /proc: NSpid of %d is %v", h.root, hostPID, pids)
	}
	return pids[len(pids)-1], true, nil
}

// OwnPIDNamespace is this process's pid namespace, as "pid:[4026531836]".
func OwnPIDNamespace() (string, error) {
	ns, err := os.Readlink(procRoot + "/self/ns/pid")
	if err != nil {
		return "", fmt.Errorf("own pid namespace: %w", err)
	}
	return ns, nil
}
