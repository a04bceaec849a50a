package gpu

import (
	"fmt"

	"github.com/jupyter-guard/jupyter-guard/guard/units"
)

// Describe says in a line per GPU what the tree holds there, for a
// diagnosis: "GPU 0 (NVIDIA A100-SXM4-40GB): the kernel holds 2 GiB; 31 GiB
// of 40 GiB in use".
func (u Usage) Describe() []string {
	lines := make([]string, 0, len(u.GPUs))
	for _, g := range u.GPUs {
		lines = append(lines, fmt.Sprintf("GPU %d (%s): %s; %s of %s in use",
			g.Index, g.Name, u.held(g), units.FormatBytes(g.MemUsed), units.FormatBytes(g.MemTotal)))
	}
	return lines
}

func (u Usage) held(g GPU) string {
	if u.PIDsHidden {
		return HiddenReason
	}
	held := "the kernel holds " + units.FormatBytes(g.Used)
	for _, p := range g.Procs {
		if p.UsedUnknown {
			return held + " and an amount the driver does not report"
		}
	}
	return held
}

// HiddenReason says why a kernel's share of the GPUs is unknown (see
// Usage.PIDsHidden), and how to make it known.
const HiddenReason = "the kernel's share is unknown: this container cannot see the host's pids " +
	"(run it with --pid=host, or mount the host's /proc and set JUPYTER_GUARD_HOST_PROC to it)"
