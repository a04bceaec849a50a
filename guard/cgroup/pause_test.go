package cgroup

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

const (
	v1Kernel = "../../testdata/cgroup/v1/sys/fs/cgroup/memory/jupyter/alice/kernel-1"
	v2Kernel = "../../testdata/cgroup/v2/sys/fs/cgroup/free.slice/kernel.scope"
)

func readBack(t *testing.T, g *Group, name string) string {
	t.Helper()
	data, err := os.ReadFile(g.file(name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestSetOOMKillDisabledWrites(t *testing.T) {
	g := scratch(t, V1, v1Kernel, "memory.oom_control")
	for _, c := range []struct {
		disabled bool
		want     string
	}{{true, "1"}, {false, "0"}} {
		if err := g.SetOOMKillDisabled(c.disabled); err != nil {
			t.Fatal(err)
		}
		if got := readBack(t, g, "memory.oom_control"); got != c.want {
			t.Errorf("SetOOMKillDisabled(%v) wrote %q, want %q", c.disabled, got, c.want)
		}
	}
}

func TestFreeze(t *testing.T) {
	g := scratch(t, V2, v2Kernel, "cgroup.freeze", "cgroup.events")
	if err := g.SetFrozen(true); err != nil {
		t.Fatal(err)
	}
	if got := readBack(t, g, "cgroup.freeze"); got != "1" {
		t.Errorf("SetFrozen(true) wrote %q, want 1", got)
	}
	// The kernel reports completion in cgroup.events; the fake tree
	// stands in for it.
	if frozen, err := g.Frozen(); err != nil || frozen {
		t.Errorf("Frozen() before cgroup.events says so = %v, %v", frozen, err)
	}
	if err := os.WriteFile(g.file("cgroup.events"), []byte("populated 1\nfrozen 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if frozen, err := g.Frozen(); err != nil || !frozen {
		t.Errorf("Frozen() = %v, %v; want true", frozen, err)
	}
}

func TestPauseWrongVersion(t *testing.T) {
	v1, v2 := discover(t, fakeV1, 100), discover(t, fakeV2, 100)
	for name, err := range map[string]error{
		"SetOOMKillDisabled on v2": v2.SetOOMKillDisabled(true),
		"SetFrozen on v1":          v1.SetFrozen(true),
	} {
		if !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("%s: error %v, want ErrUnsupported", name, err)
		}
	}
	if _, err := v1.Frozen(); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Frozen on v1: error %v, want ErrUnsupported", err)
	}
}

// A missing control file means a missing feature: writing must fail, not
// create the file.
func TestWriteNeverCreates(t *testing.T) {
	g := scratch(t, V2, v2Kernel)
	if err := g.SetFrozen(true); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("SetFrozen without cgroup.freeze: error %v, want ErrNotExist", err)
	}
	if _, err := os.Stat(filepath.Join(g.Dir, "cgroup.freeze")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("cgroup.freeze was created")
	}
}
