package diagnosis

import (
	"fmt"
	"strings"

	"github.com/jupyter-guard/jupyter-guard/guard/units"
)

// memoryLines tells the ledger's story: the running cell, the budget, the
// tree, the GPUs and the cells that grew the most before.
func (d *Diagnosis) memoryLines() []string {
	ev := d.Evidence
	m := ev.Memory
	var lines []string
	if c := ev.Cell; c != nil && (c.Peak > 0 || c.Growth != 0) {
		lines = append(lines, "  "+cellName(c)+": "+clip(firstLine(c.Code), lineWidth-20))
		lines = append(lines, "    "+cellGrowth(c))
	}
	if m.Limit > 0 {
		l := "  limit: " + units.FormatBytes(m.Limit)
		if m.LimitSource != "" {
			l += " (" + m.LimitSource + ")"
		}
		lines = append(lines, l)
	}
	if m.TreePeak > 0 {
		lines = append(lines, fmt.Sprintf("  the kernel's processes: %s at the last sample, %s at the peak",
			units.FormatBytes(m.TreeLast), units.FormatBytes(m.TreePeak)))
	}
	for _, g := range m.GPUs {
		l := fmt.Sprintf("  GPU %d", g.Index)
		if g.Name != "" {
			l += " (" + g.Name + ")"
		}
		l += ": " + units.FormatBytes(g.Used) + " used"
		if g.Total > 0 {
			l += " of " + units.FormatBytes(g.Total)
		}
		lines = append(lines, l)
	}
	if len(m.TopCells) > 0 {
		lines = append(lines, "  earlier cells that grew the most:")
		for _, c := range m.TopCells {
			lines = append(lines, fmt.Sprintf("    [%d] %s  %s", c.ExecutionCount, units.FormatSignedBytes(c.Growth),
				clip(firstLine(c.Code), lineWidth-24)))
		}
	}
	return lines
}

// cellGrowth is e.g. "1.2 GiB at start, 12.5 GiB at its peak: +11.3 GiB
// in 4 s (2.8 GiB/s)".
func cellGrowth(c *Cell) string {
	s := fmt.Sprintf("%s at start, %s at its peak: %s", units.FormatBytes(c.Start), units.FormatBytes(c.Peak),
		units.FormatSignedBytes(c.Growth))
	if c.Duration <= 0 {
		return s
	}
	s += " in " + units.FormatDuration(c.Duration)
	rate := c.Rate
	if rate == 0 {
		rate = float64(c.Growth) / c.Duration.Seconds()
	}
	if rate > 0 {
		s += " (" + units.FormatBytes(uint64(rate)) + "/s)"
	}
	return s
}

func firstLine(code string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(code), "\n")
	return l
}
