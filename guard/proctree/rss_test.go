package proctree

import (
	"testing"
)

const hogMiB = 64

func TestRSSMatchesTheKernel(t *testing.T) {
	// Two hogs: processes that have finished starting, so their RSS holds
	// still between our reading and the kernel's.
	hog := startHog(t, hogMiB)
	pids := []int{hog.pid(), startHog(t, 1).pid()}

	total, per, err := RSS(pids)
	if err != nil {
		t.Fatal(err)
	}
	var sum uint64
	for _, pid := range pids {
		if want := vmRSS(t, pid); !near(per[pid], want) {
			t.Errorf("RSS of pid %d = %d, VmRSS says %d", pid, per[pid], want)
		}
		sum += per[pid]
	}
	if total != sum {
		t.Errorf("total %d, but the per-process figures add up to %d", total, sum)
	}
	if per[hog.pid()] < hogMiB<<20 {
		t.Errorf("RSS of a python holding %d MiB = %d bytes", hogMiB, per[hog.pid()])
	}
}

func TestRSSLeavesOutGoneProcesses(t *testing.T) {
	sh := start(t, "sh", "-c", "echo ready; exec sleep 30")
	sh.line(t)
	gone := exitedPID(t)

	total, per, err := RSS([]int{sh.pid(), gone})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := per[gone]; ok {
		t.Errorf("gone pid %d has an entry: %v", gone, per)
	}
	if total == 0 || total != per[sh.pid()] {
		t.Errorf("total %d, want the live process's %d", total, per[sh.pid()])
	}
}
