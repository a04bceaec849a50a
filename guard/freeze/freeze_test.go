package freeze_test

import (
	"slices"
	"syscall"
	"testing"

	"github.com/jupyter-guard/jupyter-guard/guard/freeze"
	"github.com/jupyter-guard/jupyter-guard/guard/proctree"
	"github.com/jupyter-guard/jupyter-guard/guard/sampler/growtest"
)

// tree is the live tree under root.
func tree(t *testing.T, root int) []int {
	t.Helper()
	pids, err := proctree.Descendants(root)
	if err != nil {
		t.Fatal(err)
	}
	return pids
}

func running(t *testing.T, pids []int) []int {
	t.Helper()
	r, err := freeze.Running(pids)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// settle waits until no pid of the tree is running: SIGSTOP is delivered
// asynchronously, to a process on another CPU by an interrupt.
func settle(t *testing.T, pids []int) {
	t.Helper()
	for range 1000 {
		if len(running(t, pids)) == 0 {
			return
		}
		syscall.Nanosleep(&syscall.Timespec{Nsec: 1e6}, nil)
	}
	t.Fatalf("still running after SIGSTOP: %v", running(t, pids))
}

func TestFreezeAndThawAMultiprocessingTree(t *testing.T) {
	p := growtest.Start(t, nil)
	p.Send(t, "spin 3")
	workers := p.Pids(t, "pids")
	p.Expect(t, "done")
	all := tree(t, p.Pid)
	if len(all) < 1+2*len(workers) { // each worker has a grandchild
		t.Fatalf("tree %v lacks the workers %v and their children", all, workers)
	}

	f := freeze.New(proctree.Descendants)
	r, err := f.Freeze(p.Pid, nil) // no hint: the scans must find them all
	if err != nil {
		t.Fatal(err)
	}
	if r.Stopped != len(all) || !f.Frozen() {
		t.Errorf("Freeze = %+v for a tree of %d; Frozen %v", r, len(all), f.Frozen())
	}
	settle(t, all)

	n, err := f.Thaw()
	if err != nil || n != len(all) {
		t.Errorf("Thaw = %d, %v; want %d", n, err, len(all))
	}
	if f.Frozen() {
		t.Error("still Frozen after Thaw")
	}
	// Busy workers are running again at once (R); the root and the
	// grandchildren sleep (S). None is stopped.
	for _, pid := range all {
		if !slices.Contains(running(t, []int{pid}), pid) {
			t.Errorf("pid %d still stopped after Thaw", pid)
		}
	}
	p.Send(t, "ping") // the root answers again
	p.Expect(t, "pong")
}

func TestFreezeCatchesForksInFlight(t *testing.T) {
	p := growtest.Start(t, nil)
	p.Send(t, "forkloop")
	forker := p.Pids(t, "pid")[0]
	p.Expect(t, "done")
	for len(tree(t, p.Pid)) < 12 { // the forker at full speed
		syscall.Nanosleep(&syscall.Timespec{Nsec: 1e6}, nil)
	}

	f := freeze.New(proctree.Descendants)
	t.Cleanup(func() { f.Thaw() })
	// The hint holds only the forker: its children come and go faster than
	// a scan, so convergence depends on the rescans.
	r, err := f.Freeze(p.Pid, []int{forker})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stopped %d processes in %d scans", r.Stopped, r.Scans)
	all := tree(t, p.Pid)
	settle(t, all)
	// Nothing new appears once all is stopped.
	if again := tree(t, p.Pid); !slices.Equal(again, all) {
		t.Errorf("the frozen tree changed: %v, then %v", all, again)
	}
}

func TestThawSkipsTheDead(t *testing.T) {
	p := growtest.Start(t, nil)
	f := freeze.New(proctree.Descendants)
	if _, err := f.Freeze(p.Pid, nil); err != nil {
		t.Fatal(err)
	}
	// The frozen process dies; Thaw must not fail on it or count it.
	syscall.Kill(p.Pid, syscall.SIGKILL)
	settle(t, []int{p.Pid})
	if n, err := f.Thaw(); err != nil || n != 0 {
		t.Errorf("Thaw of a dead tree = %d, %v", n, err)
	}
}

func TestFreezeAGoneTree(t *testing.T) {
	p := growtest.Start(t, nil)
	syscall.Kill(p.Pid, syscall.SIGKILL)
	settle(t, []int{p.Pid})
	f := freeze.New(proctree.Descendants)
	f.Freeze(p.Pid, nil) // a zombie takes SIGSTOP without effect
	if running(t, []int{p.Pid}) != nil {
		t.Error("a zombie counts as running")
	}
}
