package proctree

import (
	"fmt"

	"github.com/shirou/gopsutil/v3/process"
)

// RSS returns the resident memory of each of pids and their sum, in bytes, as
// /proc/PID/statm reports it. Processes that are gone are left out of per.
// Pages shared between processes (a forked worker's copy-on-write memory,
// shared libraries) count once for each, so the sum can overstate the tree;
// PSS splits them, at a cost too high for sampling.
//
// It builds gopsutil's Process directly instead of calling NewProcess: that
// one stats /proc twice and reads /proc/PID/stat just to check the pid exists,
// which reading statm reports anyway.
func RSS(pids []int) (total uint64, per map[int]uint64, err error) {
	per = make(map[int]uint64, len(pids))
	for _, pid := range pids {
		mem, err := (&process.Process{Pid: int32(pid)}).MemoryInfo()
		if isGone(err) {
			continue
		}
		if err != nil {
			return 0, nil, fmt.Errorf("resident memory of pid %d: %w", pid, err)
		}
		per[pid] = mem.RSS
		total += mem.RSS
	}
	return total, per, nil
}
