package proctree

import (
	"fmt"
	"os"
)

// PSS returns the proportional set size of pid in bytes: its resident memory
// with each shared page divided among the processes that map it, from
// /proc/PID/smaps_rollup (Linux 4.14+). Reading it walks every mapping under
// the process's mm lock — tens of milliseconds for a big process, stalling
// its page faults meanwhile — so call it on demand (a report, a diagnosis),
// never in a sampling loop. It returns ErrGone if the process is gone, or a
// zombie that has already released its memory.
func PSS(pid int) (uint64, error) {
	data, err := os.ReadFile(procPath(pid, "smaps_rollup"))
	if isGone(err) {
		return 0, fmt.Errorf("pss of pid %d: %w", pid, ErrGone)
	}
	if err != nil {
		return 0, fmt.Errorf("pss of pid %d: %w", pid, err)
	}
	value, ok := lookup(data, "Pss")
	if !ok {
		return 0, fmt.Errorf("pss of pid %d: no Pss line in smaps_rollup", pid)
	}
	pss, err := parseKB(value)
	if err != nil {
		return 0, fmt.Errorf("pss of pid %d: %w", pid, err)
	}
	return pss, nil
}
