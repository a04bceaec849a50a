package proctree

import (
	"bytes"
	"fmt"
	"os"
	"strconv"

	"github.com/jupyter-guard/jupyter-guard/guard/procfile"
)

// RSSReader reads the memory of processes from /proc/PID/statm,
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

// Usage is what a set of processes holds, in bytes.
type Usage struct {
	// RSS is their resident memory. Pages shared between processes (a
	// forked worker's copy-on-write memory, shared libraries) count once
	// for each, so the sum can overstate a tree; PSS splits them, at a cost
	// too high for sampling.
	RSS uint64
	// Unfilled is the private writable memory they have mapped but not yet
	// touched: statm's data less its anonymous resident pages. NumPy maps a
	// whole array before it fills it, so an array being filled counts its
	// untouched rest here, which the kernel will still be charged for
	// whatever signal it gets meanwhile. Thread stacks and reserved but
	// unused heap count too: only growth of it says something.
	Unfilled uint64
	// Data is statm's data: the private writable mappings and the main
	// thread's stack, touched or not. Less the stack (VmStk in status) it
	// is VmData, what RLIMIT_DATA holds to its limit.
	Data uint64
}

// Sum is the memory of pids together. Processes that are gone count zero.
// The files of processes no longer asked for are closed.
func (r *RSSReader) Sum(pids []int) (Usage, error) { return r.SumEach(pids, nil) }

// SumEach is Sum that also puts each process's own figures in each, which
// must be as long as pids (or nil): each[i] is pids[i]'s, zero if it is
// gone. The allocation ceiling follows every process's data from the
// files the sample reads anyway.
func (r *RSSReader) SumEach(pids []int, each []Usage) (Usage, error) {
	r.calls++
	var total Usage
	for i, pid := range pids {
		if each != nil {
			each[i] = Usage{}
		}
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
			return Usage{}, fmt.Errorf("memory of pid %d: %w", pid, err)
		}
		u, err := parseStatm(statm)
		if err != nil {
			return Usage{}, fmt.Errorf("memory of pid %d: %s: %w", pid, f.Path(), err)
		}
		total.RSS += u.RSS
		total.Unfilled += u.Unfilled
		total.Data += u.Data
		if each != nil {
			each[i] = u
		}
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

// parseStatm reads "size resident shared text lib data dt" (in pages):
// resident less shared is the anonymous part, which data (private writable
// mappings and the stack) holds when it is touched.
func parseStatm(statm []byte) (Usage, error) {
	f := bytes.Fields(statm)
	if len(f) < 6 {
		return Usage{}, fmt.Errorf("not a statm line: %q", statm)
	}
	var n [6]uint64
	for i := range n {
		v, err := strconv.ParseUint(string(f[i]), 10, 64)
		if err != nil {
			return Usage{}, fmt.Errorf("not a statm line: %q", statm)
		}
		n[i] = v
	}
	resident, shared, data := n[1], n[2], n[5]
	anon := resident - min(resident, shared)
	return Usage{RSS: resident * pageSize, Unfilled: (data - min(data, anon)) * pageSize, Data: data * pageSize}, nil
}
