package proctree

import (
	"os"
	"slices"
	"testing"
)

func TestDescendantsFindsChildrenAndGrandchildren(t *testing.T) {
	// sh ─┬─ sleep
	//     ├─ sleep
	//     └─ sh ── sleep   (a subshell and its child)
	c := start(t, "sh", "-c", `
		sleep 30 & echo $!
		sleep 30 & echo $!
		( sleep 30 & echo $!; wait ) & echo $!
		wait`)
	want := append([]int{c.pid()}, c.pids(t, 4)...)

	got, err := Descendants(c.pid())
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != c.pid() {
		t.Errorf("Descendants starts with %d, want the root %d", got[0], c.pid())
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("Descendants(%d) = %v, want %v", c.pid(), got, want)
	}
}

func TestDescendantsOfALoneProcess(t *testing.T) {
	c := start(t, "sh", "-c", "echo ready; exec sleep 30")
	c.line(t)
	got, err := Descendants(c.pid())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []int{c.pid()}) {
		t.Errorf("Descendants(%d) = %v, want just the root", c.pid(), got)
	}
}

func TestDescendantsOfAGoneProcessIsEmpty(t *testing.T) {
	pid := exitedPID(t)
	got, err := Descendants(pid)
	if err != nil || len(got) != 0 {
		t.Errorf("Descendants(gone %d) = %v, %v; want nothing and no error", pid, got, err)
	}
}

// The children-file walk and the /proc scan must agree on a real tree.
func TestChildrenWalkMatchesTheScan(t *testing.T) {
	c := start(t, "sh", "-c", `
		sleep 30 & echo $!
		( sleep 30 & echo $!; wait ) & echo $!
		wait`)
	c.pids(t, 3) // the tree is complete once its pids are printed
	walked, ok, err := byChildren(c.pid())
	if !ok {
		t.Skip("this kernel has no /proc/PID/task/TID/children files")
	}
	if err != nil {
		t.Fatal(err)
	}
	kids, _, err := childrenByParent(c.pid())
	if err != nil {
		t.Fatal(err)
	}
	scanned := []int{c.pid()}
	for i := 0; i < len(scanned); i++ {
		scanned = append(scanned, kids[scanned[i]]...)
	}
	slices.Sort(walked)
	slices.Sort(scanned)
	if !slices.Equal(walked, scanned) {
		t.Fatalf("children walk %v, /proc scan %v", walked, scanned)
	}
}

func TestLastPIDMovesWithEachNewProcess(t *testing.T) {
	lastPID := func() int {
		data, err := os.ReadFile(Loadavg)
		if err != nil {
			t.Fatal(err)
		}
		pid, err := LastPID(data)
		if err != nil {
			t.Fatal(err)
		}
		return pid
	}
	before := lastPID()
	c := start(t, "true")
	if after := lastPID(); before == after {
		t.Errorf("last pid %d before and after starting pid %d", before, c.pid())
	}
}
