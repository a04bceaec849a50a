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

// Lookup finds the memory cgroup that charges a process whose
// /proc/PID/cgroup names cgpath, on the memory hierarchy of version v. pid
// (0 if unknown) finds the group when a cgroup namespace hides the names of
// its ancestors.
func (h Host) Lookup(v Version, cgpath string, pid int) (*Group, error) {
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
		hidden, rest, ok := m.place(cgpath)
		if !ok {
			continue
		}
		point := h.path(m.point)
		g := &Group{Version: v, Path: cgpath, Dir: filepath.Join(point, rest), top: point, host: h}
		if hidden > 0 {
			if g.Dir, err = findHidden(point, hidden, rest, pid); err != nil {
				return nil, fmt.Errorf("%v %s: %w", v, cgpath, err)
			}
			// Named from the mount's root, as the kernel's own messages
			// (oom_memcg=) name it, not with the namespace's "/..".
			rel, _ := filepath.Rel(point, g.Dir)
			g.Path = path.Join("/", filepath.ToSlash(rel))
		}
		return g.charged()
	}
	if !mounted {
		return nil, fmt.Errorf("%v memory hierarchy is not mounted: %w", v, ErrNoMemoryCgroup)
	}
	return nil, fmt.Errorf("%v %s is outside the mounted cgroup trees: %w", v, cgpath, ErrNoMemoryCgroup)
}

// charged is the group whose memory the kernel charges for g's processes:
// g itself, or on v2 the nearest ancestor that has the memory controller
// (memory.current) when g has not, as under systemd user services and in
// pods whose limit sits on an ancestor. That group's usage, limits and OOM
// kills are the processes'.
func (g *Group) charged() (*Group, error) {
	if _, err := os.Stat(g.Dir); err != nil {
		return nil, fmt.Errorf("%v %s: %w", g.Version, g.Path, err)
	}
	if g.Version == V1 {
		return g, nil
	}
	top := g
	for a := g; a != nil; a = a.parent() {
		_, err := os.Stat(a.file("memory.current"))
		if err == nil {
			return a, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		top = a
	}
	upTo := "the root"
	if !top.isRoot() {
		upTo = top.Path + ", the top of what this cgroup mount shows,"
	}
	return nil, fmt.Errorf("cgroup v2 %s: neither it nor an ancestor up to %s has the memory controller: %w", g.Path, upTo, ErrNoMemoryCgroup)
}

// isRoot says whether a v2 group is the root of the whole hierarchy, not
// only of what this mount shows: only non-root groups have cgroup.type.
func (g *Group) isRoot() bool {
	_, err := os.Stat(g.file("cgroup.type"))
	return errors.Is(err, os.ErrNotExist)
}
