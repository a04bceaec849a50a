package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
)

// Version is the cgroup hierarchy that holds the memory controller.
type Version int

const (
	V1 Version = 1
	V2 Version = 2
)

func (v Version) String() string { return fmt.Sprintf("cgroup v%d", int(v)) }

// ErrNoMemoryCgroup means the process has no memory cgroup the guard can
// read: no memory controller mounted, the cgroup lies outside what this mount
// namespace shows, or (v2) the controller is not enabled for it. The caller
// then falls back to host-wide figures.
var ErrNoMemoryCgroup = errors.New("no readable memory cgroup")

// Group is one memory cgroup.
type Group struct {
	Version Version
	// Path is the cgroup as /proc/PID/cgroup names it (the kernel's OOM
	// messages use the same form in oom_memcg= and task_memcg=).
	Path string
	// Dir is its directory in the guard's mount namespace.
	Dir string

	top  string // directory of the mount's root: ancestors are walked up to it
	host Host
}

// file is the path of one of the group's control files.
func (g *Group) file(name string) string { return filepath.Join(g.Dir, name) }

// parent is the enclosing cgroup, or nil at the top of what the mount shows
// (or at "/", for a Group built by hand without a mount).
func (g *Group) parent() *Group {
	up := filepath.Dir(g.Dir)
	if g.Dir == g.top || up == g.Dir {
		return nil
	}
	p := *g
	p.Dir, p.Path = up, path.Dir(g.Path)
	return &p
}

// Lookup finds the directory of a cgroup named by path (as in
// /proc/PID/cgroup) on the memory hierarchy of version v.
func (h Host) Lookup(v Version, cgpath string) (*Group, error) {
	ms, err := h.mounts()
	if err != nil {
		return nil, err
	}
	mounted := false
	for _, m := range ms {
		if !m.holds(v) {
			continue
		}
		mounted = true
		dir, ok := m.dirOf(cgpath)
		if !ok {
			continue
		}
		g := &Group{Version: v, Path: cgpath, Dir: h.path(dir), top: h.path(m.point), host: h}
		if err := g.check(); err != nil {
			return nil, err
		}
		return g, nil
	}
	if !mounted {
		return nil, fmt.Errorf("%v memory hierarchy is not mounted: %w", v, ErrNoMemoryCgroup)
	}
	return nil, fmt.Errorf("%v %s is outside the mounted cgroup trees: %w", v, cgpath, ErrNoMemoryCgroup)
}

// check makes sure the directory exists and, on v2, has the memory
// controller: a v2 cgroup without memory.current accounts nothing.
func (g *Group) check() error {
	if _, err := os.Stat(g.Dir); err != nil {
		return fmt.Errorf("%v %s: %w", g.Version, g.Path, err)
	}
	if g.Version == V1 {
		return nil
	}
	if _, err := os.Stat(g.file("memory.current")); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("cgroup v2 %s has no memory.current (memory controller not enabled): %w", g.Path, ErrNoMemoryCgroup)
	} else if err != nil {
		return err
	}
	return nil
}
