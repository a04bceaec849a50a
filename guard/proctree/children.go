package proctree

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"

	"github.com/jupyter-guard/jupyter-guard/guard/procfile"
)

// childrenFiles is whether the running kernel was seen to offer children
// files, which it does for good once it does: a stat before each walk is an
// ordinary system call, which wakes Go's monitor thread (package sysio).
var childrenFiles atomic.Bool

// byChildren walks the tree from root through /proc/PID/task/TID/children,
// so its cost follows the kernel's tree rather than the host's process
// count: a sample of a lone kernel reads a handful of small files instead
// of every /proc/PID/stat on the machine. ok is false where the kernel
// offers no children files (CONFIG_PROC_CHILDREN), and the caller scans.
func byChildren(root int) (tree []int, ok bool, err error) {
	if !childrenFiles.Load() {
		if _, err := os.Stat(procPath(root, "task/"+strconv.Itoa(root)+"/children")); err != nil {
			if _, gone := os.Stat(procPath(root, "")); isGone(gone) {
				return nil, true, nil // root itself is gone
			}
			return nil, false, nil
		}
		childrenFiles.Store(true)
	}
	tree = []int{root}
	buf, dirents := make([]byte, 0, 256), make([]byte, 0, 4096)
	var tasks []string
	for i := 0; i < len(tree); i++ {
		tasks, dirents, err = names(procPath(tree[i], "task"), dirents, tasks[:0])
		if isGone(err) {
			if i == 0 {
				return nil, true, nil // root itself is gone
			}
			continue // exited while we walked
		}
		if err != nil {
			return nil, true, fmt.Errorf("threads of pid %d: %w", tree[i], err)
		}
		for _, t := range tasks {
			buf, err = procfile.ReadInto(procPath(tree[i], "task/"+t+"/children"), buf)
			if isGone(err) {
				continue
			}
			if err != nil {
				return nil, true, fmt.Errorf("children of pid %d: %w", tree[i], err)
			}
			for _, f := range bytes.Fields(buf) {
				if pid, err := strconv.Atoi(string(f)); err == nil {
					tree = append(tree, pid)
				}
			}
		}
	}
	return tree, true, nil
}
