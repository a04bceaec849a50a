package sampler

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/jupyter-guard/jupyter-guard/guard/procfile"
)

const meminfo = "/proc/meminfo"

// hostUsed is the machine's used memory: MemTotal minus MemAvailable, the
// kernel's own estimate of what can be had without swapping, read from
// /proc/meminfo.
func hostUsed(meminfo *procfile.File) (uint64, error) {
	data, err := meminfo.Read()
	if err != nil {
		return 0, err
	}
	return parseMeminfo(data)
}

func parseMeminfo(data []byte) (uint64, error) {
	var total, avail uint64
	var seen int
	for line := range bytes.Lines(data) {
		key, rest, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		var dst *uint64
		switch string(key) {
		case "MemTotal":
			dst = &total
		case "MemAvailable":
			dst = &avail
		default:
			continue
		}
		kb, _, _ := bytes.Cut(bytes.TrimSpace(rest), []byte(" "))
		n, err := strconv.ParseUint(string(kb), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/meminfo %s: %q is not a number of kB", key, bytes.TrimSpace(rest))
		}
		*dst = n * 1024
		seen++
	}
	if seen != 2 {
		return 0, fmt.Errorf("/proc/meminfo: no MemTotal or MemAvailable line")
	}
	return total - min(total, avail), nil
}
