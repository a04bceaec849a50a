// Package procfile re-reads small files the kernel renders on each read
// (/proc/meminfo, a cgroup's memory.stat) through a descriptor kept open.
// A read from offset 0 renders the file afresh; keeping the descriptor
// spares the path lookup and the open and close around every read, which
// in the guard's end-of-cell sample cost more than the reads themselves.
package procfile

import (
	"io/fs"
	"syscall"

	"github.com/jupyter-guard/jupyter-guard/internal/sysio"
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
		fd, err := Open(f.path)
		if err != nil {
			return nil, err
		}
		f.fd = fd
	}
	if cap(f.buf) == 0 {
		f.buf = make([]byte, 0, 4096)
	}
	var err error
	if f.buf, err = readAll(f.fd, f.path, f.buf[:0], true); err != nil {
		f.Close()
		return nil, err
	}
	return f.buf, nil
}

// Close closes the descriptor, if open.
func (f *File) Close() error {
	if f.fd < 0 {
		return nil
	}
	err := sysio.Close(f.fd)
	f.fd = -1
	return err
}

// Open opens a kernel file or directory for reading, with the system call
// itself (made as package sysio says): an os.File adds a stat and a
// finalizer to each open, as costly as reading the small files this
// package is for.
func Open(path string) (int, error) {
	for {
		fd, err := sysio.Open(path)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return -1, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		return fd, nil
	}
}

// ReadInto reads the file at path once, whole, into buf's storage (grown
// if need be), and closes it: for files read once each, such as the
// children of threads that come and go.
func ReadInto(path string, buf []byte) ([]byte, error) {
	fd, err := Open(path)
	if err != nil {
		return buf[:0], err
	}
	defer sysio.Close(fd)
	return readAll(fd, path, buf[:0], false)
}

// readAll reads fd from its start to EOF, appending to buf. With rendered,
// a read that returns less than it was offered is the end: the files File
// is for are rendered whole by one call of the kernel's show function
// (single_open, a cgroup file's seq_show), and a read returns all of what
// fits, which spares the second system call that would only find EOF.
// Files of many records (a task's children) may come in page-sized reads.
func readAll(fd int, path string, buf []byte, rendered bool) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		offered := cap(buf) - len(buf)
		n, err := sysio.Pread(fd, buf[len(buf):cap(buf)], int64(len(buf)))
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
		if rendered && n < offered {
			return buf, nil
		}
	}
}
