package cgroup

import (
	"errors"
	"io/fs"
)

// OOMState is what a cgroup tells about the OOM killer, for the diagnosis of
// a dead kernel and for the guard's pause.
type OOMState struct {
	// Kills counts tasks the OOM killer killed: v1 memory.oom_control
	// oom_kill, v2 memory.events oom_kill. On v2 it includes kills in
	// descendants; on v1 it counts only tasks that were in this very group.
	Kills uint64
	// UnderOOM (v1 only) means tasks are parked in the OOM wait queue: the
	// group is at its limit with oom_kill_disable set.
	UnderOOM bool
	// KillDisabled (v1 only) is oom_kill_disable.
	KillDisabled bool
}

// OOM reads the group's OOM state.
func (g *Group) OOM() (OOMState, error) {
	if g.Version == V2 {
		v, err := readFields(g.file("memory.events"), "oom_kill")
		if err != nil {
			return OOMState{}, err
		}
		return OOMState{Kills: v[0]}, nil
	}
	v, err := readFields(g.file("memory.oom_control"), "oom_kill", "under_oom", "oom_kill_disable")
	if err != nil {
		return OOMState{}, err
	}
	return OOMState{Kills: v[0], UnderOOM: v[1] != 0, KillDisabled: v[2] != 0}, nil
}

// OOMGroup is the cgroup, g or an ancestor, whose memory.oom.group is set
// (v2; Kubernetes 1.28+ sets it on every container): an OOM kill there
// takes every process in it, not only the largest. Empty if none is, or on
// v1, which has no such setting.
func (g *Group) OOMGroup() (string, error) {
	if g.Version != V2 {
		return "", nil
	}
	for a := g; a != nil; a = a.parent() {
		n, err := readUint(a.file("memory.oom.group"))
		if errors.Is(err, fs.ErrNotExist) {
			continue // the root has none
		}
		if err != nil {
			return "", err
		}
		if n == 1 {
			return a.Path, nil
		}
	}
	return "", nil
}
