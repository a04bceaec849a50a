package cgroup

import (
	"errors"
	"fmt"
)

// SetOOMKillDisabled sets or clears oom_kill_disable (cgroup v1) on a group
// the guard owns. While set, tasks that hit the limit sleep in the kernel
// instead of being killed (OOMState.UnderOOM), until usage drops, the limit
// rises, the flag is cleared or they get a fatal signal. Clearing it wakes
// them: if memory is still short, the OOM killer then acts.
func (g *Group) SetOOMKillDisabled(disabled bool) error {
	if g.Version != V1 {
		return fmt.Errorf("%v %s: oom_kill_disable exists only on cgroup v1: %w", g.Version, g.Path, errors.ErrUnsupported)
	}
	return writeFile(g.file("memory.oom_control"), digit(disabled))
}

// SetFrozen freezes or thaws every task of a group (cgroup v2
// cgroup.freeze). Freezing is asynchronous: Frozen says when it is done.
func (g *Group) SetFrozen(frozen bool) error {
	if g.Version != V2 {
		return fmt.Errorf("%v %s: cgroup.freeze exists only on cgroup v2 (v1 has a separate freezer hierarchy): %w", g.Version, g.Path, errors.ErrUnsupported)
	}
	return writeFile(g.file("cgroup.freeze"), digit(frozen))
}

// Frozen reports whether all tasks of a v2 group are frozen (cgroup.events).
func (g *Group) Frozen() (bool, error) {
	if g.Version != V2 {
		return false, fmt.Errorf("%v %s: cgroup.events exists only on cgroup v2: %w", g.Version, g.Path, errors.ErrUnsupported)
	}
	v, err := readFields(g.file("cgroup.events"), "frozen")
	if err != nil {
		return false, err
	}
	return v[0] != 0, nil
}

func digit(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
