package cgroup

import (
	"errors"
	"io/fs"
	"path/filepath"
	"testing"
)

func TestDiscover(t *testing.T) {
	for _, c := range []struct {
		name    string
		host    Host
		pid     int
		version Version
		path    string
		dir     string // under the host's root
	}{
		{"v1 nested", fakeV1, 100, V1, "/jupyter/alice/kernel-1", "/sys/fs/cgroup/memory/jupyter/alice/kernel-1"},
		{"container mount root", fakeContainer, 1, V1, "/docker/0123abcd", "/sys/fs/cgroup/memory"},
		{"container child", fakeContainer, 7, V1, "/docker/0123abcd/kernel", "/sys/fs/cgroup/memory/kernel"},
		{"v2", fakeV2, 100, V2, "/user.slice/user-1000.slice/user@1000.service/app.slice/jupyter-kernel-abc.scope",
			"/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/jupyter-kernel-abc.scope"},
		// A process is charged to the nearest ancestor with the controller.
		{"v2 controller off", fakeV2, 300, V2, "/system.slice", "/sys/fs/cgroup/system.slice"},
		// Names hidden by the namespace are found by the group that holds
		// the pid, and named from the mount's root as the kernel log does.
		{"cgroupns root", fakeNS, 100, V2, "/kubepods.slice/pod-a", "/sys/fs/cgroup/kubepods.slice/pod-a"},
		{"cgroupns child without memory", fakeNS, 102, V2, "/kubepods.slice/pod-a", "/sys/fs/cgroup/kubepods.slice/pod-a"},
		{"cgroupns outside", fakeNS, 7, V2, "/kubepods.slice/pod-b", "/sys/fs/cgroup/kubepods.slice/pod-b"},
		{"own cgroup2 mount", fakeV2Ctr, 1, V2, "/", "/sys/fs/cgroup"},
		{"own cgroup2 mount, child", fakeV2Ctr, 3, V2, "/limited/k", "/sys/fs/cgroup/limited/k"},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := discover(t, c.host, c.pid)
			if g.Version != c.version || g.Path != c.path || g.Dir != filepath.Join(c.host.Root, c.dir) {
				t.Errorf("got %v %s in %s, want %v %s in %s", g.Version, g.Path, g.Dir, c.version, c.path, c.dir)
			}
		})
	}
}

func TestDiscoverFailures(t *testing.T) {
	for _, c := range []struct {
		name string
		host Host
		pid  int
		want error
	}{
		{"no memory line, v2 root", fakeV1, 400, ErrNoMemoryCgroup},
		{"other container", fakeContainer, 9, ErrNoMemoryCgroup},
		{"cgroupns, group removed", fakeNS, 9, fs.ErrNotExist},
		{"own cgroup2 mount, outside it", fakeV2Ctr, 9, ErrNoMemoryCgroup},
		{"v2 root", fakeV2, 400, ErrNoMemoryCgroup},
		{"group removed", fakeV1, 300, fs.ErrNotExist},
		{"process gone", fakeV1, 99999, fs.ErrNotExist},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, err := c.host.Discover(c.pid)
			if !errors.Is(err, c.want) {
				t.Fatalf("Discover(%d) = %+v, %v; want an error wrapping %v", c.pid, g, err, c.want)
			}
			t.Log(err)
		})
	}
}

func TestUnescape(t *testing.T) {
	for in, want := range map[string]string{
		`/sys/fs/cgroup/memory`: "/sys/fs/cgroup/memory",
		`/mnt/my\040dir`:        "/mnt/my dir",
		`/tab\011`:              "/tab\t",
		`/odd\04`:               `/odd\04`,
	} {
		if got := unescape(in); got != want {
			t.Errorf("unescape(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestContainer(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	if got := fakeV2Ctr.Container(); got != "/.dockerenv" {
		t.Errorf("Container() in a Docker container = %q, want /.dockerenv", got)
	}
	if got := fakeV2.Container(); got != "" {
		t.Errorf("Container() on a host = %q, want none", got)
	}
	t.Setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
	if got := fakeV2.Container(); got == "" {
		t.Error("Container() in a pod: none")
	}
}
