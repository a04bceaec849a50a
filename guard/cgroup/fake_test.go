package cgroup

import (
	"os"
	"path/filepath"
	"testing"
)

// Hosts built from the fake trees in testdata/cgroup (see its README).
var (
	fakeV1        = Host{Root: "../../testdata/cgroup/v1"}
	fakeContainer = Host{Root: "../../testdata/cgroup/v1-container"}
	fakeV2        = Host{Root: "../../testdata/cgroup/v2"}
	fakeNS        = Host{Root: "../../testdata/cgroup/v2-cgroupns"}
	fakeV2Ctr     = Host{Root: "../../testdata/cgroup/v2-container"}
)

const gib = 1 << 30

func discover(t *testing.T, h Host, pid int) *Group {
	t.Helper()
	g, err := h.Discover(pid)
	if err != nil {
		t.Fatalf("Discover(%d) on %s: %v", pid, h.Root, err)
	}
	return g
}

// scratch copies the named files of a fake group into a temporary
// directory, for tests that write.
func scratch(t *testing.T, v Version, src string, files ...string) *Group {
	t.Helper()
	dir := t.TempDir()
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return &Group{Version: v, Path: "/scratch", Dir: dir, top: dir, host: fakeV2}
}
