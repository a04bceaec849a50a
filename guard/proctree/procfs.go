package proctree

import (
	"io/fs"
	"strconv"
	"syscall"

	"github.com/jupyter-guard/jupyter-guard/guard/procfile"
	"github.com/jupyter-guard/jupyter-guard/internal/sysio"
)

const procRoot = "/proc"

// procPath is /proc/PID/name.
func procPath(pid int, name string) string {
	return procRoot + "/" + strconv.Itoa(pid) + "/" + name
}

// names lists a /proc directory, as procfile.ReadInto reads a file: into
// buf's storage, without the os package's per-open stat.
func names(path string, buf []byte, out []string) ([]string, []byte, error) {
	fd, err := procfile.Open(path)
	if err != nil {
		return out, buf, err
	}
	defer sysio.Close(fd)
	buf = buf[:cap(buf)]
	if len(buf) < 4096 {
		buf = make([]byte, 4096)
	}
	for {
		n, err := sysio.ReadDirent(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return out, buf, &fs.PathError{Op: "readdirent", Path: path, Err: err}
		}
		if n == 0 {
			return out, buf, nil
		}
		_, _, out = syscall.ParseDirent(buf[:n], -1, out)
	}
}
