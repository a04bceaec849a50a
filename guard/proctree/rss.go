package proctree

import (
	"bytes"
	"fmt"
	"os"
	"strconv"

	"github.com/jupyter-guard/jupyter-guard/guard/procfile"
)

// RSSReader reads the resident memory of processes from /proc/PID/statm,
// each file kept open between reads (see procfile): the guard measures the
// same tree at the end of every cell, and opening a file per process per
// sample cost more than reading it. It is not safe for concurrent use.
type RSSReader struct {
	files map[int]*procfile.File
	gen   map[int]uint64 // the Sum call that last asked for each pid
	calls uint64
}

// NewRSSReader returns a reader with no file open yet.
func NewRSSReader() *RSSReader {
	return &RSSReader{files: map[int]*procfile.File{}, gen: map[int]uint64{}}
}

var pageSize = uint64(os.Getpagesize())

// Sum is the resident memory of pids together, in bytes. Processes that
// are gone count zero. Pages shared between processes (a forked worker's
// copy-on-write memory, shared libraries) count once for each, so the sum
// can overstate the tree; PSS splits them, at a cost too high for sampling.
// The files of processes no longer asked for are closed.
func (r *RSSReader) Sum(pids []int) (uint64, error) {
	r.calls++
	var total uint64
	for _, pid := range pids {
		r.gen[pid] = r.calls
		f := r.files[pid]
		if f == nil {
			f = procfile.New(procPath(pid, "statm"))
			r.files[pid] = f
		}
		statm, err := f.Read()
		if isGone(err) {
			continue // Read closed it: a new process under this pid opens afresh
		}
		if err != nil {
			return 0, fmt.Errorf("resident memory of pid %d: %w", pid, err)
		}
		pages, err := secondField(statm)
		if err != nil {
			return 0, fmt.Errorf("resident memory of pid %d: %s: %w", pid, f.Path(), err)
		}
		total += pages * pageSize
	}
	if len(r.files) > len(pids) {
		r.forget()
	}
	return total, nil
}

// forget closes the files of pids the last Sum did not ask for.
func (r *RSSReader) forget() {
	for pid, f := range r.files {
		if r.gen[pid] != r.calls {
			f.Close()
			delete(r.files, pid)
			delete(r.gen, pid)
		}
	}
}

// Close closes every file.
func (r *RSSReader) Close() {
	r.calls++
	r.forget()
}

// secondField parses statm's resident page count: "size resident shared ...".
func secondField(statm []byte) (uint64, error) {
	_, rest, _ := bytes.Cut(statm, []byte(" "))
	field, _, _ := bytes.Cut(rest, []byte(" "))
	n, err := strconv.ParseUint(string(field), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("no resident page count in %q", statm)
	}
	return n, nil
}
