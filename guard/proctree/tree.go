package proctree

import (
	"fmt"
	"os"
	"strconv"

	"github.com/jupyter-guard/jupyter-guard/guard/procfile"
)

// Descendants returns root followed by every process descended from it,
// parents before their children. It follows the kernel's children files
// where there are some; else it reads /proc/PID/stat of every process on
// the host once, a cost that grows with the host's process count. If root
// is gone the result is empty.
//
// Orphans re-parented to init (or to a subreaper) are no longer descendants.
func Descendants(root int) ([]int, error) {
	if tree, ok, err := byChildren(root); ok {
		return tree, err
	}
	kids, rootAlive, err := childrenByParent(root)
	if err != nil || !rootAlive {
		return nil, err
	}
	tree := []int{root}
	for i := 0; i < len(tree); i++ {
		tree = append(tree, kids[tree[i]]...)
	}
	return tree, nil
}

// childrenByParent scans /proc once and groups every live process under its
// parent's pid. It also tells whether root was among them.
func childrenByParent(root int) (kids map[int][]int, rootAlive bool, err error) {
	dir, err := os.Open(procRoot)
	if err != nil {
		return nil, false, fmt.Errorf("list processes: %w", err)
	}
	names, err := dir.Readdirnames(-1)
	dir.Close()
	if err != nil {
		return nil, false, fmt.Errorf("list processes: %w", err)
	}
	kids = make(map[int][]int, len(names))
	buf := make([]byte, 0, 1024)
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue // not a process: /proc/self, /proc/meminfo, …
		}
		buf, err = procfile.ReadInto(procPath(pid, "stat"), buf)
		if isGone(err) {
			continue
		}
		if err != nil {
			return nil, false, fmt.Errorf("read parent of pid %d: %w", pid, err)
		}
		st, err := ParseStat(buf)
		if err != nil {
			return nil, false, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		kids[st.PPID] = append(kids[st.PPID], pid)
		rootAlive = rootAlive || pid == root
	}
	return kids, rootAlive, nil
}
