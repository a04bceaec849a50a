package proctree

import (
	"bytes"
	"errors"
	"fmt"
)

// Meminfo is the path of the host's memory figures.
const Meminfo = procRoot + "/meminfo"

// HostMemory is what the guard reads from /proc/meminfo, in bytes. The
// sampler needs Total and Available at every sample; the usage panel shows
// the rest, as psutil's virtual_memory() gives them.
type HostMemory struct {
	Total, Free, Available        uint64
	Buffers, Cached, SReclaimable uint64
	Shmem, Active, Inactive, Slab uint64
}

// Used is what the host's processes hold: MemTotal less MemAvailable, the
// kernel's own estimate of what can be had without swapping (as psutil and
// free(1) count it).
func (m HostMemory) Used() uint64 { return m.Total - min(m.Total, m.Available) }

// ParseMeminfo reads the content of a /proc/meminfo in one pass (the
// sampler parses it at every sample); its errors do not name the file,
// which may be a fake tree's. MemTotal and MemAvailable (Linux 3.14+) must
// be there; the other lines read 0 where the kernel lacks them.
func ParseMeminfo(data []byte) (HostMemory, error) {
	var m HostMemory
	seen := 0
	for line := range bytes.Lines(data) {
		key, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		var dst *uint64
		switch string(key) {
		case "MemTotal":
			dst, seen = &m.Total, seen+1
		case "MemAvailable":
			dst, seen = &m.Available, seen+1
		case "MemFree":
			dst = &m.Free
		case "Buffers":
			dst = &m.Buffers
		case "Cached":
			dst = &m.Cached
		case "SReclaimable":
			dst = &m.SReclaimable
		case "Shmem":
			dst = &m.Shmem
		case "Active":
			dst = &m.Active
		case "Inactive":
			dst = &m.Inactive
		case "Slab":
			dst = &m.Slab
		default:
			continue
		}
		n, err := parseKB(bytes.TrimSpace(value))
		if err != nil {
			return HostMemory{}, fmt.Errorf("%s: %w", key, err)
		}
		*dst = n
	}
	if seen != 2 {
		return HostMemory{}, errors.New("no MemTotal or MemAvailable line")
	}
	return m, nil
}
