// Package procfile re-reads small files the kernel renders on each read
// (/proc/meminfo, a cgroup's memory.stat) through a descriptor kept open.
// A read from offset 0 renders the file afresh; keeping the descriptor
// spares the path lookup and the open and close around every read, which
// in the guard's end-of-cell sample cost more than the reads themselves.
package procfile

import (
	"io/fs"
	"syscall"
)

// File is one such file, opened at its first Read. It is not safe for
// concurrent use.
type File struct {
	path string
	fd   int // -1 while closed
	buf  []byte
}

// New returns the file at path, not yet opened.
func New(path string) *File { return &File{path: path, fd: -1} }

// Path is the file's path.
func (f *File) Path() string { return f.path }

// Read returns the file's content now, valid until the next Read. After an
// error the descriptor is closed and the next Read opens the file again.
func (f *File) Read() ([]byte, error) {
	if f.fd < 0 {
		fd, err := open(f.path)
		if err != nil {
			return nil, err
		}
		f.fd = fd
	}
	if len(f.buf) == 0 {
		f.buf = make([]byte, 4096)
	}
	n := 0
	for {
		if n == len(f.buf) {
			f.buf = append(f.buf, make([]byte, len(f.buf))...)
		}
		m, err := syscall.Pread(f.fd, f.buf[n:], int64(n))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			f.Close()
			return nil, &fs.PathError{Op: "read", Path: f.path, Err: err}
		}
		if m == 0 {
			return f.buf[:n], nil
		}
		n += m
	}
}

// Close closes the descriptor, if open.
func (f *File) Close() error {
	if f.fd < 0 {
		return nil
	}
	err := syscall.Close(f.fd)
	f.fd = -1
	return err
}

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
