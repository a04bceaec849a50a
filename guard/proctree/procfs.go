package proctree

import (
	"io/fs"
	"strconv"
	"syscall"
)

const procRoot = "/proc"

// procPath is /proc/PID/name.
func procPath(pid int, name string) string {
	return procRoot + "/" + strconv.Itoa(pid) + "/" + name
}

// readInto reads a whole /proc file into buf's storage, growing it when the
// file is longer, so a scan over many processes reuses one buffer. procfs
// reports a size of 0, so it reads until EOF. It makes the system calls
// itself: an os.File adds a stat and a finalizer to each open, which for
// the small files a tree walk reads by the dozen costs as much as reading
// them.
func readInto(path string, buf []byte) ([]byte, error) {
	fd, err := open(path)
	if err != nil {
		return buf[:0], err
	}
	defer syscall.Close(fd)
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return buf, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

// open opens a /proc file or directory for reading.
func open(path string) (int, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return -1, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		return fd, nil
	}
}

// names lists a /proc directory, as readInto reads a file: into buf's
// storage, without the os package's per-open stat.
func names(path string, buf []byte, out []string) ([]string, []byte, error) {
	fd, err := open(path)
	if err != nil {
		return out, buf, err
	}
	defer syscall.Close(fd)
	buf = buf[:cap(buf)]
	if len(buf) < 4096 {
		buf = make([]byte, 4096)
	}
	for {
		n, err := syscall.ReadDirent(fd, buf)
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
