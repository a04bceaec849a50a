package cgroup

import (
	"errors"
	"io/fs"
	"os"
	"slices"
	"testing"
)

func TestNewChildBadNames(t *testing.T) {
	g := scratch(t, V1, v1Kernel)
	for _, name := range []string{"", ".", "..", "a/b"} {
		if _, err := g.NewChild(name); err == nil {
			t.Errorf("NewChild(%q): no error", name)
		}
	}
}

// On a fake v2 tree mkdir makes no control files, as on a real parent
// without memory in cgroup.subtree_control: the child must be refused and
// removed again.
func TestNewChildV2WithoutController(t *testing.T) {
	g := scratch(t, V2, v2Kernel)
	_, err := g.NewChild("kernel")
	if !errors.Is(err, ErrNoMemoryCgroup) {
		t.Fatalf("NewChild error = %v, want ErrNoMemoryCgroup", err)
	}
	if _, err := os.Stat(g.file("kernel")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the refused child was left behind")
	}
}

func TestNewChildPaths(t *testing.T) {
	g := scratch(t, V1, v1Kernel)
	c, err := g.NewChild("k")
	if err != nil {
		t.Fatal(err)
	}
	if c.Path != "/scratch/k" || c.Dir != g.file("k") || c.parent().Dir != g.Dir {
		t.Errorf("child %+v of %+v", c, g)
	}
	if err := c.Remove(); err != nil {
		t.Error(err)
	}
}

func TestProcs(t *testing.T) {
	g := scratch(t, V2, "../../testdata/cgroup/v2/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/jupyter-kernel-abc.scope", "cgroup.procs")
	pids, err := g.Procs()
	if err != nil || !slices.Equal(pids, []int{4242}) {
		t.Errorf("Procs() = %v, %v; want [4242]", pids, err)
	}
	if err := os.WriteFile(g.file("cgroup.procs"), []byte("12\nzz\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Procs(); err == nil {
		t.Error("Procs() of a corrupt cgroup.procs: no error")
	}
}
