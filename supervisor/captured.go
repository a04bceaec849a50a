package supervisor

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// capturedOutput is a copy of the read end of the pipe ipykernel points a
// standard fd at. A thread inside the kernel reads that pipe and forwards
// it to the notebook; when the kernel crashes the thread dies with it, and
// what the crash wrote last (a CUDA error, glibc's or C++'s abort message)
// would be lost in the pipe. The proxy holds a copy it never reads while
// the kernel lives, and drains what is left once it is dead.
type capturedOutput struct {
	file *os.File
	to   io.Writer
}

// holdCaptured takes a copy of the read end behind fd of process pid, if
// the kernel redirected fd into a pipe it reads itself. No capture (other
// kernels, or ipykernel told not to) is no error.
func holdCaptured(pid, fd int, to io.Writer) (*capturedOutput, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
	target, err := os.Readlink(dir + strconv.Itoa(fd))
	if err != nil || !strings.HasPrefix(target, "pipe:") {
		return nil, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil
	}
	for _, e := range entries {
		other, err := strconv.Atoi(e.Name())
		if err != nil || other == fd {
			continue
		}
		if t, err := os.Readlink(dir + e.Name()); err != nil || t != target || !readOnly(pid, other) {
			continue
		}
		pidfd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			return nil, fmt.Errorf("pidfd_open %d: %w", pid, err)
		}
		copied, err := unix.PidfdGetfd(pidfd, other, 0)
		unix.Close(pidfd)
		if err != nil {
			return nil, fmt.Errorf("pidfd_getfd of the kernel's fd %d: %w", other, err)
		}
		return &capturedOutput{file: os.NewFile(uintptr(copied), target), to: to}, nil
	}
	return nil, nil
}

// readOnly tells whether fd of pid is open for reading only.
func readOnly(pid, fd int) bool {
	info, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/fdinfo/" + strconv.Itoa(fd))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(info), "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			flags, err := strconv.ParseInt(strings.TrimSpace(v), 8, 64)
			return err == nil && flags&unix.O_ACCMODE == unix.O_RDONLY
		}
	}
	return false
}

// drain passes on what the dead kernel left in the pipe and lets it go.
func (c *capturedOutput) drain() {
	if c == nil {
		return
	}
	defer c.file.Close()
	if err := unix.SetNonblock(int(c.file.Fd()), true); err != nil {
		return
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(int(c.file.Fd()), buf)
		if n > 0 {
			_, _ = c.to.Write(buf[:n])
		}
		if n <= 0 || err != nil {
			if err != nil && !errors.Is(err, unix.EAGAIN) {
				return
			}
			return
		}
	}
}
