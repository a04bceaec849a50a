package sampler

import (
	"fmt"

	"github.com/jupyter-guard/jupyter-guard/guard/procfile"
	"github.com/jupyter-guard/jupyter-guard/guard/proctree"
)

// hostUsed is the machine's used memory (proctree.HostMemory.Used), read
// from /proc/meminfo.
func hostUsed(meminfo *procfile.File) (uint64, error) {
	data, err := meminfo.Read()
	if err != nil {
		return 0, err
	}
	m, err := proctree.ParseMeminfo(data)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", meminfo.Path(), err)
	}
	return m.Used(), nil
}
