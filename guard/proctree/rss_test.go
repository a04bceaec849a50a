package proctree

import (
	"syscall"
	"testing"
)

const hogMiB = 64

func TestRSSMatchesTheKernel(t *testing.T) {
	// Two hogs: processes that have finished starting, so their RSS holds
	// still between our reading and the kernel's.
	hog := startHog(t, hogMiB)
	pids := []int{hog.pid(), startHog(t, 1).pid()}

	r := NewRSSReader()
	defer r.Close()
	var sum uint64
	for _, pid := range pids {
		got, err := r.Sum([]int{pid})
		if err != nil {
			t.Fatal(err)
		}
		if want := vmRSS(t, pid); !near(got, want) {
			t.Errorf("RSS of pid %d = %d, VmRSS says %d", pid, got, want)
		}
		sum += got
	}
	total, err := r.Sum(pids)
	if err != nil {
		t.Fatal(err)
	}
	if !near(total, sum) {
		t.Errorf("total %d, but the per-process figures add up to %d", total, sum)
	}
	if total < hogMiB<<20 {
		t.Errorf("RSS of a python holding %d MiB = %d bytes", hogMiB, total)
	}
	if len(r.files) != len(pids) {
		t.Errorf("%d files open for %d processes", len(r.files), len(pids))
	}
}

// TestRSSFollowsTheTree: a process that exits counts zero and its file is
// closed once it is no longer asked for; one that grows is seen growing
// through the file kept open.
func TestRSSFollowsTheTree(t *testing.T) {
	sh := start(t, "sh", "-c", "echo ready; exec sleep 30")
	sh.line(t)
	gone := exitedPID(t)

	r := NewRSSReader()
	defer r.Close()
	total, err := r.Sum([]int{sh.pid(), gone})
	if err != nil {
		t.Fatal(err)
	}
	if want := vmRSS(t, sh.pid()); total == 0 || !near(total, want) {
		t.Errorf("total %d, want the live process's %d", total, want)
	}
	if _, err := r.Sum([]int{sh.pid()}); err != nil {
		t.Fatal(err)
	}
	if _, open := r.files[gone]; open || len(r.files) != 1 {
		t.Errorf("files open after the gone pid left the tree: %v", r.files)
	}

	// A python that fills 64 MiB more once told to (SIGUSR1). The signal is
	// blocked before "ready" and taken with sigwait, so one sent at any
	// moment after that line is kept pending, never lost to a race with a
	// handler (signal.pause() after a handler ran waits forever).
	hog := start(t, "python3", "-c", `
import signal
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
print("ready", flush=True)
signal.sigwait({signal.SIGUSR1})
hog = bytearray(b"\x01") * (64 << 20)
print("grown", flush=True)
signal.sigwait({signal.SIGUSR1})`)
	hog.line(t)
	before, err := r.Sum([]int{hog.pid()})
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(hog.pid(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	hog.line(t)
	after, err := r.Sum([]int{hog.pid()})
	if err != nil {
		t.Fatal(err)
	}
	if after < before+60<<20 {
		t.Errorf("RSS %d MiB after 64 MiB more, %d MiB before", after>>20, before>>20)
	}
}

func TestSecondField(t *testing.T) {
	if n, err := secondField([]byte("4242 1234 567 1 0 890 0\n")); n != 1234 || err != nil {
		t.Errorf("secondField = %d, %v; want 1234", n, err)
	}
	for _, bad := range []string{"", "4242", "4242 x 1"} {
		if _, err := secondField([]byte(bad)); err == nil {
			t.Errorf("secondField(%q) took it", bad)
		}
	}
}
