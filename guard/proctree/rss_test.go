package proctree

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
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
		u, err := r.Sum([]int{pid})
		if err != nil {
			t.Fatal(err)
		}
		got := u.RSS
		if want := vmRSS(t, pid); !near(got, want) {
			t.Errorf("RSS of pid %d = %d, VmRSS says %d", pid, got, want)
		}
		sum += got
	}
	u, err := r.Sum(pids)
	if err != nil {
		t.Fatal(err)
	}
	total := u.RSS
	if !near(total, sum) {
		t.Errorf("total %d, but the per-process figures add up to %d", total, sum)
	}
	if total < hogMiB<<20 {
		t.Errorf("RSS of a python holding %d MiB = %d bytes", hogMiB, total)
	}
	if len(r.files) != len(pids) {
		t.Errorf("%d files open for %d processes", len(r.files), len(pids))
	}
	each := make([]Usage, len(pids)+1)
	all := append(slices.Clone(pids), exitedPID(t))
	u, err = r.SumEach(all, each)
	if err != nil {
		t.Fatal(err)
	}
	for i, pid := range pids {
		if !near(each[i].RSS, vmRSS(t, pid)) {
			t.Errorf("each[%d].RSS = %d, VmRSS of pid %d says %d", i, each[i].RSS, pid, vmRSS(t, pid))
		}
		if st, _, err := ReadStatus(pid, nil); err != nil || each[i].Data != st.Data+st.Stack {
			t.Errorf("each[%d].Data = %d; status of pid %d says VmData %d + VmStk %d (%v)", i, each[i].Data, pid, st.Data, st.Stack, err)
		}
	}
	if each[len(pids)] != (Usage{}) || each[0].RSS+each[1].RSS != u.RSS {
		t.Errorf("each = %+v for %+v: a gone process must read zero and the rest add up", each, u)
	}
}

// TestRSSFollowsTheTree: a process that exits counts zero and its file is
// closed once it is no longer asked for; one that grows is seen growing
// through the file kept open.
func TestRSSFollowsTheTree(t *testing.T) {
	sh := start(t, "sh", "-c", "echo ready; exec sleep 30")
	sh.line(t)
	// The shell execs sleep after its line: compare sizes once sleep sleeps,
	// not the shell's with sleep's, nor while the loader still maps sleep's
	// libraries (its RSS grew by 213 KiB between two reads in a CI run).
	for tries := 0; ; tries++ {
		exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", sh.pid()))
		wchan, _ := os.ReadFile(fmt.Sprintf("/proc/%d/wchan", sh.pid()))
		if strings.HasSuffix(exe, "/sleep") && strings.Contains(string(wchan), "nanosleep") {
			break
		}
		if tries == 5000 {
			t.Fatal("the shell never exec'd sleep, or sleep never slept")
		}
		time.Sleep(time.Millisecond)
	}
	gone := exitedPID(t)

	r := NewRSSReader()
	defer r.Close()
	u, err := r.Sum([]int{sh.pid(), gone})
	if err != nil {
		t.Fatal(err)
	}
	total := u.RSS
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
	if after.RSS < before.RSS+60<<20 {
		t.Errorf("RSS %d MiB after 64 MiB more, %d MiB before", after.RSS>>20, before.RSS>>20)
	}
}

// TestUnfilledIsTheFillInFlight: 64 MiB mapped private and writable, as
// NumPy maps an array, counts as unfilled until it is touched, and then as
// resident.
func TestUnfilledIsTheFillInFlight(t *testing.T) {
	hog := start(t, "python3", "-c", `
import mmap, signal
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
print("ready", flush=True)
signal.sigwait({signal.SIGUSR1})
m = mmap.mmap(-1, 64 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
print("mapped", flush=True)
signal.sigwait({signal.SIGUSR1})
m.write(b"\x01" * (64 << 20))
print("filled", flush=True)
signal.sigwait({signal.SIGUSR1})`)
	r := NewRSSReader()
	defer r.Close()
	var got [3]Usage
	for i := range got {
		hog.line(t)
		u, err := r.Sum([]int{hog.pid()})
		if err != nil {
			t.Fatal(err)
		}
		got[i] = u
		if err := syscall.Kill(hog.pid(), syscall.SIGUSR1); err != nil {
			t.Fatal(err)
		}
	}
	ready, mapped, filled := got[0], got[1], got[2]
	if mapped.Unfilled < ready.Unfilled+60<<20 || mapped.RSS > ready.RSS+16<<20 {
		t.Errorf("mapped 64 MiB: unfilled %d -> %d MiB, RSS %d -> %d MiB", ready.Unfilled>>20, mapped.Unfilled>>20, ready.RSS>>20, mapped.RSS>>20)
	}
	// The bytes written were built in a temporary of 64 MiB first: RSS may
	// have grown by twice that, the mapping is filled all the same.
	if filled.Unfilled > ready.Unfilled+4<<20 || filled.RSS < mapped.RSS+60<<20 {
		t.Errorf("filled 64 MiB: unfilled %d -> %d MiB, RSS %d -> %d MiB", mapped.Unfilled>>20, filled.Unfilled>>20, mapped.RSS>>20, filled.RSS>>20)
	}
}

func TestParseStatm(t *testing.T) {
	// 1234 resident of which 567 shared: 667 anonymous of 890 data pages.
	u, err := parseStatm([]byte("4242 1234 567 1 0 890 0\n"))
	if want := (Usage{RSS: 1234 * pageSize, Unfilled: 223 * pageSize, Data: 890 * pageSize}); u != want || err != nil {
		t.Errorf("parseStatm = %+v, %v; want %+v", u, err, want)
	}
	// More anonymous pages than data (a big stack touched): nothing unfilled.
	if u, err := parseStatm([]byte("4242 1234 0 1 0 890 0\n")); u.Unfilled != 0 || err != nil {
		t.Errorf("parseStatm = %+v, %v; want nothing unfilled", u, err)
	}
	for _, bad := range []string{"", "4242", "4242 x 1", "1 2 3 4 5"} {
		if _, err := parseStatm([]byte(bad)); err == nil {
			t.Errorf("parseStatm(%q) took it", bad)
		}
	}
}
