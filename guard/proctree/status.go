package proctree

import (
	"fmt"
	"strconv"
	"syscall"

	"github.com/jupyter-guard/jupyter-guard/guard/procfile"
)

// Status is what the guard reads from /proc/PID/status: the sizes that
// RLIMIT_DATA is checked against.
type Status struct {
	// Data is VmData, the private writable mappings (brk heap included)
	// that RLIMIT_DATA limits: a mapping or brk that would take it past
	// the soft limit fails with ENOMEM. PROT_NONE reservations are not in
	// it until mprotect makes them writable.
	Data uint64
	// Stack is VmStk, the main thread's stack, which statm's data counts
	// and RLIMIT_DATA does not.
	Stack uint64
	// Caught is SigCgt, the signals the process has handlers for: bit n-1
	// for signal n.
	Caught uint64
}

// Catches says whether the process has a handler for sig: sending it a
// signal it does not catch would take its default action, which for most
// is to end it.
func (s Status) Catches(sig syscall.Signal) bool {
	return sig > 0 && sig <= 64 && s.Caught&(1<<(sig-1)) != 0
}

// ReadStatus reads /proc/PID/status into buf's storage (grown if need be)
// and returns it with the buffer; the error wraps ErrGone when the process
// has exited.
func ReadStatus(pid int, buf []byte) (Status, []byte, error) {
	buf, err := procfile.ReadInto(procPath(pid, "status"), buf)
	if isGone(err) {
		return Status{}, buf, fmt.Errorf("pid %d: %w", pid, ErrGone)
	}
	if err != nil {
		return Status{}, buf, err
	}
	st, err := parseStatus(buf)
	if err != nil {
		return Status{}, buf, fmt.Errorf("/proc/%d/status: %w", pid, err)
	}
	return st, buf, nil
}

// parseStatus reads the VmData, VmStk and SigCgt lines. A kernel thread
// has no Vm lines: it maps nothing, and reads as zero.
func parseStatus(status []byte) (Status, error) {
	var st Status
	if value, ok := lookup(status, "SigCgt"); ok {
		n, err := strconv.ParseUint(string(value), 16, 64)
		if err != nil {
			return Status{}, fmt.Errorf("SigCgt %q: %w", value, err)
		}
		st.Caught = n
	}
	for _, f := range []struct {
		key string
		to  *uint64
	}{{"VmData", &st.Data}, {"VmStk", &st.Stack}} {
		value, ok := lookup(status, f.key)
		if !ok {
			continue
		}
		n, err := parseKB(value)
		if err != nil {
			return Status{}, fmt.Errorf("%s: %w", f.key, err)
		}
		*f.to = n
	}
	return st, nil
}
