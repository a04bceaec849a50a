package cgroup

import (
	"os"
	"strings"
	"testing"
)

func TestLimit(t *testing.T) {
	for _, c := range []struct {
		name   string
		host   Host
		pid    int
		want   Limit
		source string
	}{
		{"v1 set by an ancestor", fakeV1, 100, Limit{Bytes: 12 * gib, Kind: V1Limit, Path: "/jupyter/alice"}, "cgroup v1 /jupyter/alice"},
		{"v1 unlimited", fakeV1, 200, Limit{Bytes: 32 * gib, Kind: HostMemory}, "host memory"},
		{"v1 above host memory", fakeV1, 600, Limit{Bytes: 32 * gib, Kind: HostMemory}, "host memory"},
		{"v1 set above the container", fakeContainer, 7, Limit{Bytes: 8 * gib, Kind: V1Limit, Path: "/docker/0123abcd"}, "cgroup v1 /docker/0123abcd"},
		{"v2 high below max", fakeV2, 100, Limit{Bytes: 10 * gib, Kind: V2High, Path: "/user.slice/user-1000.slice"}, "cgroup v2 memory.high at /user.slice/user-1000.slice"},
		{"v2 own max", fakeV2, 200, Limit{Bytes: 8 * gib, Kind: V2Max, Path: "/jupyter.slice/jupyter.service"}, "cgroup v2 memory.max at /jupyter.slice/jupyter.service"},
		{"v2 max everywhere, files missing", fakeV2, 500, Limit{Bytes: 32 * gib, Kind: HostMemory}, "host memory"},
		{"v2 child without memory, unlimited ancestor", fakeV2, 300, Limit{Bytes: 32 * gib, Kind: HostMemory}, "host memory"},
		{"cgroupns, limit on the namespace's root", fakeNS, 102, Limit{Bytes: 2 * gib, Kind: V2Max, Path: "/kubepods.slice/pod-a"}, "cgroup v2 memory.max at /kubepods.slice/pod-a"},
		{"cgroupns, outside the namespace", fakeNS, 7, Limit{Bytes: 4 * gib, Kind: V2Max, Path: "/kubepods.slice/pod-b"}, "cgroup v2 memory.max at /kubepods.slice/pod-b"},
		{"own mount, limit below its root", fakeV2Ctr, 3, Limit{Bytes: gib, Kind: V2Max, Path: "/limited",
			Unseen: "limits above /, the top of what this cgroup mount shows (a cgroup namespace's root), cannot be read"}, "cgroup v2 memory.max at /limited"},
		{"own mount, limit above its root", fakeV2Ctr, 1, Limit{Bytes: 32 * gib, Kind: HostMemory,
			Unseen: "limits above /, the top of what this cgroup mount shows (a cgroup namespace's root), cannot be read"},
			"host memory; limits above /, the top of what this cgroup mount shows (a cgroup namespace's root), cannot be read: set JUPYTER_GUARD_LIMIT to the real limit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := discover(t, c.host, c.pid).Limit()
			if err != nil || got != c.want {
				t.Fatalf("Limit() = %+v, %v; want %+v", got, err, c.want)
			}
			if got.Source() != c.source {
				t.Errorf("Source() = %q, want %q", got.Source(), c.source)
			}
		})
	}
}

func TestLimitErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		host Host
		pid  int
		says string
	}{
		{"v2 invalid memory.max", fakeV2, 600, `"12G"`},
		{"v1 without memory.stat", fakeV1, 500, "memory.stat"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := discover(t, c.host, c.pid).Limit()
			if err == nil || !strings.Contains(err.Error(), c.says) {
				t.Errorf("Limit() error = %v, want one saying %s", err, c.says)
			}
		})
	}
}

func TestMemTotalErrors(t *testing.T) {
	if _, err := (Host{Root: t.TempDir()}).MemTotal(); err == nil {
		t.Error("MemTotal without /proc/meminfo: no error")
	}
}

func TestOOMGroup(t *testing.T) {
	g := scratch(t, V2, "../../testdata/cgroup/v2/sys/fs/cgroup/jupyter.slice", "memory.max")
	if at, err := g.OOMGroup(); at != "" || err != nil {
		t.Errorf("OOMGroup() without the file = %q, %v; want none", at, err)
	}
	for v, want := range map[string]string{"0\n": "", "1\n": "/scratch"} {
		if err := os.WriteFile(g.file("memory.oom.group"), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
		if at, err := g.OOMGroup(); at != want || err != nil {
			t.Errorf("OOMGroup() with %q = %q, %v; want %q", v, at, err, want)
		}
	}
}
