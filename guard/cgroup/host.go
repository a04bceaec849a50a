package cgroup

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/jupyter-guard/jupyter-guard/guard/proctree"
)

// Host says where the proc and cgroup filesystems are. Every absolute path
// the package reads (/proc/PID/cgroup, /proc/self/mountinfo, mount points,
// /proc/meminfo) is resolved under Root, so a test can point it at a fake tree.
type Host struct {
	Root string
}

// System is the live machine.
var System = Host{Root: "/"}

// path maps an absolute path of the host to the file that holds it.
func (h Host) path(abs string) string {
	return filepath.Join(h.Root, abs)
}

// MemTotal is the host's physical memory (MemTotal in /proc/meminfo): the
// limit that applies when no cgroup sets a smaller one.
func (h Host) MemTotal() (uint64, error) {
	file := h.path(proctree.Meminfo)
	data, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	m, err := proctree.ParseMeminfo(data)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", file, err)
	}
	return m.Total, nil
}

// Container names the sign that the guard runs in a container, or is
// empty: there, a memory limit the guard cannot read (a cgroupfs that is
// not mounted, or shows only part of the tree) may still bind the kernel.
func (h Host) Container() string {
	for _, f := range []string{"/.dockerenv", "/run/.containerenv"} { // Docker's and Podman's marks
		if _, err := os.Stat(h.path(f)); err == nil {
			return f
		}
	}
	if os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
		return "KUBERNETES_SERVICE_HOST is set"
	}
	return ""
}
