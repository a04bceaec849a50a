package guard

import (
	"testing"
	"time"

	"github.com/jupyter-guard/jupyter-guard/guard/config"
	"github.com/jupyter-guard/jupyter-guard/guard/decide"
)

// TestZoneCoversALateSample: the test suite's xeus-python case, a 512 MiB
// budget and a dict growing at 300 MiB/s, is told at least what it grows
// in a sample that comes a zoneLook late; a slow cell keeps half the
// reserve, and no zone reaches below halfway from the warning line.
func TestZoneCoversALateSample(t *testing.T) {
	const mib = 1 << 20
	b := decide.Budget{Budget: config.Budget{Limit: 512 * mib, Warn: 410 * mib, Pause: 483 * mib}, Reserve: 14 * mib}
	ceiling := b.Ceiling()
	if z := zone(b, 300*mib, 0); z < 300*mib*uint64(zoneLook)/uint64(time.Second) {
		t.Errorf("300 MiB/s: zone %d MiB, less than one late sample's growth", z/mib)
	}
	if z := zone(b, 1*mib, 0); z != b.Reserve/2 {
		t.Errorf("1 MiB/s: zone %d MiB, want half the reserve (%d MiB)", z/mib, b.Reserve/2/mib)
	}
	if z := zone(b, 4<<30, time.Second); z != (ceiling-b.Warn)/2 {
		t.Errorf("4 GiB/s, 1 s late: zone %d MiB, want halfway from the warning line (%d MiB)", z/mib, (ceiling-b.Warn)/2/mib)
	}
}
