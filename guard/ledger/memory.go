package ledger

// Figure names one way of measuring the kernel's memory. The budget is
// checked against one of them; the ledger records them all.
type Figure string

const (
	// Tree is the resident memory (RSS) of the kernel's process tree.
	Tree Figure = "tree_rss"
	// Cgroup is the working set of the kernel's memory cgroup: its charge
	// minus inactive page cache, the part the OOM killer cannot reclaim.
	Cgroup Figure = "cgroup"
	// Host is the memory used on the whole machine (MemTotal - MemAvailable).
	Host Figure = "host"
)

// Memory is one measurement of the kernel's memory, in bytes. A figure that
// is not measured here (no cgroup, no GPU) stays 0.
type Memory struct {
	Tree   uint64 `json:"tree_rss"`
	Cgroup uint64 `json:"cgroup,omitzero"`
	Host   uint64 `json:"host,omitzero"`
	GPU    uint64 `json:"gpu,omitzero"`
	// Unfilled is not a figure: what the tree has mapped to write and not
	// yet touched (proctree.Usage). Its growth in a cell is the fill in
	// flight, charged to every figure once it is touched.
	Unfilled uint64 `json:"unfilled,omitzero"`
}

// Of is the value of one figure.
func (m Memory) Of(f Figure) uint64 {
	switch f {
	case Cgroup:
		return m.Cgroup
	case Host:
		return m.Host
	}
	return m.Tree
}

// max is the figure-by-figure maximum: each figure keeps its own peak.
func (m Memory) max(o Memory) Memory {
	return Memory{Tree: max(m.Tree, o.Tree), Cgroup: max(m.Cgroup, o.Cgroup), Host: max(m.Host, o.Host), GPU: max(m.GPU, o.GPU),
		Unfilled: max(m.Unfilled, o.Unfilled)}
}
