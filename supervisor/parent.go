package supervisor

import (
	"errors"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// watchParent stops the proxy when the process that launched it (Jupyter)
// is gone, as ipykernel does with JPY_PARENT_PID. It waits on a pidfd, which
// costs nothing until the parent exits: a once-a-second look wakes several
// of the runtime's threads each time, most of an idle proxy's wake-ups.
// Where there is no pidfd (Linux before 5.3, some sandboxes) it looks once a
// second, as ipykernel does.
func (s *Supervisor) watchParent() {
	want := os.Getppid()
	if !waitExit(want) {
		for range time.Tick(time.Second) {
			if os.Getppid() != want {
				break
			}
		}
	}
	s.signals <- syscall.SIGTERM
}

// waitExit waits until process pid, the proxy's parent, has exited. It
// returns false at once if it cannot wait for that with a pidfd.
func waitExit(pid int) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return true
	}
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	// The pid may have been reused between Getppid and the open; if the
	// parent is still the proxy's parent now, the pidfd is the parent's.
	if os.Getppid() != pid {
		return true
	}
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		_, err := unix.Poll(fds, -1)
		if err == nil {
			return true // a pidfd polls readable when its process exits
		}
		if err != unix.EINTR {
			return false
		}
	}
}
