package cgroup

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// run polls every source on one thread (PSI needs POLLPRI, which Go's
// netpoller does not watch) and closes the descriptors it polls itself, so
// none is closed while a poll holds it.
func (n *Notifier) run(base []source) {
	var sets [numSets][]source
	sets[baseSet] = base
	defer func() {
		n.mu.Lock()
		n.stopping = true
		for _, s := range n.pending {
			closeAll(s)
		}
		n.mu.Unlock()
		for _, s := range sets {
			closeAll(s)
		}
		close(n.events)
		close(n.done)
	}()
	for {
		fds := []unix.PollFd{{Fd: int32(n.wake), Events: unix.POLLIN}}
		var polled []*source
		for k := range sets {
			for i := range sets[k] {
				s := &sets[k][i]
				fds = append(fds, unix.PollFd{Fd: int32(s.fd), Events: s.poll})
				polled = append(polled, s)
			}
		}
		if _, err := unix.Poll(fds, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			n.err = fmt.Errorf("cgroup notifier for %s: poll: %w", n.g.Path, err)
			return
		}
		// Sources first: a wake-up below may close them.
		for i, s := range polled {
			re := fds[i+1].Revents
			if re == 0 {
				continue
			}
			if s.drain {
				drain(s.fd)
			}
			s.dead = re&(unix.POLLERR|unix.POLLHUP|unix.POLLNVAL) != 0
			select {
			case n.events <- s.event:
			default:
			}
		}
		for k := range sets {
			sets[k] = dropDead(sets[k])
		}
		if fds[0].Revents != 0 {
			drain(n.wake)
			if n.takePending(&sets) {
				return
			}
		}
	}
}

// takePending installs replaced source sets and says whether to stop.
func (n *Notifier) takePending(sets *[numSets][]source) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	for k, srcs := range n.pending {
		closeAll(sets[k])
		sets[k] = srcs
	}
	clear(n.pending)
	return n.stopping
}

// dropDead closes sources that reported an error (a PSI trigger of a removed
// cgroup polls as an error forever).
func dropDead(srcs []source) []source {
	kept := srcs[:0]
	for _, s := range srcs {
		if s.dead {
			unix.Close(s.fd)
			continue
		}
		kept = append(kept, s)
	}
	return kept
}

// drain reads an eventfd or inotify fd empty, so it polls quiet again.
func drain(fd int) {
	var buf [4096]byte
	for {
		n, err := unix.Read(fd, buf[:])
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return
		}
	}
}

func closeAll(srcs []source) {
	for _, s := range srcs {
		unix.Close(s.fd)
	}
}
