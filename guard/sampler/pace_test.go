package sampler

import (
	"testing"
	"time"

	"github.com/jupyter-guard/jupyter-guard/guard/procfile"
	"github.com/jupyter-guard/jupyter-guard/guard/proctree"
)

const mib = 1 << 20

func TestPace(t *testing.T) {
	tests := []struct {
		name          string
		headroom      uint64
		fastest       float64
		pushed        bool
		wait, horizon time.Duration
	}{
		{"far from the line", 40 << 30, 0, false, MaxWait, MaxWait},
		{"1 GiB left at the assumed 16 GiB/s", 1 << 30, 0, false, time.Second / 32, time.Second / 32},
		{"1 GiB left, seen growing at 32 GiB/s", 1 << 30, 32 << 30, false, time.Second / 64, time.Second / 64},
		{"a few MiB left", 4 * mib, 1.6 * (1 << 30), false, MinWait, MinWait},
		{"at the line", 0, 0, false, MinWait, MinWait},
		{"pushed, far", 1 << 30, 0, true, MaxWait, PushLatency},
		{"pushed, 128 MiB left", 128 * mib, 0, true, 125 * time.Millisecond, PushLatency},
		{"pushed, close", 1 * mib, 0, true, PushedMinWait, PushLatency},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wait, horizon := Pace(tt.headroom, tt.fastest, tt.pushed)
			if wait != tt.wait || horizon != tt.horizon {
				t.Errorf("Pace = %v, %v; want %v, %v", wait, horizon, tt.wait, tt.horizon)
			}
		})
	}
}

func TestHostUsed(t *testing.T) {
	if used, err := hostUsed(procfile.New(proctree.Meminfo)); err != nil || used == 0 {
		t.Errorf("live /proc/meminfo: %d, %v", used, err)
	}
}

func TestLagDecays(t *testing.T) {
	var l lag
	if l.now() != 0 {
		t.Fatal("lag before any late wake-up")
	}
	l.late(100 * time.Millisecond)
	if got := l.now(); got > 100*time.Millisecond || got < 99*time.Millisecond {
		t.Errorf("lag right after a 100 ms late wake-up = %v", got)
	}
	l.at = l.at.Add(-lagMemory) // as if lagMemory had passed
	if got := l.now(); got > 50*time.Millisecond || got < 49*time.Millisecond {
		t.Errorf("lag one lagMemory later = %v, want half", got)
	}
	l.late(10 * time.Millisecond) // a smaller one does not erase it
	if got := l.now(); got < 49*time.Millisecond {
		t.Errorf("lag after a smaller late wake-up = %v", got)
	}
}
