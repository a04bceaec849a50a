package proctree

import (
	"os"
	"strconv"
	"testing"
)

// benchTree starts a shell with enough sleeping children that the host has
// at least 100 processes, and at least 20 in the tree, as the scan sees them.
func benchTree(b *testing.B) (root int, hostProcs int) {
	b.Helper()
	names, err := os.ReadDir(procRoot)
	if err != nil {
		b.Fatal(err)
	}
	running := 0
	for _, n := range names {
		if _, err := strconv.Atoi(n.Name()); err == nil {
			running++
		}
	}
	kids := max(20, 100-running)
	c := start(b, "sh", "-c", `for i in $(seq `+strconv.Itoa(kids)+`); do sleep 300 & done; echo ready; wait`)
	c.line(b)
	return c.pid(), running + kids + 1
}

func BenchmarkDescendants(b *testing.B) {
	root, procs := benchTree(b)
	for b.Loop() {
		if _, err := Descendants(root); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(procs), "host-procs") // after the loop, which clears metrics
}

func BenchmarkRSS(b *testing.B) {
	root, _ := benchTree(b)
	tree, err := Descendants(root)
	if err != nil {
		b.Fatal(err)
	}
	r := NewRSSReader()
	defer r.Close()
	for b.Loop() {
		if _, err := r.Sum(tree); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(tree)), "tree-procs")
}

// BenchmarkDescendantsThreaded walks a lone process with a dozen threads,
// as an ipykernel is: its cost is a children file per thread.
func BenchmarkDescendantsThreaded(b *testing.B) {
	c := start(b, "python3", "-c", `import threading, time
for _ in range(12): threading.Thread(target=time.sleep, args=(300,), daemon=True).start()
print("ready", flush=True); time.sleep(300)`)
	c.line(b)
	for b.Loop() {
		if _, err := Descendants(c.pid()); err != nil {
			b.Fatal(err)
		}
	}
}
