package units

import (
	"fmt"
	"time"
)

// FormatSignedBytes writes a change of memory: "+1.2 GiB", "-300 MiB", "0 B".
func FormatSignedBytes(n int64) string {
	switch {
	case n > 0:
		return "+" + FormatBytes(uint64(n))
	case n < 0:
		return "-" + FormatBytes(uint64(-n))
	}
	return "0 B"
}

// FormatDuration writes a duration as people read it in a table: "850 ms",
// "4.2 s", "3 min 5 s", "2 h 10 min".
func FormatDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < 10*time.Second:
		return fmt.Sprintf("%.1f s", d.Seconds())
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Seconds()))
	case d < time.Hour:
		return withRest(int(d.Minutes()), "min", int(d.Seconds())%60, "s")
	}
	return withRest(int(d.Hours()), "h", int(d.Minutes())%60, "min")
}

// withRest writes "3 min 5 s", or "3 min" when the rest is zero.
func withRest(n int, unit string, rest int, restUnit string) string {
	if rest == 0 {
		return fmt.Sprintf("%d %s", n, unit)
	}
	return fmt.Sprintf("%d %s %d %s", n, unit, rest, restUnit)
}
