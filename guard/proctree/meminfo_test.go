package proctree

import (
	"os"
	"testing"
)

func TestParseMeminfo(t *testing.T) {
	m, err := ParseMeminfo([]byte("MemTotal:       24683712 kB\nMemFree:        22663564 kB\nMemAvailable:   23865576 kB\n" +
		"Buffers: 1 kB\nCached: 2 kB\nSReclaimable: 3 kB\nShmem: 4 kB\nActive: 5 kB\nInactive: 6 kB\nSlab: 7 kB\nHugePages_Total: 0\n"))
	want := HostMemory{Total: 24683712 << 10, Free: 22663564 << 10, Available: 23865576 << 10,
		Buffers: 1 << 10, Cached: 2 << 10, SReclaimable: 3 << 10, Shmem: 4 << 10, Active: 5 << 10, Inactive: 6 << 10, Slab: 7 << 10}
	if err != nil || m != want {
		t.Errorf("ParseMeminfo = %+v, %v; want %+v", m, err, want)
	}
	if m.Used() != (24683712-23865576)<<10 {
		t.Errorf("Used = %d", m.Used())
	}
	for _, bad := range []string{"MemTotal: 1 kB\n", "MemTotal: 1 kB\nMemAvailable: many kB\n", "MemTotal: 1\nMemAvailable: 1 kB\n"} {
		if _, err := ParseMeminfo([]byte(bad)); err == nil {
			t.Errorf("ParseMeminfo(%q): no error", bad)
		}
	}
	live, err := os.ReadFile(Meminfo)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := ParseMeminfo(live); err != nil || m.Total == 0 || m.Available > m.Total {
		t.Errorf("live %s: %+v, %v", Meminfo, m, err)
	}
}
