package cgroup

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Arm replaces the usage thresholds (cgroup v1). The kernel signals each one
// when usage crosses it in either direction; it checks every few hundred KiB
// of charges, so expect some overshoot. Arm() with none disarms. On v2 it
// fails with errors.ErrUnsupported: v2 has no usage thresholds.
func (n *Notifier) Arm(thresholds ...uint64) error {
	if n.g.Version != V1 {
		return fmt.Errorf("%v %s: usage thresholds exist only on cgroup v1: %w", n.g.Version, n.g.Path, errors.ErrUnsupported)
	}
	srcs := make([]source, 0, len(thresholds))
	for _, t := range thresholds {
		fd, err := n.g.register("memory.usage_in_bytes", strconv.FormatUint(t, 10))
		if err != nil {
			closeAll(srcs)
			return fmt.Errorf("arming threshold %d: %w", t, err)
		}
		srcs = append(srcs, source{fd: fd, poll: unix.POLLIN, drain: true, event: Event{Kind: UsageCrossed, Threshold: t}})
	}
	return n.install(thresholdSet, srcs)
}

// oomSource asks for an eventfd signal when the group enters the OOM path.
func (g *Group) oomSource() (source, error) {
	fd, err := g.register("memory.oom_control", "")
	if err != nil {
		return source{}, fmt.Errorf("OOM notification: %w", err)
	}
	return source{fd: fd, poll: unix.POLLIN, drain: true, event: Event{Kind: OOMNotified}}, nil
}

// register creates an eventfd and has cgroup.event_control tie it to a
// control file ("<eventfd> <fd of file> [args]"). Closing the eventfd
// unregisters it.
func (g *Group) register(file, args string) (int, error) {
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return -1, fmt.Errorf("eventfd: %w", err)
	}
	f, err := os.Open(g.file(file))
	if err != nil {
		unix.Close(efd)
		return -1, err
	}
	defer f.Close() // the kernel needs it only while the line is written
	line := fmt.Sprintf("%d %d", efd, f.Fd())
	if args != "" {
		line += " " + args
	}
	if err := writeFile(g.file("cgroup.event_control"), line); err != nil {
		unix.Close(efd)
		return -1, err
	}
	return efd, nil
}
