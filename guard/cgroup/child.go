package cgroup

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// NewChild creates a cgroup below g, for a kernel the guard wants to own
// (set a limit on, disable the OOM killer of, freeze). On v2 the memory
// controller must be enabled in g's cgroup.subtree_control.
func (g *Group) NewChild(name string) (*Group, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, '/') {
		return nil, fmt.Errorf("cgroup name %q: must be a single path element", name)
	}
	c := *g
	c.Dir, c.Path = filepath.Join(g.Dir, name), path.Join(g.Path, name)
	if err := os.Mkdir(c.Dir, 0o755); err != nil {
		return nil, err
	}
	if a, err := c.charged(); err != nil || a.Dir != c.Dir {
		if err == nil {
			err = fmt.Errorf("%v %s has no memory controller of its own: enable +memory in %s/cgroup.subtree_control", c.Version, c.Path, g.Dir)
		}
		return nil, errors.Join(err, c.Remove())
	}
	return &c, nil
}

// Remove deletes the (empty) cgroup. It fails with EBUSY while tasks remain.
func (g *Group) Remove() error {
	return os.Remove(g.Dir)
}

// AddProc moves a process, with all its threads, into the group.
func (g *Group) AddProc(pid int) error {
	return writeFile(g.file("cgroup.procs"), strconv.Itoa(pid))
}

// Procs lists the processes in the group.
func (g *Group) Procs() ([]int, error) {
	file := g.file("cgroup.procs")
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var pids []int
	for f := range bytes.FieldsSeq(data) {
		pid, err := strconv.Atoi(string(f))
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not a pid", file, f)
		}
		pids = append(pids, pid)
	}
	return pids, nil
}

// SetLimit sets the group's own limit: v1 memory.limit_in_bytes, v2
// memory.max. Swap is not included.
func (g *Group) SetLimit(bytes uint64) error {
	k := V2Max
	if g.Version == V1 {
		k = V1Limit
	}
	return writeFile(g.file(limitFiles[k]), strconv.FormatUint(bytes, 10))
}

// HoldsOnly tells whether every process in the group, and in the groups
// below it (whose usage is the group's too), is one of pids: then the
// group's usage is theirs alone. It stops at the first other process.
func (g *Group) HoldsOnly(pids []int) (bool, error) {
	ours := make(map[int]bool, len(pids))
	for _, p := range pids {
		ours[p] = true
	}
	only := true
	err := filepath.WalkDir(g.Dir, func(dir string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			var procs []int
			if procs, err = (&Group{Dir: dir}).Procs(); err == nil {
				for _, p := range procs {
					if !ours[p] {
						only = false
						return filepath.SkipAll
					}
				}
			}
		}
		if errors.Is(err, os.ErrNotExist) && dir != g.Dir {
			return nil // a group below, removed meanwhile
		}
		return err
	})
	return only, err
}
