package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
)

// LimitKind says what sets a memory limit.
type LimitKind int

const (
	HostMemory LimitKind = iota // MemTotal of /proc/meminfo: no cgroup sets less
	V1Limit                     // v1 memory.limit_in_bytes, as hierarchical_memory_limit reports it
	V2Max                       // v2 memory.max: the OOM killer acts there
	V2High                      // v2 memory.high: the kernel throttles and reclaims there, it does not kill
)

func (k LimitKind) String() string {
	switch k {
	case V1Limit:
		return "cgroup v1"
	case V2Max:
		return "cgroup v2 memory.max"
	case V2High:
		return "cgroup v2 memory.high"
	}
	return "host memory"
}

// Limit is the memory a group can use before the kernel steps in, and who
// sets it.
type Limit struct {
	Bytes uint64
	Kind  LimitKind
	Path  string // the cgroup that sets it; empty for HostMemory
	// Unseen says why a lower limit may bind that the guard cannot read
	// (in a cgroup namespace, limits above its root; in a container, a
	// cgroup the guard cannot see): empty when it read every group up to
	// the root of the hierarchy.
	Unseen string
}

// Source says where the limit comes from, for messages such as "the limit is
// 12 GiB (cgroup v2 memory.high at /user.slice/user-1000.slice)".
func (l Limit) Source() string {
	switch l.Kind {
	case HostMemory:
		if l.Unseen != "" {
			return fmt.Sprintf("%v; %s: set JUPYTER_GUARD_LIMIT to the real limit", l.Kind, l.Unseen)
		}
		return l.Kind.String()
	case V1Limit:
		return fmt.Sprintf("%v %s", l.Kind, l.Path)
	}
	return fmt.Sprintf("%v at %s", l.Kind, l.Path)
}

// Limit is the smallest of the cgroup limits that bind the group (its own
// and every ancestor's) and the host's memory.
func (g *Group) Limit() (Limit, error) {
	lim, err := g.cgroupLimit()
	if err != nil {
		return Limit{}, err
	}
	total, err := g.host.MemTotal()
	if err != nil {
		return Limit{}, err
	}
	if total < lim.Bytes {
		return Limit{Bytes: total, Kind: HostMemory, Unseen: lim.Unseen}, nil
	}
	return lim, nil
}

func (g *Group) cgroupLimit() (Limit, error) {
	if g.Version == V1 {
		return g.v1Limit()
	}
	best := Limit{Bytes: noLimit, Kind: V2Max, Path: g.Path}
	top := g
	for a := g; a != nil; a = a.parent() {
		top = a
		// At equal values the nearer cgroup and memory.max (which kills)
		// win: they say more about what will happen.
		for _, k := range []LimitKind{V2Max, V2High} {
			n, err := a.limitFile(k)
			if err != nil {
				return Limit{}, err
			}
			if n < best.Bytes {
				best = Limit{Bytes: n, Kind: k, Path: a.Path}
			}
		}
	}
	if !top.isRoot() {
		best.Unseen = fmt.Sprintf("limits above %s, the top of what this cgroup mount shows (a cgroup namespace's root), cannot be read", top.Path)
	}
	return best, nil
}

// v1Limit takes the effective limit from hierarchical_memory_limit, which
// also covers ancestors this mount namespace cannot see, then looks for the
// nearest visible cgroup that sets it, to name it.
func (g *Group) v1Limit() (Limit, error) {
	v, err := readFields(g.file("memory.stat"), "hierarchical_memory_limit")
	if err != nil {
		return Limit{}, err
	}
	lim := Limit{Bytes: v[0], Kind: V1Limit}
	for a := g; a != nil; a = a.parent() {
		lim.Path = a.Path // if none matches, it is set at or above the top
		n, err := a.limitFile(V1Limit)
		if err != nil {
			return Limit{}, err
		}
		if n == lim.Bytes {
			break
		}
	}
	return lim, nil
}

var limitFiles = [...]string{V1Limit: "memory.limit_in_bytes", V2Max: "memory.max", V2High: "memory.high"}

// limitFile reads one limit file of the group; a missing file is no limit
// (the v2 root has none, and some runtimes hide them).
func (g *Group) limitFile(k LimitKind) (uint64, error) {
	n, err := readUint(g.file(limitFiles[k]))
	if errors.Is(err, fs.ErrNotExist) {
		return noLimit, nil
	}
	return n, err
}
