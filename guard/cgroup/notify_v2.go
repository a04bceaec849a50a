package cgroup

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// WatchPressure adds a PSI trigger on the group's memory.pressure (cgroup
// v2): an event when tasks stalled on memory for more than stall within
// window (the kernel takes windows of 500ms to 10s). Stalls mean reclaim is
// already struggling, which on v2 is the earliest push near memory.high or
// memory.max. Without CAP_SYS_RESOURCE the kernel only takes windows in
// whole multiples of 2s; the window is then widened to the next one and
// stall scaled with it. A second call replaces the trigger. On v1 it fails
// with errors.ErrUnsupported.
func (n *Notifier) WatchPressure(stall, window time.Duration) error {
	if n.g.Version != V2 {
		return fmt.Errorf("%v %s: per-cgroup memory.pressure needs cgroup v2: %w", n.g.Version, n.g.Path, errors.ErrUnsupported)
	}
	fd, err := psiTrigger(n.g.file("memory.pressure"), stall, window)
	if err != nil {
		return err
	}
	return n.install(pressureSet, []source{{fd: fd, poll: unix.POLLPRI, event: Event{Kind: Pressure}}})
}

// unprivilegedWindow is the granularity of PSI windows the kernel accepts
// from a process without CAP_SYS_RESOURCE.
const unprivilegedWindow = 2 * time.Second

// psiTrigger opens a pressure file and writes a "some" trigger to it; the
// returned fd polls POLLPRI when the trigger fires.
func psiTrigger(file string, stall, window time.Duration) (int, error) {
	fd, err := writeTrigger(file, stall, window)
	if errors.Is(err, unix.EINVAL) && window%unprivilegedWindow != 0 {
		wide := (window/unprivilegedWindow + 1) * unprivilegedWindow
		fd, err = writeTrigger(file, stall*wide/window, wide)
	}
	return fd, err
}

func writeTrigger(file string, stall, window time.Duration) (int, error) {
	fd, err := unix.Open(file, unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("PSI trigger: open %s: %w", file, err)
	}
	trigger := fmt.Sprintf("some %d %d", stall.Microseconds(), window.Microseconds())
	// The trailing NUL is needed: /proc/pressure/* overwrite the last byte
	// written with one, which would cut the window's last digit.
	if _, err := unix.Write(fd, append([]byte(trigger), 0)); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("PSI trigger %q on %s: %w", trigger, file, err)
	}
	return fd, nil
}

// eventsSource watches memory.events for changes (inotify IN_MODIFY, which
// the kernel raises whenever one of its counters moves).
func (g *Group) eventsSource() (source, error) {
	file := g.file("memory.events")
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return source{}, fmt.Errorf("inotify for %s: %w", file, err)
	}
	if _, err := unix.InotifyAddWatch(fd, file, unix.IN_MODIFY); err != nil {
		unix.Close(fd)
		return source{}, fmt.Errorf("inotify watch on %s: %w", file, err)
	}
	return source{fd: fd, poll: unix.POLLIN, drain: true, event: Event{Kind: EventsChanged}}, nil
}
