package cgroup_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-guard/jupyter-guard/internal/testenv"

	"github.com/jupyter-guard/jupyter-guard/guard/cgroup"
	"github.com/jupyter-guard/jupyter-guard/guard/cgroup/cgrouptest"
)

const mib = 1 << 20

// self is the live memory cgroup of the test process, v1 only.
func self(t testing.TB) *cgroup.Group {
	t.Helper()
	g, err := cgroup.Discover(os.Getpid())
	if err != nil {
		testenv.Missing(t, "no memory cgroup here: %v", err)
	}
	if g.Version != cgroup.V1 {
		testenv.Missing(t, "memory is on %v here; the live tests are for v1", g.Version)
	}
	return g
}

func TestLiveDiscoverSelf(t *testing.T) {
	g := self(t)
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	var want string
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.SplitN(line, ":", 3); len(f) == 3 && f[1] == "memory" {
			want = f[2]
		}
	}
	if g.Path != want {
		t.Errorf("Path = %q, /proc/self/cgroup says %q", g.Path, want)
	}
	u, err := g.Usage()
	if err != nil || u.Bytes == 0 || u.WorkingSet > u.Bytes {
		t.Errorf("Usage() = %+v, %v", u, err)
	}
	lim, err := g.Limit()
	if err != nil {
		t.Fatal(err)
	}
	total, err := cgroup.System.MemTotal()
	if err != nil {
		t.Fatal(err)
	}
	if lim.Bytes > total || lim.Kind == cgroup.HostMemory && lim.Bytes != total {
		t.Errorf("Limit() = %+v with MemTotal %d", lim, total)
	}
	t.Logf("%s: usage %+v, limit %d (%s)", g.Path, u, lim.Bytes, lim.Source())
}

func next(t *testing.T, n *cgroup.Notifier, want cgroup.Event) {
	t.Helper()
	deadline := time.After(60 * time.Second) // only against a hang
	for {
		select {
		case ev, ok := <-n.Events():
			if !ok {
				t.Fatalf("events closed: %v", n.Close())
			}
			if ev == want {
				return
			}
			t.Logf("skipping %+v", ev)
		case <-deadline:
			t.Fatalf("no event %+v", want)
		}
	}
}

func TestLiveOOMKill(t *testing.T) {
	g := cgrouptest.New(t, 256*mib)
	lim, err := g.Cgroup().Limit()
	if err != nil || lim != (cgroup.Limit{Bytes: 256 * mib, Kind: cgroup.V1Limit, Path: g.Path()}) {
		t.Errorf("Limit() = %+v, %v; want 256 MiB set by %s", lim, err, g.Path())
	}
	if n := g.OOMKills(); n != 0 {
		t.Fatalf("a new group has %d OOM kills", n)
	}
	a := allocate(t, g, 400)
	a.allocate(t)
	a.killedByOOM(t)
	if n := g.OOMKills(); n != 1 {
		t.Errorf("OOMKills() = %d after one kill", n)
	}
}

// On v1 the counter is the victim's group's own: a kill caused by the
// parent's limit shows in the child the victim ran in, not in the parent.
// The diagnosis must read the kernel's own group.
func TestLiveOOMKillCountedWhereTheVictimRan(t *testing.T) {
	g := cgrouptest.New(t, 256*mib)
	child, err := g.Cgroup().NewChild("victim") // cgrouptest removes it with g
	if err != nil {
		t.Fatal(err)
	}
	a := allocate(t, g, 400)
	if err := child.AddProc(a.cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	a.allocate(t)
	a.killedByOOM(t)
	for grp, want := range map[*cgroup.Group]uint64{child: 1, g.Cgroup(): 0} {
		s, err := grp.OOM()
		if err != nil || s.Kills != want {
			t.Errorf("%s: OOM() = %+v, %v; want %d kills", grp.Path, s, err, want)
		}
	}
}

func TestLiveThresholds(t *testing.T) {
	g := cgrouptest.New(t, 512*mib)
	n, err := g.Cgroup().Notify()
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if err := n.Arm(100 * mib); err != nil {
		t.Fatal(err)
	}
	a := allocate(t, g, 200)
	a.allocate(t)
	next(t, n, cgroup.Event{Kind: cgroup.UsageCrossed, Threshold: 100 * mib})
	a.expect(t, "ready")
	if u, err := g.Cgroup().Usage(); err != nil || u.Bytes < 200*mib {
		t.Errorf("Usage() = %+v, %v after allocating 200 MiB", u, err)
	}
	// Re-armed above the current usage, it fires on the way down.
	if err := n.Arm(150 * mib); err != nil {
		t.Fatal(err)
	}
	a.stdin.Close()
	if err := a.cmd.Wait(); err != nil {
		t.Fatalf("allocator: %v", err)
	}
	next(t, n, cgroup.Event{Kind: cgroup.UsageCrossed, Threshold: 150 * mib})
}

// The pause primitive: with oom_kill_disable the allocator is parked at the
// limit instead of killed; clearing it lets the OOM killer act.
func TestLiveOOMKillDisable(t *testing.T) {
	g := cgrouptest.New(t, 256*mib)
	cg := g.Cgroup()
	n, err := cg.Notify()
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if err := cg.SetOOMKillDisabled(true); err != nil {
		t.Fatal(err)
	}
	a := allocate(t, g, 400)
	a.allocate(t)
	next(t, n, cgroup.Event{Kind: cgroup.OOMNotified})
	s, err := cg.OOM()
	if err != nil || s != (cgroup.OOMState{UnderOOM: true, KillDisabled: true}) {
		t.Fatalf("parked: OOM() = %+v, %v", s, err)
	}
	if err := cg.SetOOMKillDisabled(false); err != nil {
		t.Fatal(err)
	}
	a.killedByOOM(t)
	if s, err := cg.OOM(); err != nil || s != (cgroup.OOMState{Kills: 1}) {
		t.Errorf("after release: OOM() = %+v, %v", s, err)
	}
}
