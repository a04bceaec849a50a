package proctree

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

// UserHZ is the unit of the CPU times /proc gives: USER_HZ, which Linux
// fixes at 100 ticks a second on every architecture Go supports there
// (what sysconf(_SC_CLK_TCK) returns, out of reach without cgo).
const UserHZ = 100

// HostStat is the path of the host's CPU times.
const HostStat = procRoot + "/stat"

// HostCPU is the host's CPU time so far, from the cpu lines of /proc/stat.
type HostCPU struct {
	// Busy and Total are ticks summed over every CPU: Total is all the
	// time accounted for, Busy that less the idle and iowait times.
	Busy, Total uint64
	// CPUs is the number of CPUs online (a cpuN line each).
	CPUs int
}

// ParseHostCPU reads the content of /proc/stat. The guest times are left
// out of Total: the user and nice times already hold them (psutil counts
// them the same way).
func ParseHostCPU(data []byte) (HostCPU, error) {
	var h HostCPU
	seen := false
	for line := range bytes.Lines(data) {
		f := bytes.Fields(line)
		if len(f) == 0 || !bytes.HasPrefix(f[0], []byte("cpu")) {
			continue
		}
		if len(f[0]) > len("cpu") {
			h.CPUs++
			continue
		}
		if len(f) < 9 {
			return HostCPU{}, fmt.Errorf("short cpu line %q", bytes.TrimSpace(line))
		}
		// user nice system idle iowait irq softirq steal [guest guest_nice]
		for i, v := range f[1:9] {
			n, err := strconv.ParseUint(string(v), 10, 64)
			if err != nil {
				return HostCPU{}, fmt.Errorf("cpu line %q: %w", bytes.TrimSpace(line), err)
			}
			h.Total += n
			if i != 3 && i != 4 {
				h.Busy += n
			}
		}
		seen = true
	}
	if !seen || h.CPUs == 0 {
		return HostCPU{}, errors.New("no cpu lines")
	}
	return h, nil
}

// CPUMeter measures CPU use between its calls, as psutil's cpu_percent()
// does and ipykernel's usage_reply reports it: what was used since the
// previous call. It is safe for concurrent use.
type CPUMeter struct {
	mu      sync.Mutex
	ticks   map[process]uint64 // each process's CPU time at the last Tree call
	at      time.Time          // when it was read
	host    HostCPU            // at the last Host call
	hasHost bool
}

// process is a pid pinned by its start time: a pid reused meanwhile is
// another process, whose ticks are not a difference of the old one's.
type process struct {
	pid   int
	start uint64
}

// NewCPUMeter returns a meter whose first calls have nothing to compare with.
func NewCPUMeter() *CPUMeter { return &CPUMeter{ticks: map[process]uint64{}} }

// Tree is the CPU time pids used since the previous call, in percent of
// one CPU (a tree busy on two CPUs reads 200). A process the previous call
// did not see counts 0, as psutil's first cpu_percent() of a process does;
// one that is gone counts nothing.
func (c *CPUMeter) Tree(pids []int) (float64, error) {
	now := time.Now()
	ticks := make(map[process]uint64, len(pids))
	for _, pid := range pids {
		st, err := ReadStat(pid)
		if errors.Is(err, ErrGone) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("CPU time of pid %d: %w", pid, err)
		}
		ticks[process{pid, st.Start}] = st.CPU
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var used uint64
	for p, t := range ticks {
		if before, ok := c.ticks[p]; ok && t >= before {
			used += t - before
		}
	}
	elapsed := now.Sub(c.at).Seconds()
	c.ticks, c.at = ticks, now
	if elapsed <= 0 || used == 0 {
		return 0, nil
	}
	return float64(used) / UserHZ / elapsed * 100, nil
}

// HostLoad is the host's CPU use between two Host calls.
type HostLoad struct {
	CPUs int // online now
	// Percent is the busy share of all CPUs' time, in percent. Known is
	// false at the first call, where psutil's cpu_percent() returns a
	// meaningless 0 that ipykernel leaves out of its reply.
	Percent float64
	Known   bool
}

// Host is the host's CPU use since the previous call.
func (c *CPUMeter) Host() (HostLoad, error) {
	data, err := os.ReadFile(HostStat)
	if err != nil {
		return HostLoad{}, err
	}
	now, err := ParseHostCPU(data)
	if err != nil {
		return HostLoad{}, fmt.Errorf("%s: %w", HostStat, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	before, had := c.host, c.hasHost
	c.host, c.hasHost = now, true
	load := HostLoad{CPUs: now.CPUs}
	if had && now.Total > before.Total {
		load.Percent = float64(now.Busy-min(now.Busy, before.Busy)) / float64(now.Total-before.Total) * 100
		load.Known = true
	}
	return load, nil
}
